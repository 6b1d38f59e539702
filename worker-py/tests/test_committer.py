"""The run's Committer batching a step's values event with its checkpoint.

LangGraph emits a step's values event just before it saves the step's
checkpoint; Weft stores the event as a reference only when both are in one
commit. A fake client records the commits the Committer sends.
"""

import asyncio
import json

import pytest

from weft_worker.run import Committer


class Recorder:
    def __init__(self):
        self.commits: list[dict] = []

    async def request(self, method, path, raw=None, headers=None):
        self.commits.append(json.loads(raw))
        return {"checkpoint_ids": [], "last_seq": 0}


def put(cid: str) -> str:
    return json.dumps({"checkpoint_ns": "", "checkpoint": {"id": cid}})


def kinds(commit: dict) -> list[str]:
    return [c["checkpoint"]["id"] for c in commit["checkpoints"]] + [e["event"] for e in commit["events"]]


@pytest.mark.asyncio
async def test_a_values_event_waits_for_its_checkpoint():
    rec = Recorder()
    c = Committer(rec, "d", "t", linger_s=0.005)
    c.emit("values", "{}")
    await asyncio.sleep(0.03)  # several lingers: the put comes late (a long thread's encoding)
    assert rec.commits == []
    c.add_checkpoint(put("cp1"), complete=lambda: put("cp1"), checkpoint_id="cp1")
    await c.persist()
    await asyncio.sleep(0.03)
    assert [kinds(x) for x in rec.commits] == [["cp1", "values"]]


@pytest.mark.asyncio
async def test_a_values_event_no_put_follows_goes_within_the_hold():
    rec = Recorder()
    c = Committer(rec, "d", "t", linger_s=0.005)
    c.add_checkpoint(put("fork"), complete=lambda: put("fork"), checkpoint_id="fork")
    c.emit("values", "{}")  # a fork's: its put came first
    await asyncio.sleep(Committer.HOLD_MAX_S + 0.1)
    assert [kinds(x) for x in rec.commits] == [["fork", "values"]]


@pytest.mark.asyncio
async def test_exit_durability_holds_nothing():
    rec = Recorder()
    c = Committer(rec, "d", "t", linger_s=0.005, puts_follow_values=False)
    c.emit("values", "{}")
    await asyncio.sleep(0.03)
    assert [kinds(x) for x in rec.commits] == [["values"]]
