"""Approval over MCP: a call a hook asks about is put to the client's user as a form elicitation
(the official Python client's `elicitation_callback`); accept runs it, decline refuses it, and a
client that cannot be asked gets a `not_approved` result saying so."""

import json

import pytest
from mcp import Client, StdioServerParameters
import mcp.types as types

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

ASKING = {"text": "a b", "ask": "it reads private notes"}


def server(cordon_bin, workspace, *args):
    return StdioServerParameters(command=cordon_bin, args=["serve", *args], cwd=str(workspace),
                                 env=server_env(workspace))


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def audit(workspace):
    return [json.loads(line) for line in (workspace / "audit.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_the_clients_user_is_asked_and_decides(cordon_bin, approval_workspace, action):
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    async with Client(server(cordon_bin, approval_workspace), mode="legacy", cache=None,
                      elicitation_callback=elicit) as client:
        result = await client.call_tool("word_stats", ASKING)
    assert len(asked) == 1
    assert asked[0].split("\n") == [
        "Approve this call of word_stats (plugin v2)?",
        '"text": "a b"',
        '"ask": "it reads private notes"',
        "asked by hook `v2`: it reads private notes",
    ]
    line = audit(approval_workspace)[0]
    assert line["approval"]["decidedBy"] == "client"
    if action == "accept":
        assert not result.is_error, texts(result)
        assert result.structured_content == {"words": 2, "characters": 3}
    else:
        assert result.is_error and result.meta["cordon/errorKind"] == "not_approved"
        assert "client said no: the user declined" in texts(result)


async def test_a_client_without_elicitation_gets_a_clear_refusal(cordon_bin, approval_workspace):
    async with Client(server(cordon_bin, approval_workspace), mode="legacy", cache=None) as client:
        result = await client.call_tool("word_stats", ASKING)
    assert result.is_error and result.meta["cordon/errorKind"] == "not_approved"
    assert "nobody could be asked" in texts(result)
    assert audit(approval_workspace)[0]["approval"]["decidedBy"] == "default"


async def test_serve_yes_approves_without_asking(cordon_bin, approval_workspace):
    async def elicit(context, params):
        raise AssertionError("the client must not be asked under --yes")

    async with Client(server(cordon_bin, approval_workspace, "--yes"), mode="legacy", cache=None,
                      elicitation_callback=elicit) as client:
        result = await client.call_tool("word_stats", ASKING)
    assert not result.is_error, texts(result)
    assert audit(approval_workspace)[0]["approval"]["decidedBy"] == "--yes"


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_2026_client_is_asked_between_rounds(cordon_bin, approval_workspace, transport, action):
    """2026-07-28 forbids server-to-client requests: the call comes back as input_required with the
    question, the client asks its user and calls again with the answer."""
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action=action, content={} if action == "accept" else None)

    http = None
    target = server(cordon_bin, approval_workspace)
    if transport == "http":
        http = HttpServer(cordon_bin, approval_workspace)
        target = http.url
    try:
        async with Client(target, mode="auto", cache=None, elicitation_callback=elicit) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool("word_stats", ASKING)
    finally:
        if http:
            http.stop()
    assert len(asked) == 1, asked
    assert asked[0].startswith("Approve this call of word_stats (plugin v2)?")
    decided = [line["approval"]["decidedBy"] for line in audit(approval_workspace)]
    assert decided == ["client (asking)", "client"], decided
    if action == "accept":
        assert not result.is_error, texts(result)
        assert result.structured_content == {"words": 2, "characters": 3}
    else:
        assert result.is_error and result.meta["cordon/errorKind"] == "not_approved"
        assert "client said no: the user declined" in texts(result)
