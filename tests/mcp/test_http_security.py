"""`cordon serve --http` security: loopback by default, Host/Origin checks against DNS rebinding,
an optional bearer token, and no public listening without one."""

import os
import socket
import subprocess
import urllib.parse

import httpx2 as httpx
import pytest
from mcp import Client

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def post(url, headers=None):
    return httpx.post(url, json=INITIALIZE, headers={**HEADERS, **(headers or {})}, timeout=10)


def test_foreign_host_and_origin_are_refused(http_server):
    assert post(http_server.url).status_code == 200
    host = post(http_server.url, {"Host": "evil.example.com"})
    assert host.status_code == 403
    assert host.json()["error"] == "forbidden", host.text
    assert "--allow-host" in host.json()["error_description"], host.text
    origin = post(http_server.url, {"Origin": "http://evil.example.com"})
    assert origin.status_code == 403
    assert "--allow-origin" in origin.json()["error_description"], origin.text
    assert post(http_server.url, {"Origin": "http://localhost:3000"}).status_code == 200


def test_allowed_origins_and_hosts_can_be_added(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--allow-origin", "https://app.example.com", "--allow-host", "mcp.example.com"])
    try:
        assert post(server.url, {"Origin": "https://app.example.com"}).status_code == 200
        assert post(server.url, {"Origin": "https://other.example.com"}).status_code == 403
        assert post(server.url, {"Host": "mcp.example.com"}).status_code == 200
        assert post(server.url, {"Host": "other.example.com"}).status_code == 403
    finally:
        server.stop()


async def test_a_bearer_token_is_required_when_configured(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--token-env", "CORDON_TEST_TOKEN"], env={"CORDON_TEST_TOKEN": "s3cret"})
    try:
        missing = post(server.url)
        assert missing.status_code == 401
        assert missing.json()["error"] == "invalid_request", missing.text
        wrong = post(server.url, {"Authorization": "Bearer wrong"})
        assert wrong.status_code == 401
        assert wrong.json()["error"] == "invalid_token", wrong.text
        # The challenge names the error and where the resource metadata is (MCP authorization,
        # RFC 6750 and RFC 9728); the metadata itself needs no token.
        challenge = wrong.headers["www-authenticate"]
        assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge, challenge
        metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
        metadata = httpx.get(metadata_url, timeout=10)
        assert metadata.status_code == 200
        assert metadata.json()["resource"] == server.url, metadata.text
        assert metadata.json()["bearer_methods_supported"] == ["header"]
        # Requests to the metadata path need no token, so they must not take the request slots
        # that token holders share: 70 of them stalled mid-body leave /mcp answering.
        parsed = urllib.parse.urlsplit(server.url)
        stalled = []
        for _ in range(70):
            sock = socket.create_connection((parsed.hostname, parsed.port), timeout=10)
            sock.sendall(b"GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 4194304\r\n\r\n" + b"a" * 1000)
            stalled.append(sock)
        try:
            assert post(server.url, {"Authorization": "Bearer s3cret"}).status_code == 200
        finally:
            for sock in stalled:
                sock.close()
        assert post(server.url, {"Authorization": "Bearer s3cret"}).status_code == 200
        from mcp.client.streamable_http import streamable_http_client
        http = httpx.AsyncClient(headers={"Authorization": "Bearer s3cret"})
        async with Client(streamable_http_client(server.url, http_client=http), mode="legacy", cache=None) as client:
            assert "echo" in {tool.name for tool in (await client.list_tools()).tools}
    finally:
        server.stop()


def test_no_public_address_without_a_token(cordon_bin, workspace):
    run = subprocess.run([cordon_bin, "serve", "--http", "0.0.0.0:0"], cwd=workspace, env=server_env(workspace),
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert "not a loopback address and no bearer token" in run.stderr
    missing = subprocess.run([cordon_bin, "serve", "--http", "127.0.0.1:0", "--token-env", "CORDON_UNSET_TOKEN"],
                             cwd=workspace, env=server_env(workspace), capture_output=True, text=True, timeout=30)
    assert missing.returncode == 2 and "CORDON_UNSET_TOKEN" in missing.stderr


def call(url, name, arguments, call_id=2):
    body = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return httpx.post(url, json=body, headers=HEADERS, timeout=60)


def test_an_oversized_request_is_refused_and_the_server_keeps_serving(http_server):
    refused = call(http_server.url, "echo", {"text": "x" * (5 << 20)})
    assert refused.status_code == 413
    assert "over 4194304 bytes" in refused.text
    assert call(http_server.url, "echo", {"text": "after"}).status_code == 200


def test_requests_past_the_in_flight_bound_are_told_to_retry(cordon_bin, workspace):
    from concurrent.futures import ThreadPoolExecutor
    server = HttpServer(cordon_bin, workspace)
    try:
        with ThreadPoolExecutor(max_workers=80) as pool:
            codes = list(pool.map(lambda i: call(server.url, "sleep", {"millis": 3000}, i).status_code, range(80)))
        assert codes.count(200) >= 64 - 4 and 503 in codes, codes
        assert set(codes) <= {200, 503}, codes
        assert call(server.url, "echo", {"text": "after"}).status_code == 200
    finally:
        server.stop()


def test_idle_connections_are_bounded_and_closed_at_the_header_deadline(cordon_bin, workspace):
    """Connections that never send a request cannot hold the server's file descriptors: past 256
    open at once a new one is answered 503 and closed, and each is closed 10 s after it last sent
    nothing; then the server answers as before."""
    import socket
    import time
    from urllib.parse import urlparse

    server = HttpServer(cordon_bin, workspace)
    address = urlparse(server.url)
    idle = []
    try:
        for _ in range(300):
            idle.append(socket.create_connection((address.hostname, address.port), timeout=5))
        time.sleep(0.5)
        descriptors = len(os.listdir(f"/proc/{server.process.pid}/fd"))
        assert descriptors < 256 + 64, f"the server holds {descriptors} descriptors"
        refused = idle[-1].recv(1024)
        assert refused.startswith(b"HTTP/1.1 503") and b"Retry-After" in refused, refused
        # The held ones are closed by the server once the header deadline passes.
        idle[0].settimeout(20)
        assert idle[0].recv(1024) == b"", "closed by the server at the deadline"
        assert call(server.url, "echo", {"text": "after"}).status_code == 200
    finally:
        for connection in idle:
            connection.close()
        server.stop()


def test_a_request_body_that_never_arrives_is_cut_off_at_its_deadline(http_server):
    """Headers that promise a body, then silence: the request slot is given back after 10 s with 408."""
    import socket
    import time
    from urllib.parse import urlparse

    address = urlparse(http_server.url)
    with socket.create_connection((address.hostname, address.port), timeout=30) as stalled:
        stalled.sendall(
            f"POST {address.path} HTTP/1.1\r\nHost: {address.hostname}:{address.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "Content-Length: 100000\r\n\r\n{".encode()
        )
        started = time.monotonic()
        answer = stalled.recv(4096)
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert b"did not arrive within 10 s" in answer, answer
    assert 8 < waited < 20, waited
    assert call(http_server.url, "echo", {"text": "after"}).status_code == 200
