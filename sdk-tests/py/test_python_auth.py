"""A Python project's langgraph.json auth.path, store.index.embed and ttls
(issue 29, part 6), through the official Python SDK.

fixtures/pyauth is served by `weft dev` (the Python worker serves the
project's langgraph_sdk.Auth and its embed function on a unix socket) and,
with the same test functions, by `langgraph dev` (LangGraph's own server): two
users by bearer token, every thread, assistant and run stamped with its owner
and filtered by it, 401 without a token, 403 from a handler (a sync one and
one reading ctx.permissions), the store namespaced per user, a semantic
search ranked by the project's deterministic fake embedding. The ttls of
langgraph.json are checked on weft dev (?include=ttl).
"""

from __future__ import annotations

import asyncio
import shutil
import time
import urllib.request
import json
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from pyservers import langgraph_cli, start_langgraph_dev, start_weft_dev

HERE = Path(__file__).resolve().parent
ALICE = {"Authorization": "Bearer token-alice"}
BOB = {"Authorization": "Bearer token-bob"}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pyauth") / "pyauth"
    shutil.copytree(HERE / "fixtures" / "pyauth", out, ignore=shutil.ignore_patterns("__pycache__", ".langgraph_api"))
    return out


@pytest.fixture(scope="module")
def weft(servers, project, tmp_path_factory):
    return start_weft_dev(servers, project, env={"WEFT_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))},
                          graphs=[], headers=ALICE)


@pytest.fixture(scope="module", params=["weft-dev", "langgraph-dev"])
def server(request, project, tmp_path_factory):
    if request.param == "weft-dev":
        yield request.getfixturevalue("weft").url
        return
    langgraph_cli()  # a missing CLI is an error: it is pinned in requirements.txt
    srv = start_langgraph_dev(project, str(tmp_path_factory.mktemp("lgdev")), graphs=[], headers=ALICE)
    try:
        yield srv.url
    finally:
        srv.stop()


def status_of(exc: BaseException) -> int:
    assert isinstance(exc, httpx.HTTPStatusError), repr(exc)
    return exc.response.status_code


async def test_no_token_is_401(server):
    anon = get_client(url=server)
    with pytest.raises(httpx.HTTPStatusError) as e:
        await anon.threads.search()
    assert status_of(e.value) == 401
    with pytest.raises(httpx.HTTPStatusError) as e:
        await get_client(url=server, headers={"Authorization": "Bearer nobody"}).threads.create()
    assert status_of(e.value) == 401


async def test_threads_are_stamped_and_filtered(server):
    alice, bob = get_client(url=server, headers=ALICE), get_client(url=server, headers=BOB)
    t = await alice.threads.create(metadata={"topic": "cats"})
    assert t["metadata"]["owner"] == "alice"
    assert t["metadata"]["team"] == "red"  # the user's own field
    assert t["metadata"]["topic"] == "cats"
    tb = await bob.threads.create()
    assert tb["metadata"]["owner"] == "bob" and tb["metadata"]["team"] == "none"

    assert (await alice.threads.get(t["thread_id"]))["thread_id"] == t["thread_id"]
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.threads.get(t["thread_id"])
    assert status_of(e.value) == 404
    mine = {x["thread_id"] for x in await alice.threads.search(limit=100)}
    theirs = {x["thread_id"] for x in await bob.threads.search(limit=100)}
    assert t["thread_id"] in mine and tb["thread_id"] not in mine
    assert tb["thread_id"] in theirs and t["thread_id"] not in theirs

    # Bob cannot change Alice's thread; Alice's update keeps her stamp.
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.threads.update(t["thread_id"], metadata={"topic": "dogs"})
    assert status_of(e.value) == 404
    u = await alice.threads.update(t["thread_id"], metadata={"topic": "dogs"})
    assert u["metadata"]["owner"] == "alice" and u["metadata"]["topic"] == "dogs"


async def test_handlers_refuse_with_403(server):
    alice, bob = get_client(url=server, headers=ALICE), get_client(url=server, headers=BOB)
    with pytest.raises(httpx.HTTPStatusError) as e:
        await alice.threads.create(metadata={"forbidden": True})
    assert status_of(e.value) == 403
    assert "No forbidden threads" in e.value.response.text
    assert not [x for x in await alice.threads.search(metadata={"forbidden": True}, limit=10)]

    # threads:delete is Alice's permission (ctx.permissions), not Bob's.
    tb = await bob.threads.create()
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.threads.delete(tb["thread_id"])
    assert status_of(e.value) == 403
    assert (await bob.threads.get(tb["thread_id"]))["thread_id"] == tb["thread_id"]
    ta = await alice.threads.create()
    await alice.threads.delete(ta["thread_id"])
    with pytest.raises(httpx.HTTPStatusError) as e:
        await alice.threads.get(ta["thread_id"])
    assert status_of(e.value) == 404


async def test_assistants_and_runs_are_the_owners(server):
    alice, bob = get_client(url=server, headers=ALICE), get_client(url=server, headers=BOB)
    a = await alice.assistants.create("echo", name="alice's echo")
    assert a["metadata"]["owner"] == "alice"
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.assistants.get(a["assistant_id"])
    assert status_of(e.value) == 404
    assert a["assistant_id"] not in {x["assistant_id"] for x in await bob.assistants.search(limit=100)}
    assert a["assistant_id"] in {x["assistant_id"] for x in await alice.assistants.search(limit=100)}

    t = await alice.threads.create()
    out = await alice.runs.wait(t["thread_id"], a["assistant_id"], input={"text": "hi"}, metadata={"purpose": "test"})
    assert out == {"text": "echo: hi", "by": "alice"}  # the graph saw the run's user
    runs = await alice.runs.list(t["thread_id"])
    assert len(runs) == 1 and runs[0]["metadata"]["owner"] == "alice"
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.runs.create(t["thread_id"], "echo", input={"text": "mine now"})
    assert status_of(e.value) == 404
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.runs.list(t["thread_id"])
    assert status_of(e.value) == 404
    with pytest.raises(httpx.HTTPStatusError) as e:
        await bob.threads.get_state(t["thread_id"])
    assert status_of(e.value) == 404
    assert (await alice.threads.get_state(t["thread_id"]))["values"]["by"] == "alice"


async def test_store_is_namespaced_per_user(server):
    alice, bob = get_client(url=server, headers=ALICE), get_client(url=server, headers=BOB)
    await alice.store.put_item(["alice", "notes"], "n1", {"text": "a cat"})
    assert (await alice.store.get_item(["alice", "notes"], "n1"))["value"] == {"text": "a cat"}
    for call in (bob.store.get_item(["alice", "notes"], "n1"),
                 bob.store.put_item(["alice", "notes"], "n2", {"text": "bob was here"}),
                 bob.store.search_items(["alice"]),
                 bob.store.delete_item(["alice", "notes"], "n1")):
        with pytest.raises(httpx.HTTPStatusError) as e:
            await call
        assert status_of(e.value) == 403
    assert (await alice.store.get_item(["alice", "notes"], "n1"))["value"] == {"text": "a cat"}
    assert await alice.store.get_item(["alice", "notes"], "n2") is None
    await bob.store.put_item(["bob"], "b1", {"text": "a dog"})
    assert [i["key"] for i in (await bob.store.search_items(["bob"]))["items"]] == ["b1"]


async def test_semantic_search_ranks_by_the_projects_embed(server):
    alice = get_client(url=server, headers=ALICE)
    ns = ["alice", "pets"]
    await alice.store.put_item(ns, "dogs", {"text": "dog dog dog, a cat"})
    await alice.store.put_item(ns, "cats", {"text": "cat cat cat"})
    await alice.store.put_item(ns, "trees", {"text": "a tree by the car"})
    deadline = time.monotonic() + 30
    while True:  # weft embeds puts in the background
        items = (await alice.store.search_items(ns, query="cat", limit=10))["items"]
        if len(items) == 3 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    assert [i["key"] for i in items] == ["cats", "dogs", "trees"]
    assert items[0]["score"] > items[1]["score"] > items[2]["score"]
    dogs = (await alice.store.search_items(ns, query="a dog", limit=1))["items"]
    assert [i["key"] for i in dogs] == ["dogs"]


def _get(url: str, headers: dict):
    req = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


async def test_ttls_of_langgraph_json(weft):
    alice = get_client(url=weft.url, headers=ALICE)
    t = await alice.threads.create()
    got = _get(f"{weft.url}/threads/{t['thread_id']}?include=ttl", ALICE)
    assert got["ttl"]["strategy"] == "delete" and got["ttl"]["ttl_minutes"] == 60
    own = await alice.threads.create(ttl={"ttl": 5, "strategy": "keep_latest"})
    got = _get(f"{weft.url}/threads/{own['thread_id']}?include=ttl", ALICE)
    assert got["ttl"]["strategy"] == "keep_latest" and got["ttl"]["ttl_minutes"] == 5


async def test_concurrent_requests_keep_their_users(server):
    """Many requests in flight at once, of two users: each is answered as its own."""
    alice, bob = get_client(url=server, headers=ALICE), get_client(url=server, headers=BOB)
    ta, tb = await alice.threads.create(), await bob.threads.create()

    async def read(client, tid, ok: bool):
        try:
            got = await client.threads.get(tid)
            return ok and got["thread_id"] == tid
        except httpx.HTTPStatusError as e:
            return not ok and e.response.status_code == 404

    calls = []
    for i in range(40):
        calls += [read(alice, ta["thread_id"], True), read(bob, ta["thread_id"], False),
                  read(bob, tb["thread_id"], True), read(alice, tb["thread_id"], False)]
    results = await asyncio.gather(*calls)
    assert all(results), f"{results.count(False)} of {len(results)} answered for the wrong user"
