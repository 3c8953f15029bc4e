"""Cancelling a call over streamable HTTP stops the guest, in both protocol revisions: the TypeScript
SDK's client (2025-11-25) sends `notifications/cancelled` as a request of its own; the Python client
in auto mode (2026-07-28) closes the call's stream. Whether the guest stopped is read from the
audit log, which gets the call's line when its sandbox ends: `cancelled`, soon after the cancel,
not the 30 s the spinning tool would otherwise run."""

import json
import shutil
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from conftest import HttpServer

HERE = Path(__file__).resolve().parent
CONFIG = """
[plugins.probe]
limits = { timeout = "30s", fuel = 1000000000000 }

[audit]
path = "audit.jsonl"
"""


@pytest.fixture
def spinning_server(tmp_path, guest_dir, cordon_bin):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", plugins / "probe.wasm")
    (tmp_path / "cordon.toml").write_text(CONFIG)
    (tmp_path / "cache").mkdir()
    server = HttpServer(cordon_bin, tmp_path)
    yield server, tmp_path
    server.stop()


def audit_line_of(workspace, tool, within=8.0):
    """The audit line of the first call of `tool`, waiting up to `within` seconds for it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        log = workspace / "audit.jsonl"
        if log.exists():
            for line in log.read_text().splitlines():
                entry = json.loads(line)
                if entry["tool"] == tool:
                    return entry
        time.sleep(0.1)
    pytest.fail(f"no audit line for {tool} within {within} s: the guest is still running")


def test_the_typescript_clients_cancellation_stops_the_guest(spinning_server):
    server, workspace = spinning_server
    run = subprocess.run(["node", str(HERE / "ts_client.mjs"), "cancel", server.url, "spin", "{}", "1000"],
                         capture_output=True, text=True, timeout=60, cwd=HERE)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["protocolVersion"] == "2025-11-25", seen
    assert "the test cancels" in seen.get("thrown", ""), seen
    entry = audit_line_of(workspace, "spin")
    assert entry["errorKind"] == "cancelled", entry
    assert entry["durationMs"] < 5000, entry


@pytest.mark.anyio
async def test_the_python_clients_cancellation_stops_the_guest(spinning_server):
    server, workspace = spinning_server
    async with Client(server.url, mode="auto", cache=None) as client:
        assert client.protocol_version == "2026-07-28"
        with anyio.move_on_after(1.0):
            await client.call_tool("spin", {})
    entry = audit_line_of(workspace, "spin")
    assert entry["errorKind"] == "cancelled", entry
    assert entry["durationMs"] < 5000, entry
