"""`cordon serve` driven by the official TypeScript MCP SDK's client (tests/mcp/ts_client.mjs), over
stdio and streamable HTTP (the 2025-11-25 revision the SDK speaks)."""

import json
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CALLS = [
    ["word_stats", {"text": "two words"}],
    ["echo", {"text": "typed"}],
    ["word_stats", {"text": "x", "mode": "mismatch"}],
]


def ts_client(*args) -> dict:
    assert (HERE / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(), "run `make test`"
    run = subprocess.run(["node", str(HERE / "ts_client.mjs"), *args, json.dumps(CALLS)],
                         capture_output=True, text=True, timeout=120, cwd=HERE)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(params=["stdio", "http"])
def seen(request, cordon_bin, workspace, http_server):
    if request.param == "stdio":
        return ts_client("stdio", cordon_bin, str(workspace))
    return ts_client("http", http_server.url)


def test_the_typescript_client_sees_annotations_and_structured_content(seen):
    tools = {tool["name"]: tool for tool in seen["tools"]}
    stats = tools["word_stats"]
    assert stats["title"] == "Word statistics"
    assert stats["annotations"] == {
        "title": "Word statistics", "readOnlyHint": True, "destructiveHint": False,
        "idempotentHint": True, "openWorldHint": False,
    }
    assert sorted(stats["outputSchema"]["required"]) == ["characters", "words"]
    assert tools["touch"]["annotations"]["destructiveHint"] is True

    ok, echo, broken = seen["results"]
    assert ok.get("thrown") is None, ok
    assert ok["structuredContent"] == {"words": 2, "characters": 9}
    assert echo["content"] == [{"type": "text", "text": "typed"}]
    assert "structuredContent" not in echo
    # An error result needs no structured content; the SDK accepts it as an error.
    assert broken["isError"] is True, broken
    assert "does not match its output schema" in broken["content"][0]["text"]
