"""Resources and prompts a plugin serves (contract 0.4), through `cordon serve`, driven by the
official Python SDK over stdio and streamable HTTP in both protocol revisions: resources and
templates listed, a text, a binary and a templated resource read (a file in a granted directory), a
read outside the grants a clear error, a configured secret masked, a prompt filled in with its
arguments, completions from the plugin's sandbox; and the official TypeScript SDK's client
(tests/mcp/ts_offers.mjs) doing the same over both transports."""

import base64
import shutil

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError as McpError
import mcp.types as types

from conftest import HttpServer, run_ts, server_env

pytestmark = pytest.mark.anyio

TOKEN = "tok-offers-0123456789abcdef"
CONFIG = """
[plugins.offers]
dirs = [{ host = "notes", guest = "/notes", mode = "ro" }]
env = ["OFFERS_API_TOKEN"]
"""


@pytest.fixture(scope="module")
def offers_workspace(tmp_path_factory, guest_dir):
    root = tmp_path_factory.mktemp("offers")
    (root / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_offers.wasm", root / "plugins" / "offers.wasm")
    (root / "notes").mkdir()
    (root / "notes" / "todo.md").write_text("- write the report\n")
    (root / "notes" / "done.md").write_text("- nothing yet\n")
    (root / "outside.txt").write_text("never read")
    (root / "cordon.toml").write_text(CONFIG)
    (root / "cache").mkdir()
    return root


def env_of(workspace):
    return {**server_env(workspace), "OFFERS_API_TOKEN": TOKEN}


@pytest.fixture(scope="module")
def offers_http(cordon_bin, offers_workspace):
    server = HttpServer(cordon_bin, offers_workspace, env={"OFFERS_API_TOKEN": TOKEN})
    yield server
    server.stop()


@pytest.fixture(params=["stdio", "http"])
def target(request, cordon_bin, offers_workspace, offers_http):
    if request.param == "http":
        return offers_http.url
    return StdioServerParameters(
        command=cordon_bin, args=["serve"], cwd=str(offers_workspace), env=env_of(offers_workspace)
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_resources_and_templates_are_listed_and_read(target, mode, offers_workspace):
    async with Client(target, mode=mode, cache=None) as client:
        listed = await client.list_resources()
        by_uri = {str(resource.uri): resource for resource in listed.resources}
        assert set(by_uri) == {"docs://guide", "docs://logo"}
        assert by_uri["docs://guide"].mime_type == "text/markdown"
        assert by_uri["docs://guide"].title == "House guide"
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {"notes:///{+path}", "file:///{+path}", "env://{name}", "fail://{name}"}

        guide = await client.read_resource("docs://guide")
        assert isinstance(guide.contents[0], types.TextResourceContents)
        assert "-- checked" in guide.contents[0].text
        logo = await client.read_resource("docs://logo")
        assert isinstance(logo.contents[0], types.BlobResourceContents)
        assert base64.b64decode(logo.contents[0].blob) == bytes([0, 1, 2, 255])

        note = await client.read_resource("notes:///todo.md")
        assert note.contents[0].text == "- write the report\n"
        assert note.contents[0].mime_type == "text/plain"

        secret = await client.read_resource("env://OFFERS_API_TOKEN")
        assert TOKEN not in secret.contents[0].text
        assert "REDACTED" in secret.contents[0].text

        # A plugin quoting the secret in its failure: masked in the error the client gets.
        with pytest.raises(McpError) as failed:
            await client.read_resource("fail://x")
        assert failed.value.error.data["errorKind"] == "tool_error"
        assert "upstream said: Bearer [REDACTED" in failed.value.error.message
        assert TOKEN not in failed.value.error.message

        # Completing an argument the prompt does not take is refused before the plugin is asked.
        with pytest.raises(McpError) as unknown_argument:
            await client.complete(types.PromptReference(type="ref/prompt", name="review"), {"name": "tone", "value": ""})
        assert unknown_argument.value.error.code == -32602


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_read_outside_the_grants_is_a_clear_error(target, mode, offers_workspace):
    async with Client(target, mode=mode, cache=None) as client:
        outside = offers_workspace / "outside.txt"
        with pytest.raises(McpError) as refused:
            await client.read_resource(f"file://{outside}")
        error = refused.value.error
        assert error.code == -32603
        assert error.data["errorKind"] == "capability_denied"
        assert "outside the directories granted to it" in error.message
        assert "never read" not in error.message

        with pytest.raises(McpError) as unknown:
            await client.read_resource("docs://nothing")
        # Resource not found: -32602 from 2026-07-28 on, -32002 before it.
        assert unknown.value.error.code == (-32602 if mode == "auto" else -32002)
        assert unknown.value.error.data == {"uri": "docs://nothing"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_prompts_are_listed_filled_in_and_completed(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        prompts = (await client.list_prompts()).prompts
        assert [prompt.name for prompt in prompts] == ["review"]
        arguments = {argument.name: argument for argument in prompts[0].arguments}
        assert arguments["file"].required is True
        assert arguments["focus"].required is False

        filled = await client.get_prompt("review", {"file": "todo.md", "focus": "brevity"})
        assert filled.description == "Review of todo.md"
        assert [message.role for message in filled.messages] == ["user", "assistant"]
        assert filled.messages[0].content.text == "Review notes:///todo.md for brevity."

        with pytest.raises(McpError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.error.code == -32602
        assert 'needs argument "file"' in missing.value.error.message

        files = await client.complete(types.PromptReference(type="ref/prompt", name="review"), {"name": "file", "value": "to"})
        assert files.completion.values == ["todo.md"]
        notes = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="notes:///{+path}"), {"name": "path", "value": ""}
        )
        assert notes.completion.values == ["done.md", "todo.md"]


def ts_offers(*args) -> dict:
    return run_ts("ts_offers.mjs", *args)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_client_lists_reads_and_fills_in(transport, cordon_bin, offers_workspace, offers_http):
    if transport == "stdio":
        seen = ts_offers("stdio", cordon_bin, str(offers_workspace))
    else:
        seen = ts_offers("http", offers_http.url)
    assert seen["capabilities"]["resources"]["listChanged"] is True
    assert seen["capabilities"]["prompts"]["listChanged"] is True
    assert {resource["uri"] for resource in seen["resources"]} == {"docs://guide", "docs://logo"}
    assert "notes:///{+path}" in {template["uriTemplate"] for template in seen["templates"]}
    assert seen["prompts"][0]["name"] == "review"

    assert "-- checked" in seen["guide"]["contents"][0]["text"]
    assert seen["guide"]["contents"][0]["mimeType"] == "text/markdown"
    assert base64.b64decode(seen["logo"]["contents"][0]["blob"]) == bytes([0, 1, 2, 255])
    assert seen["note"]["contents"][0]["text"] == "- write the report\n"
    assert seen["unknown"]["code"] in (-32002, -32602), seen["unknown"]
    assert "no plugin serves resource" in seen["unknown"]["thrown"]

    assert seen["prompt"]["messages"][0]["content"]["text"] == "Review notes:///todo.md for clarity."
    assert seen["completion"]["completion"]["values"] == ["clarity", "correctness"]


async def test_replacing_a_plugin_while_serving_tells_subscribed_clients(cordon_bin, guest_dir, tmp_path):
    """Both lists change when the offers plugin arrives; a client that subscribed to them (2026-07-28
    `subscriptions/listen`) hears each, lists again and reads the new resource. An older stdio client
    gets the notifications directly."""
    import anyio
    from test_live_plugins import Served, eventually, put_plugin

    (tmp_path / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_probe.wasm", tmp_path / "plugins" / "probe.wasm")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.md").write_text("- write the report\n")
    (tmp_path / "cordon.toml").write_text(CONFIG)
    (tmp_path / "cache").mkdir()
    served = Served("stdio", cordon_bin, tmp_path)
    events = []

    async def follow(subscription):
        async for event in subscription:
            events.append(type(event).__name__)

    legacy_told = []

    async def on_message(message):
        name = type(getattr(message, "root", message)).__name__
        if name in ("ResourceListChangedNotification", "PromptListChangedNotification"):
            legacy_told.append(name)

    try:
        async with Client(served.target, cache=None) as client, Client(
            served.target, mode="legacy", cache=None, message_handler=on_message
        ) as legacy:
            await legacy.list_resources()
            async with client.listen(resources_list_changed=True, prompts_list_changed=True) as subscription, \
                    anyio.create_task_group() as tasks:
                tasks.start_soon(follow, subscription)
                assert (await client.list_resources()).resources == []
                put_plugin(guest_dir, "fixture_offers.wasm", tmp_path, "offers")

                async def both():
                    return "ResourcesListChanged" in events and "PromptsListChanged" in events
                await eventually(both, f"resources and prompts list_changed (seen {events})")
                uris = {str(r.uri) for r in (await client.list_resources()).resources}
                assert "docs://guide" in uris
                note = await client.read_resource("notes:///todo.md")
                assert note.contents[0].text == "- write the report\n"
                tasks.cancel_scope.cancel()

            async def legacy_heard():
                return len(set(legacy_told)) == 2
            await eventually(legacy_heard, f"legacy list_changed notifications (seen {legacy_told})")
    finally:
        served.stop()
