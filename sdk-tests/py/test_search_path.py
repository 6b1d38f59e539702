"""Schema langgraph reads Weft's tables whatever the caller's search_path.

LangGraph's own PostgresSaver (Python, unmodified) reaches a Weft thread
through the views of schema langgraph, which call Weft's SQL functions
(weft_blob rebuilds a compact list from thread_elements). Those functions
pin their search_path (migration 029), so:

- a connection whose search_path is `langgraph` alone (no `public`) reads a
  thread Weft wrote, compact lists included; with that or the documented
  `langgraph,public` it prunes the thread (keep_latest: deletes through the
  views, whose blob trigger collects the thread's unused elements, reading
  Weft's checkpoint_blobs, not the view named alike first on the path) and
  the thread stays whole for Weft, which continues it;
- a caller whose search_path puts a schema (or its temporary schema) with a
  decoy table named like Weft's internal ones first still reads Weft's rows.
"""

from __future__ import annotations

import pytest
from langgraph_sdk import get_client

from pyservers import conninfo, project_copy, start_weft_dev

TURNS = 3


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return project_copy(tmp_path_factory.mktemp("searchpath"))


@pytest.fixture(scope="module")
def dev(servers, project, tmp_path_factory):
    return start_weft_dev(servers, project, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))})


async def weft_chat(dev, turns=TURNS):
    """A thread of echo_chat Weft wrote (turns runs); returns its id and the
    messages as (type, content)."""
    client = get_client(url=dev.url)
    tid = (await client.threads.create(metadata={"graph_id": "echo_chat"}))["thread_id"]
    want = []
    for i in range(turns):
        text = f"turn {i}"
        await client.runs.wait(tid, "echo_chat", input={"messages": [{"type": "human", "content": text}]})
        want += [("human", text), ("ai", f"echo: {text}")]
    return tid, want


def compact_lists(conn, tid) -> int:
    """How many of the thread's blobs Weft stores as a compact list."""
    return conn.execute("SELECT count(*) FROM public.checkpoint_blobs WHERE thread_id = %s AND type = 'weft_list'",
                        (tid,)).fetchone()[0]


def pairs(messages):
    return [(m.type, m.content) for m in messages]


@pytest.mark.parametrize("search_path", ["langgraph", "langgraph,public"])
async def test_postgres_saver_reads_prunes_and_continues_a_weft_thread(dev, search_path):
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    tid, want = await weft_chat(dev)
    config = {"configurable": {"thread_id": tid}}
    client = get_client(url=dev.url)
    with psycopg.connect(conninfo(dev, search_path), autocommit=True) as conn:
        assert conn.execute("SHOW search_path").fetchone()[0] == search_path
        assert compact_lists(conn, tid) > 0, "Weft stored no compact list: the test would not read one"
        saver = PostgresSaver(conn)
        latest = saver.get_tuple(config)
        assert pairs(latest.checkpoint["channel_values"]["messages"]) == want
        assert latest.checkpoint["id"] == (await client.threads.get_state(tid))["checkpoint"]["checkpoint_id"]
        assert len(list(saver.list(config))) == len(await client.threads.get_history(tid, limit=100))

        # keep_latest deletes the older checkpoints and the blobs only they
        # used through the views: the blob view's trigger collects the
        # thread's elements no compact list names any more, and keeps the
        # latest list's.
        saver.prune([tid], strategy="keep_latest")
        kept = list(saver.list(config))
        assert [t.checkpoint["id"] for t in kept] == [latest.checkpoint["id"]]
        assert pairs(kept[0].checkpoint["channel_values"]["messages"]) == want

    # Weft reads the pruned thread whole, its worker continues it, and
    # PostgresSaver reads the continuation.
    state = await client.threads.get_state(tid)
    assert [(m["type"], m["content"]) for m in state["values"]["messages"]] == want
    out = await client.runs.wait(tid, "echo_chat", input={"messages": [{"type": "human", "content": "again"}]})
    want += [("human", "again"), ("ai", "echo: again")]
    assert [(m["type"], m["content"]) for m in out["messages"]] == want
    with psycopg.connect(conninfo(dev, search_path), autocommit=True) as conn:
        assert pairs(PostgresSaver(conn).get_tuple(config).checkpoint["channel_values"]["messages"]) == want


@pytest.mark.parametrize("decoy", ["schema", "temporary table"])
async def test_a_callers_search_path_cannot_swap_weft_tables(dev, decoy):
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    tid, want = await weft_chat(dev)
    config = {"configurable": {"thread_id": tid}}
    schema = "decoy_" + tid.replace("-", "")[:12]
    with psycopg.connect(conninfo(dev, "public"), autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        with psycopg.connect(conninfo(dev, f"{schema},langgraph"), autocommit=True) as conn:
            # A table named like each of Weft's own, first on the caller's
            # path, the decoy element log holding other messages under the
            # thread's own seqs.
            target = "pg_temp" if decoy == "temporary table" else schema
            for table in ("thread_elements", "thread_element_seqs", "threads", "runs"):
                conn.execute(f"CREATE TABLE {target}.{table} (LIKE public.{table})")
            conn.execute(f"""INSERT INTO {target}.thread_elements (thread_id, seq, hash, data)
                SELECT thread_id, seq, hash, convert_to('{{"lc": 1, "type": "constructor", "id": ["langchain",
                    "schema", "messages", "HumanMessage"], "kwargs": {{"content": "decoy", "type": "human"}}}}', 'UTF8')
                FROM public.thread_elements WHERE thread_id = %s""", (tid,))
            decoys = conn.execute("SELECT count(*) FROM thread_elements WHERE thread_id = %s", (tid,)).fetchone()[0]
            assert decoys > 0 and compact_lists(conn, tid) > 0
            assert conn.execute("SELECT count(*) FROM langgraph.checkpoints WHERE thread_id = %s",
                                (tid,)).fetchone()[0] > 0

            latest = PostgresSaver(conn).get_tuple(config)
            assert pairs(latest.checkpoint["channel_values"]["messages"]) == want
            # The functions behind the views, called directly, read Weft's too.
            blobs = conn.execute("""SELECT convert_from(blob, 'UTF8') FROM langgraph.checkpoint_blobs
                WHERE thread_id = %s AND channel = 'messages'""", (tid,)).fetchall()
            assert blobs and not any("decoy" in b for (b,) in blobs)
    finally:
        with psycopg.connect(conninfo(dev, "public"), autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")
