"""The bundled `csv_query` plugin (Python): filter rows of a CSV file inside a granted directory by
one column, operator and value, and return them as a table, with a limit."""

import csv
from typing import List, Literal, Optional

from cordon_sdk import CapabilityDenied, Output, Plugin, tool  # noqa: F401 (Plugin is the export)

Operator = Literal["eq", "ne", "lt", "le", "gt", "ge", "contains"]


def _matches(cell: str, operator: str, value: str) -> bool:
    if operator == "contains":
        return value.lower() in cell.lower()
    try:
        left, right = float(cell), float(value)
    except ValueError:
        left, right = cell, value
    return {
        "eq": left == right,
        "ne": left != right,
        "lt": left < right,
        "le": left <= right,
        "gt": left > right,
        "ge": left >= right,
    }[operator]


@tool(
    name="csv_query",
    title="Query CSV",
    read_only=True,
    destructive=False,
    idempotent=True,
    open_world=False,
    description=(
        "Read a CSV file (with a header row) from a granted directory and return the rows where "
        "`column` compares to `value` with `operator` (numbers compare as numbers), as a table of at "
        "most `limit` rows. Without a column, returns the first rows. `columns` picks which columns "
        "to show."
    ),
)
def csv_query(
    path: str,
    column: Optional[str] = None,
    operator: Operator = "eq",
    value: Optional[str] = None,
    limit: int = 20,
    columns: Optional[List[str]] = None,
) -> Output:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except PermissionError as error:
        raise CapabilityDenied(f"{path} is outside the directories this tool may read: {error}")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist (paths are absolute, inside a granted directory)")
    header = list(rows[0].keys()) if rows else []
    if column is not None:
        if column not in header:
            raise ValueError(f"no column {column!r}; the columns are: {', '.join(header)}")
        if value is None:
            raise ValueError("a column needs a value to compare with")
        rows = [row for row in rows if _matches(row[column] or "", operator, value)]
    shown = columns or header
    unknown = [c for c in shown if c not in header]
    if unknown:
        raise ValueError(f"no column(s) {', '.join(unknown)}; the columns are: {', '.join(header)}")
    picked = rows[: max(limit, 0)]
    lines = [" | ".join(shown)] + [" | ".join(row[c] or "" for c in shown) for row in picked]
    if len(rows) > len(picked):
        lines.append(f"[{len(picked)} of {len(rows)} matching rows shown; raise limit to see more]")
    return Output.text("\n".join(lines), {"matched": len(rows), "returned": len(picked), "columns": shown})
