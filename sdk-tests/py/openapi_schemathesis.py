"""Runs Schemathesis (the pinned CLI) against a Weft server and reads what it found.

Used by test_openapi_clients.py; also runnable by hand against any server, to see the failures of the current
api/openapi.yaml without the test's accepted list:

    sdk-tests/py/.venv/bin/python sdk-tests/py/openapi_schemathesis.py --url http://127.0.0.1:8123 [--key KEY]

`run()` writes a schemathesis.toml (pinned path parameters, per-operation overrides, operations left out) into
its output directory, runs `schemathesis run` there with SCHEMATHESIS_HOOKS=openapi_hooks (no `webhook` in
generated bodies) and an NDJSON report, within a time limit, and returns the failures the report records: one
`Failure` per (check, operation, title), with the status and the start of the body of the first response that
showed it, and the curl line that reproduces it.
"""

from __future__ import annotations

import argparse
import base64
import json
import typing
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SPEC = REPO_ROOT / "api" / "openapi.yaml"

# Operations no request/response fuzzer can test: a thread's live event streams (GET /threads/{thread_id}/stream,
# POST /threads/{thread_id}/stream/events) stay open until the client leaves, with a keep-alive comment while
# idle, so a case with a real thread would never end (no read timeout fires); GET /threads/{thread_id}/stream/events
# is a WebSocket (Upgrade), which Schemathesis does not speak.
NEVER_ENDING = [("GET", "/threads/{thread_id}/stream"), ("POST", "/threads/{thread_id}/stream/events"),
                ("GET", "/threads/{thread_id}/stream/events")]

# The worker API: fuzzed last and alone (with a worker key when auth is on). A graph it registers (POST
# /dispatch/graphs) has no worker behind it, so a run of that graph would wait forever and keep /runs/wait and
# the streams open for the passes after it.
WORKER_API = [("POST", p) for p in ("/dispatch/claim", "/dispatch/cancellations", "/dispatch/graphs",
                                     "/dispatch/graphs/errors", "/dispatch/checkpoints/get",
                                     "/dispatch/checkpoints/list", "/dispatch/checkpoints/delta-history",
                                     "/dispatch/{dispatch_id}/ack", "/dispatch/{dispatch_id}/commit",
                                     "/dispatch/{dispatch_id}/heartbeat", "/dispatch/{dispatch_id}/nack")]

# Generation settings (schemathesis.toml [generation]), each with why:
# - allow-x00 = false: no NUL character in generated strings. PostgreSQL text cannot hold one, so the server
#   refuses any string with \u0000 (422 "contains a NUL character"), which JSON Schema has no plain way to say.
# - allow-extra-parameters = false: no unknown query parameters in negative cases. The server ignores query
#   parameters it does not know, as LangGraph's server does (and HTTP servers generally); unknown body
#   properties are still generated where a schema allows them.
GENERATION = {"allow-x00": False, "allow-extra-parameters": False}


@dataclass
class Failure:
    check: str  # schemathesis check name (not_a_server_error, response_schema_conformance, …) or "network_error"
    operation: str  # "POST /threads"
    title: str  # the failure's title ("Response violates schema", …)
    message: str  # its message (first lines)
    status: int | None = None  # the response that showed it
    body: str = ""  # start of that response's body
    phase: str = ""
    curl: str = ""
    count: int = 1
    request_body: typing.Any = None  # the body sent, as JSON (None: none)

    def key(self) -> tuple[str, str, str]:
        return (self.check, self.operation, self.title)

    def text(self) -> str:
        """The failure in a few lines, as it goes in a report."""
        lines = [f"{self.operation}  [{self.check}] {self.title}  ({self.phase}, {self.count}x)"]
        msg = "\n".join(l for l in self.message.splitlines()[1:] if l.strip())[:600]
        if msg:
            lines.append("    " + msg.replace("\n", "\n    "))
        if self.status is not None:
            lines.append(f"    response {self.status}: {self.body[:300]}")
        if self.curl:
            lines.append(f"    {self.curl[:400]}")
        return "\n".join(lines)


@dataclass
class Result:
    returncode: int
    seconds: float
    command: list[str]
    failures: list[Failure] = field(default_factory=list)
    operations: int = 0  # operations tested
    cases: int = 0  # test cases run
    output: str = ""  # the CLI's own report (stdout)


def _toml_value(v) -> str:
    return json.dumps(v)  # a JSON string or number is a TOML one too


def write_config(path: Path, *, parameters: dict | None = None, overrides: list[tuple[str, str, dict]] = (),
                 disabled: list[tuple[str, str]] = NEVER_ENDING) -> None:
    """schemathesis.toml: [parameters] for every operation, then per operation (method, path) its own
    parameters, and the operations left out. An operation is named "METHOD /path" (include-name: separate
    include-method and include-path filters would select either)."""
    out = ["[generation]", *(f"{k} = {str(v).lower()}" for k, v in GENERATION.items()), ""]
    if parameters:
        out.append("[parameters]")
        out += [f"{_toml_value(k)} = {_toml_value(v)}" for k, v in parameters.items()]
        out.append("")
    for method, p, params in overrides:
        out += ["[[operations]]", f"include-name = {_toml_value(method + ' ' + p)}"]
        out.append("parameters = { " + ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in params.items()) + " }")
        out.append("")
    for method, p in disabled:
        out += ["[[operations]]", f"include-name = {_toml_value(method + ' ' + p)}", "enabled = false", ""]
    path.write_text("\n".join(out))


def run(url: str, out_dir: Path, *, key: str | None = None, phases: str = "examples,coverage,fuzzing,stateful",
        max_examples: int = 10, seed: int = 1, request_timeout: float = 10, time_limit: float = 240,
        parameters: dict[str, str] | None = None, overrides: list[tuple[str, str, dict[str, str]]] = (),
        disabled: list[tuple[str, str]] = NEVER_ENDING, only: list[str] = (), spec: Path = SPEC) -> Result:
    """One bounded `schemathesis run` (one worker, fixed seed, every default check) against url: every
    operation but the disabled ones, or only those named ("METHOD /path")."""
    out_dir.mkdir(parents=True, exist_ok=True)
    config = out_dir / "schemathesis.toml"
    write_config(config, parameters=parameters, overrides=overrides, disabled=disabled)
    report = out_dir / "report.ndjson"
    bin_dir = Path(sys.executable).parent
    cmd = [str(bin_dir / "schemathesis"), "--config-file", str(config), "--no-color", "run", str(spec),
           "--url", url, "--workers", "1", "--seed", str(seed), "--max-examples", str(max_examples),
           "--phases", phases, "--request-timeout", str(request_timeout), "--generation-database", "none",
           "--report", "ndjson", "--report-ndjson-path", str(report)]
    for name in only:
        cmd += ["--include-name", name]
    if key:
        # As Authorization: Bearer, and no generated credentials: the spec offers x-api-key OR Bearer, and
        # Schemathesis treats a missing Authorization header as a missing credential (expects 401).
        cmd += ["--header", f"Authorization: Bearer {key}", "--generation-with-security-parameters", "false"]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "openapi_hooks", "OPENAPI_HOOKS_TRACE": str(out_dir / "requests.jsonl"),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=out_dir, env=env, capture_output=True, text=True, timeout=time_limit)
        rc, stdout = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:  # the child is killed by subprocess.run
        rc, stdout = -1, f"schemathesis did not finish within {time_limit}s\n{(e.stdout or b'')[-4000:]!r}"
    (out_dir / "output.txt").write_text(stdout)
    res = Result(returncode=rc, seconds=time.monotonic() - start, command=cmd, output=stdout)
    if report.exists():
        read_report(report, res)
    return res


def _decode(blob) -> str:
    if isinstance(blob, dict) and "$base64" in blob:
        return base64.b64decode(blob["$base64"]).decode("utf-8", "replace")
    return blob if isinstance(blob, str) else ""


def _request_line(case: dict) -> str:
    """The case as one line: METHOD /path?query body (no credentials)."""
    path = case.get("path", "?")
    for k, v in (case.get("path_parameters") or {}).items():
        path = path.replace("{" + k + "}", str(v))
    q = case.get("query") or {}
    if q:
        path += "?" + "&".join(f"{k}={v}" for k, v in q.items())
    line = f"request: {case.get('method', '?')} {path}"
    if case.get("body") is not None:
        line += " " + json.dumps(case["body"], ensure_ascii=False)[:300]
    return line


def read_report(path: Path, res: Result) -> None:
    """Fills res.failures (deduplicated), res.operations and res.cases from an NDJSON report."""
    seen: dict[tuple, Failure] = {}
    labels = set()
    for line in path.read_text().splitlines():
        ev = json.loads(line)
        if "NonFatalError" in ev:
            v = ev["NonFatalError"]
            f = Failure(check="network_error", operation=v.get("label") or "?", title=v["value"]["type"],
                        message=v["value"]["message"], phase=v.get("phase") or "")
            if f.key() in seen:
                seen[f.key()].count += 1
            else:
                seen[f.key()] = f
            continue
        if "ScenarioFinished" not in ev:
            continue
        sc = ev["ScenarioFinished"]
        rec = sc.get("recorder") or {}
        cases = rec.get("cases") or {}
        res.cases += len(cases)
        for cid, checks in (rec.get("checks") or {}).items():
            case = (cases.get(cid) or {}).get("value") or {}
            op = rec.get("label") or ""
            if not op.startswith(("GET ", "PUT ", "POST ", "PATCH ", "DELETE ")):  # "Stateful tests": the step's
                op = f"{case.get('method', '?')} {case.get('path', '?')}"
            labels.add(op)
            for c in checks:
                if c.get("status") != "failure":
                    continue
                info = (c.get("failure_info") or {})
                fl = info.get("failure") or {}
                title = fl.get("title") or (fl.get("message") or "").split("\n")[0]
                f = Failure(check=c["name"], operation=op, title=title, message=fl.get("message") or "",
                            phase=sc.get("phase") or "", curl=_request_line(case),
                            request_body=case.get("body"))
                inter = (rec.get("interactions") or {}).get(cid) or {}
                resp = inter.get("response") or {}
                if resp:
                    f.status = resp.get("status_code")
                    f.body = _decode(resp.get("content"))[:600]
                if f.key() in seen:
                    seen[f.key()].count += 1
                else:
                    seen[f.key()] = f
    res.failures = sorted(seen.values(), key=lambda f: (f.operation, f.check, f.title))
    res.operations = len(labels)


def summary(res: Result) -> str:
    head = (f"schemathesis: {res.operations} operations, {res.cases} cases, {len(res.failures)} distinct failures "
            f"in {res.seconds:.1f}s (exit {res.returncode})\n  " + shlex.join(res.command))
    return "\n".join([head, *(f.text() for f in res.failures)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--key", help="API key (server with WEFT_AUTH=keys)")
    ap.add_argument("--out", default="/tmp/weft-schemathesis")
    ap.add_argument("--phases", default="examples,coverage,fuzzing,stateful")
    ap.add_argument("--max-examples", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--param", action="append", default=[], help="path.thread_id=… (repeatable)")
    ap.add_argument("--worker-api", action="store_true", help="only the worker API (else everything but it)")
    a = ap.parse_args()
    params = dict(p.split("=", 1) for p in a.param)
    scope = ({"only": [f"{m} {p}" for m, p in WORKER_API]} if a.worker_api
             else {"disabled": NEVER_ENDING + WORKER_API})
    res = run(a.url, Path(a.out), key=a.key, phases=a.phases, max_examples=a.max_examples, seed=a.seed,
              parameters=params or None, **scope)
    print(summary(res))
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
