"""Components not built for cordon, served over MCP and driven by the official Python SDK: a
wit-bindgen component of its own WIT world (its functions as tools, with schemas and output schemas
derived from the WIT types) and a `wasi:cli` command, over stdio and streamable HTTP."""

import shutil

import pytest
from mcp import Client, StdioServerParameters
import mcp.types as types

from conftest import HttpServer, server_env

pytestmark = pytest.mark.anyio

CONFIG = """
[plugins.geometry.tools.measure]
title = "Measure a shape"
annotations = { read_only = true }
"""


@pytest.fixture(scope="module")
def plain_workspace(tmp_path_factory, guest_dir):
    root = tmp_path_factory.mktemp("plain")
    plugins = root / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_plain_geometry.wasm", plugins / "geometry.wasm")
    shutil.copy(guest_dir / "fixture_cli_count.wasm", plugins / "count.wasm")
    (root / "cordon.toml").write_text(CONFIG)
    (root / "cache").mkdir()
    return root


@pytest.fixture(params=["stdio", "http"])
def target(request, cordon_bin, plain_workspace):
    if request.param == "stdio":
        yield StdioServerParameters(
            command=cordon_bin, args=["serve"], cwd=str(plain_workspace), env=server_env(plain_workspace)
        )
        return
    server = HttpServer(cordon_bin, plain_workspace)
    yield server.url
    server.stop()


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_a_plain_components_functions_are_listed_with_derived_schemas(target):
    async with Client(target, cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"measure", "centroid", "style_names", "add_small", "count"} <= set(tools)
        measure = tools["measure"]
        assert measure.title == "Measure a shape"
        assert measure.annotations.read_only_hint is True
        assert measure.input_schema["required"] == ["shape", "unit"]
        assert measure.input_schema["properties"]["unit"]["enum"] == ["millimetres", "metres", "kilometres"]
        assert measure.output_schema["required"] == ["area", "perimeter", "unit", "note"]
        add = tools["add_small"]
        assert add.input_schema["properties"]["a"]["maximum"] == 255
        assert add.output_schema == {
            "type": "object",
            "properties": {"result": {"type": "integer", "minimum": 0, "maximum": 255}},
            "required": ["result"],
            "additionalProperties": False,
        }
        assert tools["count"].output_schema["required"] == ["exit_code", "stdout", "stderr"]


async def test_plain_calls_return_text_and_structured_content(target):
    async with Client(target, cache=None) as client:
        measured = await client.call_tool("measure", {"shape": {"rectangle": [2, 3]}, "unit": "metres"})
        assert not measured.is_error, texts(measured)
        assert measured.structured_content == {"area": 6.0, "perimeter": 10.0, "unit": "metres", "note": None}

        too_few = await client.call_tool("measure", {"shape": {"polygon": []}, "unit": "metres"})
        assert too_few.is_error
        assert texts(too_few) == "a polygon needs at least 3 corners, got 0"
        assert too_few.meta["cordon/errorKind"] == "tool_error"

        invalid = await client.call_tool("add_small", {"a": 300, "b": 1})
        assert invalid.is_error and invalid.meta["cordon/errorKind"] == "invalid_arguments"
        assert "/a" in texts(invalid)

        counted = await client.call_tool("count", {"stdin": "one two three"})
        assert not counted.is_error, texts(counted)
        assert texts(counted) == "1 3 13\n"
        assert counted.structured_content["exit_code"] == 0
