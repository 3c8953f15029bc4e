"""Red team of `cordon serve --http`'s probes, metrics and shutdown: raw-socket path and Host tricks
against the token on /metrics, label injection through client-chosen names, and clients (half-sent
headers, idle keep-alive connections, a response never read, a request sent after SIGTERM on a
connection opened before it) that try to hold the shutdown or get served during it."""

import json
import signal
import socket
import time
from urllib.parse import urlparse

import httpx2 as httpx
from prometheus_client.parser import text_string_to_metric_families

from conftest import HttpServer

TOKEN = {"CORDON_TEST_TOKEN": "s3cret"}
BEARER = {"Authorization": "Bearer s3cret"}
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}


def base(server):
    return server.url.removesuffix("/mcp")


def address(server):
    url = urlparse(server.url)
    return url.hostname, url.port


def raw(server, request: bytes, timeout=5.0) -> bytes:
    """Sends `request` as is on a fresh connection and returns everything read until it closes."""
    with socket.create_connection(address(server), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except socket.timeout:
            pass
        return b"".join(chunks)


def wait_exit(process, timeout):
    started = time.monotonic()
    try:
        code = process.wait(timeout=timeout)
    except Exception:  # noqa: BLE001
        process.kill()
        process.wait()
        raise AssertionError(f"the server did not exit within {timeout} s of SIGTERM") from None
    return code, time.monotonic() - started


def test_metrics_path_and_request_target_tricks_never_skip_the_token(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--token-env", "CORDON_TEST_TOKEN"], env=TOKEN)
    try:
        host, port = address(server)
        targets = ["/metrics", "/metrics/", "//metrics", "/metrics?x=1", "/metrics#x", "/METRICS",
                   "/%6detrics", "/metrics%2f", "/./metrics", "/mcp/../metrics", "/healthz/../metrics",
                   "/metrics;x", f"http://{host}:{port}/metrics", "http://localhost/metrics",
                   "*", "/.well-known/oauth-protected-resource/../../metrics"]
        for method in ["GET", "HEAD", "POST", "OPTIONS"]:
            for target in targets:
                answer = raw(server, f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                                     f"Content-Length: 0\r\nConnection: close\r\n\r\n".encode())
                status = answer.split(b"\r\n", 1)[0]
                assert b"cordon_tool_calls_total" not in answer and b"cordon_build_info" not in answer, \
                    (method, target, answer[:300])
                assert not status.startswith(b"HTTP/1.1 200") or method == "OPTIONS" or target == "*", \
                    (method, target, answer[:300])
        # HTTP/1.0 without a Host, and absolute-form naming a foreign host.
        for request in [b"GET /metrics HTTP/1.0\r\n\r\n",
                        b"GET /metrics HTTP/1.0\r\nAuthorization: Bearer s3cret\r\n\r\n",
                        f"GET http://evil.example/metrics HTTP/1.1\r\nHost: evil.example\r\n"
                        f"Authorization: Bearer s3cret\r\nConnection: close\r\n\r\n".encode()]:
            answer = raw(server, request)
            assert b"cordon_build_info" not in answer, (request, answer[:300])
    finally:
        server.stop()


def test_rebinding_hosts_cannot_read_public_metrics(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--token-env", "CORDON_TEST_TOKEN", "--metrics-public"], env=TOKEN)
    try:
        _, port = address(server)
        for host in ["evil.example", f"evil.example:{port}", "localhost.evil.example", "127.0.0.1.nip.io",
                     "LOCALHOST.", "0.0.0.0", f"0.0.0.0:{port}", "[::ffff:127.0.0.1]", "2130706433",
                     "127.1", "", "localhost\tevil"]:
            request = f"GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode()
            answer = raw(server, request)
            assert b"cordon_build_info" not in answer, (host, answer[:300])
        # Two Host headers: the check must not read one and the router another.
        answer = raw(server, b"GET /metrics HTTP/1.1\r\nHost: evil.example\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        assert b"cordon_build_info" not in answer, answer[:300]
        # A foreign page's Origin, even with a loopback Host.
        page = httpx.get(base(server) + "/metrics", headers={"Origin": "http://evil.example"}, timeout=10)
        assert page.status_code == 403, page.text
        page = httpx.get(base(server) + "/metrics", headers={"Origin": "null"}, timeout=10)
        assert page.status_code == 403, page.text
    finally:
        server.stop()


def test_client_chosen_names_never_become_label_values(http_server):
    names = ['a"b', "x\ny", "z\\", "sleep\r\n# TYPE evil counter", "é" * 50] + [f"made_up_{i}" for i in range(50)]
    for index, name in enumerate(names):
        body = {"jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": {"name": name, "arguments": {}}}
        httpx.post(http_server.url, json=body, headers=MCP_HEADERS, timeout=10)
    # Methods and malformed params are not labels either.
    for method in ['tools/"call', "evil\nmethod"]:
        httpx.post(http_server.url, json={"jsonrpc": "2.0", "id": 999, "method": method, "params": {}},
                   headers=MCP_HEADERS, timeout=10)
    response = httpx.get(base(http_server) + "/metrics", timeout=10)
    assert response.status_code == 200
    families = list(text_string_to_metric_families(response.text))
    offered = {tool["name"] for tool in httpx.post(
        http_server.url, json={"jsonrpc": "2.0", "id": 1000, "method": "tools/list"}, headers=MCP_HEADERS,
        timeout=10).json()["result"]["tools"]}
    for family in families:
        for found in family.samples:
            tool = found.labels.get("tool")
            assert tool is None or tool == "(unknown)" or tool in offered, (family.name, found.labels)
    assert not any(family.name.startswith("evil") for family in families)
    assert "made_up_1" not in response.text and "evil" not in response.text


def test_a_request_on_a_connection_opened_before_sigterm_is_refused_after_it(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--shutdown-grace", "5s"])
    host, port = address(server)
    try:
        # One call keeps the server draining for a while.
        holder = socket.create_connection((host, port), timeout=10)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "sleep", "arguments": {"millis": 3000}}}).encode()
        head = "".join(f"{k}: {v}\r\n" for k, v in MCP_HEADERS.items())
        holder.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        # A keep-alive connection that already served a request.
        idle = socket.create_connection((host, port), timeout=10)
        idle.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert idle.recv(4096).startswith(b"HTTP/1.1 200")
        time.sleep(0.5)
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        assert httpx.get(base(server) + "/readyz", timeout=5).status_code == 503
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "late"}}}
        late = json.dumps(call).encode()
        try:
            idle.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(late)}\r\n\r\n".encode() + late)
            answer = idle.recv(65536)
        except OSError:
            answer = b""
        assert b"late" not in answer, f"a request sent after SIGTERM was served: {answer[:400]!r}"
        assert answer == b"" or answer.startswith(b"HTTP/1.1 503"), answer[:400]
        # The call in flight is still answered.
        holder.settimeout(15)
        got = b""
        while b"slept" not in got:
            chunk = holder.recv(65536)
            if not chunk:
                break
            got += chunk
        assert b"slept" in got, got[:400]
        code, _ = wait_exit(server.process, 15)
        assert code == 0
    finally:
        if server.process.poll() is None:
            server.process.kill()


def test_slow_idle_and_non_reading_clients_cannot_hold_the_shutdown(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--shutdown-grace", "2s"])
    host, port = address(server)
    sockets = []
    try:
        # Half-sent headers (slowloris), trickled on.
        for _ in range(40):
            sock = socket.create_connection((host, port), timeout=10)
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
            sockets.append(sock)
        # Headers sent, the body never.
        for _ in range(20):
            sock = socket.create_connection((host, port), timeout=10)
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: 100000\r\n\r\n{{".encode())
            sockets.append(sock)
        # Idle keep-alive connections.
        for _ in range(100):
            sockets.append(socket.create_connection((host, port), timeout=10))
        # Big answers never read.
        head = "".join(f"{k}: {v}\r\n" for k, v in MCP_HEADERS.items())
        for index in range(4):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, port))
            body = json.dumps({"jsonrpc": "2.0", "id": index, "method": "tools/call",
                               "params": {"name": "big_output", "arguments": {"bytes": 900000}}}).encode()
            sock.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
            sockets.append(sock)
        time.sleep(1.5)
        stop_at = time.monotonic() + 12
        server.process.send_signal(signal.SIGTERM)
        # Keep trickling header bytes meanwhile.
        while server.process.poll() is None and time.monotonic() < stop_at:
            for sock in sockets[:40]:
                try:
                    sock.sendall(b"X-A: b\r\n")
                except OSError:
                    pass
            time.sleep(0.5)
        # grace 2 s + cancelled calls 5 s + closing 2 s, and a margin.
        code, _ = wait_exit(server.process, max(0.1, stop_at - time.monotonic()) + 3)
        assert code == 0
    finally:
        for sock in sockets:
            sock.close()
        if server.process.poll() is None:
            server.process.kill()
