"""A2A (issue 30) through the official Python client, a2a-sdk 1.3.0.

Against the session's server: the agent card, SendMessage and a second turn
on the same context, SendStreamingMessage, GetTask, CancelTask, an interrupt
answered as input-required then resumed, and the v0.3 wire through the SDK's
compatibility transport. Against a server with WEFT_AUTH=keys (keys made
with `weft keys create`): 401 without a key, and a second tenant that can
neither read the first's tasks nor use its contexts or assistants.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
import uuid

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import CancelTaskRequest, GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from a2a.utils.errors import InvalidParamsError, TaskNotCancelableError, TaskNotFoundError


def card_path(assistant: str) -> str:
    return f"/.well-known/agent-card.json?assistant_id={assistant}"


def user_message(text: str, context_id: str = "", task_id: str = "") -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)],
                   context_id=context_id, task_id=task_id)


def answer(task) -> str:
    return "".join(p.text for p in task.artifacts[0].parts) if task.artifacts else ""


def rest(base: str, method: str, path: str, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


async def client_for(base: str, assistant: str, *, streaming: bool = False, headers=None, legacy: bool = False):
    hc = httpx.AsyncClient(timeout=30, headers=headers or {})
    factory = ClientFactory(ClientConfig(httpx_client=hc, streaming=streaming))
    if not legacy:
        return await factory.create_from_url(base, relative_card_path=card_path(assistant)), hc
    # A v0.3 client: the card's 0.3 interface only.
    card = await A2ACardResolver(hc, base).get_agent_card(relative_card_path=card_path(assistant))
    keep = [i for i in card.supported_interfaces if i.protocol_version.startswith("0.3")]
    del card.supported_interfaces[:]
    card.supported_interfaces.extend(keep)
    return factory.create(card), hc


async def send(client, message: Message):
    """SendMessage (a non-streaming client): the task."""
    events = [ev async for ev in client.send_message(SendMessageRequest(message=message))]
    assert len(events) == 1 and events[0].WhichOneof("payload") == "task", events
    return events[0].task


async def test_card_and_two_turns(weft):
    client, hc = await client_for(weft.url, "echo_chat")
    try:
        card = await A2ACardResolver(hc, weft.url).get_agent_card(relative_card_path=card_path("echo_chat"))
        assert card.name == "echo_chat"
        assert card.capabilities.streaming
        assert card.skills and card.skills[0].id
        assert "text/plain" in card.default_input_modes
        v1 = [i for i in card.supported_interfaces if i.protocol_version == "1.0"]
        assert v1 and v1[0].protocol_binding == "JSONRPC" and v1[0].url.startswith(weft.url + "/a2a/")

        first = await send(client, user_message("hello"))
        assert first.status.state == TaskState.TASK_STATE_COMPLETED
        assert answer(first) == "echo: hello"
        second = await send(client, user_message("again", first.context_id))
        assert second.context_id == first.context_id and second.id != first.id
        assert answer(second) == "echo: again"

        got = await client.get_task(GetTaskRequest(id=first.id))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED and answer(got) == "echo: hello"
        assert got.history[0].role == Role.ROLE_USER and got.history[0].parts[0].text == "hello"

        status, state = rest(weft.url, "GET", f"/threads/{first.context_id}/state")
        assert status == 200
        assert [m["content"] for m in state["values"]["messages"]] == ["hello", "echo: hello", "again", "echo: again"]
        status, runs = rest(weft.url, "GET", f"/threads/{first.context_id}/runs")
        assert [r["run_id"] for r in runs] == [second.id, first.id]
    finally:
        await hc.aclose()


async def test_stream(weft):
    client, hc = await client_for(weft.url, "echo_chat", streaming=True)
    try:
        events = [ev async for ev in client.send_message(SendMessageRequest(message=user_message("one two three")))]
        kinds = [ev.WhichOneof("payload") for ev in events]
        assert kinds[0] == "task" and events[0].task.status.state == TaskState.TASK_STATE_SUBMITTED
        assert kinds[1] == "status_update" and events[1].status_update.status.state == TaskState.TASK_STATE_WORKING
        chunks = [ev.artifact_update for ev in events if kinds and ev.WhichOneof("payload") == "artifact_update"
                  and not ev.artifact_update.last_chunk]
        assert len(chunks) >= 2
        assert not chunks[0].append and all(c.append for c in chunks[1:])
        assert "".join(c.artifact.parts[0].text for c in chunks) == "echo: one two three"
        whole = [ev.artifact_update for ev in events if ev.WhichOneof("payload") == "artifact_update" and ev.artifact_update.last_chunk]
        assert whole and whole[0].artifact.parts[0].text == "echo: one two three"
        assert kinds[-1] == "status_update" and events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
        got = await client.get_task(GetTaskRequest(id=events[0].task.id))
        assert answer(got) == "echo: one two three"
    finally:
        await hc.aclose()


async def test_interrupt_is_input_required_then_resumed(weft):
    client, hc = await client_for(weft.url, "hitl_chat")
    try:
        asked = await send(client, user_message("hi"))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert asked.status.message.role == Role.ROLE_AGENT
        assert 'Send the reply "echo: hi"?' in asked.status.message.parts[0].text
        assert rest(weft.url, "GET", f"/threads/{asked.context_id}")[1]["status"] == "interrupted"
        done = await send(client, user_message("yes", asked.context_id, asked.id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert answer(done) == "echo: hi"
        assert rest(weft.url, "GET", f"/threads/{asked.context_id}")[1]["status"] == "idle"
    finally:
        await hc.aclose()


async def test_cancel(weft):
    client, hc = await client_for(weft.url, "echo_chat")
    try:
        _, thread = rest(weft.url, "POST", "/threads", {})
        tid = thread["thread_id"]
        assert rest(weft.url, "POST", f"/threads/{tid}/runs", {"assistant_id": "slow", "input": {"ms": 3000}})[0] == 200
        req = SendMessageRequest(message=user_message("later", tid))
        req.configuration.return_immediately = True
        queued = [ev async for ev in client.send_message(req)][0].task
        assert queued.status.state == TaskState.TASK_STATE_SUBMITTED
        canceled = await client.cancel_task(CancelTaskRequest(id=queued.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        assert (await client.get_task(GetTaskRequest(id=queued.id))).status.state == TaskState.TASK_STATE_CANCELED
        assert rest(weft.url, "GET", f"/threads/{tid}/runs/{queued.id}")[1]["status"] == "interrupted"
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=queued.id))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=str(uuid.uuid4())))
    finally:
        await hc.aclose()


async def test_v03_compat_transport(weft):
    client, hc = await client_for(weft.url, "hitl_chat", legacy=True)
    try:
        asked = await send(client, user_message("x"))
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        done = await send(client, user_message("no", asked.context_id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED and answer(done) == "Reply not sent."
        got = await client.get_task(GetTaskRequest(id=done.id))
        assert got.context_id == asked.context_id and answer(got) == "Reply not sent."
    finally:
        await hc.aclose()


def make_key(w, tenant: str) -> str:
    out = subprocess.run([w.proc.args[0], "keys", "create", "--tenant", tenant, "--name", "a2a test"],
                         env=w.env, capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip()


async def test_keys_and_tenants(start_weft, weft):
    if weft.external:
        pytest.skip("needs a server of its own (WEFT_AUTH=keys)")
    w = start_weft(env={"WEFT_AUTH": "keys"})
    key_a, key_b = make_key(w, "a"), make_key(w, "b")
    assert rest(w.url, "GET", card_path("echo_chat"))[0] == 401
    assert rest(w.url, "POST", "/a2a/echo_chat", {})[0] == 401

    a, hca = await client_for(w.url, "echo_chat", headers={"x-api-key": key_a})
    b, hcb = await client_for(w.url, "echo_chat", headers={"Authorization": f"Bearer {key_b}"})
    try:
        task = await send(a, user_message("secret"))
        assert answer(task) == "echo: secret"
        with pytest.raises(TaskNotFoundError) as e:
            await b.get_task(GetTaskRequest(id=task.id))
        assert "secret" not in str(e.value)
        with pytest.raises(TaskNotFoundError):
            await b.cancel_task(CancelTaskRequest(id=task.id))
        with pytest.raises(InvalidParamsError) as e:
            await send(b, user_message("intrude", task.context_id))
        assert "secret" not in str(e.value)
        status, created = rest(w.url, "POST", "/assistants", {"graph_id": "echo_chat", "name": "a-only"}, {"x-api-key": key_a})
        assert status == 200
        assert rest(w.url, "GET", card_path(created["assistant_id"]), headers={"x-api-key": key_b})[0] == 404
        assert rest(w.url, "GET", card_path(created["assistant_id"]), headers={"x-api-key": key_a})[0] == 200
        assert answer(await a.get_task(GetTaskRequest(id=task.id))) == "echo: secret"
    finally:
        await hca.aclose()
        await hcb.aclose()
