"""Live plugins: `cordon serve` watches plugins/, cordon.toml and cordon.lock and swaps in what changed
while clients stay connected. Driven by the official Python SDK over stdio and streamable HTTP: a
dropped plugin appears (the client is told, lists it and calls it), a replaced one serves its new
version, a removed one disappears while its call in flight still gets its result, a broken file is
refused with the running set kept, `--locked` refuses an unapproved plugin until `cordon lock`
approves it, and a config edit that grants a directory takes effect (an invalid one is refused with
the running config kept). Each reload is an audit-log record and a `/metrics` count."""

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import anyio
import httpx2 as httpx
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

CONFIG = """
[plugins.probe]
limits = { timeout = "30s" }

[audit]
path = "audit.jsonl"
"""

GRANT = """
[plugins.probe]
limits = { timeout = "30s" }
dirs = [{ host = "data", guest = "/data", mode = "ro" }]

[audit]
path = "audit.jsonl"
"""

# How long a change may take to be seen: the watcher's settle time, a load, and slack for a busy
# 2-core machine.
SEEN_WITHIN = 30.0


@pytest.fixture
def live(tmp_path, guest_dir):
    """plugins/ with the probe fixture, a cordon.toml with an audit log, and a data directory."""
    (tmp_path / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", tmp_path / "plugins" / "probe.wasm")
    (tmp_path / "cordon.toml").write_text(CONFIG)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "note.txt").write_text("granted at last\n")
    (tmp_path / "cache").mkdir()
    return tmp_path


def put_plugin(guest_dir: Path, fixture: str, workspace: Path, name: str) -> None:
    """Copies a fixture into plugins/ the way an operator's deploy would: written beside, renamed in."""
    staged = workspace / "plugins" / f".{name}.partial"
    shutil.copy(guest_dir / fixture, staged)
    os.replace(staged, workspace / "plugins" / f"{name}.wasm")


class Served:
    """`cordon serve` over one transport, with its workspace, for the duration of a test."""

    def __init__(self, transport: str, cordon_bin: str, workspace: Path, args=()):
        self.workspace = workspace
        self.http = None
        if transport == "stdio":
            self.target = StdioServerParameters(
                command=cordon_bin, args=["serve", *args], cwd=str(workspace), env=server_env(workspace)
            )
        else:
            self.http = HttpServer(cordon_bin, workspace, list(args))
            self.target = self.http.url

    def stop(self):
        if self.http:
            self.http.stop()

    def reloads(self) -> list[dict]:
        path = self.workspace / "audit.jsonl"
        if not path.exists():
            return []
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [line for line in lines if line.get("event") == "reload"]


@pytest.fixture(params=["stdio", "http"])
def transport(request):
    return request.param


async def names(client) -> list[str]:
    return [tool.name for tool in (await client.list_tools(cache_mode="bypass")).tools]


async def eventually(check, what: str, within: float = SEEN_WITHIN):
    """Awaits `check()` until it returns something truthy; fails naming `what` after `within` s."""
    deadline = time.monotonic() + within
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"not seen within {within:.0f} s: {what}")
        await anyio.sleep(0.2)


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


class Changes:
    """Counts `tools/list_changed` events from a `subscriptions/listen` stream."""

    def __init__(self):
        self.count = 0

    async def follow(self, subscription):
        async for event in subscription:
            if type(event).__name__ == "ToolsListChanged":
                self.count += 1

    async def after(self, seen: int, what: str):
        async def check():
            return self.count > seen
        await eventually(check, f"tools/list_changed after {what}")
        return self.count


async def test_plugins_come_change_and_go_while_clients_stay_connected(transport, cordon_bin, guest_dir, live):
    served = Served(transport, cordon_bin, live)
    try:
        async with Client(served.target, cache=None) as client:
            changes = Changes()
            async with client.listen(tools_list_changed=True) as subscription, anyio.create_task_group() as tasks:
                tasks.start_soon(changes.follow, subscription)
                before = await names(client)
                assert "sleep" in before and "word_stats" not in before

                # Dropped in: the client is told, lists it and calls it.
                put_plugin(guest_dir, "fixture_contract_v2.wasm", live, "extra")
                seen = await changes.after(0, "a plugin was added")
                listed = await names(client)
                assert "word_stats" in listed and "sleep" in listed
                stats = await client.call_tool("word_stats", {"text": "three little words"})
                assert not stats.is_error, text_of(stats)

                # Replaced: the same file now holds another component, which serves.
                put_plugin(guest_dir, "fixture_py_echo.wasm", live, "extra")
                seen = await changes.after(seen, "a plugin was replaced")
                listed = await names(client)
                assert "py_echo" in listed and "word_stats" not in listed
                echoed = await client.call_tool("py_echo", {"text": "new version"})
                assert not echoed.is_error and "new version" in text_of(echoed)

                # Removed with a call in flight: the call finishes on the set it started with.
                outcome = {}

                async def slow_call():
                    outcome["result"] = await client.call_tool("sleep", {"millis": 4000})

                tasks.start_soon(slow_call)
                await anyio.sleep(1.0)
                (live / "plugins" / "probe.wasm").unlink()
                seen = await changes.after(seen, "a plugin was removed")
                assert "sleep" not in await names(client)
                await eventually(lambda: _ready(outcome), "the call in flight to finish")
                assert not outcome["result"].is_error, text_of(outcome["result"])
                assert "slept" in text_of(outcome["result"])
                gone = await client.call_tool("sleep", {"millis": 1})
                assert gone.is_error and "not_found" in json.dumps(gone.model_dump(mode="json"))
                tasks.cancel_scope.cancel()
        records = served.reloads()
        assert [r["outcome"] for r in records] == ["applied"] * len(records) and len(records) >= 3
        added = [a["plugin"] for r in records for a in r["added"]]
        replaced = [a["plugin"] for r in records for a in r["replaced"]]
        removed = [a["plugin"] for r in records for a in r["removed"]]
        assert "extra" in added and "extra" in replaced and "probe" in removed
        assert all(len(a["sha256"]) == 64 for r in records for a in r["added"] + r["replaced"])
    finally:
        served.stop()


async def _ready(outcome):
    return "result" in outcome


async def test_an_older_client_over_stdio_is_told_with_a_notification(cordon_bin, guest_dir, live):
    told = []

    async def on_message(message):
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root if hasattr(message, "root") else message, types.ToolListChangedNotification
        ):
            told.append(message)
        elif isinstance(message, types.ToolListChangedNotification):
            told.append(message)

    served = Served("stdio", cordon_bin, live)
    async with Client(served.target, mode="legacy", cache=None, message_handler=on_message) as client:
        assert "word_stats" not in await names(client)
        put_plugin(guest_dir, "fixture_contract_v2.wasm", live, "extra")

        async def check():
            return bool(told)
        await eventually(check, "notifications/tools/list_changed on a legacy stdio session")
        assert "word_stats" in await names(client)


async def test_a_broken_file_is_refused_and_the_running_set_keeps_serving(transport, cordon_bin, live):
    served = Served(transport, cordon_bin, live)
    try:
        async with Client(served.target, cache=None) as client:
            before = await names(client)
            (live / "plugins" / "broken.wasm").write_bytes(b"\0asm but not really a component")

            async def refused():
                return [r for r in served.reloads() if any("broken.wasm" in x["file"] for x in r.get("refused", []))]
            records = await eventually(refused, "a reload record refusing broken.wasm")
            assert "component" in records[0]["refused"][0]["reason"] or records[0]["refused"][0]["reason"]
            assert await names(client) == before
            echoed = await client.call_tool("echo", {"text": "still here"})
            assert not echoed.is_error and "still here" in text_of(echoed)
    finally:
        served.stop()


async def test_a_config_edit_takes_effect_and_an_invalid_one_is_refused(transport, cordon_bin, live):
    served = Served(transport, cordon_bin, live)
    try:
        async with Client(served.target, cache=None) as client:
            denied = await client.call_tool("read_path", {"path": "/data/note.txt"})
            assert denied.is_error

            (live / "cordon.toml").write_text(GRANT)

            async def granted():
                result = await client.call_tool("read_path", {"path": "/data/note.txt"})
                return not result.is_error and "granted at last" in text_of(result)
            await eventually(granted, "the new grant to take effect")
            # The plugin file is the same; the reload still says what changed for it.
            regranted = [a for r in served.reloads() for a in r.get("regranted", [])]
            assert [a["plugin"] for a in regranted] == ["probe"], served.reloads()
            assert any(line.startswith("dir /data ro") for line in regranted[0]["granted"]), regranted

            (live / "cordon.toml").write_text(GRANT + "\n[plugins.probe.limits]\nnot_a_limit = 1\n")

            async def refused():
                return [r for r in served.reloads() if r["outcome"] == "refused"]
            records = await eventually(refused, "a refused reload for an invalid cordon.toml")
            assert "cordon.toml" in records[0]["reason"] or "limits" in records[0]["reason"]
            still = await client.call_tool("read_path", {"path": "/data/note.txt"})
            assert not still.is_error and "granted at last" in text_of(still)
    finally:
        served.stop()


def cordon(cordon_bin, workspace, *args):
    done = subprocess.run([cordon_bin, *args], cwd=workspace, env=server_env(workspace),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


async def test_locked_serving_refuses_an_unapproved_plugin_until_the_lock_approves_it(cordon_bin, guest_dir, live):
    cordon(cordon_bin, live, "lock")
    served = Served("http", cordon_bin, live, ["--locked"])
    try:
        async with Client(served.target, cache=None) as client:
            put_plugin(guest_dir, "fixture_contract_v2.wasm", live, "extra")

            async def refused():
                return [r for r in served.reloads() if r["outcome"] == "refused"
                        or any("extra.wasm" in x["file"] for x in r.get("refused", []))]
            records = await eventually(refused, "the unapproved plugin refused")
            assert "lock" in json.dumps(records[0]).lower()
            assert "word_stats" not in await names(client)
            assert "sleep" in await names(client), "the running set keeps serving"

            cordon(cordon_bin, live, "lock")

            async def approved():
                return "word_stats" in await names(client)
            await eventually(approved, "the plugin approved by cordon lock to load")
            stats = await client.call_tool("word_stats", {"text": "approved now"})
            assert not stats.is_error
    finally:
        served.stop()


async def test_reloads_are_counted_in_metrics(cordon_bin, guest_dir, live):
    served = Served("http", cordon_bin, live)
    try:
        metrics_url = served.target.rsplit("/mcp", 1)[0] + "/metrics"
        put_plugin(guest_dir, "fixture_contract_v2.wasm", live, "extra")

        async def counted():
            async with httpx.AsyncClient() as http:
                text = (await http.get(metrics_url)).text
            return 'cordon_reloads_total{outcome="applied"} 1' in text
        await eventually(counted, "cordon_reloads_total to count the reload")
    finally:
        served.stop()


async def test_no_watch_serves_what_it_started_with_until_sighup(cordon_bin, guest_dir, live):
    served = Served("http", cordon_bin, live, ["--no-watch"])
    try:
        async with Client(served.target, cache=None) as client:
            put_plugin(guest_dir, "fixture_contract_v2.wasm", live, "extra")
            await anyio.sleep(3)
            assert "word_stats" not in await names(client)
            served.http.process.send_signal(1)  # SIGHUP

            async def reloaded():
                return "word_stats" in await names(client)
            await eventually(reloaded, "SIGHUP to reload")
    finally:
        served.stop()


async def test_two_replicas_watching_one_volume_converge(cordon_bin, guest_dir, live):
    replicas = [HttpServer(cordon_bin, live), HttpServer(cordon_bin, live)]
    try:
        put_plugin(guest_dir, "fixture_contract_v2.wasm", live, "extra")
        for replica in replicas:
            async with Client(replica.url, cache=None) as client:
                async def listed():
                    return "word_stats" in await names(client)
                await eventually(listed, f"the new tool on replica {replica.url}")
                stats = await client.call_tool("word_stats", {"text": "one two"})
                assert not stats.is_error
    finally:
        for replica in replicas:
            replica.stop()


async def test_no_call_fails_while_a_plugin_is_replaced_every_second(cordon_bin, guest_dir, live):
    """The load test's shape, short: 8 clients call without pause over HTTP while another plugin
    file is replaced every second; every call succeeds and /readyz stays ready. (Latency under reloads is measured by
    `make bench`, section 14.)"""
    served = Served("http", cordon_bin, live)
    versions = ["fixture_contract_v2.wasm", "fixture_conformance.wasm"]
    put_plugin(guest_dir, versions[0], live, "extra")
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}
    outcomes = {"ok": 0, "failed": []}
    stop = anyio.Event()
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            async def client():
                while not stop.is_set():
                    response = await http.post(served.target, json=body, headers=headers)
                    result = response.json().get("result", {}) if response.status_code == 200 else {}
                    if result.get("isError") is False and result["content"][0]["text"] == "hi":
                        outcomes["ok"] += 1
                    else:
                        outcomes["failed"].append((response.status_code, response.text[:200]))

            ready_url = served.target.rsplit("/mcp", 1)[0] + "/readyz"

            async def readiness():
                # /readyz stays ready through every reload.
                while not stop.is_set():
                    outcomes.setdefault("ready", []).append((await http.get(ready_url)).status_code)
                    await anyio.sleep(0.1)

            async def replacer():
                for n in range(1, 7):
                    await anyio.sleep(1)
                    put_plugin(guest_dir, versions[n % 2], live, "extra")
                await anyio.sleep(1.5)
                stop.set()

            async with anyio.create_task_group() as tasks:
                for _ in range(8):
                    tasks.start_soon(client)
                tasks.start_soon(replacer)
                tasks.start_soon(readiness)
        assert outcomes["failed"] == [], outcomes["failed"][:5]
        assert outcomes["ready"] and set(outcomes["ready"]) == {200}, outcomes["ready"]
        assert outcomes["ok"] > 100
        applied = [r for r in served.reloads() if r["outcome"] == "applied"]
        assert len(applied) >= 3, f"the plugin was replaced while calls ran: {len(applied)} reloads"
    finally:
        served.stop()
