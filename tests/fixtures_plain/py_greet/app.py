"""A Python command built with componentize-py, with no cordon SDK: it greets the names in its
arguments (or the lines of its standard input), says on stderr how many, and fails with status 1
when it has no one to greet."""

import sys

from wit_world import exports


class Run(exports.Run):
    def run(self) -> None:
        names = sys.argv[1:] or [line.strip() for line in sys.stdin.read().splitlines() if line.strip()]
        if not names:
            print("greet: no one to greet; pass names as arguments or lines of stdin", file=sys.stderr)
            sys.exit(1)
        for name in names:
            print(f"Hello, {name}!")
        print(f"greeted {len(names)}", file=sys.stderr)
