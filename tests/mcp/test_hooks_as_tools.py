"""`cordon serve --hooks-as-tools` driven by the official Python MCP SDK: each granted hook is a
tool, `hook_ID`, whose answer is what the hook decides in `cordon call` and `cordon run`; without
the option nothing of this is offered."""

import json
import shutil
import subprocess

import pytest
from mcp import Client, StdioServerParameters
import mcp.types as types

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

CONFIG = """
[plugins.probe]
limits = { timeout = "30s" }

[plugins.guard]
hook = true

[plugins.guard.settings]
deny = [
  { pattern = "forbidden", reason = "that word is not allowed" },
  { pattern = "terminal", reason = "bad\\u001b[2J\\u0007\\u202eword\\r\\nnext" },
]

[plugins.session]
hook = true

[model]
base_url = "http://127.0.0.1:9/v1"
model = "none"
context_window = 8192

[audit]
path = "audit.jsonl"
"""


@pytest.fixture(scope="module")
def hook_workspace(tmp_path_factory, guest_dir):
    """probe's tools, the guard before-hook and a Rust SDK session hook (prompt, model-response, stop)."""
    root = tmp_path_factory.mktemp("hooks-as-tools")
    plugins = root / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", plugins / "probe.wasm")
    shutil.copy(guest_dir / "guard.wasm", plugins / "guard.wasm")
    shutil.copy(guest_dir / "fixture_rust_session.wasm", plugins / "session.wasm")
    (root / "cordon.toml").write_text(CONFIG)
    (root / "cache").mkdir()
    return root


def server(cordon_bin, workspace, *args):
    return StdioServerParameters(command=cordon_bin, args=["serve", *args], cwd=str(workspace), env=server_env(workspace))


def text(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def cordon(cordon_bin, workspace, *args):
    return subprocess.run([cordon_bin, *args], cwd=workspace, env=server_env(workspace), capture_output=True, text=True, timeout=120)


async def test_without_the_option_no_hook_is_a_tool(cordon_bin, hook_workspace):
    async with Client(server(cordon_bin, hook_workspace), cache=None) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "echo" in names
        assert not any(name.startswith("hook_") for name in names), names
        result = await client.call_tool("hook_guard", {"stage": "before-tool-call", "tool": "echo"})
        assert result.is_error
        assert (result.meta or {}).get("cordon/errorKind") == "not_found"


@pytest.fixture(params=["stdio", "http"])
def hooks_target(request, cordon_bin, hook_workspace):
    if request.param == "stdio":
        yield server(cordon_bin, hook_workspace, "--hooks-as-tools")
        return
    http = HttpServer(cordon_bin, hook_workspace, extra_args=["--hooks-as-tools"])
    yield http.url
    http.stop()


async def test_each_hook_is_a_tool_with_its_stages(hooks_target):
    async with Client(hooks_target, cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"echo", "hook_guard", "hook_session"} <= set(tools)
        assert tools["hook_guard"].input_schema["properties"]["stage"]["enum"] == ["before-tool-call"]
        assert tools["hook_session"].input_schema["properties"]["stage"]["enum"] == ["prompt", "model-response", "stop"]
        assert tools["hook_guard"].output_schema["required"] == ["hook", "stage", "decision", "watched", "duration_ms"]


async def test_a_tool_call_gets_the_decision_cordon_call_gets(cordon_bin, hook_workspace, hooks_target):
    async with Client(hooks_target, cache=None) as client:
        blocked = await client.call_tool(
            "hook_guard", {"stage": "before-tool-call", "tool": "echo", "arguments": {"text": "a forbidden word"}}
        )
        allowed = await client.call_tool(
            "hook_guard", {"stage": "before-tool-call", "tool": "echo", "arguments": '{"text": "hello"}'}
        )
    assert not blocked.is_error
    assert blocked.structured_content["decision"] == "block"
    reason = "`echo` is not allowed here: that word is not allowed."
    assert blocked.structured_content["reason"] == reason
    assert json.loads(text(blocked)) == blocked.structured_content
    assert allowed.structured_content["decision"] == "allow"
    assert allowed.structured_content["watched"] is True

    # The same hook, for real: the call is blocked with the same reason, the other one runs.
    real = cordon(cordon_bin, hook_workspace, "call", "echo", '{"text": "a forbidden word"}')
    assert real.returncode != 0
    assert reason in real.stdout + real.stderr
    assert cordon(cordon_bin, hook_workspace, "call", "echo", '{"text": "hello"}').returncode == 0


async def test_a_prompt_gets_the_decision_cordon_run_gets(cordon_bin, hook_workspace, hooks_target):
    async with Client(hooks_target, cache=None) as client:
        blocked = await client.call_tool("hook_session", {"stage": "prompt", "payload": {"prompt": "a forbidden plan"}})
        routed = await client.call_tool("hook_session", {"stage": "prompt", "payload": {"prompt": "say hi"}})
        go_on = await client.call_tool("hook_session", {"stage": "stop", "payload": {"answer": "almost"}})
    assert blocked.structured_content["decision"] == "block"
    assert blocked.structured_content["reason"] == "rust hook: forbidden prompt"
    assert routed.structured_content["decision"] == "narrow"
    assert routed.structured_content["only_tools"] == ["echo"]
    assert routed.structured_content["add_context"] == "rust hook saw: say hi"
    assert go_on.structured_content == {**go_on.structured_content, "decision": "replace", "replace": "rust hook: finish with DONE"}

    # The same hook, for real: the prompt is blocked before any model request (the model's
    # address is a closed port) with the same reason.
    real = cordon(cordon_bin, hook_workspace, "run", "a forbidden plan")
    assert real.returncode == 1, real.stderr
    assert "rust hook: forbidden prompt" in real.stderr + real.stdout
    assert "127.0.0.1:9" not in real.stderr, "no model request was made"


async def test_claude_code_form(hooks_target):
    async with Client(hooks_target, cache=None) as client:
        denied = await client.call_tool(
            "hook_guard",
            {"stage": "before-tool-call", "tool": "echo", "arguments": {"text": "forbidden"}, "format": "claude-code"},
        )
        no_opinion = await client.call_tool(
            "hook_guard", {"stage": "before-tool-call", "tool": "echo", "arguments": {"text": "ok"}, "format": "claude-code"}
        )
        prompt = await client.call_tool(
            "hook_session", {"stage": "prompt", "payload": {"prompt": "forbidden"}, "format": "claude-code"}
        )
        stop = await client.call_tool("hook_session", {"stage": "stop", "payload": {"answer": "x"}, "format": "claude-code"})
    assert json.loads(text(denied)) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "`echo` is not allowed here: that word is not allowed.",
        }
    }
    assert json.loads(text(no_opinion)) == {}, "no objection is no opinion, never an approval"
    assert json.loads(text(prompt)) == {"decision": "block", "reason": "rust hook: forbidden prompt"}
    assert json.loads(text(stop)) == {"decision": "block", "reason": "rust hook: finish with DONE"}
    # structuredContent stays cordon's own form.
    assert denied.structured_content["decision"] == "block"


async def test_questions_the_hook_cannot_take_say_what_to_send(hooks_target):
    async with Client(hooks_target, cache=None) as client:
        undeclared = await client.call_tool("hook_guard", {"stage": "prompt", "payload": {"prompt": "hi"}})
        missing = await client.call_tool("hook_session", {"stage": "prompt", "payload": {}})
        unknown = await client.call_tool("hook_session", {"stage": "UserPromptSubmit"})
    assert undeclared.is_error and "does not run at `prompt` (it runs at: before-tool-call" in text(undeclared)
    assert missing.is_error and "`payload.prompt` is required" in text(missing)
    assert unknown.is_error and "is not a stage" in text(unknown)


async def test_every_answer_is_in_the_audit_log(cordon_bin, hook_workspace):
    log = hook_workspace / "audit.jsonl"
    before = log.read_text().count("\n") if log.exists() else 0
    async with Client(server(cordon_bin, hook_workspace, "--hooks-as-tools"), cache=None) as client:
        await client.call_tool("hook_guard", {"stage": "before-tool-call", "tool": "echo", "arguments": {"text": "forbidden"}})
        await client.call_tool("hook_session", {"stage": "prompt", "payload": {"prompt": "forbidden"}})
    lines = [json.loads(line) for line in log.read_text().splitlines()[before:]]
    asked = [line for line in lines if line.get("hookAsked") == "guard"]
    assert asked and asked[0]["decision"] == "block" and asked[0]["stage"] == "before" and asked[0]["tool"] == "echo"
    assert asked[0]["pluginSha256"] and asked[0]["capabilities"] == {"http": [], "pathsOpened": []}
    session = [line for line in lines if line.get("sessionHook") == "session"]
    assert session and session[0]["decision"] == "block" and session[0]["callId"].startswith("hook-")


async def test_hooks_whose_names_collide_keep_the_name_for_the_id_it_spells(cordon_bin, guest_dir, tmp_path):
    """`g.uard` and `g_uard` both make `hook_g_uard`: it asks `g_uard`, whose id it spells, so a
    plugin dropped in beside it can neither answer for it nor take its name away; `x.y` and `x y`,
    neither spelled by the name, are not offered at all. A tool plugin's tool named like a hook tool
    is not served (the hook keeps its name)."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for name in ["g.uard", "g_uard", "x.y", "x y"]:
        shutil.copy(guest_dir / "guard.wasm", plugins / f"{name}.wasm")
    shutil.copy(guest_dir / "fixture_probe.wasm", plugins / "probe.wasm")
    (tmp_path / "cordon.toml").write_text(
        '[plugins."g.uard"]\nhook = true\n[plugins.g_uard]\nhook = true\n'
        '[plugins."x.y"]\nhook = true\n[plugins."x y"]\nhook = true\n'
    )
    async with Client(server(cordon_bin, tmp_path, "--hooks-as-tools"), cache=None) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        asked = await client.call_tool("hook_g_uard", {"stage": "before-tool-call", "tool": "echo"})
        collided = await client.call_tool("hook_x_y", {"stage": "before-tool-call", "tool": "echo"})
    assert "hook_g_uard" in names and "hook_x_y" not in names, names
    assert asked.structured_content["hook"] == "g_uard"
    assert collided.is_error and (collided.meta or {}).get("cordon/errorKind") == "not_found"


async def test_a_question_that_cannot_be_asked_fails_closed_in_claude_codes_form(hooks_target):
    """An error result would let Claude Code go on as if no hook had spoken: in Claude Code's form a
    question the hook cannot take is a deny before a tool call and a stop elsewhere."""
    async with Client(hooks_target, cache=None) as client:
        huge = await client.call_tool(
            "hook_guard",
            {"stage": "before-tool-call", "tool": "bash", "arguments": {"command": "x" * (1 << 20)}, "format": "claude-code"},
        )
        undeclared = await client.call_tool("hook_guard", {"stage": "stop", "payload": {"answer": "hi"}, "format": "claude-code"})
    assert not huge.is_error
    denied = json.loads(text(huge))["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny" and "1 MiB" in denied["permissionDecisionReason"]
    assert huge.structured_content["decision"] == "failed"
    assert json.loads(text(undeclared))["continue"] is False


async def test_every_text_of_the_hooks_is_escaped_as_the_terminal_escapes_it(hooks_target):
    """A reason carrying ESC, BEL, U+202E, CR and a newline reaches the client escaped, in the
    structured answer and in its text, as cordon's terminal shows it."""
    async with Client(hooks_target, cache=None) as client:
        for form in ["cordon", "claude-code"]:
            asked = await client.call_tool(
                "hook_guard",
                {"stage": "before-tool-call", "tool": "echo", "arguments": {"text": "terminal"}, "format": form},
            )
            reason = asked.structured_content["reason"]
            for raw in ["\x1b", "\x07", "\u202e", "\r", "\n"]:
                assert raw not in reason and raw not in text(asked), (form, raw, reason)
            assert "bad\\u{1b}[2J\\u{7}\\u{202e}word\\r\\nnext" in reason, reason


async def test_a_prompt_is_cut_as_cordon_run_cuts_it_and_the_answer_says_so(cordon_bin, hook_workspace, hooks_target):
    """The same 70 KiB prompt: the hook tool shows the hook its first 64 KiB and says `prompt` was
    cut; `cordon run`, with that prompt hook watching, refuses to send what the hook never read."""
    prompt = "say hi " + "x" * (70 << 10)
    async with Client(hooks_target, cache=None) as client:
        asked = await client.call_tool("hook_session", {"stage": "prompt", "payload": {"prompt": prompt}})
    assert asked.structured_content["cut"] == ["prompt"], asked.structured_content
    real = cordon(cordon_bin, hook_workspace, "run", prompt)
    assert real.returncode == 1 and "read at most 65536" in real.stderr, real.stderr[-2000:]
