"""The decorators that register tools and hooks in this plugin."""

import fnmatch
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .schema import schema_for_function


@dataclass
class ToolEntry:
    name: str
    label: str
    description: str
    parameters: Dict[str, Any]
    sequential: bool
    function: Callable


@dataclass
class HookEntry:
    function: Callable
    tools: List[str]


TOOLS: Dict[str, ToolEntry] = {}
BEFORE: List[HookEntry] = []
AFTER: List[HookEntry] = []


def tool(name: str, description: str, label: Optional[str] = None, parameters: Optional[dict] = None, sequential: bool = False):
    """Registers a function as a tool. Its parameters schema comes from its type hints unless
    ``parameters`` gives a JSON Schema explicitly."""

    def register(function: Callable) -> Callable:
        if name in TOOLS:
            raise ValueError(f"tool {name!r} is defined twice")
        schema = parameters if parameters is not None else schema_for_function(function)
        TOOLS[name] = ToolEntry(name, label or name, description, schema, sequential, function)
        return function

    return register


def before_tool_call(tools: Optional[List[str]] = None):
    """Registers ``function(call) -> Allow | Block | Rewrite | None`` to run before calls of the
    tools matching these globs (every tool when empty)."""

    def register(function: Callable) -> Callable:
        BEFORE.append(HookEntry(function, tools or []))
        return function

    return register


def after_tool_call(tools: Optional[List[str]] = None):
    """Registers ``function(call, result) -> Keep | Replace | None`` to run after calls."""

    def register(function: Callable) -> Callable:
        AFTER.append(HookEntry(function, tools or []))
        return function

    return register


def watching(entries: List[HookEntry], tool_name: str) -> List[HookEntry]:
    return [e for e in entries if not e.tools or any(fnmatch.fnmatchcase(tool_name, g) for g in e.tools)]
