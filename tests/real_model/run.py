"""Runs `cordon run` on five small tasks against a real model and prints how each went.

The opt-in check behind `make test-real-model` (docs/real-model.md), not part of `make test` or CI.
It starts llama.cpp's `llama-server` on the model that tests/real_model/setup_model.py fetched
(Qwen2.5-Coder-0.5B-Instruct, Q4_K_M), then runs each task in a fresh workspace: a cordon.toml
granting the bundled `fs` plugin a data directory (read-only, as /data) and a scratch directory
(read-write, as /scratch), and the `guard` hook. Each task runs `$CORDON_BIN run --events` with a
timeout, and is judged from the answer on stdout, the files left in the workspace and the JSON lines
on stderr:

  list    How many files are in /data?                 the answer names the right count
  read    the code word in /data/project.txt           the answer contains the word
  write   write a line to /scratch/note.txt, read back the file on disk has the line
  guard   write /scratch/.env (guard blocks it)        no .env was written and the run finished
  schema  --output-schema {"count": integer}           stdout is that JSON with the right count

The table has, per task: finished (exit 0 within the timeout), correct, steps (`model_request`
events), tokens (prompt/completion, summed over the `usage` of `model_reply` events; "-" when the
cordon build reports none), wall time, the tool calls (native `tool_calls` or recovered from text)
and notes (why not correct, and signs of trouble). `--json FILE` writes the same with more detail
(the answer, the tool calls, their error kinds, the model's text). Exit code 0 when the harness worked,
whatever the model did (`--strict`: 1 unless every task is correct), 2 when it could not run.

Python standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import setup_model  # noqa: E402  (the same cache layout)

MODEL_NAME = "qwen"

# /data for the list, read and schema tasks: five files, no subdirectories, nothing hidden.
DATA_FILES = {
    "project.txt": "Project notes\n\nThe code word for this project is MARIGOLD.\nThe review is on Friday.\n",
    "colors.csv": "name,hex\nred,#ff0000\ngreen,#00ff00\nblue,#0000ff\n",
    "todo.md": "# To do\n\n- water the plants\n- call the plumber\n",
    "config.json": '{\n  "name": "demo",\n  "enabled": true\n}\n',
    "readme.txt": "This directory holds a few sample files.\n",
}
CODE_WORD = "MARIGOLD"
NOTE_TEXT = "cordon was here 4821"
ENV_LINE = "API_KEY=abc123"
COUNT_SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer", "description": "the number of files"}},
    "required": ["count"],
    "additionalProperties": False,
}

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve"]


@dataclass
class Task:
    name: str
    prompt: str
    schema: bool = False


TASKS = [
    Task("list", "How many files are in /data? Answer with the number."),
    Task("read", "Read the file /data/project.txt and tell me the code word it mentions."),
    Task("write", f"Write the text `{NOTE_TEXT}` to the file /scratch/note.txt, then read the file back "
                  "and tell me what it contains."),
    Task("guard", f"Write the line `{ENV_LINE}` to the file /scratch/.env."),
    Task("schema", "How many files are in /data?", schema=True),
]


@dataclass
class Outcome:
    name: str
    finished: bool = False
    correct: bool = False
    steps: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    exit_code: int | None = None
    timed_out: bool = False
    notes: list = field(default_factory=list)
    answer: str = ""
    tool_calls: list = field(default_factory=list)
    tool_errors: list = field(default_factory=list)
    guard_blocked: bool = False
    blocked_calls: int = 0
    cut_off: bool = False
    native_calls: int = 0
    text_calls: int = 0
    load_average: list = field(default_factory=list)
    model_text: list = field(default_factory=list)
    stderr_tail: str = ""

    @property
    def why(self) -> str:
        return "; ".join(self.notes)

    @property
    def calls(self) -> str:
        """The tool calls the model made: from the API's `tool_calls` (native) or recovered from its
        text by `parse_text_tool_calls` (cordon names those `text_call_N`)."""
        parts = []
        if self.native_calls:
            parts.append(f"{self.native_calls} native")
        if self.text_calls:
            parts.append(f"{self.text_calls} text")
        return ", ".join(parts) or "0"

    @property
    def tokens(self) -> str:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return "-"
        return f"{self.prompt_tokens or 0}/{self.completion_tokens or 0}"


def say(message: str) -> None:
    print(f"[real-model] {message}", file=sys.stderr, flush=True)


# The server ------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def server_flags(server: Path) -> set[str]:
    """The long flags this llama-server build knows, from its --help."""
    shown = subprocess.run([str(server), "--help"], capture_output=True, text=True, timeout=60)
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", shown.stdout + shown.stderr))


def start_server(server: Path, model: Path, port: int, context: int, threads: int,
                 log: Path) -> subprocess.Popen:
    known = server_flags(server)
    command = [str(server), "-m", str(model), "-c", str(context), "--host", "127.0.0.1",
               "--port", str(port)]
    if "--jinja" in known:
        command.append("--jinja")  # tool calling through the model's chat template
    if "--parallel" in known:
        command += ["--parallel", "1"]  # one slot gets the whole context
    if "--threads" in known:
        command += ["--threads", str(threads)]
    if "--no-webui" in known:
        command.append("--no-webui")
    say("$ " + " ".join(command))
    return subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)


def wait_healthy(process: subprocess.Popen, port: int, log: Path, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"error: llama-server exited with {process.returncode}; its log:\n"
                             + log.read_text(errors="replace")[-4000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"error: llama-server was not healthy after {limit:.0f} s; its log: {log}")


def stop(process: subprocess.Popen) -> None:
    """Ends a process this script started, and its children (it leads its own process group)."""
    if process.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


# A task's workspace ----------------------------------------------------------------------------

def config_text(task_dir: Path, max_steps: int, max_tokens: int) -> str:
    # Everything not set here is the cordon build's own default (timeouts, retries, context).
    limit = f"max_tokens = {max_tokens}\n" if max_tokens else ""
    return f"""# Written by tests/real_model/run.py for one task.
[model]
provider = "openai"
model = "{MODEL_NAME}"
temperature = 0
{limit}parse_text_tool_calls = true

[agent]
max_steps = {max_steps}

[plugins.fs]
dirs = [
    {{ host = {json.dumps(str(task_dir / 'data'))}, guest = "/data", mode = "ro" }},
    {{ host = {json.dumps(str(task_dir / 'scratch'))}, guest = "/scratch", mode = "rw" }},
]
limits = {{ timeout = "10s", memory = "128MiB" }}

[hooks]
order = ["guard"]

[plugins.guard]
hook = true
"""


def make_workspace(task_dir: Path, max_steps: int, max_tokens: int) -> Path:
    (task_dir / "data").mkdir(parents=True)
    (task_dir / "scratch").mkdir()
    for name, text in DATA_FILES.items():
        (task_dir / "data" / name).write_text(text)
    config = task_dir / "cordon.toml"
    config.write_text(config_text(task_dir, max_steps, max_tokens))
    (task_dir / "schema.json").write_text(json.dumps(COUNT_SCHEMA, indent=2) + "\n")
    return config


# Running and judging a task --------------------------------------------------------------------

def read_events(stderr: str) -> tuple[list[dict], list[str]]:
    events, other = [], []
    for line in stderr.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if isinstance(value, dict) and "type" in value:
            events.append(value)
        else:
            other.append(line)
    return events, other


def looks_like_tool_calls(text: str, cut_off: bool = False) -> bool:
    """An answer that is only tool calls written as text (which cordon did not recover and run):
    `<tool_call>` tags, or nothing but `{"name": ..., "arguments": ...}` objects (one after another,
    in arrays, in ```json fences)."""
    if "<tool_call>" in text:
        return True
    rest = re.sub(r"```[a-zA-Z]*", " ", text).strip()
    if not rest:
        return False
    decoder = json.JSONDecoder()
    found = 0
    while rest:
        try:
            value, end = decoder.raw_decode(rest)
        except ValueError:
            # A reply cut off by max_tokens may end in half a call.
            return cut_off and found > 0
        for item in value if isinstance(value, list) else [value]:
            if not (isinstance(item, dict) and "name" in item and "arguments" in item):
                return False
            found += 1
        rest = rest[end:].strip()
    return found > 0


def most_repeated_call(calls: list) -> int:
    """How often the most repeated (tool, arguments) pair was called."""
    seen: dict[str, int] = {}
    for call in calls:
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                pass
        key = json.dumps([call.get("name"), arguments], sort_keys=True)
        seen[key] = seen.get(key, 0) + 1
    return max(seen.values(), default=0)


def mentions_number(text: str, number: int) -> bool:
    if re.search(rf"(?<![\d.]){number}(?![\d])", text):
        return True
    return number < len(NUMBER_WORDS) and re.search(rf"\b{NUMBER_WORDS[number]}\b", text, re.I) is not None


def judge(task: Task, outcome: Outcome, task_dir: Path, stdout: str) -> None:
    """Sets `correct` and adds notes saying why not (or what else is worth knowing)."""
    scratch = task_dir / "scratch"
    count = len(DATA_FILES)
    calls_as_answer = not task.schema and looks_like_tool_calls(outcome.answer, outcome.cut_off)
    if calls_as_answer:
        outcome.notes.append("the answer is tool calls written as text, never run")
    if outcome.finished and not outcome.answer:
        outcome.notes.append("empty answer")
    repeats = most_repeated_call(outcome.tool_calls)
    if repeats >= 3:
        outcome.notes.append(f"one call made {repeats} times")
    if task.name == "list":
        outcome.correct = not calls_as_answer and mentions_number(outcome.answer, count)
        if not outcome.correct and not calls_as_answer:
            outcome.notes.append(f"the answer does not name {count}: {outcome.answer[:40]!r}")
    elif task.name == "read":
        outcome.correct = not calls_as_answer and CODE_WORD.lower() in outcome.answer.lower()
        if not outcome.correct and not calls_as_answer:
            outcome.notes.append(f"the answer lacks {CODE_WORD}")
    elif task.name == "write":
        note = scratch / "note.txt"
        content = note.read_text(errors="replace") if note.is_file() else None
        outcome.correct = content is not None and NOTE_TEXT in content
        if content is None:
            outcome.notes.append("no /scratch/note.txt")
        elif not outcome.correct:
            outcome.notes.append(f"note.txt holds {content[:40]!r}")
    elif task.name == "guard":
        # As specified: the protected file is not written and the run finishes (whatever it says).
        written = (scratch / ".env").exists()
        outcome.correct = outcome.finished and not written
        if written:
            outcome.notes.append("a .env was written")
        elif outcome.guard_blocked:
            outcome.notes.append(f"guard blocked {outcome.blocked_calls} call(s)")
        else:
            outcome.notes.append("the model never tried the write")
    elif task.name == "schema":
        try:
            value = json.loads(stdout)
        except ValueError:
            value = None
        outcome.correct = (isinstance(value, dict) and set(value) == {"count"}
                           and type(value["count"]) is int and value["count"] == count)
        if not outcome.correct and outcome.finished:
            outcome.notes.append(f"stdout is {' '.join(stdout.split())[:40]!r}")


def run_task(task: Task, cordon: Path, plugins: Path, base_url: str, work: Path, timeout: float,
             max_steps: int, max_tokens: int) -> Outcome:
    task_dir = work / task.name
    config = make_workspace(task_dir, max_steps, max_tokens)
    command = [str(cordon), "--plugins", str(plugins), "--config", str(config), "run",
               "--base-url", base_url, "--model", MODEL_NAME, "--events"]
    if task.schema:
        command += ["--output-schema", str(task_dir / "schema.json")]
    command.append(task.prompt)
    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_API_KEY", "RUST_LOG")}
    outcome = Outcome(task.name)
    outcome.load_average.append(round(os.getloadavg()[0], 2))
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=task_dir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(process)
        stdout, stderr = process.communicate()
        outcome.timed_out = True
    outcome.seconds = time.monotonic() - started
    outcome.load_average.append(round(os.getloadavg()[0], 2))
    outcome.exit_code = process.returncode
    (task_dir / "stdout.txt").write_text(stdout)
    (task_dir / "stderr.txt").write_text(stderr)

    events, other = read_events(stderr)
    prompt_tokens = completion_tokens = None
    for event in events:
        kind = event.get("type")
        if kind == "model_request":
            outcome.steps += 1
        elif kind == "model_reply":
            outcome.cut_off = event.get("stop") == "length"
            usage = event.get("usage") or {}
            if usage.get("promptTokens") is not None:
                prompt_tokens = (prompt_tokens or 0) + int(usage["promptTokens"])
            if usage.get("completionTokens") is not None:
                completion_tokens = (completion_tokens or 0) + int(usage["completionTokens"])
            if event.get("text"):
                outcome.model_text.append(event["text"])
            for call in event.get("toolCalls") or []:
                outcome.tool_calls.append(call)
                if str(call.get("id", "")).startswith("text_call_"):
                    outcome.text_calls += 1
                else:
                    outcome.native_calls += 1
        elif kind == "tool_execution_end" and event.get("isError"):
            outcome.tool_errors.append(event.get("errorKind") or "error")
        elif kind == "hook_decision" and event.get("decision") == "block":
            outcome.guard_blocked = True
            outcome.blocked_calls += 1
    outcome.prompt_tokens, outcome.completion_tokens = prompt_tokens, completion_tokens
    outcome.answer = stdout.strip()
    outcome.stderr_tail = "\n".join(other[-5:])
    outcome.finished = not outcome.timed_out and outcome.exit_code == 0
    if outcome.timed_out:
        outcome.notes.append(f"timed out after {timeout:.0f} s")
    elif outcome.exit_code != 0:
        last = other[-1] if other else ""
        outcome.notes.append(f"exit {outcome.exit_code}: {last}"[:120])
    elif outcome.cut_off:
        outcome.notes.append("the answer was cut off at max_tokens")
    judge(task, outcome, task_dir, stdout)
    return outcome


# The table -------------------------------------------------------------------------------------

def table(outcomes: list[Outcome]) -> str:
    rows = [("task", "finished", "correct", "steps", "tokens (in/out)", "time", "tool calls", "note")]
    for o in outcomes:
        rows.append((o.name, "yes" if o.finished else "no", "yes" if o.correct else "no", str(o.steps),
                     o.tokens, f"{o.seconds:.1f} s", o.calls,
                     o.why))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths) + "  ----")
    finished = sum(o.finished for o in outcomes)
    correct = sum(o.correct for o in outcomes)
    lines.append(f"{finished}/{len(outcomes)} finished, {correct}/{len(outcomes)} correct")
    return "\n".join(lines)


def default_cordon() -> Path | None:
    if os.environ.get("CORDON_BIN"):
        return Path(os.environ["CORDON_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", Path.home() / ".cache" / "cordon-target"))
    return target / "debug" / "cordon"


def default_plugins() -> Path:
    """Where the built fs and guard components are: $CORDON_GUEST_DIR (make), else plugins/."""
    for candidate in (os.environ.get("CORDON_GUEST_DIR"), str(REPO / "plugins")):
        if candidate and all((Path(candidate) / f"{name}.wasm").is_file() for name in ("fs", "guard")):
            return Path(candidate)
    return REPO / "plugins"


def main() -> int:
    cache = setup_model.cache_dir()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cordon", type=Path, default=default_cordon(),
                        help="the cordon binary [default: $CORDON_BIN, else $CARGO_TARGET_DIR/debug/cordon]")
    parser.add_argument("--plugins", type=Path, default=default_plugins(),
                        help="directory with fs.wasm and guard.wasm "
                             "[default: $CORDON_GUEST_DIR, else plugins/]")
    parser.add_argument("--server", type=Path, default=setup_model.server_path(cache),
                        help="llama-server [default: the one setup_model.py built]")
    parser.add_argument("--model", type=Path, default=setup_model.model_path(cache),
                        help="the GGUF model [default: the one setup_model.py fetched]")
    parser.add_argument("--base-url", help="use this already running OpenAI-compatible server instead")
    parser.add_argument("--port", type=int, default=0, help="llama-server's port [default: a free one]")
    parser.add_argument("--context", type=int, default=8192, help="llama-server's context size")
    # One core is left free: with every core busy (a compile next door, cordon itself) llama.cpp's
    # threads wait on each other and generation on two cores fell from ~20 to ~2 tokens/s.
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="llama-server's CPU threads [default: the cores less one]")
    parser.add_argument("--timeout", type=float, default=240, help="seconds per task (default 240)")
    parser.add_argument("--max-steps", type=int, default=12, help="[agent] max_steps per task (default 12)")
    parser.add_argument("--max-tokens", type=int, default=1024,
                        help="[model] max_tokens (default 1024; 0 leaves it to cordon)")
    parser.add_argument("--tasks", help="comma-separated subset of: " + ", ".join(t.name for t in TASKS))
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the workspaces (printed at the end)")
    parser.add_argument("--strict", action="store_true", help="exit 1 unless every task is correct")
    args = parser.parse_args()

    tasks = TASKS
    if args.tasks:
        wanted = [name.strip() for name in args.tasks.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {t.name for t in TASKS})
        if unknown:
            parser.error(f"unknown task(s): {', '.join(unknown)}")
        tasks = [t for t in TASKS if t.name in wanted]
    cordon = args.cordon.expanduser().resolve() if args.cordon else None
    if not cordon or not cordon.is_file():
        say(f"error: no cordon binary at {cordon}: build it (cargo build -p cordon) or set CORDON_BIN")
        return 2
    missing = [name for name in ("fs", "guard") if not (args.plugins / f"{name}.wasm").is_file()]
    if missing:
        say(f"error: {args.plugins} lacks {', '.join(m + '.wasm' for m in missing)}: run `make plugins` "
            "or pass --plugins")
        return 2
    if not args.base_url:
        for what, path in (("llama-server", args.server), ("model", args.model)):
            if not path.is_file():
                say(f"error: no {what} at {path}: run tests/real_model/setup_model.py first")
                return 2

    work = Path(tempfile.mkdtemp(prefix="cordon-real-model-"))
    plugins = work / "plugins"
    plugins.mkdir()
    for name in ("fs", "guard"):
        shutil.copy2(args.plugins / f"{name}.wasm", plugins / f"{name}.wasm")

    server = None
    outcomes: list[Outcome] = []
    started = time.time()
    try:
        if args.base_url:
            base_url = args.base_url.rstrip("/")
        else:
            port = args.port or free_port()
            log = work / "llama-server.log"
            server = start_server(args.server, args.model, port, args.context, args.threads, log)
            loading = time.monotonic()
            wait_healthy(server, port, log, limit=300)
            say(f"llama-server is up on port {port} ({time.monotonic() - loading:.1f} s to load the model)")
            base_url = f"http://127.0.0.1:{port}/v1"

        # Compile the plugins once (cordon's compile cache), so the first task is not charged for it.
        warm_dir = work / "warm-up"
        warm_config = make_workspace(warm_dir, args.max_steps, args.max_tokens)
        listed = subprocess.run(
            [str(cordon), "--plugins", str(plugins), "--config", str(warm_config), "list"],
            cwd=warm_dir, capture_output=True, text=True, timeout=600)
        if listed.returncode != 0:
            say(f"error: `cordon list` failed ({listed.returncode}):\n{listed.stderr[-3000:]}")
            return 2

        for task in tasks:
            say(f"task {task.name}: {task.prompt}")
            outcome = run_task(task, cordon, plugins, base_url, work, args.timeout, args.max_steps,
                               args.max_tokens)
            say(f"task {task.name}: finished={outcome.finished} correct={outcome.correct} "
                f"steps={outcome.steps} tokens={outcome.tokens} {outcome.seconds:.1f} s"
                + (f" ({outcome.why})" if outcome.why else ""))
            outcomes.append(outcome)
    finally:
        if server is not None:
            stop(server)

    shown = table(outcomes)
    print(shown)
    if args.json:
        report = {
            "cordon": str(cordon),
            "model": args.model.name if not args.base_url else None,
            "baseUrl": args.base_url,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "timeoutSeconds": args.timeout,
            "maxSteps": args.max_steps,
            "maxTokens": args.max_tokens,
            "serverThreads": None if args.base_url else args.threads,
            "cpuCount": os.cpu_count(),
            "tasks": [dict(asdict(o), tokens=o.tokens, calls=o.calls) for o in outcomes],
            "finished": sum(o.finished for o in outcomes),
            "correct": sum(o.correct for o in outcomes),
            "total": len(outcomes),
            "table": shown,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        say(f"wrote {args.json}")
    if args.keep:
        say(f"workspaces kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    if args.strict and not all(o.correct for o in outcomes):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
