"""`cordon serve` driven by the official Python MCP SDK (`mcp.Client`), over stdio and streamable
HTTP, in auto mode (2026-07-28: `server/discover` first) and legacy mode (`initialize`)."""

import time

import anyio
import pytest
from mcp import Client
import mcp.types as types

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]


@pytest.fixture(params=["stdio", "http"])
def target(request, stdio_server, http_server):
    return stdio_server if request.param == "stdio" else http_server.url


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def error_kind(result) -> str:
    return (result.meta or {}).get("cordon/errorKind")


@pytest.mark.parametrize("mode", MODES)
async def test_lists_the_tools_with_titles_and_schemas(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.protocol_version == expected
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"echo", "panic", "test_simple_text"} <= set(tools)
        assert tools["echo"].title == "Echo"
        assert tools["echo"].description == "Returns the text it is given."
        assert tools["echo"].input_schema["required"] == ["text"]


@pytest.mark.parametrize("mode", MODES)
async def test_calls_a_tool(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        result = await client.call_tool("echo", {"text": "hello", "times": 2})
        assert not result.is_error
        assert texts(result) == "hellohello"
        assert result.meta["cordon/details"]["callId"]


@pytest.mark.parametrize("mode", MODES)
async def test_failures_are_error_results_with_their_kind_in_meta(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        invalid = await client.call_tool("echo", {"times": 99})
        assert invalid.is_error and error_kind(invalid) == "invalid_arguments"
        assert '"text" is a required property' in texts(invalid)
        assert "cordon/errorKind" not in texts(invalid), "the kind stays out of the model's text"

        trap = await client.call_tool("panic", {"message": "kaboom"})
        assert trap.is_error and error_kind(trap) == "trap"
        assert "kaboom" in texts(trap)

        blocked = await client.call_tool("echo", {"text": "forbidden word"})
        assert blocked.is_error and error_kind(blocked) == "blocked"
        assert "that word is not allowed" in texts(blocked)

        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error and error_kind(unknown) == "not_found"


@pytest.mark.parametrize("mode", MODES)
async def test_progress_notifications_arrive(target, mode):
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async with Client(target, mode=mode, cache=None) as client:
        result = await client.call_tool("progress", {"steps": 3, "millis": 20}, progress_callback=on_progress)
        assert texts(result) == "done"
    assert seen == [(1.0, "step 1 of 3"), (2.0, "step 2 of 3"), (3.0, "step 3 of 3")]


@pytest.mark.parametrize("mode", MODES)
async def test_cancelling_a_long_call_stops_it(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        started = time.monotonic()
        with anyio.move_on_after(0.5):
            await client.call_tool("sleep", {"millis": 30000})
        assert time.monotonic() - started < 5
        # The session is still usable right away, and so is the sandbox pool.
        after = await client.call_tool("counter", {})
        assert texts(after) == "1"
        assert time.monotonic() - started < 5


async def test_fifty_concurrent_calls_over_http(http_server):
    async with Client(http_server.url, mode="legacy", cache=None) as client:
        results = [None] * 50

        async def one(i):
            results[i] = await client.call_tool("echo", {"text": f"call {i}"})

        async with anyio.create_task_group() as group:
            for i in range(50):
                group.start_soon(one, i)
    assert [texts(r) for r in results] == [f"call {i}" for i in range(50)]


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_tool_logs_reach_a_client_that_asks_for_them(target):
    received = []

    async def on_log(params):
        received.append((params.level, params.logger, params.data))

    # 2026-07-28: the opt-in travels in each request's _meta.
    async with Client(target, mode="auto", cache=None, logging_callback=on_log, log_level="info") as client:
        await client.call_tool("echo", {"text": "auto"})
    assert ("info", "echo", "echoing 4 bytes") in received, received
    # Handshake era: logging/setLevel.
    async with Client(target, mode="legacy", cache=None, logging_callback=on_log) as client:
        await client.set_logging_level("info")
        await client.call_tool("echo", {"text": "legacy"})
    assert ("info", "echo", "echoing 6 bytes") in received, received


async def test_no_tool_logs_without_asking(stdio_server):
    received = []

    async def on_log(params):
        received.append(params)

    async with Client(stdio_server, mode="auto", cache=None, logging_callback=on_log) as client:
        await client.call_tool("echo", {"text": "quiet"})
    assert received == []


@pytest.fixture(scope="module")
def reviewed_server(tmp_path_factory, cordon_bin, guest_dir):
    """probe with the bundled redact hook reviewing every result."""
    import shutil
    from conftest import server_env
    from mcp import StdioServerParameters
    root = tmp_path_factory.mktemp("reviewed")
    (root / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", root / "plugins" / "probe.wasm")
    shutil.copy(guest_dir / "redact.wasm", root / "plugins" / "redact.wasm")
    (root / "cordon.toml").write_text("[plugins.redact]\nhook = true\n")
    (root / "cache").mkdir()
    return StdioServerParameters(command=cordon_bin, args=["serve"], cwd=str(root), env=server_env(root))


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_no_text_of_a_reviewed_tool_reaches_the_client_before_its_review(reviewed_server):
    progress, logs = [], []

    async def on_progress(step, total, message):
        progress.append((step, total, message))

    async def on_log(params):
        logs.append(params)

    async with Client(reviewed_server, mode="auto", cache=None, logging_callback=on_log, log_level="debug") as client:
        # Seven quick updates: none reaches the client, not even how many there were (a count or
        # the gaps between updates could carry a byte of a secret).
        arguments = {"steps": 7, "millis": 10, "numbers": True}
        result = await client.call_tool("progress", arguments, progress_callback=on_progress)
        assert texts(result) == "done"
        assert progress == [], progress
        # A slow call still shows it is alive: the host's heartbeat, once a second, its own count.
        arguments = {"steps": 1, "millis": 2500, "numbers": True}
        result = await client.call_tool("progress", arguments, progress_callback=on_progress)
        assert texts(result) == "done"
        await client.call_tool("echo", {"text": "quiet"})
    assert progress[:2] == [(1.0, None, None), (2.0, None, None)], progress
    assert len(progress) <= 3, progress
    assert logs == [], logs


@pytest.fixture(scope="module")
def unreviewed_progress_server(tmp_path_factory, cordon_bin, guest_dir):
    """probe with the bundled redact hook reviewing every result, its progress let through."""
    import shutil
    from conftest import server_env
    from mcp import StdioServerParameters
    root = tmp_path_factory.mktemp("unreviewed")
    (root / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", root / "plugins" / "probe.wasm")
    shutil.copy(guest_dir / "redact.wasm", root / "plugins" / "redact.wasm")
    (root / "cordon.toml").write_text("[plugins.redact]\nhook = true\nunreviewed_progress = true\n")
    (root / "cache").mkdir()
    return StdioServerParameters(command=cordon_bin, args=["serve"], cwd=str(root), env=server_env(root))


async def test_progress_the_operator_lets_pass_an_after_hook_keeps_its_message_and_total(unreviewed_progress_server):
    progress = []

    async def on_progress(step, total, message):
        progress.append((step, total, message))

    async with Client(unreviewed_progress_server, mode="auto", cache=None) as client:
        arguments = {"steps": 3, "millis": 10, "numbers": True}
        result = await client.call_tool("progress", arguments, progress_callback=on_progress)
        assert texts(result) == "done"
    assert progress == [(1065.0, 1e9, "step 1 of 3"), (2065.0, 1e9, "step 2 of 3"), (3065.0, 1e9, "step 3 of 3")], progress


@pytest.mark.parametrize("mode", MODES)
async def test_titles_annotations_output_schemas_and_structured_content(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        stats = tools["word_stats"]
        assert stats.title == "Word statistics"
        hints = stats.annotations
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
            True, False, True, False)
        assert stats.output_schema["properties"]["words"]["type"] == "integer"
        assert tools["touch"].annotations.destructive_hint is True
        # A tool that declares neither: its title, no hints, no output schema.
        assert tools["echo"].annotations.title == "Echo"
        assert tools["echo"].annotations.read_only_hint is None
        assert tools["echo"].output_schema is None

        # The client checks structuredContent against the output schema itself.
        result = await client.call_tool("word_stats", {"text": "two words"})
        assert not result.is_error
        assert result.structured_content == {"words": 2, "characters": 9}
        broken = await client.call_tool("word_stats", {"text": "x", "mode": "mismatch"})
        assert broken.is_error and error_kind(broken) == "tool_error"
        assert "does not match its output schema" in texts(broken)
