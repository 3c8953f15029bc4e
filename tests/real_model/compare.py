"""Puts the JSON reports of `tests/real_model/run.py --json` side by side: a "before" setting (for
example a cordon build from before a change, run with `--cordon` or `CORDON_BIN`) against an
"after" one, task by task.

    python3 tests/real_model/compare.py --before old-1.json old-2.json --after new-1.json new-2.json

Each side may have several reports (repeated runs of the same setting); a task's figures are then
the median over the runs that have it, and "correct" counts the runs that got it right. Per task:
the first request's prompt tokens (as the model's chat template renders it, from the stand-in
server), the prompt tokens summed over every request of the task (from the model's `usage`), the
steps, the wall time, correct runs, and the tool calls (native/text). A last row sums the medians.

`make test-real-model REAL_MODEL_BEFORE=old.json` runs the tasks and then prints this table with the
new run as "after". Python standard library only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import aligned  # noqa: E402  (the harness's own table layout)


def load(paths: list[Path]) -> list[dict]:
    reports = []
    for path in paths:
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as problem:
            raise SystemExit(f"error: cannot read the report {path}: {problem}")
        if not isinstance(report, dict) or not isinstance(report.get("tasks"), list):
            raise SystemExit(f"error: {path} is not a report of tests/real_model/run.py --json")
        reports.append(report)
    return reports


def median(values: list) -> float | None:
    present = [value for value in values if value is not None]
    return statistics.median(present) if present else None


def task_figures(reports: list[dict], name: str) -> dict | None:
    """One task's figures over `reports` (None when no report ran it)."""
    runs = [task for report in reports for task in report["tasks"] if task.get("name") == name]
    if not runs:
        return None
    firsts = [(task.get("first_request") or {}).get("promptTokens") for task in runs]
    # A run on the model also reports its first request's prompt tokens from `usage`; the stand-in
    # server's count is there even when the model never answered.
    firsts = [first if first is not None else task.get("first_prompt_tokens")
              for first, task in zip(firsts, runs)]
    model_runs = [task for task in runs if task.get("steps")]
    return {
        "runs": len(runs),
        "modelRuns": len(model_runs),
        "first": median(firsts),
        "prompt": median([task.get("prompt_tokens") for task in model_runs]),
        "steps": median([task.get("steps") for task in model_runs]),
        "seconds": median([task.get("seconds") for task in model_runs]),
        "correct": sum(bool(task.get("correct")) for task in model_runs),
        "calls": median([len(task.get("tool_calls") or []) for task in model_runs]),
        "tools": median([(task.get("first_request") or {}).get("toolCount") for task in runs]),
    }


def number(value, suffix: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}{suffix}"
    return f"{int(value):,}{suffix}"


def ratio(before, after) -> str:
    if not before or after is None:
        return "-"
    return f"{after / before:.2f}x"


def pair(before: dict | None, after: dict | None, key: str, suffix: str = "") -> str:
    return (f"{number(before.get(key) if before else None, suffix)} -> "
            f"{number(after.get(key) if after else None, suffix)}")


def correct_cell(figures: dict | None) -> str:
    if not figures or not figures["modelRuns"]:
        return "-"
    return f"{figures['correct']}/{figures['modelRuns']}"


def comparison(before: list[dict], after: list[dict]) -> str:
    names = []
    for report in before + after:
        for task in report["tasks"]:
            if task.get("name") not in names:
                names.append(task.get("name"))
    rows = [("task", "tools offered", "1st prompt tokens", "ratio", "prompt tokens, all steps", "ratio",
             "steps", "time", "correct", "tool calls")]
    sums = {"before": {"first": 0, "prompt": 0}, "after": {"first": 0, "prompt": 0}}
    complete = {"first": True, "prompt": True}
    for name in names:
        old, new = task_figures(before, name), task_figures(after, name)
        for side, figures in (("before", old), ("after", new)):
            for key in ("first", "prompt"):
                value = figures.get(key) if figures else None
                if value is None:
                    complete[key] = False
                else:
                    sums[side][key] += value
        rows.append((
            name, pair(old, new, "tools"),
            pair(old, new, "first"), ratio(old and old["first"], new and new["first"]),
            pair(old, new, "prompt"), ratio(old and old["prompt"], new and new["prompt"]),
            pair(old, new, "steps"), pair(old, new, "seconds", " s"),
            f"{correct_cell(old)} -> {correct_cell(new)}", pair(old, new, "calls")))
    first_total = (f"{number(sums['before']['first'])} -> {number(sums['after']['first'])}"
                   if complete["first"] else "-")
    prompt_total = (f"{number(sums['before']['prompt'])} -> {number(sums['after']['prompt'])}"
                    if complete["prompt"] else "-")
    def correct_total(reports: list[dict]) -> str:
        figures = [task_figures(reports, name) or {} for name in names]
        return f"{sum(f.get('correct', 0) for f in figures)}/{sum(f.get('modelRuns', 0) for f in figures)}"

    rows.append(("all", "", first_total,
                 ratio(sums["before"]["first"], sums["after"]["first"]) if complete["first"] else "-",
                 prompt_total,
                 ratio(sums["before"]["prompt"], sums["after"]["prompt"]) if complete["prompt"] else "-",
                 "", "", f"{correct_total(before)} -> {correct_total(after)}", ""))
    lines = aligned(rows)
    lines.append(f"before: {describe(before)}")
    lines.append(f"after:  {describe(after)}")
    lines.append("Figures are medians over the runs of a side; correct counts runs.")
    return "\n".join(lines)


def describe(reports: list[dict]) -> str:
    builds = sorted({str(report.get("cordon")) for report in reports})
    models = sorted({str(report.get("model")) for report in reports})
    settings = sorted({" ".join(report.get("agentSettings") or []) + (" --error-kinds" if report.get("errorKinds") else "")
                       for report in reports} - {""})
    started = sorted(str(report.get("started")) for report in reports)
    text = f"{len(reports)} run(s) of {', '.join(builds)} on {', '.join(models)}"
    if settings:
        text += f" with {'; '.join(settings)}"
    if started:
        text += f" ({started[0]}" + (f" .. {started[-1]})" if len(started) > 1 else ")")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, nargs="+", required=True, help="reports of the old setting")
    parser.add_argument("--after", type=Path, nargs="+", required=True, help="reports of the new setting")
    args = parser.parse_args()
    print(comparison(load(args.before), load(args.after)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
