"""Test fixture: a tool that reads a file with plain Python (`open`), as any author would, so
a read outside the plugin's grants is seen as such a plugin sees it (tests/integration/outside_grants.rs)."""

from cordon_sdk import Plugin, tool  # noqa: F401 (Plugin is the component's export)


@tool(name="py_read", description="Reads a text file with open().")
def py_read(path: str) -> str:
    with open(path) as file:
        return file.read()
