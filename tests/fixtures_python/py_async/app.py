"""Test fixture: tools and a hook written as `async def` with the Python SDK. The SDK runs each
coroutine to its result inside the call: tasks, `gather` and `asyncio.sleep` work; a coroutine
waiting for what can never finish is a tool error saying so, not a hang."""

import asyncio
import time
from dataclasses import dataclass

from cordon_sdk import Allow, Block, Plugin, before_tool_call, tool  # noqa: F401 (Plugin is the export)


async def _double(value: int) -> int:
    await asyncio.sleep(0)
    return value * 2


@tool(name="py_gather", description="Doubles 0..count-1 in concurrent tasks.")
async def py_gather(count: int) -> str:
    values = await asyncio.gather(*[_double(i) for i in range(count)])
    return ",".join(str(value) for value in values)


@dataclass
class Slept:
    asked_ms: int
    at_least: bool


@tool(name="py_nap", description="Sleeps asynchronously for the given milliseconds.")
async def py_nap(millis: int) -> Slept:
    started = time.monotonic()
    await asyncio.sleep(millis / 1000)
    return Slept(millis, time.monotonic() - started >= millis / 1000)


@tool(name="py_async_fails", description="Raises after awaiting.")
async def py_async_fails() -> str:
    await asyncio.sleep(0)
    raise ValueError("failed after an await")


@tool(name="py_waits_forever", description="Awaits a future nothing will ever set.")
async def py_waits_forever() -> str:
    await asyncio.get_running_loop().create_future()
    return "unreachable"


@before_tool_call(tools=["py_gather"])
async def no_huge_gathers(call):
    await asyncio.sleep(0)
    if call.arguments.get("count", 0) > 1000:
        return Block("at most 1000 tasks")
    return Allow()
