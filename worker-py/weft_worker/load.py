"""Loading the Python graphs of a langgraph.json, and the other Python
objects it names (auth.path, store.index.embed, http.app: load_object).

A graph is "./path/to/file.py:attr" (a file of the project) or
"package.module:attr" (importable from the project's path). The attribute
is a compiled graph, a StateGraph (compiled here), or a factory: a
function (sync or async) returning one of those, or a context manager
(sync or async) yielding one; a factory is called again for each run
(its context held for the run). A factory takes what the official server
gives it: nothing, the run's config, a ServerRuntime (a parameter
annotated so), or both (by keyword, in either order). The runtime's
access_context says why it is called: "threads.create_run" for a run
(with the run's context), "threads.update" for update_state,
"assistants.read" when its graph is registered; its user is the run's
authenticated user (None without auth), its store the run's.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import inspect
import json
import logging
import os
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from .user import User

log = logging.getLogger("weft_worker.load")

PY_EXTENSIONS = (".py",)
JS_EXTENSIONS = {".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx"}


def parse_dotenv(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[7:].lstrip()
        key, sep, v = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "a").isalnum():
            continue
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1]
        else:
            v = v.split(" #", 1)[0].rstrip()
        out[key] = v
    return out


def apply_env(env: Any, base: Path) -> None:
    """langgraph.json's env (a .env path or an object); set variables win."""
    vars_: dict = {}
    if isinstance(env, str):
        f = base / env
        if f.exists():
            vars_ = parse_dotenv(f.read_text())
    elif isinstance(env, dict):
        vars_ = env
    for k, v in vars_.items():
        os.environ.setdefault(k, str(v))


def is_python_spec(ref: str) -> bool:
    """Whether a graph reference names Python code (a .py file, or a module path)."""
    path = ref.rsplit(":", 1)[0] if ":" in ref[2:] else ref
    if path.endswith(PY_EXTENSIONS):
        return True
    # module:attr (a dotted module path, no file) is Python, as for langgraph-cli
    return "/" not in path and "\\" not in path and not path.startswith(".") and Path(path).suffix not in JS_EXTENSIONS


def is_python_path(spec: str) -> bool:
    """Whether the path of an auth.path or a store.index.embed ("./auth.py:auth",
    "pkg.mod:auth") is Python's (a graph's: is_python_spec)."""
    module = spec.rsplit(":", 1)[0] if ":" in spec else spec
    if module.endswith(PY_EXTENSIONS):
        return True
    return not module.endswith(tuple(JS_EXTENSIONS)) and "/" not in module and not module.startswith(".")


def _is_compiled(g: Any) -> bool:
    return hasattr(g, "astream") and hasattr(g, "get_graph") and hasattr(g, "aget_state")


@dataclass
class GraphSpec:
    graph_id: str
    target: Any  # what the reference names
    factory: bool = False
    graph: Any = None  # the compiled graph (the factory's, for registration)
    # the factory's keyword arguments: parameter name → "config" or "runtime"
    params: dict[str, str] = field(default_factory=dict)

    def for_run(self, config: dict, access_context: str = "threads.create_run", store: Any = None,
                context: Any = None) -> contextlib.AbstractAsyncContextManager:
        """The graph of one run, for the run's duration: the compiled graph,
        or what the factory makes for this config and runtime (a factory
        returning a context manager is entered for the run and exited after
        it)."""

        @contextlib.asynccontextmanager
        async def graph():
            if not self.factory:
                yield self.graph
                return
            user = (config.get("configurable") or {}).get("langgraph_auth_user")
            rt = server_runtime(access_context, store, context, user) if "runtime" in self.params.values() else None
            async with _entered(await _call(self.target, self.params, config, rt), self.graph_id) as g:
                yield g

        return graph()


def factory_params(fn) -> dict[str, str]:
    """How a factory is called, by its signature, as the official server
    calls it: no parameter; one (the runtime when annotated as a
    ServerRuntime, else the config); or two, one of them annotated as a
    ServerRuntime and the other the config. Anything else is refused."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return {"config": "config"}
    try:
        hints = get_type_hints(fn, localns=_runtime_names())
    except Exception:  # noqa: BLE001 — unresolvable annotations: read them as written
        hints = {}
    runtime = [p.name for p in params if _is_runtime(hints.get(p.name, p.annotation))]
    if len(params) == 0:
        return {}
    if len(params) == 1:
        return {params[0].name: "runtime" if runtime else "config"}
    if len(params) == 2 and len(runtime) == 1:
        return {p.name: "runtime" if p.name == runtime[0] else "config" for p in params}
    if len(params) == 2:
        raise TypeError(f"graph factory {getattr(fn, '__name__', fn)} takes two parameters: one must be annotated "
                        "as a ServerRuntime (from langgraph_sdk.runtime) and the other is the config, got "
                        f"{[str(p.annotation) for p in params]}")
    raise TypeError(f"graph factory {getattr(fn, '__name__', fn)} must take 0, 1 or 2 parameters (config and/or "
                    f"runtime), got {[p.name for p in params]}")


def _runtime_names() -> dict:
    try:
        from langgraph_sdk.runtime import ServerRuntime
    except ImportError:  # an older langgraph_sdk: no runtime to give
        return {}
    from langchain_core.runnables import RunnableConfig
    return {"ServerRuntime": ServerRuntime, "RunnableConfig": RunnableConfig}


def _is_runtime(annotation: Any) -> bool:
    """Whether an annotation names LangGraph's ServerRuntime (plain,
    parameterized, Annotated, a string, or one of its two variants)."""
    if isinstance(annotation, str):
        return annotation.split("[", 1)[0].strip() == "ServerRuntime"
    try:
        from langgraph_sdk.runtime import ServerRuntime, _ExecutionRuntime, _ReadRuntime
    except ImportError:
        return False
    if annotation is ServerRuntime or get_origin(annotation) is ServerRuntime:
        return True
    if get_origin(annotation) is Annotated:
        return _is_runtime(get_args(annotation)[0])
    return isinstance(annotation, type) and issubclass(annotation, (_ExecutionRuntime, _ReadRuntime))


def server_runtime(access_context: str, store: Any, context: Any, user: Any) -> Any:
    """The ServerRuntime the official server gives a factory: the execution
    variant (with the run's context) for a run, the read variant otherwise."""
    from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime

    u = User(user) if isinstance(user, dict) and user.get("identity") is not None else None
    if access_context == "threads.create_run":
        return _ExecutionRuntime(access_context=access_context, user=u, store=store,
                                 context=copy.copy(context) if context is not None else None)
    return _ReadRuntime(access_context=access_context, user=u, store=store)


async def _call(fn, params: dict[str, str], config: dict, runtime: Any):
    v = fn(**{name: runtime if kind == "runtime" else config for name, kind in params.items()})
    if inspect.isawaitable(v):
        v = await v
    return v


@contextlib.asynccontextmanager
async def _entered(v: Any, graph_id: str):
    """The graph a factory's answer holds, for as long as its context lasts."""
    if hasattr(v, "__aenter__"):
        async with v as g:
            yield await _resolve(g, graph_id)
    elif hasattr(v, "__enter__"):
        with v as g:
            yield await _resolve(g, graph_id)
    else:
        yield await _resolve(v, graph_id)


async def _resolve(g: Any, graph_id: str) -> Any:
    if inspect.isawaitable(g):
        g = await g
    if not _is_compiled(g) and hasattr(g, "compile"):
        g = g.compile()
    if not _is_compiled(g):
        raise TypeError(f"graph {graph_id}: the reference is not a LangGraph graph "
                        f"(a compiled graph, a StateGraph or a function returning one), got {type(g).__name__}")
    return g


def import_file(path: str | Path, name: str, what: str):
    """The module of the Python file at path, run under name (in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{what}: cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_object(spec: str, base: str, what: str) -> Any:
    """The object a langgraph.json path other than a graph's ("./auth.py:auth"
    or "pkg.mod:obj") names, the config's directory (base) on the import path;
    what says which setting it is, for the errors."""
    if ":" not in spec:
        raise ValueError(f"{what} {spec}: give it as ./file.py:name or module:name")
    module_name, attr = spec.rsplit(":", 1)
    if "/" in module_name or module_name.endswith(".py"):
        path = os.path.normpath(os.path.join(base, module_name))
        if not os.path.exists(path):
            raise ValueError(f"{what} {spec}: no file {path}")
        if base not in sys.path:
            sys.path.insert(0, base)
        module = import_file(path, f"weft_project_{abs(hash(path))}", f"{what} {spec}")
    else:
        if base not in sys.path:
            sys.path.insert(0, base)
        module = importlib.import_module(module_name)
    obj = getattr(module, attr, None)
    if obj is None:
        raise ValueError(f"{what} {spec}: {module_name} has no {attr}")
    return obj


@dataclass
class Project:
    config_path: Path
    config: dict
    graphs: dict[str, GraphSpec] = field(default_factory=dict)
    # graphs that did not load, kept apart so the others are served: [{graph_id, error}]
    failures: list[dict] = field(default_factory=list)


async def load_config(config_path: str, only: list[str] | None = None) -> Project:
    """Reads langgraph.json: applies env, puts the project's directory and
    its local "dependencies" on the import path, and loads every Python
    graph (only: these ids)."""
    cfg_file = Path(config_path).resolve()
    base = cfg_file.parent
    config = json.loads(cfg_file.read_text())
    apply_env(config.get("env"), base)
    paths = [str(base)]
    for dep in config.get("dependencies") or []:
        if isinstance(dep, str) and (dep.startswith(".") or dep.startswith("/")):
            d = (base / dep).resolve()
            if d.is_dir():
                paths.append(str(d))
                if (d / "src").is_dir():
                    paths.append(str(d / "src"))
    for p in reversed(paths):
        if p not in sys.path:
            sys.path.insert(0, p)
    project = Project(cfg_file, config)
    for gid, spec in (config.get("graphs") or {}).items():
        if only and gid not in only:
            continue
        ref = spec if isinstance(spec, str) else (spec or {}).get("path")
        if not isinstance(ref, str):
            raise ValueError(f"graph {gid}: expected \"./path.py:attr\" or \"module:attr\", got {spec!r}")
        if not is_python_spec(ref):
            continue
        try:
            project.graphs[gid] = await _load_graph(base, gid, ref)
        except Exception as e:  # noqa: BLE001 — any import error: the other graphs are served
            error = f"{type(e).__name__}: {e}\n{''.join(traceback.format_exception(e))}"
            log.error("graph failed to load; serving the others", extra={"attrs": {"graph_id": gid, "error": error}})
            project.failures.append({"graph_id": gid, "error": error})
    if not project.graphs and not project.failures:
        raise ValueError(f"{config_path}: no Python graphs to serve")
    return project


async def _load_graph(base: Path, gid: str, ref: str) -> GraphSpec:
    path, _, attr = ref.rpartition(":") if ":" in ref[2:] else (ref, "", "graph")
    if path.endswith(".py"):
        file = (base / path).resolve()
        name = f"weft_graph_{gid.replace('-', '_').replace('.', '_')}_{file.stem}"
        mod = import_file(file, name, f"graph {gid}")
    else:
        mod = importlib.import_module(path)
    if not hasattr(mod, attr):
        raise AttributeError(f"graph {gid}: {path} has no attribute {attr}")
    target = getattr(mod, attr)
    g = GraphSpec(gid, target)
    if callable(target) and not _is_compiled(target) and not hasattr(target, "compile"):
        g.factory = True
        g.params = factory_params(target)
        rt = server_runtime("assistants.read", None, None, None) if "runtime" in g.params.values() else None
        async with _entered(await _call(target, g.params, {"configurable": {}}, rt), gid) as graph:
            g.graph = graph
    else:
        g.graph = await _resolve(target, gid)
    return g
