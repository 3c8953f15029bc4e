"""Agent Skills over MCP (the `io.modelcontextprotocol/skills` extension) from `cordon serve`,
driven by the official Python SDK over stdio and streamable HTTP in both protocol revisions: the
operator's skill folder and the skills a plugin carries (a component with a `cordon-skills`
section, written here from the format's description) listed by `skills/list`, each fetched by
`skills/get`, every file read with `resources/read` and checked against the digest and size the
listing gave, the front matter as written, an unknown skill `-32602`, and a replaced plugin's
skills gone from the list; and the official TypeScript SDK's client (tests/mcp/ts_skills.mjs)
doing the same over both transports."""

import base64
import hashlib
import json
import shutil

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError as McpError
import mcp.types as types
from pydantic import TypeAdapter

from conftest import HttpServer, run_ts, server_env

pytestmark = pytest.mark.anyio

HOUSE_REPORT = (
    "---\nname: house-report\ndescription: How this team writes a status report.\n"
    'metadata:\n  version: "1.0"\n---\n# House report\nStart with `STATUS:` and one word.\n'
)
CHECKLIST = "---\nname: checklist\ndescription: The release checklist.\nallowed-tools: [probe_echo]\n---\nCheck twice.\n"
LOGO = bytes([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x10])


def leb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def with_skills(component: bytes, files: dict) -> bytes:
    """The component with a `cordon-skills` custom section holding `files` (path -> bytes)."""
    payload = json.dumps({
        "format": "cordon-skills/1",
        "files": [{"path": path, "base64": base64.b64encode(data).decode()} for path, data in files.items()],
    }).encode()
    name = b"cordon-skills"
    body = leb(len(name)) + name + payload
    return component + b"\x00" + leb(len(body)) + body


@pytest.fixture(scope="module")
def skills_workspace(tmp_path_factory, guest_dir):
    root = tmp_path_factory.mktemp("skills")
    (root / "plugins").mkdir()
    probe = (guest_dir / "fixture_probe.wasm").read_bytes()
    (root / "plugins" / "notes.wasm").write_bytes(with_skills(probe, {
        "checklist/SKILL.md": CHECKLIST.encode(),
        "checklist/assets/logo.png": LOGO,
    }))
    skill = root / "team-skills" / "house-report"
    (skill / "templates").mkdir(parents=True)
    (skill / "SKILL.md").write_text(HOUSE_REPORT)
    (skill / "templates" / "report.md").write_text("STATUS: green\n")
    (root / "cordon.toml").write_text('[skills]\ndirs = ["team-skills"]\n')
    (root / "cache").mkdir()
    return root


@pytest.fixture(scope="module")
def skills_http(cordon_bin, skills_workspace):
    server = HttpServer(cordon_bin, skills_workspace)
    yield server
    server.stop()


@pytest.fixture(params=["stdio", "http"])
def target(request, cordon_bin, skills_workspace, skills_http):
    if request.param == "http":
        return skills_http.url
    return StdioServerParameters(
        command=cordon_bin, args=["serve"], cwd=str(skills_workspace), env=server_env(skills_workspace)
    )


async def call(client, method: str, params: dict) -> dict:
    request = types.Request[dict, str](method=method, params=params)
    return await client.session.send_request(request, TypeAdapter(dict))


async def file_bytes(client, uri: str) -> bytes:
    read = await client.read_resource(uri)
    part = read.contents[0]
    if isinstance(part, types.TextResourceContents):
        return part.text.encode()
    return base64.b64decode(part.blob)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_skills_are_listed_fetched_and_read_with_matching_digests(target, mode):
    async with Client(target, mode=mode, cache=None) as client:
        capabilities = client.server_capabilities
        assert "io.modelcontextprotocol/skills" in json.dumps(capabilities.model_dump(mode="json")), capabilities

        listed = await call(client, "skills/list", {})
        by_uri = {skill["uri"]: skill for skill in listed["skills"]}
        assert set(by_uri) == {"skill://house-report/SKILL.md", "skill://notes/checklist/SKILL.md"}, listed
        house = by_uri["skill://house-report/SKILL.md"]
        assert house["frontmatter"] == {
            "name": "house-report",
            "description": "How this team writes a status report.",
            "metadata": {"version": "1.0"},
        }
        assert by_uri["skill://notes/checklist/SKILL.md"]["frontmatter"]["allowed-tools"] == ["probe_echo"]
        checked = 0
        for skill in listed["skills"]:
            got = await call(client, "skills/get", {"uri": skill["uri"]})
            assert got["skill"] == skill
            for entry in skill["resources"]:
                data = await file_bytes(client, entry["uri"])
                assert entry["size"] == len(data), entry
                assert entry["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), entry
                checked += 1
        assert checked == 4
        assert await file_bytes(client, "skill://notes/checklist/assets/logo.png") == LOGO

        # Each SKILL.md is a resource too, for clients without the extension.
        resources = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert resources["skill://house-report/SKILL.md"].mime_type == "text/markdown"
        assert resources["skill://house-report/SKILL.md"].description == "How this team writes a status report."

        with pytest.raises(McpError) as unknown:
            await call(client, "skills/get", {"uri": "skill://nothing/SKILL.md"})
        assert unknown.value.error.code == -32602
        with pytest.raises(McpError):
            await client.read_resource("skill://house-report/../../cordon.toml")


async def test_a_replaced_plugins_skills_leave_the_list(cordon_bin, tmp_path, guest_dir):
    (tmp_path / "plugins").mkdir()
    probe = (guest_dir / "fixture_probe.wasm").read_bytes()
    plugin = tmp_path / "plugins" / "notes.wasm"
    plugin.write_bytes(with_skills(probe, {"checklist/SKILL.md": CHECKLIST.encode()}))
    (tmp_path / "cache").mkdir()
    server = HttpServer(cordon_bin, tmp_path)
    try:
        async with Client(server.url, mode="auto", cache=None) as client:
            assert [s["uri"] for s in (await call(client, "skills/list", {}))["skills"]] == [
                "skill://notes/checklist/SKILL.md"
            ]
            shutil.copy(guest_dir / "fixture_probe.wasm", plugin)
            for _ in range(100):
                listed = await call(client, "skills/list", {})
                if not listed["skills"]:
                    break
                await anyio.sleep(0.1)
            assert listed["skills"] == []
    finally:
        server.stop()


def ts_skills(*args) -> dict:
    return run_ts("ts_skills.mjs", *args)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_client_lists_fetches_and_reads_skills(transport, cordon_bin, skills_workspace, skills_http):
    if transport == "stdio":
        seen = ts_skills("stdio", cordon_bin, str(skills_workspace))
    else:
        seen = ts_skills("http", skills_http.url)
    assert "io.modelcontextprotocol/skills" in seen["capabilities"]["extensions"], seen["capabilities"]
    uris = sorted(skill["uri"] for skill in seen["listed"]["skills"])
    assert uris == ["skill://house-report/SKILL.md", "skill://notes/checklist/SKILL.md"]
    assert [got["skill"] for got in seen["fetched"]] == seen["listed"]["skills"]
    for skill in seen["listed"]["skills"]:
        for entry in skill["resources"]:
            data = base64.b64decode(seen["files"][entry["uri"]])
            assert entry["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), entry
            assert entry["size"] == len(data)
    assert seen["unknown"]["code"] == -32602, seen["unknown"]
