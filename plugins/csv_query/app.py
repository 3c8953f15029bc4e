"""The bundled `csv_query` plugin (Python): filter rows of a CSV file inside a granted directory by
one column, operator and value, and return them as a table, with a limit."""

import csv
from typing import List, Literal, Optional, Union

from cordon_sdk import CapabilityDenied, Output, Plugin, tool  # noqa: F401 (Plugin is the export)

Operator = Literal["eq", "ne", "lt", "le", "gt", "ge", "contains"]


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def _text(value: Union[str, float]) -> str:
    """A value as the model wrote it: 12 (or 12.0) as "12", 24.5 as "24.5"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _matches(cell: str, operator: str, value: Union[str, float]) -> bool:
    if operator == "contains":
        return _text(value).lower() in cell.lower()
    left = _number(cell)
    right = _number(value) if isinstance(value, str) else float(value)
    if left is None or right is None:
        if not isinstance(value, str):
            # A number compares only with cells that are numbers: any other cell differs.
            return operator == "ne"
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
    examples=[{"path": "data/people.csv", "column": "age", "operator": "ge", "value": 30}],
    description=(
        "Read a CSV file (with a header row) from a granted directory and return the rows where "
        "`column` compares to `value` (a string or a number) with `operator` (default eq; numbers "
        "compare as numbers), as a table of at most `limit` rows. Without a column, returns the "
        "first rows (`operator` and `value` need a `column`). `columns` picks which columns to show."
    ),
)
def csv_query(
    path: str,
    column: Optional[str] = None,
    operator: Optional[Operator] = None,
    value: Union[str, float, None] = None,
    limit: int = 20,
    columns: Optional[List[str]] = None,
) -> Output:
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            rows = list(reader)
            header = list(reader.fieldnames or [])
    except PermissionError as error:
        raise CapabilityDenied(f"{path} is outside the directories this tool may read: {error}")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} does not exist (paths are absolute, inside a granted directory)")
    if column is None and (operator is not None or value is not None):
        given = " and ".join(name for name, v in (("operator", operator), ("value", value)) if v is not None)
        raise ValueError(
            f"{given} given without column; pass column to say which column to compare "
            f"(the columns are: {', '.join(header)})"
        )
    if column is not None:
        if column not in header:
            raise ValueError(f"no column {column!r}; the columns are: {', '.join(header)}")
        if value is None:
            raise ValueError("a column needs a value to compare with")
        rows = [row for row in rows if _matches(row[column] or "", operator or "eq", value)]
    shown = columns or header
    unknown = [c for c in shown if c not in header]
    if unknown:
        raise ValueError(f"no column(s) {', '.join(unknown)}; the columns are: {', '.join(header)}")
    picked = rows[: max(limit, 0)]
    lines = [" | ".join(shown)] + [" | ".join(row[c] or "" for c in shown) for row in picked]
    if len(rows) > len(picked):
        lines.append(f"[{len(picked)} of {len(rows)} matching rows shown; raise limit to see more]")
    return Output.text("\n".join(lines), {"matched": len(rows), "returned": len(picked), "columns": shown})
