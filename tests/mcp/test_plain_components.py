"""Components not built for cordon, served over MCP and driven by the official Python SDK: a
wit-bindgen component of its own WIT world (its functions as tools, with schemas and output schemas
derived from the WIT types), a componentize-py and a componentize-js component of their own worlds,
and a `wasi:cli` command, over stdio and streamable HTTP."""

import shutil

import pytest
from mcp import Client, StdioServerParameters
import mcp.types as types

from conftest import REPO, HttpServer, server_env

pytestmark = pytest.mark.anyio

CONFIG = """
[plugins.geometry.tools.measure]
title = "Measure a shape"
annotations = { read_only = true }

# componentize-py does not keep the WIT's doc comments in the component: the operator points to it.
[plugins.words]
wit = "WORDS_WIT"
"""


@pytest.fixture(scope="module")
def plain_workspace(tmp_path_factory, guest_dir):
    root = tmp_path_factory.mktemp("plain")
    plugins = root / "plugins"
    plugins.mkdir()
    shutil.copy(guest_dir / "fixture_plain_geometry.wasm", plugins / "geometry.wasm")
    shutil.copy(guest_dir / "fixture_cli_count.wasm", plugins / "count.wasm")
    shutil.copy(guest_dir / "plain_py_words.wasm", plugins / "words.wasm")
    shutil.copy(guest_dir / "plain_js_text.wasm", plugins / "text.wasm")
    (root / "cordon.toml").write_text(
        CONFIG.replace("WORDS_WIT", str(REPO / "tests" / "fixtures_plain" / "py_words" / "wit")))
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


async def test_python_and_javascript_components_are_listed_and_called(target):
    async with Client(target, cache=None) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        # componentize-py, its own world: a record result with an option, a list of tuples.
        summarize = tools["summarize"]
        # A derived description ends with the grants (none here).
        assert summarize.description == "Counts the words and lines of a text. It sees no files, and has no network."
        assert summarize.input_schema["required"] == ["text"]
        assert summarize.output_schema["required"] == ["words", "lines", "longest"]
        assert summarize.output_schema["properties"]["longest"]["description"] == "Its longest word, if it has any."
        assert summarize.output_schema["properties"]["words"]["maximum"] == 4294967295
        assert tools["top_words"].input_schema["properties"]["count"]["maximum"] == 255
        summary = await client.call_tool("summarize", {"text": "the quick brown\nfox"})
        assert not summary.is_error, texts(summary)
        assert summary.structured_content == {"words": 4, "lines": 2, "longest": "quick"}
        bad = await client.call_tool("top_words", {"text": "a", "count": 300})
        assert bad.is_error and bad.meta["cordon/errorKind"] == "invalid_arguments"
        assert "/count" in texts(bad)

        # componentize-js, its own world: a record with a char and an option, an enum, a result.
        slugify = tools["slugify"]
        # Without doc comments (componentize-js keeps none, and no wit = was given), a readable
        # signature describes it.
        assert slugify.description == "Calls `slugify(text: string, options: record) -> string`. It sees no files, and has no network."
        options = slugify.input_schema["properties"]["options"]
        assert options["required"] == ["separator", "max_words"]
        assert options["properties"]["separator"]["maxLength"] == 1
        assert tools["recase"].input_schema["properties"]["to"]["enum"] == ["lower", "upper", "title"]
        assert tools["parse_count"].output_schema["required"] == ["result"]
        slug = await client.call_tool(
            "slugify", {"text": "Any Component Is A Tool", "options": {"separator": "_", "max_words": 3}})
        assert not slug.is_error and texts(slug) == "any_component_is"
        counted = await client.call_tool("parse_count", {"text": "42"})
        assert counted.structured_content == {"result": 42}
        not_a_number = await client.call_tool("parse_count", {"text": "forty"})
        assert not_a_number.is_error and not_a_number.meta["cordon/errorKind"] == "tool_error"
        trapped = await client.call_tool("fail_hard", {})
        assert trapped.is_error and trapped.meta["cordon/errorKind"] == "trap"
