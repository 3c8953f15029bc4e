"""Test fixture: hooks written in Python. The before-hook blocks `echo` calls that say "forbidden" and
rewrites ones that say "shout" to upper case; the after-hook tags every `echo` result."""

from cordon_sdk import Block, CallResult, Plugin, Replace, Rewrite, after_tool_call, before_tool_call  # noqa: F401


@before_tool_call(tools=["echo"])
def police(call):
    text = call.arguments.get("text", "")
    if "forbidden" in text:
        return Block("the Python hook does not allow that word")
    if text.startswith("shout"):
        return Rewrite({**call.arguments, "text": text.upper()})
    return None


@after_tool_call(tools=["echo"])
def tag(call, result):
    return Replace(CallResult([result.text() + " [seen by python]"], result.details, result.is_error))
