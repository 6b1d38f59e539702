"""MCP at /mcp through the official MCP Python client (`mcp`): connect over
Streamable HTTP, list the assistants as tools, call one, a failing run as a
tool error (is_error, not a protocol error), an unknown tool as a protocol
error; and, on a server with WEFT_AUTH=keys, no key -> 401 and two tenants:
the second lists none of the first's tools and cannot call them."""

from __future__ import annotations

import json
import subprocess
import uuid
from contextlib import asynccontextmanager

import httpx
import pytest
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from conftest import weft_binary


@asynccontextmanager
async def mcp_session(url: str, headers: dict | None = None):
    async with create_mcp_http_client(headers=headers or {}) as http:
        async with streamable_http_client(f"{url}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def all_tools(session: ClientSession):
    tools, cursor = [], None
    while True:
        page = await session.list_tools(params={"cursor": cursor} if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def text_of(res) -> str:
    return "".join(c.text for c in res.content if c.type == "text")


async def test_list_and_call(weft):
    name = f"mcp py {uuid.uuid4().hex[:6]}"
    r = httpx.post(f"{weft.url}/assistants", json={"graph_id": "foo_bar", "name": name})
    assert r.status_code == 200, r.text
    async with mcp_session(weft.url) as s:
        tools = {t.name: t for t in await all_tools(s)}
        for n in ["echo_chat", "foo_bar", "hitl", "slow", name.replace(" ", "_")]:
            assert n in tools, sorted(tools)
            assert tools[n].input_schema["type"] == "object"
        assert tools[name.replace(" ", "_")].title == name

        res = await s.call_tool("echo_chat", {"messages": "hi from python"})
        assert not res.is_error, text_of(res)
        msgs = res.structured_content["messages"]
        assert [m["content"] for m in msgs] == ["hi from python", "echo: hi from python"]
        assert json.loads(text_of(res)) == res.structured_content

        res = await s.call_tool(name.replace(" ", "_"), {"foo": "x"})
        assert res.structured_content == {"foo": "b", "bar": ["a", "b"]}


async def test_failing_run_is_a_tool_error(weft):
    async with mcp_session(weft.url) as s:
        res = await s.call_tool("slow", {"ms": "not a number"})
        assert res.is_error is True
        assert "ms must be a number" in text_of(res)
        with pytest.raises(MCPError, match="Unknown tool"):
            await s.call_tool("no_such_tool", {})


async def test_keys_and_tenants(servers):
    w = servers.start(env={"WEFT_AUTH": "keys"})

    def new_key(tenant: str) -> str:
        out = subprocess.run([weft_binary(servers.root), "keys", "create", "--tenant", tenant],
                             env=w.env, capture_output=True, text=True, timeout=60, check=True)
        return out.stdout.strip()

    key_a, key_b = new_key("acme"), new_key("globex")
    r = httpx.post(f"{w.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                   headers={"accept": "application/json, text/event-stream"})
    assert r.status_code == 401, r.text
    r = httpx.post(f"{w.url}/assistants", json={"graph_id": "echo_chat", "name": "acme_helper"},
                   headers={"x-api-key": key_a})
    assert r.status_code == 200, r.text

    async with mcp_session(w.url, {"x-api-key": key_a}) as a:
        names_a = [t.name for t in await all_tools(a)]
        assert "acme_helper" in names_a
        res = await a.call_tool("acme_helper", {"messages": "ping"})
        assert not res.is_error and "echo: ping" in text_of(res)
    async with mcp_session(w.url, {"authorization": f"Bearer {key_b}"}) as b:
        names_b = sorted(t.name for t in await all_tools(b))
        # Tenant B sees the built-in graphs' system assistants, as the
        # default tenant's search lists them, and nothing of A's.
        system = httpx.post(f"{w.url}/assistants/search", json={"metadata": {"created_by": "system"}, "limit": 100},
                            headers={"x-api-key": key_b}).json()
        assert names_b == sorted(a["name"] for a in system) and "echo_chat" in names_b and "acme_helper" not in names_b
        with pytest.raises(MCPError, match="Unknown tool"):
            await b.call_tool("acme_helper", {"messages": "ping"})
