"""PostgreSQL's own count of what a Weft server's runs cost, for the worker bench (--pg-stats).

Weft's managed PostgreSQL (internal/postgres/cluster.go) is started by the server: initdb into
<data dir>/pgdata when that holds no cluster yet (PG_VERSION missing), then pg_ctl start with its
settings as -c options; it has no flag for more settings. So `prepare_data_dir` runs the same initdb
first, as the same user (as root: postgres, else nobody) with the same binaries, and adds to the
cluster's postgresql.conf

    shared_preload_libraries = 'pg_stat_statements'
    pg_stat_statements.track = 'none'

The server then finds a cluster and starts it as it always does, with its own -c settings (which
take precedence over postgresql.conf; they do not name these two). Counting stays off (track none:
the hook returns at once) until `Counter.track(True)` sets track = 'all' (ALTER SYSTEM, reload) for
the measured runs only, so the rest of the bench runs as without --pg-stats. The extension's view is
created in the `postgres` database, not in Weft's, and every figure is filtered to Weft's database.

Timing of the counters: pg_stat_statements and the WAL position are current at once; pg_stat_database
(commits, tuples) is fed by each backend at most once a second while it works and 10 s after it goes
idle (PostgreSQL 15's PGSTAT_IDLE_INTERVAL), so the bench waits FLUSH_S before each reading of it. A Weft
server is never idle (its pollers claim, sweep and fire crons): its background, counted over IDLE_S with
nothing else running, is subtracted from the window of the runs in proportion (`summarize`).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import time

import psycopg
from aegra import pg_bin_dir

FLUSH_S = 10.6  # PostgreSQL 15 backends report their counters at most 10 s after going idle
IDLE_S = 6.0  # the window in which the servers' background work (pollers) is counted, nothing else running
PRELOAD = "\n# added by worker-py/bench (--pg-stats)\nshared_preload_libraries = 'pg_stat_statements'\n" \
          "pg_stat_statements.track = 'none'\npg_stat_statements.max = 10000\n"


def server_bin_dir() -> str:
    """Where Weft finds initdb (internal/postgres.FindBinaries): PATH first, then /usr/lib/postgresql."""
    found = shutil.which("pg_ctl")
    if found:
        d = os.path.dirname(os.path.realpath(found))
        if all(os.path.exists(os.path.join(d, b)) for b in ("initdb", "postgres")):
            return d
    return pg_bin_dir()


def _pg_user():
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):  # postgres.UnprivilegedUser
        try:
            return pwd.getpwnam(name)
        except KeyError:
            pass
    raise RuntimeError("running as root with no postgres or nobody user to run PostgreSQL as")


def prepare_data_dir(data_dir: str) -> None:
    """Creates the cluster a Weft server started with WEFT_DATA_DIR=data_dir would create (the same
    initdb: user weft, trust, UTF8, locale C), with pg_stat_statements preloaded and counting nothing."""
    user = _pg_user()
    os.makedirs(data_dir, mode=0o700)
    kw = {}
    if user:
        os.chown(data_dir, user.pw_uid, user.pw_gid)
        kw = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
    pgdata = os.path.join(data_dir, "pgdata")
    out = subprocess.run([os.path.join(server_bin_dir(), "initdb"), "-D", pgdata, "-U", "weft", "--auth=trust",
                          "--encoding=UTF8", "--locale=C", "--no-sync"], check=False, capture_output=True, text=True, timeout=120,
                         cwd=data_dir, env={**os.environ, "LC_ALL": "C", "TZ": "UTC"}, **kw)
    if out.returncode != 0:
        raise RuntimeError(f"initdb failed ({out.returncode}): {out.stdout[-2000:]}{out.stderr[-2000:]}")
    with open(os.path.join(pgdata, "postgresql.conf"), "a") as f:
        f.write(PRELOAD)


class Counter:
    """pg_stat_statements, pg_stat_database and the WAL position of one Weft server's cluster
    (its socket directory; user weft), for its database `weft`."""

    def __init__(self, sock_dir: str, what: str):
        self.sock, self.what = sock_dir, what
        self.conn = psycopg.connect(host=sock_dir, user="weft", dbname="postgres", autocommit=True)
        libs = self.conn.execute("show shared_preload_libraries").fetchone()[0]
        if "pg_stat_statements" not in libs:
            raise RuntimeError(f"{what}: pg_stat_statements is not preloaded in the cluster at {sock_dir} "
                               "(did the server relocate its cluster? see its log)")
        self.conn.execute("create extension if not exists pg_stat_statements")
        self.dbid = self.conn.execute("select oid from pg_database where datname = 'weft'").fetchone()[0]

    def close(self) -> None:
        self.conn.close()

    def track(self, on: bool) -> None:
        self.conn.execute(f"alter system set pg_stat_statements.track = '{'all' if on else 'none'}'")
        self.conn.execute("select pg_reload_conf()")

    def reset(self) -> None:
        self.conn.execute("select pg_stat_statements_reset()")

    def database(self) -> dict:
        """pg_stat_database of weft and the WAL position (read from the postgres database: no commit of ours in weft's)."""
        row = self.conn.execute(
            "select xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, pg_current_wal_lsn()::text "
            "from pg_stat_database where datid = %s", (self.dbid,)).fetchone()
        keys = ("commits", "rollbacks", "inserted", "updated", "deleted", "lsn")
        out = dict(zip(keys, row))
        out["at"] = time.monotonic()
        return out

    def wal_bytes(self, lsn0: str, lsn1: str) -> float:
        return float(self.conn.execute("select pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (lsn1, lsn0)).fetchone()[0])

    def statements(self) -> list[dict]:
        """Every statement counted in weft's database since the reset (nested ones too: track = all)."""
        cur = self.conn.execute(
            "select queryid, query, calls, total_exec_time, rows, wal_records, wal_bytes, toplevel "
            "from pg_stat_statements where dbid = %s", (self.dbid,))
        keys = ("queryid", "query", "calls", "ms", "rows", "wal_records", "wal_bytes", "toplevel")
        return [dict(zip(keys, r)) for r in cur]

    def tables(self) -> dict[str, tuple[int, int, int]]:
        """Each table of weft's database: (rows, bytes of its live rows, pg_total_relation_size). Read in one
        transaction on a connection of its own, closed at once (a backend reports its counters when it exits)."""
        with psycopg.connect(host=self.sock, user="weft", dbname="weft") as c:
            names = [f'"{s}"."{t}"' for s, t in c.execute(
                "select schemaname, relname from pg_stat_user_tables order by 1, 2").fetchall()]
            out = {}
            for n in names:
                rows, live, total = c.execute(
                    f"select count(*), coalesce(sum(pg_column_size(t.*)), 0), pg_total_relation_size('{n}') "
                    f"from {n} t").fetchone()
                out[n.replace('"public".', "").replace('"', "")] = (rows, int(live), total)
        return out


def _less(stmts: list[dict], idle: list[dict], scale: float) -> list[dict]:
    """stmts minus scale times the same statements of the idle window (by queryid and level), none below 0."""
    bg = {(s["queryid"], s["toplevel"]): s for s in idle}
    out = []
    for s in stmts:
        b = bg.get((s["queryid"], s["toplevel"]))
        if b:
            s = {**s, **{k: max(0.0, float(s[k]) - scale * float(b[k])) for k in ("calls", "ms", "wal_records", "wal_bytes")}}
        out.append(s)
    return out


COUNTS = ("commits", "rollbacks", "inserted", "updated", "deleted")


def summarize(n: int, db0: dict, db1: dict, wal_lsn: float, stmts: list[dict], t0: dict, t1: dict, idle: dict,
              top: int = 12) -> dict:
    """Per-run figures of n runs from the readings before (db0, t0) and after (db1, t1), less the background
    counted in the idle window (idle: db0, db1, stmts, wal_lsn) scaled to the window of the runs."""
    secs = db1["at"] - db0["at"]
    idle_secs = idle["db1"]["at"] - idle["db0"]["at"]
    scale = secs / idle_secs
    bg = {k: idle["db1"][k] - idle["db0"][k] for k in COUNTS}
    net = _less(stmts, idle["stmts"], scale)
    top_level = [s for s in net if s["toplevel"]]
    grew = {}
    for name, (rows, live, total) in t1.items():
        r0, l0, b0 = t0.get(name, (0, 0, 0))
        if rows != r0 or live != l0 or total != b0:
            grew[name] = {"rows": (rows - r0) / n, "live_bytes": (live - l0) / n, "bytes": (total - b0) / n}
    by_time = sorted(net, key=lambda s: s["ms"], reverse=True)[:top]
    per_run = {k: (db1[k] - db0[k] - scale * bg[k]) / n for k in COUNTS}
    return {
        "runs": n,
        "secs": secs,
        "idle": {"secs": idle_secs, "statements_per_s": sum(s["calls"] for s in idle["stmts"]) / idle_secs,
                 "commits_per_s": bg["commits"] / idle_secs, "wal_bytes_per_s": idle["wal_lsn"] / idle_secs},
        "statements": sum(s["calls"] for s in net) / n,
        "statements_top": sum(s["calls"] for s in top_level) / n,
        "exec_ms": sum(s["ms"] for s in top_level) / n,
        "exec_ms_all": sum(s["ms"] for s in net) / n,
        **per_run,
        "wal_records": sum(s["wal_records"] for s in top_level) / n,
        "wal_bytes_stmts": sum(float(s["wal_bytes"]) for s in top_level) / n,
        "wal_bytes_lsn": (wal_lsn - scale * idle["wal_lsn"]) / n,
        "tables": grew,
        "top": [{"calls": s["calls"] / n, "ms": s["ms"] / n, "toplevel": s["toplevel"],
                 "query": re.sub(r"\s+", " ", s["query"]).strip()[:100]} for s in by_time],
    }


def report(pg: dict, names: list[str], label: dict, n: int) -> None:
    """One block: the servers side by side (the baseline beside the current binary), then each one's top statements."""
    first = pg[names[0]]
    print(f"\nPostgreSQL's count (--pg-stats): for each Weft server, {n} stateless foo_bar runs (POST /runs/wait) at c4 after "
          f"{max(10, n // 4)} of warm-up, with pg_stat_statements (track = all: statements inside functions and foreign-key "
          f"checks too) counting in its cluster. Per run; the counters are read {FLUSH_S:g} s after the last run (when every "
          f"backend has reported), and the servers' background work (pollers), counted for {first['idle']['secs']:.0f} s "
          "with nothing running, is subtracted in proportion to the window.\n")
    print("| per run | " + " | ".join(label[x] for x in names) + " |")
    print("|---|" + "---|" * len(names))
    rows = [
        ("statements (calls, nested included) / top-level", lambda r: f"{r['statements']:.1f} / {r['statements_top']:.1f}"),
        ("PostgreSQL execution ms: top-level statements / the sum over all (nested counted twice)",
         lambda r: f"{r['exec_ms']:.2f} / {r['exec_ms_all']:.2f}"),
        ("commits (pg_stat_database xact_commit)", lambda r: f"{r['commits']:.1f}" + (f" (+{r['rollbacks']:.1f} rollbacks)" if r["rollbacks"] > 0.05 else "")),
        ("WAL records (pg_stat_statements)", lambda r: f"{r['wal_records']:.0f}"),
        ("WAL bytes: pg_stat_statements / the WAL position moved", lambda r: f"{r['wal_bytes_stmts']:,.0f} / {r['wal_bytes_lsn']:,.0f}"),
        ("rows inserted / updated / deleted", lambda r: f"{r['inserted']:.1f} / {r['updated']:.1f} / {r['deleted']:.1f}"),
        ("the runs' wall time at c4 (s, all runs)", lambda r: f"{r['runs_secs']:.1f}"),
        ("background subtracted: statements/s, commits/s, WAL bytes/s (idle)",
         lambda r: f"{r['idle']['statements_per_s']:.1f}, {r['idle']['commits_per_s']:.1f}, {r['idle']['wal_bytes_per_s']:,.0f}"),
    ]
    for what, f in rows:
        print(f"| {what} | " + " | ".join(f(pg[x]) for x in names) + " |")
    tables = sorted({t for x in names for t in pg[x]["tables"]})
    print(f"\nWhat the runs leave, per run, once they finished and their on_completion delete happened ({FLUSH_S:g} s later): "
          "rows, bytes of those live rows (pg_column_size), and growth of the table on disk (pg_total_relation_size: heap, "
          "indexes and TOAST, dead rows until vacuumed), for each table that changed.\n")
    print("| table | " + " | ".join(label[x] for x in names) + " |")
    print("|---|" + "---|" * len(names))
    if not tables:
        print("| (no table changed) |" + " |" * len(names))
    for t in tables:
        cells = []
        for x in names:
            g = pg[x]["tables"].get(t)
            cells.append(f"{g['rows']:+.2f} rows, {g['live_bytes']:+,.0f} B live, {g['bytes']:+,.0f} B on disk" if g else "-")
        print(f"| {t} | " + " | ".join(cells) + " |")
    for x in names:
        print(f"\nTop {len(pg[x]['top'])} statements by time, {label[x]} (per run; nested: run inside a function, trigger or "
              "foreign-key check):\n")
        print("| calls | ms | | statement (first 100 characters) |")
        print("|---|---|---|---|")
        for st in pg[x]["top"]:
            q = st["query"].replace("|", "\\|")
            print(f"| {st['calls']:.2f} | {st['ms']:.3f} | {'' if st['toplevel'] else 'nested'} | {q} |")
