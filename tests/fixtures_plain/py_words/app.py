"""Test fixture: a component written in Python for a WIT world of its own (wit/world.wit), built
with componentize-py and no cordon SDK: a record, an option, a list of tuples, a result, a trap and
a file read under a granted directory."""

from collections import Counter

from wit_world import exports
from wit_world.exports.stats import Summary
from componentize_py_types import Err


class Stats(exports.Stats):
    def summarize(self, text: str) -> Summary:
        words = text.split()
        longest = max(words, key=len) if words else None
        return Summary(words=len(words), lines=len(text.splitlines()), longest=longest)

    def top_words(self, text: str, count: int) -> list[tuple[str, int]]:
        counts = Counter(text.lower().split())
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:count]

    def shout(self, text: str) -> str:
        if not text:
            raise Err("there is nothing to shout")
        return text.upper()

    def explode(self) -> None:
        raise RuntimeError("exploded on purpose")

    def count_file(self, path: str) -> int:
        try:
            with open(path, encoding="utf-8") as handle:
                return len(handle.read().split())
        except OSError as err:
            raise Err(f"cannot read {path}: {err}")
