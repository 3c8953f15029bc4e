"""Scaling out: `cordon serve --http` keeps no state between requests, so two replicas (two
processes on two ports, as behind a load balancer without sticky sessions) serve one client whose
requests alternate between them: the handshake on one, the listing and the calls on the other."""

import json

import httpx2 as httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import HttpServer

pytestmark = pytest.mark.anyio

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture
def replicas(cordon_bin, workspace):
    servers = [HttpServer(cordon_bin, workspace), HttpServer(cordon_bin, workspace)]
    yield servers
    for server in servers:
        server.stop()


class RoundRobin(httpx.AsyncBaseTransport):
    """Sends each request to the next replica in turn, as a load balancer may; records where each
    JSON-RPC message went."""

    def __init__(self, urls):
        self.targets = [httpx.URL(url) for url in urls]
        self.inner = httpx.AsyncHTTPTransport()
        self.turn = 0
        self.seen = []  # (replica index, HTTP method, JSON-RPC method or None)

    async def handle_async_request(self, request):
        index = self.turn % len(self.targets)
        self.turn += 1
        target = self.targets[index]
        request.url = request.url.copy_with(host=target.host, port=target.port)
        request.headers["host"] = f"{target.host}:{target.port}"
        method = None
        if request.method == "POST":
            body = await request.aread()
            method = json.loads(body).get("method")
        self.seen.append((index, request.method, method))
        return await self.inner.handle_async_request(request)

    async def aclose(self):
        await self.inner.aclose()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_one_client_alternating_between_two_replicas(replicas, mode):
    balancer = RoundRobin([server.url for server in replicas])
    http = httpx.AsyncClient(transport=balancer)
    # The URL names the first replica; the transport decides which one each request reaches.
    async with Client(streamable_http_client(replicas[0].url, http_client=http), mode=mode, cache=None) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"echo", "sleep"} <= tools
        results = [await client.call_tool("echo", {"text": f"call {n}"}) for n in range(4)]
    assert [block.text for result in results for block in result.content] == [f"call {n}" for n in range(4)]
    assert not any(result.is_error for result in results)
    posts = [(index, method) for index, http_method, method in balancer.seen if http_method == "POST"]
    calls = {index for index, method in posts if method == "tools/call"}
    assert calls == {0, 1}, f"both replicas answered calls: {balancer.seen}"
    handshake = next(index for index, method in posts if method in ("initialize", "server/discover"))
    assert any(index != handshake for index, method in posts if method in ("tools/list", "tools/call")), \
        f"requests after the handshake reached the other replica: {balancer.seen}"


def test_raw_json_rpc_alternating_between_replicas(replicas):
    """The handshake on one replica, `notifications/initialized`, `tools/list` and `tools/call` on
    the other: each answers as if it had seen the whole conversation."""
    a, b = (server.url for server in replicas)
    version = "2025-11-25"
    initialize = httpx.post(a, headers=HEADERS, timeout=10, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert initialize.status_code == 200, initialize.text
    assert initialize.json()["result"]["protocolVersion"] == version
    assert "mcp-session-id" not in initialize.headers, "no session to stick to"
    after = {**HEADERS, "mcp-protocol-version": version}
    initialized = httpx.post(b, headers=after, timeout=10,
                             json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert initialized.status_code == 202, initialized.text
    listed = httpx.post(b, headers=after, timeout=10, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listed.status_code == 200, listed.text
    assert "echo" in {tool["name"] for tool in listed.json()["result"]["tools"]}
    called = httpx.post(b, headers=after, timeout=30, json={
        "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}})
    assert called.status_code == 200, called.text
    assert called.json()["result"]["content"][0]["text"] == "hi"
    again = httpx.post(a, headers=after, timeout=30, json={
        "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "ho"}}})
    assert again.json()["result"]["content"][0]["text"] == "ho", again.text
