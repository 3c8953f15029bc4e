"""Runs ``async def`` tools and hooks inside the contract's synchronous exports.

componentize-py calls an export with no event loop running, and ``asyncio.run`` cannot make one
there: the selector loop's self-pipe needs ``socket.socketpair``, which WASI refuses. This loop is
``asyncio.BaseEventLoop`` with a "selector" that only sleeps until the next timer, so tasks,
``gather``, ``wait_for`` and ``asyncio.sleep(t)`` work. There is no I/O for it to wait on: a
coroutine waiting for something nothing can finish fails with an error saying so instead of
hanging until the call's time limit.
"""

import asyncio
import inspect
import time


class _TimersOnly:
    """The loop's selector: no file descriptors, only the time until the next timer."""

    def select(self, timeout=None):
        if timeout is None:
            raise RuntimeError(
                "the async tool waits for something that can never finish here "
                "(no I/O event loop runs in the sandbox; only tasks and asyncio.sleep do)"
            )
        if timeout > 0:
            time.sleep(timeout)
        return []

    def close(self):
        pass


class _Loop(asyncio.BaseEventLoop):
    def __init__(self):
        super().__init__()
        self._selector = _TimersOnly()

    def _process_events(self, event_list):
        pass

    def _write_to_self(self):
        pass


def resolve(value):
    """A tool's or hook's return value; a coroutine (from ``async def``) is run to its result."""
    if not inspect.iscoroutine(value):
        return value
    loop = _Loop()
    try:
        return loop.run_until_complete(value)
    finally:
        loop.close()
