"""A 160-tool server (tests/fixtures/many_tools) driven by the official Python SDK: `tools/list`
comes in pages that the client follows by cursor, every tool once, in the same order every time;
with `--tool-search` the server lists only `search_tools`, which finds tools by what they do, and
the tools it names are called by name. Over stdio and streamable HTTP."""

import shutil

import pytest
from mcp import Client, StdioServerParameters
import mcp.types as types

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def many_workspace(tmp_path_factory, guest_dir):
    root = tmp_path_factory.mktemp("many")
    (root / "plugins").mkdir()
    shutil.copy(guest_dir / "fixture_many_tools.wasm", root / "plugins" / "saas.wasm")
    (root / "cordon.toml").write_text('[agent.groups]\nbilling = ["invoices_*", "payroll_*"]\n')
    (root / "cache").mkdir()
    return root


def serve(request, cordon_bin, workspace, args):
    if request.param == "stdio":
        return StdioServerParameters(
            command=cordon_bin, args=["serve", *args], cwd=str(workspace), env=server_env(workspace)
        ), None
    server = HttpServer(cordon_bin, workspace, args)
    return server.url, server


@pytest.fixture(params=["stdio", "http"])
def paged(request, cordon_bin, many_workspace):
    target, server = serve(request, cordon_bin, many_workspace, ["--page-size", "50"])
    yield target
    if server:
        server.stop()


@pytest.fixture(params=["stdio", "http"])
def searching(request, cordon_bin, many_workspace):
    target, server = serve(request, cordon_bin, many_workspace, ["--tool-search"])
    yield target
    if server:
        server.stop()


async def every_page(client):
    names, pages, cursor = [], 0, None
    while True:
        result = await client.list_tools(cursor=cursor, cache_mode="bypass")
        pages += 1
        names.extend(tool.name for tool in result.tools)
        cursor = result.next_cursor
        if not cursor:
            return names, pages


async def test_the_client_pages_through_every_tool_once_in_a_stable_order(paged):
    async with Client(paged, cache=None) as client:
        names, pages = await every_page(client)
        assert pages == 4, "160 tools in pages of 50"
        assert len(names) == 160 and len(set(names)) == 160
        assert names == sorted(names)
        again, _ = await every_page(client)
        assert again == names
        with pytest.raises(Exception):
            await client.list_tools(cursor="not-a-cursor", cache_mode="bypass")


async def test_tool_search_lists_one_tool_that_finds_the_others(searching):
    async with Client(searching, cache=None) as client:
        listed = (await client.list_tools(cache_mode="bypass")).tools
        assert [tool.name for tool in listed] == ["search_tools"]
        found = await client.call_tool("search_tools", {"query": "create an invoice", "limit": 3})
        assert not found.is_error
        tools = found.structured_content["tools"]
        assert tools[0]["name"] == "invoices_create_invoice"
        assert tools[0]["inputSchema"]["required"] == ["customer_id", "amount_cents"]
        group = await client.call_tool("search_tools", {"query": "billing"})
        assert len(group.structured_content["tools"]) == 16
        called = await client.call_tool(
            "invoices_create_invoice", {"customer_id": "c-1", "amount_cents": 500}
        )
        assert not called.is_error
        text = "\n".join(block.text for block in called.content if isinstance(block, types.TextContent))
        assert '"tool":"invoices_create_invoice"' in text
