"""The official Python SDK against the session's server: the smallest round trip."""

from langgraph_sdk import get_sync_client


def test_wait_on_builtin_graph(weft):
    client = get_sync_client(url=weft.url)
    thread = client.threads.create()
    out = client.runs.wait(thread["thread_id"], "echo_chat", input={"messages": [{"role": "human", "content": "hi"}]})
    contents = [m["content"] for m in out["messages"]]
    assert contents[0] == "hi"
    assert len(contents) == 2, contents
    assert client.threads.get(thread["thread_id"])["status"] == "idle"
