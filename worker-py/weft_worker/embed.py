"""store.index.embed naming a Python function or LangChain Embeddings object
("./embed.py:aembed_texts", "my_pkg.embed:embeddings"), served on the worker's
socket (auth.py's Server) as POST /embed {texts} -> {vectors}. Resolved as
LangGraph's server does: an Embeddings object as it is; a callable, sync or
async, taking a list of texts and returning their vectors, through
langgraph.store.base.embed.ensure_embeddings."""

from __future__ import annotations

import math
from typing import Any

from .load import is_python_path, load_object


def is_function_path(embed: str) -> bool:
    if ":" not in embed:
        return False
    mod, attr = embed.rsplit(":", 1)
    return mod != "openai" and bool(attr.strip()) and ("/" in mod or "." in mod or mod.endswith(".py"))


class Embedder:
    def __init__(self, embeddings: Any, spec: str):
        self.embeddings = embeddings
        self.spec = spec

    async def embed(self, body: dict) -> dict:
        texts = body.get("texts")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return {"status": 400, "detail": "texts must be a list of strings"}
        try:
            vecs = await self.embeddings.aembed_documents(texts)
        except Exception as err:  # noqa: BLE001 - the indexer retries
            return {"status": 500, "detail": f"embed {self.spec} failed: {type(err).__name__}: {err}"}
        out = []
        for v in vecs:
            row = [float(x) for x in v]
            if not all(math.isfinite(x) for x in row):
                return {"status": 500, "detail": f"embed {self.spec} returned a non-finite number"}
            out.append(row)
        return {"vectors": out}


def load_embedder(cfg: dict, base: str) -> Embedder | None:
    """The embedder of the config's store.index.embed when it is Python code, else None."""
    embed = ((cfg.get("store") or {}).get("index") or {}).get("embed")
    if not isinstance(embed, str) or not is_function_path(embed) or not is_python_path(embed):
        return None
    from langgraph.store.base.embed import ensure_embeddings

    obj = load_object(embed, base, "store.index.embed")
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError:  # pragma: no cover - langgraph depends on langchain-core
        Embeddings = ()  # type: ignore[assignment]
    if not (Embeddings and isinstance(obj, Embeddings)) and not callable(obj):
        raise ValueError(f"store.index.embed {embed}: not callable and not an Embeddings object")
    return Embedder(ensure_embeddings(obj), embed)
