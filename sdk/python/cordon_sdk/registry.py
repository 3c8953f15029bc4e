"""The decorators that register tools and hooks in this plugin."""

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from .schema import output_schema_for_function, schema_for_function


@dataclass
class ToolEntry:
    name: str
    title: str
    description: str
    parameters: Dict[str, Any]
    sequential: bool
    function: Callable
    output_schema: Optional[Dict[str, Any]] = None
    # read_only, destructive, idempotent, open_world: None leaves a hint unsaid.
    annotations: Dict[str, Optional[bool]] = field(default_factory=dict)
    guidelines: List[str] = field(default_factory=list)
    locks: List[str] = field(default_factory=list)


@dataclass
class HookEntry:
    function: Callable
    tools: List[str]


TOOLS: Dict[str, ToolEntry] = {}
BEFORE: List[HookEntry] = []
AFTER: List[HookEntry] = []


def tool(
    name: str,
    description: str,
    label: Optional[str] = None,
    parameters: Optional[dict] = None,
    sequential: bool = False,
    *,
    title: Optional[str] = None,
    output_schema: Optional[dict] = None,
    read_only: Optional[bool] = None,
    destructive: Optional[bool] = None,
    idempotent: Optional[bool] = None,
    open_world: Optional[bool] = None,
    guidelines: Sequence[str] = (),
    locks: Sequence[str] = (),
    examples: Sequence[dict] = (),
):
    """Registers a function as a tool. Its parameters schema comes from its type hints unless
    ``parameters`` gives a JSON Schema explicitly; its output schema from its return annotation
    when that is a dataclass (then return an instance: it becomes structured output), unless
    ``output_schema`` gives one. ``read_only``, ``destructive``, ``idempotent`` and ``open_world``
    are hints for clients (None leaves one unsaid); ``guidelines`` are lines for the agent's system
    prompt; ``locks`` are JSON pointers into the arguments naming what a call touches;
    ``examples`` are argument objects that go into the schema's ``examples`` (models read them, and
    ``cordon test`` calls the tool with each)."""

    def register(function: Callable) -> Callable:
        if name in TOOLS:
            raise ValueError(f"tool {name!r} is defined twice")
        schema = parameters if parameters is not None else schema_for_function(function)
        if examples:
            if not all(isinstance(example, dict) for example in examples):
                raise ValueError(f"tool {name!r}: each example is a dict of arguments")
            schema = dict(schema, examples=[dict(example) for example in examples])
        output = output_schema if output_schema is not None else output_schema_for_function(function)
        hints = {"read_only": read_only, "destructive": destructive, "idempotent": idempotent,
                 "open_world": open_world}
        TOOLS[name] = ToolEntry(name, title or label or name, description, schema, sequential, function,
                                output, hints, list(guidelines), list(locks))
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
