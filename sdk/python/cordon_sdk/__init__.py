"""Write cordon tools and hooks in Python, built into components with componentize-py, for
contract ``cordon:plugin@0.3.0``.

A tool is a decorated function; its JSON Schema comes from its type hints (or an explicit
``parameters`` dict). An exception raised by a tool becomes a ``tool_error`` result carrying the
exception's type and message. Hooks are decorated functions too: ``before_tool_call`` and
``after_tool_call`` around tool calls, ``session_hook`` at the stages of a session. The app module re-exports
``Plugin``, which componentize-py wires to the component's exports::

    from cordon_sdk import Plugin, tool

    @tool(name="greet", label="Greet", description="Says hello to someone.")
    def greet(name: str, times: int = 1) -> str:
        return " ".join([f"Hello, {name}!"] * times)
"""

from .host import cancelled, log, progress, settings
from .output import CapabilityDenied, Image, Output
from .registry import after_tool_call, before_tool_call, tool
from .decisions import Allow, Ask, Block, Rewrite, Keep, Replace, CallResult, ToolCall
from .plugin import Plugin
from .session import SessionDecision, SessionEvent, session_hook

__all__ = [
    "Plugin",
    "tool",
    "before_tool_call",
    "after_tool_call",
    "session_hook",
    "SessionEvent",
    "SessionDecision",
    "Output",
    "Image",
    "CapabilityDenied",
    "Allow",
    "Ask",
    "Block",
    "Rewrite",
    "Keep",
    "Replace",
    "CallResult",
    "ToolCall",
    "log",
    "progress",
    "cancelled",
    "settings",
]
