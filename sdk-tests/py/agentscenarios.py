"""The requests of the side-by-side agent suites: what a frontend and a
script send to a server running real agents (the projects in
fixtures/pyagents and ../agents-js, same graph ids, same scripted model).

Each scenario takes an official SDK client (langgraph_sdk, async), a
`Transcript` and the project's language ("py" or "js": LangChain.js names
a few things its own way), sends its requests and records every answer
under a label; a request the server refuses, or a run that fails, is
recorded as its error.
Run against two servers, the two transcripts are compared label by label
(agentdiff). A scenario never looks at its answers to decide what to send
next, except to find an id a later request needs (a checkpoint, a task).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from langgraph_sdk.client import LangGraphClient

# Stream modes a chat frontend asks for, and the debugging ones.
CHAT_MODES = ["values", "updates", "messages-tuple"]
ALL_MODES = ["values", "updates", "messages-tuple", "custom", "debug", "tasks", "checkpoints"]


class Transcript:
    """The answers of one scenario on one server, in order, by label."""

    def __init__(self) -> None:
        self.entries: dict[str, Any] = {}

    def __call__(self, label: str, value: Any) -> Any:
        if label in self.entries:
            raise ValueError(f"label {label!r} recorded twice")
        self.entries[label] = value
        return value

    async def answer(self, label: str, call: Awaitable) -> Any:
        """Records what call answers, or the error it raises (an HTTP
        error's status and detail)."""
        try:
            return self(label, await call)
        except Exception as e:  # noqa: BLE001 — both servers' failures are compared
            status = getattr(getattr(e, "response", None), "status_code", None)
            return self(label, {"__error__": type(e).__name__, "status": status, "message": str(e)[:200]})


async def stream(client: LangGraphClient, rec: Transcript, label: str, thread_id: str | None, assistant: str,
                 **kw) -> list:
    parts = [[p.event, p.data] async for p in client.runs.stream(thread_id, assistant, **kw)]
    return rec(label, parts)


def human(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def edit_decision(lang: str, args: dict) -> dict:
    """A HumanInTheLoopMiddleware edit decision (LangChain.js spells the key
    in camelCase)."""
    key = "editedAction" if lang == "js" else "edited_action"
    return {"type": "edit", key: {"name": "book_flight", "args": args}}


async def agent_tool_rounds(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """create_agent, 30 tool rounds in one run (far past LangGraph's
    default recursion limit of 25 steps); metadata that history filters
    find: the thread's and the run's configurable."""
    tid = (await c.threads.create(metadata={"owner": "ada-rounds"}))["thread_id"]
    await rec.answer("rounds: wait", c.runs.wait(tid, "agent", input=human("rounds 30"),
                                         config={"configurable": {"user_tier": "pro"}}))
    rec("rounds: state", await c.threads.get_state(tid))
    rec("rounds: history", await c.threads.get_history(tid, limit=4))
    rec("rounds: history by configurable", await c.threads.get_history(tid, limit=200, metadata={"user_tier": "pro"}))
    rec("rounds: history by thread metadata", [h["checkpoint"] for h in await c.threads.get_history(
        tid, limit=200, metadata={"owner": "ada-rounds"})])
    rec("rounds: thread", await c.threads.get(tid))
    rec("rounds: search by metadata", await c.threads.search(metadata={"owner": "ada-rounds"}))


async def agent_hitl(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """create_agent with HumanInTheLoopMiddleware: an interrupt, then
    approve, edit and reject decisions, streamed as a chat frontend asks."""
    tid = (await c.threads.create())["thread_id"]
    await stream(c, rec, "book: stream", tid, "agent", input=human("book Paris"), stream_mode=CHAT_MODES)
    rec("book: state", await c.threads.get_state(tid))
    rec("book: thread", await c.threads.get(tid))
    await stream(c, rec, "approve: stream", tid, "agent", command={"resume": {"decisions": [{"type": "approve"}]}},
                 stream_mode=CHAT_MODES)
    rec("approve: state", await c.threads.get_state(tid))
    rec("edit: interrupt", await c.runs.wait(tid, "agent", input=human("book Rome")))
    await stream(c, rec, "edit: stream", tid, "agent", command={"resume": {"decisions": [edit_decision(lang, {"city": "Milan"})]}},
                 stream_mode=["values", "updates"])
    rec("edit: state", await c.threads.get_state(tid))
    rec("reject: interrupt", await c.runs.wait(tid, "agent", input=human("book Oslo")))
    reject = {"type": "reject", "message": "not today"}
    rec("reject: wait", await c.runs.wait(tid, "agent", command={"resume": {"decisions": [reject]}}))
    rec("history", await c.threads.get_history(tid, limit=100))
    rec("thread", await c.threads.get(tid))


async def agent_debug_streams(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """One tool round streamed in every debugging mode, and as LangChain's
    events."""
    tid = (await c.threads.create())["thread_id"]
    await stream(c, rec, "all modes", tid, "agent", input=human("rounds 1"), stream_mode=ALL_MODES)
    await stream(c, rec, "events", tid, "agent", input=human("rounds 1"), stream_mode=["events"])


async def agent_update_and_fork(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """update_state (as the node that wrote last), and a run forked from an
    earlier checkpoint."""
    tid = (await c.threads.create())["thread_id"]
    await c.runs.wait(tid, "agent", input=human("first"))
    await c.runs.wait(tid, "agent", input=human("second"))
    history = rec("history before", await c.threads.get_history(tid, limit=100))
    upd = rec("update", await c.threads.update_state(
        tid, {"messages": [{"type": "ai", "content": "edited by hand", "id": "hand-1"}]}))
    rec("state after update", await c.threads.get_state(tid))
    first_turn = next(h for h in history if h["metadata"].get("step") == 1 and h["metadata"].get("source") == "loop")
    rec("fork: wait", await c.runs.wait(tid, "agent", input=human("instead"),
                                        checkpoint_id=first_turn["checkpoint"]["checkpoint_id"]))
    rec("fork: state", await c.threads.get_state(tid))
    rec("history after", await c.threads.get_history(tid, limit=100))
    rec("update's checkpoint", await c.threads.get_state(tid, checkpoint_id=upd["checkpoint"]["checkpoint_id"]))


async def reporter_structured(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """create_agent with structured output."""
    tid = (await c.threads.create())["thread_id"]
    await stream(c, rec, "stream", tid, "reporter", input=human("report"), stream_mode=["values", "updates"])
    rec("state", await c.threads.get_state(tid))
    rec("thread", await c.threads.get(tid))


async def deep_agent(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """deepagents: todos, a file, a subagent that interrupts inside its own
    graph; streamed with subgraphs; state, history, the subagent's history,
    the resume."""
    tid = (await c.threads.create(metadata={"owner": "ada-deep"}))["thread_id"]
    await stream(c, rec, "plan: stream", tid, "deep", input=human("plan cats"), stream_mode=CHAT_MODES,
                 stream_subgraphs=True)
    state = rec("plan: state", await c.threads.get_state(tid, subgraphs=True))
    rec("plan: state without subgraphs", await c.threads.get_state(tid))
    rec("plan: thread", await c.threads.get(tid))
    rec("plan: history", await c.threads.get_history(tid, limit=3))
    task = state["tasks"][0]
    rec("subagent: history", await c.threads.get_history(
        tid, checkpoint={"checkpoint_ns": f"{task['name']}:{task['id']}"}, limit=3))
    await stream(c, rec, "resume: stream", tid, "deep", command={"resume": {"decisions": [{"type": "approve"}]}},
                 stream_mode=["values", "updates"], stream_subgraphs=True)
    rec("resume: state", await c.threads.get_state(tid))
    rec("resume: thread", await c.threads.get(tid))
    rec("search by values", await c.threads.search(
        values={"todos": [{"content": "research cats", "status": "in_progress"},
                          {"content": "write notes", "status": "pending"}]}, metadata={"owner": "ada-deep"}))
    copied = await c.threads.copy(tid)
    rec("copy: state", await c.threads.get_state(copied["thread_id"]))
    rec("copy: history", await c.threads.get_history(copied["thread_id"], limit=2))
    await rec.answer("update", c.threads.update_state(
        tid, {"files": {"/extra.md": {"content": "added by hand", "encoding": "utf-8"}}}))
    rec("update: state", await c.threads.get_state(tid))
    history = await c.threads.get_history(tid, limit=100)
    start = next(h for h in history if h["metadata"]["step"] == 0)
    await stream(c, rec, "fork: stream", tid, "deep", input=human("plan dogs"),
                 checkpoint_id=start["checkpoint"]["checkpoint_id"])
    rec("fork: state", await c.threads.get_state(tid))


async def deep_agent_rounds(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """A deep agent's task of 15 tool rounds (past LangGraph's default
    recursion limit of 25 steps)."""
    tid = (await c.threads.create())["thread_id"]
    await rec.answer("wait", c.runs.wait(tid, "deep", input=human("rounds 15")))
    rec("state", await c.threads.get_state(tid))


async def factory_runtime(c: LangGraphClient, rec: Transcript, lang: str) -> None:
    """A graph factory that takes (config, runtime)."""
    rec("wait", await c.runs.wait(None, "factory", input=human("who")))
    rec("assistant", [{k: a[k] for k in ("graph_id", "name", "description", "metadata", "config", "context")}
                      for a in await c.assistants.search(graph_id="factory")])


SCENARIOS: dict[str, Callable[[LangGraphClient, Transcript, str], Awaitable[None]]] = {
    f.__name__: f for f in (agent_tool_rounds, agent_hitl, agent_debug_streams, agent_update_and_fork,
                            reporter_structured, deep_agent, deep_agent_rounds, factory_runtime)
}
GRAPHS = ["agent", "reporter", "deep", "factory"]
