"""A graceful shutdown of `cordon serve --http` (SIGTERM, as Kubernetes sends it, or Ctrl-C): from
the signal on it is not ready (`/readyz` 503) and refuses new requests (503 with `Retry-After`),
while the calls in flight finish and their results reach their clients before it exits 0; a call
still running when `--shutdown-grace` is over is cancelled and its client gets a `cancelled` result."""

import signal
import threading
import time

import httpx2 as httpx

from conftest import HttpServer

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": "2025-11-25"}


def tools_call(url, name, arguments, call_id):
    body = {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return httpx.post(url, json=body, headers=HEADERS, timeout=60)


class InBackground:
    """A request sent on its own thread; when its answer arrived."""

    def __init__(self, send):
        self.response = None
        self.error = None
        self.arrived = None
        self.thread = threading.Thread(target=self._run, args=(send,), daemon=True)
        self.thread.start()

    def _run(self, send):
        try:
            self.response = send()
        except Exception as err:  # noqa: BLE001 - reported by the test
            self.error = err
        self.arrived = time.monotonic()

    def join(self, timeout):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "no answer"
        assert self.error is None, repr(self.error)
        return self.response


class ExitWatch:
    """When the server process exited, and how."""

    def __init__(self, process):
        self.code = None
        self.exited = None
        self.thread = threading.Thread(target=self._run, args=(process,), daemon=True)
        self.thread.start()

    def _run(self, process):
        self.code = process.wait()
        self.exited = time.monotonic()

    def join(self, timeout):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"the server did not exit within {timeout} s"
        return self.code


def base(server):
    return server.url.removesuffix("/mcp")


def test_sigterm_lets_the_running_call_finish_and_refuses_new_requests(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace)
    try:
        assert httpx.get(base(server) + "/readyz", timeout=10).status_code == 200
        call = InBackground(lambda: tools_call(server.url, "sleep", {"millis": 2000}, 1))
        time.sleep(0.7)
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        exit_watch = ExitWatch(server.process)
        time.sleep(0.3)

        ready = httpx.get(base(server) + "/readyz", timeout=10)
        assert ready.status_code == 503 and ready.text.strip() == "shutting down", ready.text
        assert httpx.get(base(server) + "/healthz", timeout=10).status_code == 200, "still alive"
        refused = tools_call(server.url, "echo", {"text": "too late"}, 2)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.json()["error"] == "shutting_down", refused.text

        answer = call.join(timeout=20)
        assert answer.status_code == 200, answer.text
        result = answer.json()["result"]
        assert not result.get("isError"), result
        assert result["content"][0]["text"] == "slept", result
        # A whole 200 answer is the proof that it was written before the exit: a server that exited
        # first would have reset the connection. (Comparing when two client threads woke up is not:
        # under load the reader can be scheduled after the exit watch.)
        assert exit_watch.join(timeout=15) == 0
        assert exit_watch.exited - signalled < 10, "it exited once the call was done, not at the grace's end"
    finally:
        server.stop()


def test_calls_past_the_grace_period_end_cancelled(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace, ["--shutdown-grace", "1s"])
    try:
        call = InBackground(lambda: tools_call(server.url, "sleep", {"millis": 20000}, 7))
        time.sleep(0.7)
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        exit_watch = ExitWatch(server.process)
        answer = call.join(timeout=20)
        assert answer.status_code == 200, answer.text
        result = answer.json()["result"]
        assert result["isError"] and result["_meta"]["cordon/errorKind"] == "cancelled", result
        assert call.arrived - signalled < 8, "cancelled at the grace's end, not after the 20 s sleep"
        assert exit_watch.join(timeout=15) == 0
    finally:
        server.stop()


def test_an_idle_server_stops_at_once_on_ctrl_c(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace)
    try:
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=10) == 0
        assert time.monotonic() - signalled < 5
        assert "cordon: stopped" in server.process.stderr.read()
    finally:
        server.stop()
