"""weft_worker: serves a langgraph.json's Python graphs on a Weft server
through its fenced worker API (claims with a lease and a token, heartbeats,
batched commits of checkpoints, writes and events, cancellations)."""

from .client import SyncWeftClient, WeftClient, WeftHTTPError, is_fenced
from .load import load_config
from .run import Committer, command_of, execute_run
from .saver import WeftSaver, next_version
from .store import WeftStore
from .worker import Worker

__all__ = ["Committer", "SyncWeftClient", "WeftClient", "WeftHTTPError", "WeftSaver", "WeftStore", "Worker",
           "command_of", "execute_run", "is_fenced", "load_config", "next_version"]
