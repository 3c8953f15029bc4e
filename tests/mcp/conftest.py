"""Fixtures for driving `cordon serve` with third-party MCP clients.

`make test` sets CORDON_BIN (the built binary) and CORDON_GUEST_DIR (the built guest components).
Each test gets a fresh workspace with real plugins: the probe fixture, the bundled guard hook (with a
deny pattern, to show blocked calls), the conformance fixture and the contract 0.2 fixture.
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import StdioServerParameters

REPO = Path(__file__).resolve().parents[2]
CONFIG = """
[plugins.probe]
limits = { timeout = "30s" }

[plugins.guard]
hook = true

[plugins.guard.settings]
deny = [{ pattern = "forbidden", reason = "that word is not allowed" }]
"""


def _required_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests with `make test`", pytrace=False)
    return value


@pytest.fixture(scope="session")
def cordon_bin() -> str:
    path = _required_env("CORDON_BIN")
    assert Path(path).is_file(), f"{path} does not exist: run `make test`"
    return path


@pytest.fixture(scope="session")
def guest_dir() -> Path:
    return Path(_required_env("CORDON_GUEST_DIR"))


@pytest.fixture(scope="session")
def workspace(tmp_path_factory, guest_dir) -> Path:
    """plugins/ with probe, guard, conformance and contract_v2; a cordon.toml; a shared compile cache."""
    root = tmp_path_factory.mktemp("workspace")
    plugins = root / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", plugins / "probe.wasm")
    shutil.copy(guest_dir / "guard.wasm", plugins / "guard.wasm")
    shutil.copy(guest_dir / "fixture_conformance.wasm", plugins / "conformance.wasm")
    shutil.copy(guest_dir / "fixture_contract_v2.wasm", plugins / "v2.wasm")
    (root / "cordon.toml").write_text(CONFIG)
    (root / "cache").mkdir()
    return root


APPROVAL_CONFIG = """
[plugins.v2]
hook = true

[audit]
path = "audit.jsonl"
"""


@pytest.fixture
def approval_workspace(tmp_path, guest_dir):
    """plugins/ with the contract 0.2 fixture, its asking hook granted, and an audit log."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_contract_v2.wasm", plugins / "v2.wasm")
    (tmp_path / "cordon.toml").write_text(APPROVAL_CONFIG)
    (tmp_path / "cache").mkdir()
    return tmp_path


def server_env(workspace: Path) -> dict:
    return {"XDG_CACHE_HOME": str(workspace / "cache"), "PATH": os.environ.get("PATH", "")}


@pytest.fixture(scope="session")
def stdio_server(cordon_bin, workspace) -> StdioServerParameters:
    return StdioServerParameters(command=cordon_bin, args=["serve"], cwd=str(workspace), env=server_env(workspace))


class HttpServer:
    """`cordon serve --http` on a free loopback port, stopped at the end."""

    def __init__(self, cordon_bin: str, workspace: Path, extra_args=(), env=None):
        self.process = subprocess.Popen(
            [cordon_bin, "serve", "--http", "127.0.0.1:0", *extra_args],
            cwd=workspace,
            env={**server_env(workspace), **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = None
        for line in self.process.stderr:
            found = re.search(r"at (http://\S+/mcp)", line)
            if found:
                self.url = found.group(1)
                break
        if self.url is None:
            self.process.kill()
            raise RuntimeError(f"cordon serve --http did not start (exit {self.process.wait()})")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


@pytest.fixture(scope="session")
def http_server(cordon_bin, workspace):
    server = HttpServer(cordon_bin, workspace)
    yield server
    server.stop()


@pytest.fixture
def anyio_backend():
    return "asyncio"


def run_ts(script: str, *args) -> dict:
    """Runs the TypeScript client script `script` (tests/mcp/) with `args`; what it printed, as JSON."""
    here = Path(__file__).resolve().parent
    assert (here / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), "run `make test`"
    run = subprocess.run(["node", str(here / script), *args], capture_output=True, text=True, timeout=120, cwd=here)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)
