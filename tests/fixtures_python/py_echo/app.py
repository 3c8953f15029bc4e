"""Benchmark fixture: trivial tools written in Python. `py_echo` sends its text back (what a call
costs when the tool does next to nothing); `py_sleep` holds its sandbox for a while (to measure the
memory of many Python sandboxes alive at once); `py_stats` returns structured output (contract 0.2);
`py_progress` reports progress through the host; `py_split` says what its author wrote about
its parameters (an `Annotated` description, docstring descriptions, defaults)."""

import time
from dataclasses import dataclass
from typing import Annotated

from cordon_sdk import Plugin, progress, tool  # noqa: F401 (Plugin is the export)


@tool(name="py_echo", description="Returns the text it is given.")
def py_echo(text: str) -> str:
    return text


@dataclass
class Stats:
    words: int
    characters: int


@tool(name="py_stats", description="Counts the words and characters of a text.", read_only=True,
      guidelines=["Count words with py_stats."], locks=["/text"])
def py_stats(text: str) -> Stats:
    return Stats(len(text.split()), len(text))


@tool(name="py_sleep", description="Sleeps for the given number of milliseconds.")
def py_sleep(millis: int) -> str:
    time.sleep(millis / 1000)
    return "slept"


@tool(name="py_progress", description="Reports each step as progress, then says done.")
def py_progress(steps: int) -> str:
    for step in range(1, steps + 1):
        progress(f"step {step} of {steps}", {"step": step})
    return "done"


@tool(name="py_split", description="Splits a line into fields.")
def py_split(line: Annotated[str, "The line to split."], delimiter: str = ",", limit: int = 0) -> str:
    """Splits a line.

    Args:
        line: not this one: the Annotated description wins.
        delimiter: The separator between fields,
            one character.
        limit (int): At most this many splits; 0 for no limit.
    """
    return "|".join(line.split(delimiter, limit if limit > 0 else -1))
