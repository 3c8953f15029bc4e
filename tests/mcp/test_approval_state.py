"""The 2026-07-28 approval `requestState` is the server's own: an answer approves a call only with
a state this server issued to this caller for this question, once, before it expires. Driven with
the official Python client's own session (`allow_input_required=True`), round by round."""

import hashlib
import json

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
import mcp.types as types

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

ASKING = {"text": "a b", "ask": "it reads private notes"}
ACCEPT = {"approval": types.ElicitResult(action="accept", content={})}


async def elicit(context, params):
    # Declares the capability; the rounds are driven by hand, so the client never answers itself.
    raise AssertionError("the test answers the questions itself")


def connect(target):
    return Client(target, mode="auto", cache=None, elicitation_callback=elicit)


def stdio(cordon_bin, workspace):
    return StdioServerParameters(command=cordon_bin, args=["serve"], cwd=str(workspace), env=server_env(workspace))


def as_caller(url, authorization):
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers={"Authorization": authorization}))


def decisions(workspace):
    path = workspace / "audit.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["approval"]["decidedBy"] for line in lines]


async def ask(client):
    """The first round: the question and its state."""
    first = await client.session.call_tool("word_stats", ASKING, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    return first.request_state


async def answer(client, state):
    return await client.session.call_tool("word_stats", ASKING, input_responses=ACCEPT, request_state=state,
                                          allow_input_required=True)


def ran(result) -> bool:
    return isinstance(result, types.CallToolResult) and not result.is_error \
        and result.structured_content == {"words": 2, "characters": 3}


async def test_a_forged_state_approves_nothing(cordon_bin, approval_workspace):
    # The fingerprint the server used to send as its state (an unkeyed hash of public data), and
    # plain garbage: neither was issued, so the call is asked about again and does not run.
    compact = {"separators": (",", ":")}
    text = json.dumps(["word_stats", "v2", json.dumps(ASKING, sort_keys=True, **compact),
                       [["hook `v2`", "it reads private notes"]]], **compact)
    forged = ["approval:" + hashlib.sha256(text.encode()).hexdigest(), "v1.00.0.00", "anything"]
    async with connect(stdio(cordon_bin, approval_workspace)) as client:
        for state in forged:
            result = await answer(client, state)
            assert isinstance(result, types.InputRequiredResult), (state, result)
            assert result.request_state != state
    assert "client" not in decisions(approval_workspace)


async def test_a_state_approves_once_and_is_refused_when_replayed(cordon_bin, approval_workspace):
    async with connect(stdio(cordon_bin, approval_workspace)) as client:
        state = await ask(client)
        assert ran(await answer(client, state))
        replayed = await answer(client, state)
        assert isinstance(replayed, types.InputRequiredResult), replayed
    assert decisions(approval_workspace).count("client") == 1, decisions(approval_workspace)


async def test_a_state_issued_to_another_caller_approves_nothing(cordon_bin, approval_workspace):
    # Over HTTP a state is bound to the credentials it was issued to (the server's bearer token);
    # over stdio to the connection.
    http = HttpServer(cordon_bin, approval_workspace, ["--token-env", "CORDON_TEST_SERVE_TOKEN"],
                      env={"CORDON_TEST_SERVE_TOKEN": "alice-token-0123"})
    try:
        async with connect(as_caller(http.url, "Bearer alice-token-0123")) as alice:
            state = await ask(alice)
        async with connect(stdio(cordon_bin, approval_workspace)) as other:
            assert isinstance(await answer(other, state), types.InputRequiredResult)
        async with connect(as_caller(http.url, "Bearer alice-token-0123")) as alice:
            assert ran(await answer(alice, state)), "the caller it was issued to can still answer"
    finally:
        http.stop()
    assert decisions(approval_workspace).count("client") == 1, decisions(approval_workspace)


async def test_without_a_token_a_made_up_authorization_is_no_other_caller(cordon_bin, approval_workspace):
    # With no token every local client is one caller: a header a client makes up does not make it
    # another (it could otherwise mint callers, each with its own share of the answers kept).
    http = HttpServer(cordon_bin, approval_workspace)
    try:
        async with connect(as_caller(http.url, "Bearer alice")) as alice:
            state = await ask(alice)
        async with connect(as_caller(http.url, "Bearer somebody-else")) as other:
            assert ran(await answer(other, state))
    finally:
        http.stop()


async def test_an_expired_state_approves_nothing(cordon_bin, approval_workspace):
    # [approval] answer_within bounds how long a question can be answered (5 minutes by default).
    import asyncio
    config = approval_workspace / "cordon.toml"
    config.write_text(config.read_text() + '\n[approval]\nanswer_within = "1s"\n')
    async with connect(stdio(cordon_bin, approval_workspace)) as client:
        state = await ask(client)
        await asyncio.sleep(2.2)
        late = await answer(client, state)
        assert isinstance(late, types.InputRequiredResult), late
        # Moving the issue time the state carries breaks its MAC.
        version, nonce, issued, mac = state.split(".")
        moved = await answer(client, ".".join([version, nonce, str(int(issued) + 3), mac]))
        assert isinstance(moved, types.InputRequiredResult), moved
        # A fresh question answered in time runs.
        assert ran(await answer(client, await ask(client)))
    assert decisions(approval_workspace).count("client") == 1, decisions(approval_workspace)
