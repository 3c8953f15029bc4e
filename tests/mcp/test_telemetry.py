"""OpenTelemetry export, checked by a real OTLP/HTTP receiver on loopback that decodes what cordon
sends with the official protobuf definitions (the `opentelemetry-proto` package): a `cordon run`
against the scripted model gives one trace whose spans nest as the agent loop runs (invoke_agent >
chat, batch > execute_tool > hook) with the GenAI conventions' attribute names; an MCP `tools/call`
whose `_meta` carries a `traceparent` continues that trace; error kinds land in `error.type`;
arguments, results and secrets appear only with `capture_content`, and then masked; metrics arrive
beside the traces; a collector that never answers does not hold a run or its exit."""

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from conftest import REPO, server_env

pytestmark = pytest.mark.anyio

KEY = "sk-otel-test-4f9a8b7c6d5e4f3a2b1c"
SCRIPTED_MODEL = REPO / "tests" / "scripted_model" / "scripted_model.py"
CONFIG = """
[agent]
tools = ["echo", "fail"]

[plugins.guard]
hook = true

[plugins.guard.settings]
deny = [{ pattern = "forbidden", reason = "that word is not allowed" }]
"""


class Receiver:
    """An OTLP/HTTP collector on a free loopback port: decodes every export, or never answers."""

    def __init__(self, hang=False):
        self.raw = []
        self.spans = []
        self.metric_names = set()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if hang:
                    time.sleep(60)
                    return
                receiver.take(self.path, body, self.headers.get("Content-Type", ""))
                if self.path == "/v1/traces":
                    answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                else:
                    answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def take(self, path, body, content_type):
        assert content_type == "application/x-protobuf", content_type
        with self.lock:
            self.raw.append(body)
            if path == "/v1/traces":
                request = trace_service_pb2.ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource in request.resource_spans:
                    service = attributes(resource.resource.attributes).get("service.name")
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            self.spans.append({
                                "name": span.name,
                                "trace": span.trace_id.hex(),
                                "id": span.span_id.hex(),
                                "parent": span.parent_span_id.hex(),
                                "kind": span.kind,
                                "attributes": attributes(span.attributes),
                                "status": span.status.code,
                                "service": service,
                                "start": span.start_time_unix_nano,
                                "end": span.end_time_unix_nano,
                            })
            elif path == "/v1/metrics":
                request = metrics_service_pb2.ExportMetricsServiceRequest()
                request.ParseFromString(body)
                for resource in request.resource_metrics:
                    for scope in resource.scope_metrics:
                        for metric in scope.metrics:
                            self.metric_names.add(metric.name)

    def wait_for(self, predicate, within=15.0):
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            with self.lock:
                if predicate(self):
                    return
            time.sleep(0.1)
        with self.lock:
            spans = [(s["name"], s["attributes"]) for s in self.spans]
        raise AssertionError(f"not received within {within}s: {spans} {sorted(self.metric_names)}")

    def stop(self):
        self.server.shutdown()


def attributes(pairs) -> dict:
    out = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        out[pair.key] = getattr(value, kind) if kind else None

    return out


@pytest.fixture
def receiver():
    collector = Receiver()
    yield collector
    collector.stop()


@pytest.fixture
def traced_workspace(tmp_path, guest_dir):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", plugins / "probe.wasm")
    shutil.copy(guest_dir / "guard.wasm", plugins / "guard.wasm")
    (tmp_path / "cordon.toml").write_text(CONFIG)
    (tmp_path / "cache").mkdir()
    return tmp_path


class ScriptedModel:
    def __init__(self, workspace: Path, replies, **options):
        script = workspace / "script.json"
        script.write_text(json.dumps({"replies": replies, **options}))
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPTED_MODEL), str(script)],
            stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        self.url = re.search(r"(http://\S+)", line).group(1) + "/v1"

    def stop(self):
        self.process.kill()
        self.process.wait()


def run_cordon(cordon_bin, workspace, model, env, prompt="Go", timeout=60, args=()):
    started = time.monotonic()
    done = subprocess.run(
        [cordon_bin, "run", "--base-url", model.url, "--model", "scripted",
         "--api-key-env", "CORDON_OTEL_TEST_KEY", *args, prompt],
        cwd=workspace, env={**server_env(workspace), "CORDON_OTEL_TEST_KEY": KEY, **env},
        capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - started


def by_name(spans, name):
    return [span for span in spans if span["name"] == name]


REPLIES = [
    {"tool_calls": [
        {"id": "c1", "name": "echo", "arguments": {"text": f"ping-7f3a {KEY}"}},
        {"id": "c2", "name": "echo", "arguments": {"text": "a forbidden word"}},
    ]},
    {"text": "Done."},
]


async def test_a_run_is_one_trace_of_nested_agent_chat_tool_and_hook_spans(
        cordon_bin, traced_workspace, receiver):
    model = ScriptedModel(traced_workspace, REPLIES)
    try:
        done, _ = run_cordon(cordon_bin, traced_workspace, model,
                             {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                              "OTEL_SERVICE_NAME": "cordon-under-test"})
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done."
    # The exit flushed everything: nothing to wait for.
    spans = receiver.spans
    assert len({span["trace"] for span in spans}) == 1, spans
    assert {span["service"] for span in spans} == {"cordon-under-test"}

    [agent] = by_name(spans, "invoke_agent cordon")
    assert agent["parent"] == ""
    assert agent["attributes"]["gen_ai.operation.name"] == "invoke_agent"
    assert agent["attributes"]["gen_ai.request.model"] == "scripted"
    assert agent["attributes"]["gen_ai.usage.input_tokens"] > 0

    chats = by_name(spans, "chat scripted")
    assert len(chats) == 2
    for chat in chats:
        assert chat["parent"] == agent["id"]
        assert chat["kind"] == 3  # SPAN_KIND_CLIENT
        assert chat["attributes"]["gen_ai.operation.name"] == "chat"
        assert chat["attributes"]["gen_ai.provider.name"] == "openai"
        assert chat["attributes"]["server.address"] == "127.0.0.1"
        assert chat["attributes"]["gen_ai.usage.input_tokens"] > 0
        assert chat["attributes"]["gen_ai.usage.output_tokens"] > 0

    [batch] = by_name(spans, "cordon.batch")
    assert batch["parent"] == agent["id"]
    assert batch["attributes"]["cordon.batch.calls"] == 2

    tools = {span["attributes"]["gen_ai.tool.call.id"]: span for span in by_name(spans, "execute_tool echo")}
    assert set(tools) == {"c1", "c2"}
    for span in tools.values():
        assert span["parent"] == batch["id"]
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["attributes"]["gen_ai.tool.name"] == "echo"
        assert "gen_ai.tool.call.arguments" not in span["attributes"]
        assert "gen_ai.tool.call.result" not in span["attributes"]
    assert tools["c1"]["attributes"]["cordon.plugin"] == "probe"
    assert "error.type" not in tools["c1"]["attributes"]
    assert tools["c2"]["attributes"]["error.type"] == "blocked"
    assert tools["c2"]["status"] == 2  # STATUS_CODE_ERROR

    hooks = by_name(spans, "hook guard")
    decisions = {(hook["parent"], hook["attributes"]["cordon.hook.decision"]) for hook in hooks}
    assert (tools["c1"]["id"], "allow") in decisions
    assert (tools["c2"]["id"], "block") in decisions
    assert all(hook["attributes"]["cordon.hook.stage"] == "before" for hook in hooks)

    # Children start and end inside their parents.
    ids = {span["id"]: span for span in spans}
    for span in spans:
        if span["parent"]:
            parent = ids[span["parent"]]
            assert parent["start"] <= span["start"] and span["end"] <= parent["end"], (span, parent)

    # No argument, result or secret in anything sent without the opt-in.
    for body in receiver.raw:
        assert b"ping-7f3a" not in body and KEY.encode() not in body

    assert {"cordon.tool.calls", "cordon.tool.duration", "gen_ai.client.token.usage",
            "gen_ai.client.operation.duration", "cordon.sandboxes.in_use"} <= receiver.metric_names


async def test_a_compaction_is_a_span_of_its_turn_holding_the_summary_request(
        cordon_bin, traced_workspace, receiver):
    # Eight echoes of ~1.2 KB each (in the call and again in its result) cannot all stay in a
    # 3,000-token window: the conversation is compacted (the scripted model writes the summary)
    # before the turn goes on.
    filler = "the quick brown fox jumps over the lazy dog " * 28
    replies = [{"tool_calls": [{"id": f"c{n}", "name": "echo", "arguments": {"text": f"part {n}: {filler}"}}]}
               for n in range(1, 9)]
    replies.append({"text": "Done."})
    model = ScriptedModel(traced_workspace, replies, context_window=3000, report_window=False,
                          summary="Summary: four long echoes were made.")
    try:
        done, _ = run_cordon(cordon_bin, traced_workspace, model,
                             {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint},
                             args=["--context-window", "3000", "--events"])
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done."
    compacted = [json.loads(line) for line in done.stderr.splitlines()
                 if line.startswith("{") and '"compaction"' in line]
    assert any(event.get("type") == "compaction" for event in compacted), done.stderr

    spans = receiver.spans
    [agent] = by_name(spans, "invoke_agent cordon")
    compactions = by_name(spans, "cordon.compaction")
    assert compactions, sorted({span["name"] for span in spans})
    chats = by_name(spans, "chat scripted")
    for compaction in compactions:
        assert compaction["parent"] == agent["id"]
        attrs = compaction["attributes"]
        assert attrs["cordon.compaction.tokens_before"] > 0
        assert attrs["cordon.compaction.folded_through"] > attrs["cordon.compaction.folded_from"]
        # The model's summary request is the compaction's child, timed inside it.
        [summary] = [chat for chat in chats if chat["parent"] == compaction["id"]]
        assert compaction["start"] <= summary["start"] and summary["end"] <= compaction["end"]
    # Every other model request is the turn's own.
    assert all(chat["parent"] in {agent["id"]} | {c["id"] for c in compactions} for chat in chats)
    assert len([chat for chat in chats if chat["parent"] == agent["id"]]) >= len(replies)


async def test_content_is_exported_only_when_opted_in_and_then_masked(
        cordon_bin, traced_workspace, receiver):
    config = traced_workspace / "cordon.toml"
    config.write_text(config.read_text() + f'\n[telemetry]\nendpoint = "{receiver.endpoint}"\n'
                      'capture_content = true\nmetrics = false\n')
    model = ScriptedModel(traced_workspace, REPLIES)
    try:
        done, _ = run_cordon(cordon_bin, traced_workspace, model, {})
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr
    tools = {span["attributes"]["gen_ai.tool.call.id"]: span
             for span in by_name(receiver.spans, "execute_tool echo")}
    assert set(tools) == {"c1", "c2"}, (receiver.spans, done.stderr)
    arguments = json.loads(tools["c1"]["attributes"]["gen_ai.tool.call.arguments"])
    assert arguments == {"text": "ping-7f3a [REDACTED:secret]"}
    assert tools["c1"]["attributes"]["gen_ai.tool.call.result"] == "ping-7f3a [REDACTED:secret]"
    for body in receiver.raw:
        assert KEY.encode() not in body
    assert receiver.metric_names == set(), "metrics = false exports traces only"


async def test_an_mcp_call_continues_the_clients_trace(cordon_bin, traced_workspace, receiver):
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent_id = "00f067aa0ba902b7"
    params = StdioServerParameters(
        command=cordon_bin, args=["serve"], cwd=str(traced_workspace),
        env={**server_env(traced_workspace), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    meta = {"traceparent": f"00-{trace_id}-{parent_id}-01", "tracestate": "vendor=1"}
    async with Client(params, cache=None) as client:
        ok = await client.call_tool("echo", {"text": "hello"}, meta=meta)
        assert not ok.is_error
        failed = await client.call_tool("fail", {"message": "nope"}, meta=meta)
        assert failed.is_error
        untraced = await client.call_tool("echo", {"text": "alone"})
        assert not untraced.is_error
    receiver.wait_for(lambda r: len(by_name(r.spans, "tools/call echo")) == 2
                      and by_name(r.spans, "tools/call fail"))
    spans = receiver.spans
    calls = by_name(spans, "tools/call echo") + by_name(spans, "tools/call fail")
    traced = [span for span in calls if span["trace"] == trace_id]
    assert len(traced) == 2, calls
    for span in traced:
        assert span["parent"] == parent_id
        assert span["kind"] == 2  # SPAN_KIND_SERVER
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        assert span["attributes"]["jsonrpc.request.id"]
        assert span["attributes"]["mcp.protocol.version"]
        assert span["attributes"]["network.transport"] == "pipe"
        [batch] = [s for s in spans if s["parent"] == span["id"]]
        assert batch["name"] == "cordon.batch"
        [tool] = [s for s in spans if s["parent"] == batch["id"]]
        assert tool["name"].startswith("execute_tool") and tool["trace"] == trace_id
    [fail] = by_name(spans, "tools/call fail")
    assert fail["attributes"]["error.type"] == "tool_error"
    [fail_batch] = [s for s in spans if s["parent"] == fail["id"]]
    [fail_tool] = [s for s in spans if s["parent"] == fail_batch["id"]]
    assert fail_tool["attributes"]["error.type"] == "tool_error"
    [alone] = [span for span in calls if span["trace"] != trace_id]
    assert alone["parent"] == "", "a request without trace context starts a trace of its own"
    assert "mcp.server.operation.duration" in receiver.metric_names


async def test_a_collector_that_never_answers_does_not_hold_a_run(cordon_bin, traced_workspace):
    dead = Receiver(hang=True)
    model = ScriptedModel(traced_workspace, REPLIES + REPLIES)
    try:
        quiet, quiet_seconds = run_cordon(cordon_bin, traced_workspace, model, {})
        hung, hung_seconds = run_cordon(cordon_bin, traced_workspace, model,
                                        {"OTEL_EXPORTER_OTLP_ENDPOINT": dead.endpoint})
    finally:
        model.stop()
        dead.stop()
    assert quiet.returncode == 0 and hung.returncode == 0, hung.stderr
    assert hung.stdout.strip() == "Done."
    # The calls do not wait for the collector; only the exit's flush does, within its bound
    # (2 s) and the export timeout's.
    assert hung_seconds < quiet_seconds + 8, (quiet_seconds, hung_seconds)
    assert "did not take the last spans" in hung.stderr, hung.stderr


def test_every_exported_string_is_masked_and_bounded(cordon_bin, traced_workspace, receiver):
    # The JSON-RPC request id and a tool name are the client's to choose: one carries a
    # configured secret (the collector's own credential), one is a megabyte. Every string of
    # every exported span, and every byte sent to the collector, is checked for the secret and
    # for size.
    secret = "otel-hdr-secret-9c2e71d04b"
    config = traced_workspace / "cordon.toml"
    config.write_text(config.read_text() + f'\n[telemetry]\nendpoint = "{receiver.endpoint}"\n'
                      f'headers = {{ authorization = "Bearer {secret}" }}\n')
    process = subprocess.Popen([cordon_bin, "serve"], cwd=traced_workspace,
                               env=server_env(traced_workspace), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def request(message):
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            return json.loads(process.stdout.readline())

    huge_id = "r" * 1_000_000
    try:
        request({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        request({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ids = [f"req-{secret}", huge_id, 4]
        for request_id, tool in zip(ids, ["echo", "echo", f"nope-{secret}"]):
            answer = request({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                              "params": {"name": tool, "arguments": {"text": "hi"}}})
            assert answer["id"] == request_id
        # The trace context is the client's too: a tracestate carrying the secret, and one of
        # 32 long entries (16 KB, past the W3C limit of 512), continue the trace without it.
        parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        states = [f"vendor=tok-{secret}",
                  ",".join(f"k{i:02}{'a' * 240}=v{'Z' * 240}" for i in range(32))]
        for number, state in enumerate(states, start=10):
            answer = request({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {
                "name": "echo", "arguments": {"text": "hi"},
                "_meta": {"traceparent": parent, "tracestate": state}}})
            assert answer["id"] == number
    finally:
        process.stdin.close()
        stderr = process.stderr.read()
        process.wait(timeout=30)
    assert process.returncode == 0, stderr
    calls = [span for span in receiver.spans if span["attributes"].get("mcp.method.name") == "tools/call"]
    assert len(calls) == 5, [span["name"] for span in receiver.spans]
    assert sum(span["trace"] == "4bf92f3577b34da6a3ce929d0e0e4736" for span in calls) == 2
    assert any(span["attributes"]["jsonrpc.request.id"].startswith("rrrr") for span in calls)
    assert any("[REDACTED" in span["attributes"]["jsonrpc.request.id"] for span in calls)
    for span in receiver.spans:
        strings = [span["name"]] + [value for value in span["attributes"].values()
                                    if isinstance(value, str)]
        for value in strings:
            assert secret not in value, (span["name"], value[:200])
            assert len(value.encode()) <= 1024, (span["name"], len(value))
    for body in receiver.raw:
        assert secret.encode() not in body
        assert b"Z" * 100 not in body, "an oversized tracestate was exported"
    assert sum(len(body) for body in receiver.raw) < 200_000, "a megabyte id was exported whole"


async def test_session_hooks_are_hook_spans_of_the_turn_with_their_stage(
        cordon_bin, traced_workspace, guest_dir, receiver):
    shutil.copy(guest_dir / "fixture_session_hook.wasm", traced_workspace / "plugins" / "session.wasm")
    config = traced_workspace / "cordon.toml"
    config.write_text(config.read_text() + """
[plugins.session]
hook = true

[plugins.session.settings]
prompt = { add_context = "Be brief." }
""")
    model = ScriptedModel(traced_workspace, [{"text": "Done."}])
    try:
        done, _ = run_cordon(cordon_bin, traced_workspace, model,
                             {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
    finally:
        model.stop()
    assert done.returncode == 0, done.stderr
    spans = receiver.spans
    [agent] = by_name(spans, "invoke_agent cordon")
    hooks = by_name(spans, "hook session")
    in_turn = [hook for hook in hooks if hook["parent"] == agent["id"]]
    assert [(hook["attributes"]["cordon.hook.stage"], hook["attributes"]["cordon.hook.decision"])
            for hook in sorted(in_turn, key=lambda span: span["start"])] == [
        ("session-start", "proceed"), ("prompt", "add_context"), ("model-request", "proceed"),
        ("model-response", "proceed"), ("stop", "proceed")]
    assert all(hook["trace"] == agent["trace"] for hook in in_turn)
    # The end of the session comes after the turn: its own span, with nothing of the tools in it.
    [end] = [hook for hook in hooks if hook["attributes"]["cordon.hook.stage"] == "session-end"]
    assert end["attributes"]["cordon.hook.decision"] == "proceed"
    assert "gen_ai.tool.name" not in end["attributes"]
