"""A guest that holds the host in a blocking filesystem call (fsync after writing 16 MiB, again
and again) neither holds its call past the deadline nor stalls the HTTP server: `/healthz` keeps
answering quickly while two such calls run (on two cores, that used to be every async worker)."""

import asyncio
import shutil
import threading
import time

import httpx2 as httpx
import pytest
from mcp import Client

from conftest import HttpServer

pytestmark = pytest.mark.anyio

LIMIT_S = 1.5
CONFIG = f"""
[plugins.hog]
dirs = [{{ host = "out", guest = "/out", mode = "rw" }}]
limits = {{ timeout = "{int(LIMIT_S * 1000)}ms", disk_write = "8GiB" }}
"""


@pytest.fixture
def hog_workspace(tmp_path, guest_dir):
    (tmp_path / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_disk_hog.wasm", tmp_path / "plugins" / "hog.wasm")
    (tmp_path / "out").mkdir()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cordon.toml").write_text(CONFIG)
    return tmp_path


async def test_fsync_neither_outlives_the_deadline_nor_stalls_healthz(cordon_bin, hog_workspace):
    server = HttpServer(cordon_bin, hog_workspace)
    health = server.url.removesuffix("/mcp") + "/healthz"
    answered, failures = [], []
    stop = threading.Event()

    def probe():
        with httpx.Client(timeout=10) as http:
            while not stop.is_set():
                answer = http.get(health)
                if answer.text.strip() != "ok":
                    failures.append(answer.text)
                answered.append(time.monotonic())
                time.sleep(0.02)

    async def hold(name):
        async with Client(server.url, mode="auto", cache=None) as client:
            started = time.monotonic()
            result = await client.call_tool("sync_loop", {"file": name, "bytes": 16 << 20})
            return time.monotonic() - started, result

    watcher = threading.Thread(target=probe)
    try:
        watcher.start()
        began = time.monotonic()
        outcomes = await asyncio.gather(hold("a"), hold("b"))
        ended = time.monotonic()
    finally:
        stop.set()
        watcher.join()
        server.stop()
    for took, result in outcomes:
        assert result.is_error and result.meta["cordon/errorKind"] == "timeout", result
        assert took < LIMIT_S + 0.6, f"the call took {took:.2f} s for a {LIMIT_S} s limit"
    assert not failures, failures
    # The longest wait for an answer while the calls ran: a gap between answers (each probe waits
    # 20 ms before the next), or from the start or up to the end.
    during = [began] + [t for t in answered if began < t < ended] + [ended]
    worst = max(later - earlier for earlier, later in zip(during, during[1:]))
    assert worst < 0.25, f"/healthz went {worst * 1000:.0f} ms without answering while guests were in fsync"
