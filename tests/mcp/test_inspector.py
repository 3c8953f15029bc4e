"""`cordon serve` driven by the MCP Inspector CLI (npm @modelcontextprotocol/inspector)."""

import json
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
INSPECTOR = HERE / "node_modules" / ".bin" / "mcp-inspector"


def inspector(*args, cwd=None, env=None):
    assert INSPECTOR.exists(), "the Inspector is not installed: run `make test`"
    return subprocess.run([str(INSPECTOR), "--cli", *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


def test_tools_list_over_stdio(cordon_bin, workspace):
    run = inspector("--cwd", str(workspace), "-e", f"XDG_CACHE_HOME={workspace / 'cache'}", cordon_bin, "serve", "--method", "tools/list")
    assert run.returncode == 0, run.stderr
    names = {tool["name"] for tool in json.loads(run.stdout)["tools"]}
    assert {"echo", "sleep", "test_simple_text"} <= names


def test_tools_call_over_stdio(cordon_bin, workspace):
    run = inspector(
        "--cwd", str(workspace), "-e", f"XDG_CACHE_HOME={workspace / 'cache'}", cordon_bin, "serve",
        "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=inspected", "--format", "json",
    )
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)["result"]
    assert result["content"] == [{"type": "text", "text": "inspected"}]


def test_tools_call_over_http_including_an_error_result(http_server):
    ok = inspector(http_server.url, "--transport", "http", "--method", "tools/call", "--tool-name", "echo",
                   "--tool-arg", "text=over http", "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["result"]["content"][0]["text"] == "over http"

    failing = inspector(http_server.url, "--transport", "http", "--method", "tools/call", "--tool-name", "fail",
                        "--tool-arg", "message=nope", "--format", "json")
    assert failing.returncode == 5, "the Inspector exits 5 on an isError result"
    result = json.loads(failing.stdout)["result"]
    assert result["isError"] is True and result["content"][0]["text"] == "nope"
    assert result["_meta"]["cordon/errorKind"] == "tool_error"


def test_auto_protocol_era_over_http(http_server):
    run = inspector(http_server.url, "--transport", "http", "--protocol-era", "auto", "--method", "tools/list")
    assert run.returncode == 0, run.stderr
    assert "test_tool_with_progress" in run.stdout
