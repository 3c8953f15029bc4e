"""Runs `cordon run` on seven small tasks against a real model and prints how each went.

The opt-in check behind `make test-real-model` (docs/real-model.md), not part of `make test` or CI.
It starts llama.cpp's `llama-server` on a model that tests/real_model/setup_model.py fetched
(`--model qwen1.5b`, the default: Qwen2.5-Coder-1.5B-Instruct Q4_K_M; `--model qwen0.5b`: the
0.5B; or a path to any GGUF), then runs each task in a fresh workspace: a cordon.toml granting the
bundled `fs` plugin a data directory (read-only, as /data) and a scratch directory (read-write, as
/scratch), and the `guard` hook; the `find` task also loads the 160-tool `fixture_many_tools`
plugin. Each task runs `$CORDON_BIN run --events` with a timeout, and is judged from the answer on
stdout, the files left in the workspace and the JSON lines on stderr:

  list    How many files are in /data?                 the answer names the right count
  read    the code word in /data/project.txt           the answer contains the word
  write   write a line to /scratch/note.txt, read back the file on disk has the line
  guard   write /scratch/.env (guard blocks it)        no .env was written and the run finished
  schema  --output-schema {"count": integer}           stdout is that JSON with the right count
  find    create an invoice, among 166 tools           invoices_create_invoice(c-42, 1250) ran
  math    What is 12 times 11?                         the answer has 132 (no tool is needed)

Before each task, the same command is run once against a stand-in server on loopback that records
the request and refuses it, so the report says what the first request carried (the system prompt,
how many tool specs, their size, whether they had `examples`) without asking the model.

The table has, per task: finished (exit 0 within the timeout), correct, steps (`model_request`
events), the prompt tokens of the first request, tokens (prompt/completion, summed over the `usage`
of `model_reply` events; "-" when the cordon build reports none), wall time, the tool calls (native
`tool_calls` or recovered from text) and notes (why not correct, and signs of trouble). `--json
FILE` writes the same with more detail (the answer, the tool calls, their error kinds, the model's
text, the first request, `parrots_errors`: the answer uses the words of error results though no call
failed, `example_copies`: arguments whose value is a schema example's that the prompt did not ask
for). A second table shows each first request: its bytes, its prompt's tokens as the model's chat
template renders it (llama-server's /apply-template and /tokenize: known even when the model never
gets to answer), the system prompt's tokens and bytes, the tool specs' count, tokens and bytes, and
whether they carry `examples`. Exit code 0 when the harness worked, whatever the model did (`--strict`: 1 unless every
task is correct), 2 when it could not run.

For measuring a setting: `--agent 'KEY = VALUE'` adds a line to each task's [agent] table (e.g.
`send_tool_examples = true`), and `--error-kinds` replaces the default system prompt's sentence on
error results with the one that listed the error kinds before issue 29. `--first-requests` only
captures and shows the first requests (seconds; the model is loaded only to count tokens).

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
import threading
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


INVOICE_TOOL = "invoices_create_invoice"
INVOICE_ARGUMENTS = {"customer_id": "c-42", "amount_cents": 1250}
MANY_TOOLS_PLUGIN = "fixture_many_tools"

# The words of error results ("Error (not_found): ..."), which a small model may parrot in an
# answer although every call it made succeeded.
ERROR_WORDS = re.compile(
    r"\berror\b|not[_ ]found|invalid[_ ]arguments|capability[_ ]denied|\btime(?:d)?[_ ]?out\b"
    r"|\bblocked\b|\bdenied\b", re.I)


@dataclass
class Task:
    name: str
    prompt: str
    schema: bool = False
    # Load the 160-tool fixture beside fs and guard.
    many_tools: bool = False
    # Times the per-task timeout: without tool search the first request of `find` carries every
    # spec (about 15,000 tokens for 166 tools), which takes minutes to read on a CPU.
    timeout_factor: float = 1.0
    # Serve the house-report skill ([skills] dirs): the format it asks for is written nowhere else.
    skills: bool = False


TASKS = [
    Task("list", "How many files are in /data? Answer with the number."),
    Task("read", "Read the file /data/project.txt and tell me the code word it mentions."),
    Task("write", f"Write the text `{NOTE_TEXT}` to the file /scratch/note.txt, then read the file back "
                  "and tell me what it contains."),
    Task("guard", f"Write the line `{ENV_LINE}` to the file /scratch/.env."),
    Task("schema", "How many files are in /data?", schema=True),
    Task("find", "Create an invoice for customer c-42 for 12.50 euros.", many_tools=True,
         timeout_factor=3.0),
    Task("math", "What is 12 times 11?"),
    Task("skill", "Write a short status report on the project described in /data/project.txt, in our "
                  "house report format.", skills=True),
    # The same task with no skill served: the house format cannot be known (it should fail).
    Task("noskill", "Write a short status report on the project described in /data/project.txt, in "
                    "our house report format."),
]

# The skill the `skill` task serves: a report format nothing else says.
REPORT_MARKER = "HOUSE-REPORT-7Q"
HOUSE_REPORT_SKILL = f"""---
name: house-report
description: The house report format. Use it whenever a status report is asked for.
---
# House report format

A house report is exactly three lines:

1. The marker `{REPORT_MARKER}`.
2. `Project: ` and the project's name.
3. `Code word: ` and the project's code word, if it has one.

Read the project's notes first, then answer with the three lines and nothing else.
"""

# A task's timeout (seconds) per model of setup_model.MODELS; a GGUF given by path gets
# DEFAULT_TIMEOUT. A 1.5B request of ~3,600 prompt tokens takes about a minute on one busy core.
MODEL_TIMEOUTS = {"qwen0.5b": 240.0, "qwen1.5b": 600.0}
DEFAULT_TIMEOUT = 240.0

# The default system prompt's sentence on error results since issue 29, and the one before it,
# which listed the error kinds (`--error-kinds` puts the old one back, to measure whether a small
# model parrots the kinds in its answers).
ERROR_SENTENCE = ("If a tool result is an error, it says what went wrong: fix the call and try "
                  "again, or say what you could not do.")
ERROR_KINDS_SENTENCE = ('A result that starts with "Error" says what went wrong and why (for example '
                        "invalid_arguments, not_found, timeout, capability_denied, blocked): adjust "
                        "and try again if that helps, or explain what you could not do.")


@dataclass
class Outcome:
    name: str
    finished: bool = False
    correct: bool = False
    steps: int = 0
    first_prompt_tokens: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    seconds: float = 0.0
    exit_code: int | None = None
    timed_out: bool = False
    notes: list = field(default_factory=list)
    answer: str = ""
    tool_calls: list = field(default_factory=list)
    tool_errors: list = field(default_factory=list)
    # What each call came to, in order: {"id", "name", "isError", "errorKind"}.
    call_results: list = field(default_factory=list)
    tools_loaded: list = field(default_factory=list)
    # The answer uses the words of error results although no call of the task failed.
    parrots_errors: bool = False
    # Calls whose arguments repeat a value from the tool's schema `examples` the prompt did not ask for.
    example_copies: list = field(default_factory=list)
    # What the stand-in server saw of the first request (see capture_first_request).
    first_request: dict = field(default_factory=dict)
    guard_blocked: bool = False
    blocked_calls: int = 0
    cut_off: bool = False
    native_calls: int = 0
    text_calls: int = 0
    load_average: list = field(default_factory=list)
    # Intent routing ([agent.routing]): the route taken and the routing request's tokens.
    route: str | None = None
    routing_tokens: tuple | None = None
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

    @property
    def first(self) -> str:
        return "-" if self.first_prompt_tokens is None else str(self.first_prompt_tokens)


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


# The stand-in server: the first request, without the model ---------------------------------------

class CaptureServer:
    """An OpenAI-compatible stand-in on loopback: it records each chat request and refuses it with
    HTTP 400 (which cordon does not retry), so a `cordon run` against it sends exactly its first
    request and exits. `/props` reports the real server's context size, since cordon sizes its
    requests (and, after issue 29, decides on tool search) from it."""

    def __init__(self, context: int):
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def reply(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/props"):
                    self.reply(200, {"default_generation_settings": {"n_ctx": context}, "n_ctx": context})
                else:
                    self.reply(404, {"error": {"message": "not here"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with owner.lock:
                    owner.requests.append({"path": self.path, "bytes": len(raw), "body": body})
                self.reply(400, {"error": {"message": "recorded by run.py's stand-in server",
                                           "type": "invalid_request_error"}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def take(self) -> list[dict]:
        with self.lock:
            taken, self.requests = self.requests, []
        return taken


class ServerTokens:
    """The model's token counts from llama-server: `/tokenize` for a text, and `/apply-template`
    (the model's chat template, tools included) then `/tokenize` for a whole chat request, so the
    first request's prompt is counted without the model reading it. Each count is None when the
    server lacks the endpoint."""

    def __init__(self, root_url: str):
        self.root_url = root_url

    def post(self, path: str, body: dict) -> dict | None:
        request = urllib.request.Request(f"{self.root_url}{path}", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=120) as reply:
                return json.loads(reply.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError, ValueError):
            return None

    def count(self, text: str) -> int | None:
        answer = self.post("/tokenize", {"content": text})
        return None if answer is None else len(answer.get("tokens") or [])

    def prompt(self, body: dict) -> int | None:
        wanted = {key: body[key] for key in ("messages", "tools") if body.get(key)}
        answer = self.post("/apply-template", wanted)
        if answer is None or not isinstance(answer.get("prompt"), str):
            return None
        return self.count(answer["prompt"])


def summarise_request(request: dict, tokens: ServerTokens | None = None) -> dict:
    """What a chat request carried: its size, the system prompt, the tools offered; with `tokens`,
    the model's token counts of the whole prompt as its chat template renders it, of the system
    prompt and of the tools' JSON."""
    body = request.get("body") or {}
    messages = body.get("messages") or []
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    if isinstance(system, list):  # content parts
        system = "".join(part.get("text", "") for part in system if isinstance(part, dict))
    tools = body.get("tools") or []
    names = [(t.get("function") or {}).get("name") for t in tools]
    tools_json = json.dumps(tools, separators=(",", ":"))
    summary = {
        "requestBytes": request.get("bytes"),
        "promptTokens": None,
        "systemPrompt": system,
        "systemPromptBytes": len(system.encode()) if isinstance(system, str) else None,
        "systemPromptTokens": None,
        "toolCount": len(tools),
        "toolNames": names,
        "toolsBytes": len(tools_json.encode()) if tools else 0,
        "toolsTokens": None,
        "toolsHaveExamples": '"examples"' in tools_json,
    }
    if tokens is not None:
        summary["promptTokens"] = tokens.prompt(body)
        if isinstance(system, str):
            summary["systemPromptTokens"] = tokens.count(system)
        summary["toolsTokens"] = tokens.count(tools_json) if tools else 0
    return summary


def capture_first_request(capture: CaptureServer, command: list[str], cwd: Path, env: dict,
                          tokens: ServerTokens | None = None) -> dict:
    """Runs `command` (a `cordon run` whose base URL is the stand-in's) and returns what its first
    request carried, or {"error": ...}."""
    capture.take()
    try:
        done = subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return {"error": "cordon did not exit within 120 s against the stand-in server"}
    chats = [r for r in capture.take() if r["path"].rstrip("/").endswith("/chat/completions")]
    if not chats:
        return {"error": f"no request reached the stand-in (exit {done.returncode}): "
                         + done.stderr.strip()[-300:]}
    return summarise_request(chats[0], tokens)


def with_error_kinds(prompt: str) -> str:
    """`prompt` (a default system prompt) with its sentence on error results replaced by the one
    that listed the error kinds; a prompt that already lists them is returned as it is, and one
    without either sentence gets the list appended."""
    if ERROR_SENTENCE in prompt:
        return prompt.replace(ERROR_SENTENCE, ERROR_KINDS_SENTENCE)
    if "invalid_arguments" in prompt and "not_found" in prompt:
        return prompt
    return prompt.rstrip() + " " + ERROR_KINDS_SENTENCE


# A task's workspace ----------------------------------------------------------------------------

def config_text(task_dir: Path, max_steps: int, max_tokens: int, model_timeout: float = 0,
                agent_settings: list[str] | None = None) -> str:
    # Everything not set here is the cordon build's own default (retries, context, tool search).
    limit = f"max_tokens = {max_tokens}\n" if max_tokens else ""
    # A streamed reply may otherwise pause 120 s between bytes, and llama-server sends nothing
    # while it reads the prompt: 15,000 tokens take longer than that on a CPU.
    timeout = f'timeout = "{int(model_timeout)}s"\n' if model_timeout else ""
    extra = "".join(f"{line}\n" for line in agent_settings or [])
    return f"""# Written by tests/real_model/run.py for one task.
[model]
provider = "openai"
model = "{MODEL_NAME}"
temperature = 0
{limit}{timeout}parse_text_tool_calls = true

[agent]
max_steps = {max_steps}
{extra}
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


def make_workspace(task_dir: Path, max_steps: int, max_tokens: int, model_timeout: float = 0,
                   agent_settings: list[str] | None = None, skills: bool = False) -> Path:
    (task_dir / "data").mkdir(parents=True)
    (task_dir / "scratch").mkdir()
    for name, text in DATA_FILES.items():
        (task_dir / "data" / name).write_text(text)
    config = task_dir / "cordon.toml"
    text = config_text(task_dir, max_steps, max_tokens, model_timeout, agent_settings)
    if skills:
        skill = task_dir / "skills" / "house-report"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(HOUSE_REPORT_SKILL)
        text += '\n[skills]\ndirs = ["skills"]\n'
    config.write_text(text)
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


def arguments_of(call: dict):
    """A call's arguments as a value (the API gives them as a JSON string)."""
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return arguments


def find_example_copies(task: Task, calls: list, examples: dict) -> list:
    """The arguments of `calls` whose value is the value an `examples` entry of the tool's schema
    gives the same argument, although the task's prompt does not contain it ("glob": "*.rs" in a
    grep for a line of text)."""
    copies = []
    for call in calls:
        arguments = arguments_of(call)
        if not isinstance(arguments, dict):
            continue
        for example in examples.get(call.get("name"), []):
            if not isinstance(example, dict):
                continue
            for key, value in arguments.items():
                if key not in example or example[key] != value:
                    continue
                shown = value if isinstance(value, str) else json.dumps(value)
                if len(shown) > 1 and shown in task.prompt:
                    continue  # the prompt asked for it
                copy = {"tool": call.get("name"), "argument": key, "value": value}
                if copy not in copies:
                    copies.append(copy)
    return copies


def judge(task: Task, outcome: Outcome, task_dir: Path, stdout: str, examples: dict) -> None:
    """Sets `correct`, `parrots_errors` and `example_copies`, and adds notes saying why not correct
    (or what else is worth knowing)."""
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
    elif task.name == "find":
        searches = [call for call in outcome.tool_calls if call.get("name") == "search_tools"]
        if searches:
            queries = [str((arguments_of(call) or {}).get("query", "?"))
                       if isinstance(arguments_of(call), dict) else "?" for call in searches]
            outcome.notes.append("searched " + ", ".join(repr(q) for q in queries))
        invoices = [result for result in outcome.call_results if result.get("name") == INVOICE_TOOL]
        right = [result for result in invoices
                 if not result.get("isError") and invoice_arguments_match(result.get("arguments"))]
        outcome.correct = bool(right)
        if not invoices:
            offered = "it was offered" if INVOICE_TOOL in outcome.first_request.get("toolNames", []) \
                else ("it was loaded" if INVOICE_TOOL in outcome.tools_loaded else "it was never loaded")
            outcome.notes.append(f"{INVOICE_TOOL} never ran ({offered})")
        elif not right:
            shown = [json.dumps(result.get("arguments"), sort_keys=True)
                     + (f" -> {result.get('errorKind') or 'error'}" if result.get("isError") else "")
                     for result in invoices]
            outcome.notes.append(f"{INVOICE_TOOL} ran with {'; '.join(shown)}"[:160])
    elif task.name in ("skill", "noskill"):
        loads = [call for call in outcome.tool_calls if call.get("name") == "load_skill"]
        outcome.correct = (not calls_as_answer and REPORT_MARKER in outcome.answer
                           and CODE_WORD.lower() in outcome.answer.lower())
        outcome.notes.append(f"load_skill called {len(loads)} time(s)")
        if not outcome.correct and not calls_as_answer:
            outcome.notes.append(f"the answer is not the house format: {outcome.answer[:50]!r}")
    elif task.name == "math":
        outcome.correct = not calls_as_answer and mentions_number(outcome.answer, 132)
        if not outcome.correct and not calls_as_answer:
            outcome.notes.append(f"the answer lacks 132: {outcome.answer[:40]!r}")
        if outcome.tool_calls:
            names = sorted({str(call.get("name")) for call in outcome.tool_calls})
            outcome.notes.append(f"called {', '.join(names)} though no tool is needed")

    # Error words in the answer of a task none of whose calls failed (the guard task's blocked
    # write is a failure, so saying so there is no parroting).
    failed = any(result.get("isError") for result in outcome.call_results) or outcome.tool_errors
    if outcome.answer and not failed and not task.schema:
        found = ERROR_WORDS.search(outcome.answer)
        if found:
            outcome.parrots_errors = True
            outcome.notes.append(f"the answer says {found.group(0)!r} though no call failed")
    outcome.example_copies = find_example_copies(task, outcome.tool_calls, examples)
    if outcome.example_copies:
        outcome.notes.append("copied from examples: " + ", ".join(
            f"{c['tool']}.{c['argument']}={json.dumps(c['value'])}" for c in outcome.example_copies))


def invoice_arguments_match(arguments) -> bool:
    if not isinstance(arguments, dict):
        return False
    amount = arguments.get("amount_cents")
    return (arguments.get("customer_id") == INVOICE_ARGUMENTS["customer_id"]
            and isinstance(amount, (int, float)) and not isinstance(amount, bool)
            and amount == INVOICE_ARGUMENTS["amount_cents"])


@dataclass
class Settings:
    """What every task of a run shares."""
    cordon: Path
    plugins: Path  # fs and guard
    many_plugins: Path  # fs, guard and the many-tools fixture
    base_url: str
    work: Path
    timeout: float
    max_steps: int
    max_tokens: int
    agent_settings: list
    error_kinds: bool
    capture: CaptureServer | None
    tokens: ServerTokens | None
    examples: dict  # tool name -> its schema's examples
    first_only: bool = False  # capture the first requests, run no task on the model


def task_command(settings: Settings, task: Task, task_dir: Path, config: Path, base_url: str) -> list[str]:
    plugins = settings.many_plugins if task.many_tools else settings.plugins
    command = [str(settings.cordon), "--plugins", str(plugins), "--config", str(config), "run",
               "--base-url", base_url, "--model", MODEL_NAME, "--events"]
    if task.schema:
        command += ["--output-schema", str(task_dir / "schema.json")]
    command.append(task.prompt)
    return command


def run_task(task: Task, settings: Settings) -> Outcome:
    timeout = settings.timeout * task.timeout_factor
    agent_settings = list(settings.agent_settings)
    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_API_KEY", "RUST_LOG")}
    outcome = Outcome(task.name)

    # The first request, from the stand-in server (and the system prompt `--error-kinds` changes).
    if settings.capture is not None:
        first_dir = settings.work / "first-request" / task.name
        config = make_workspace(first_dir, settings.max_steps, settings.max_tokens, timeout, agent_settings,
                                task.skills)
        command = task_command(settings, task, first_dir, config, settings.capture.base_url)
        outcome.first_request = capture_first_request(settings.capture, command, first_dir, env,
                                                      settings.tokens)
        if settings.error_kinds and isinstance(outcome.first_request.get("systemPrompt"), str):
            prompt = with_error_kinds(outcome.first_request["systemPrompt"])
            agent_settings.append(f"system_prompt = {json.dumps(prompt)}")
            first_dir = settings.work / "first-request" / f"{task.name}-error-kinds"
            config = make_workspace(first_dir, settings.max_steps, settings.max_tokens, timeout,
                                    agent_settings, task.skills)
            command = task_command(settings, task, first_dir, config, settings.capture.base_url)
            outcome.first_request = capture_first_request(settings.capture, command, first_dir, env,
                                                          settings.tokens)
        if "error" in outcome.first_request:
            outcome.notes.append("first request not captured: " + outcome.first_request["error"][:80])
    if settings.first_only:
        return outcome

    task_dir = settings.work / task.name
    config = make_workspace(task_dir, settings.max_steps, settings.max_tokens, timeout, agent_settings,
                            task.skills)
    command = task_command(settings, task, task_dir, config, settings.base_url)
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
    arguments_by_id: dict[str, object] = {}
    for event in events:
        kind = event.get("type")
        if kind == "model_request":
            outcome.steps += 1
        elif kind == "model_reply":
            outcome.cut_off = event.get("stop") == "length"
            usage = event.get("usage") or {}
            if usage.get("promptTokens") is not None:
                if outcome.first_prompt_tokens is None:
                    outcome.first_prompt_tokens = int(usage["promptTokens"])
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
        elif kind == "tool_execution_start":
            arguments_by_id[str(event.get("toolCallId"))] = event.get("arguments")
        elif kind == "tool_execution_end":
            call_id = str(event.get("toolCallId"))
            outcome.call_results.append({
                "id": call_id, "name": event.get("toolName"),
                "arguments": arguments_by_id.get(call_id),
                "isError": bool(event.get("isError")), "errorKind": event.get("errorKind"),
            })
            if event.get("isError"):
                outcome.tool_errors.append(event.get("errorKind") or "error")
        elif kind == "tools_loaded":
            outcome.tools_loaded.extend(str(name) for name in event.get("tools") or [])
        elif kind == "hook_decision" and event.get("decision") == "block":
            outcome.guard_blocked = True
            outcome.blocked_calls += 1
        elif kind == "routing":
            outcome.route = event.get("route")
            usage = event.get("usage") or {}
            outcome.routing_tokens = (usage.get("promptTokens"), usage.get("completionTokens"))
    outcome.prompt_tokens, outcome.completion_tokens = prompt_tokens, completion_tokens
    if outcome.route is not None:
        spent = "/".join(str(n) for n in outcome.routing_tokens or ()) or "?"
        outcome.notes.append(f"routed: {outcome.route} ({spent} tokens)")
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
    judge(task, outcome, task_dir, stdout, settings.examples)
    return outcome


# The tables ------------------------------------------------------------------------------------

def aligned(rows: list[tuple]) -> list[str]:
    """`rows` (the first one the header) as aligned columns, the last one left ragged."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths) + "  " + "-" * max(4, len(row[-1])))
    return lines


def table(outcomes: list[Outcome]) -> str:
    rows = [("task", "finished", "correct", "steps", "1st prompt", "tokens (in/out)", "time",
             "tool calls", "note")]
    for o in outcomes:
        rows.append((o.name, "yes" if o.finished else "no", "yes" if o.correct else "no", str(o.steps),
                     o.first, o.tokens, f"{o.seconds:.1f} s", o.calls, o.why))
    lines = aligned(rows)
    finished = sum(o.finished for o in outcomes)
    correct = sum(o.correct for o in outcomes)
    lines.append(f"{finished}/{len(outcomes)} finished, {correct}/{len(outcomes)} correct")
    return "\n".join(lines)


def first_request_table(outcomes: list[Outcome]) -> str:
    """What each task's first request carried, from the stand-in server."""
    def number(value) -> str:
        return "-" if value is None else f"{value:,}"

    rows = [("task", "request bytes", "prompt tokens", "system prompt (tokens/bytes)", "tools",
             "tools (tokens/bytes)", "examples")]
    for o in outcomes:
        first = o.first_request
        if not first or "error" in first:
            rows.append((o.name, "-", "-", "-", "-", "-", first.get("error", "not captured")[:60]))
            continue
        rows.append((o.name, number(first.get("requestBytes")), number(first.get("promptTokens")),
                     f"{number(first.get('systemPromptTokens'))}/{number(first.get('systemPromptBytes'))}",
                     str(first.get("toolCount")),
                     f"{number(first.get('toolsTokens'))}/{number(first.get('toolsBytes'))}",
                     "yes" if first.get("toolsHaveExamples") else "no"))
    return "\n".join(aligned(rows))


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


def resolve_model(cache: Path, given: str) -> tuple[Path, setup_model.ModelSpec | None]:
    """`--model`: a key of setup_model.MODELS (its GGUF in the cache), or a path to a GGUF (the
    spec whose file name it has, if any, for its timeout)."""
    spec = setup_model.MODELS.get(given)
    if spec is not None:
        return setup_model.model_path(cache, spec), spec
    path = Path(given).expanduser()
    return path, next((s for s in setup_model.MODELS.values() if s.file == path.name), None)


def set_up(cache: Path, spec: setup_model.ModelSpec | None, jobs: int) -> None:
    """`--setup`: what setup_model.py does for `spec`; for a GGUF given by path, llama-server only."""
    if spec is not None:
        setup_model.setup(cache, spec, jobs)
        return
    with setup_model.locked(cache):
        cmake = setup_model.ensure_cmake(cache)
        source = setup_model.ensure_sources(cache)
        setup_model.ensure_server(cache, cmake, source, jobs)


def tool_examples(listing: str) -> dict:
    """Tool name -> its parameters schema's `examples`, from `cordon list --json`."""
    try:
        tools = json.loads(listing).get("tools") or []
    except (ValueError, AttributeError):
        return {}
    found = {}
    for tool in tools:
        examples = (tool.get("parameters") or {}).get("examples")
        if isinstance(examples, list) and examples:
            found[tool.get("name")] = examples
    return found


def main() -> int:
    cache = setup_model.cache_dir()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cordon", type=Path, default=default_cordon(),
                        help="the cordon binary [default: $CORDON_BIN, else $CARGO_TARGET_DIR/debug/cordon]")
    parser.add_argument("--plugins", type=Path, default=default_plugins(),
                        help="directory with fs.wasm and guard.wasm (and fixture_many_tools.wasm for "
                             "the find task) [default: $CORDON_GUEST_DIR, else plugins/]")
    parser.add_argument("--server", type=Path, default=setup_model.server_path(cache),
                        help="llama-server [default: the one setup_model.py built]")
    parser.add_argument("--model", default=setup_model.DEFAULT_MODEL,
                        help=f"{', '.join(sorted(setup_model.MODELS))} (a model setup_model.py fetches), "
                             f"or a path to a GGUF [default: {setup_model.DEFAULT_MODEL}]")
    parser.add_argument("--setup", action="store_true",
                        help="first run setup_model.py's steps for --model (each skipped when done)")
    parser.add_argument("--base-url", help="use this already running OpenAI-compatible server instead")
    parser.add_argument("--port", type=int, default=0, help="llama-server's port [default: a free one]")
    # Without tool search the find task's first request carries every spec: about 16,000 tokens.
    parser.add_argument("--context", type=int, default=32768,
                        help="llama-server's context size (default 32768)")
    # One core is left free: with every core busy (a compile next door, cordon itself) llama.cpp's
    # threads wait on each other and generation on two cores fell from ~20 to ~2 tokens/s.
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                        help="llama-server's CPU threads [default: the cores less one]")
    parser.add_argument("--timeout", type=float,
                        help="seconds per task, times the task's factor (find: 3) [default: "
                             + ", ".join(f"{k} {v:.0f}" for k, v in MODEL_TIMEOUTS.items())
                             + f", another GGUF {DEFAULT_TIMEOUT:.0f}]")
    parser.add_argument("--max-steps", type=int, default=12, help="[agent] max_steps per task (default 12)")
    parser.add_argument("--max-tokens", type=int, default=1024,
                        help="[model] max_tokens (default 1024; 0 leaves it to cordon)")
    parser.add_argument("--agent", action="append", default=[], metavar="'KEY = VALUE'",
                        help="a TOML line added to each task's [agent] table, e.g. "
                             "'send_tool_examples = true' or 'tool_search = \"never\"' (repeatable)")
    parser.add_argument("--error-kinds", action="store_true",
                        help="use the default system prompt with its error sentence replaced by the "
                             "one that listed the error kinds (as before issue 29)")
    parser.add_argument("--first-requests", action="store_true",
                        help="only capture and show each task's first request (seconds, no model run)")
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
    model, spec = resolve_model(cache, args.model)
    timeout = args.timeout or MODEL_TIMEOUTS.get(spec.key if spec else "", DEFAULT_TIMEOUT)
    if args.setup and not args.base_url:
        set_up(cache, spec, int(os.environ.get("CORDON_REAL_MODEL_JOBS", "2")))
    cordon = args.cordon.expanduser().resolve() if args.cordon else None
    if not cordon or not cordon.is_file():
        say(f"error: no cordon binary at {cordon}: build it (cargo build -p cordon) or set CORDON_BIN")
        return 2
    needed = ["fs", "guard"] + ([MANY_TOOLS_PLUGIN] if any(t.many_tools for t in tasks) else [])
    missing = [name for name in needed if not (args.plugins / f"{name}.wasm").is_file()]
    if missing:
        say(f"error: {args.plugins} lacks {', '.join(m + '.wasm' for m in missing)}: run `make plugins` "
            f"(and `cargo build --target wasm32-wasip2 --profile guest -p {MANY_TOOLS_PLUGIN}`) "
            "or pass --plugins")
        return 2
    if not args.base_url:
        for what, path in (("llama-server", args.server), ("model", model)):
            if not path.is_file():
                say(f"error: no {what} at {path}: run tests/real_model/setup_model.py"
                    + (f" --model {spec.key}" if spec else "") + " first, or pass --setup")
                return 2

    work = Path(tempfile.mkdtemp(prefix="cordon-real-model-"))
    plugins, many_plugins = work / "plugins", work / "plugins-many-tools"
    for folder, names in ((plugins, ["fs", "guard"]), (many_plugins, needed)):
        folder.mkdir()
        for name in names:
            shutil.copy2(args.plugins / f"{name}.wasm", folder / f"{name}.wasm")

    server = None
    capture = None
    outcomes: list[Outcome] = []
    started = time.time()
    try:
        if args.base_url:
            base_url = args.base_url.rstrip("/")
            root = re.sub(r"/v1$", "", base_url)
        else:
            port = args.port or free_port()
            log = work / "llama-server.log"
            server = start_server(args.server, model, port, args.context, args.threads, log)
            loading = time.monotonic()
            wait_healthy(server, port, log, limit=300)
            say(f"llama-server is up on port {port} ({time.monotonic() - loading:.1f} s to load the model)")
            root = f"http://127.0.0.1:{port}"
            base_url = f"{root}/v1"
        tokens = ServerTokens(root)
        if tokens.count("hello") is None:
            tokens = None
        capture = CaptureServer(args.context)

        # Compile the plugins once (cordon's compile cache), so the first task is not charged for
        # it; the listing gives the schemas' examples, to see whether the model copies them.
        examples: dict = {}
        for folder in (plugins, many_plugins):
            warm_dir = work / f"warm-up-{folder.name}"
            warm_config = make_workspace(warm_dir, args.max_steps, args.max_tokens)
            listed = subprocess.run(
                [str(cordon), "--plugins", str(folder), "--config", str(warm_config), "list", "--json"],
                cwd=warm_dir, capture_output=True, text=True, timeout=600)
            if listed.returncode != 0:
                say(f"error: `cordon list` failed ({listed.returncode}):\n{listed.stderr[-3000:]}")
                return 2
            examples.update(tool_examples(listed.stdout))

        settings = Settings(cordon=cordon, plugins=plugins, many_plugins=many_plugins,
                            base_url=base_url, work=work, timeout=timeout,
                            max_steps=args.max_steps, max_tokens=args.max_tokens,
                            agent_settings=args.agent, error_kinds=args.error_kinds,
                            capture=capture, tokens=tokens, examples=examples,
                            first_only=args.first_requests)
        for task in tasks:
            say(f"task {task.name}: {task.prompt}")
            outcome = run_task(task, settings)
            outcomes.append(outcome)
            if args.first_requests:
                continue
            say(f"task {task.name}: finished={outcome.finished} correct={outcome.correct} "
                f"steps={outcome.steps} first prompt={outcome.first} tokens={outcome.tokens} "
                f"{outcome.seconds:.1f} s" + (f" ({outcome.why})" if outcome.why else ""))
    finally:
        if capture is not None:
            capture.close()
        if server is not None:
            stop(server)

    shown = "" if args.first_requests else table(outcomes)
    firsts = first_request_table(outcomes)
    if shown:
        print(shown)
        print()
    print("First requests (from the stand-in server):")
    print(firsts)
    if args.json:
        report = {
            "cordon": str(cordon),
            "model": (spec.key if spec else model.name) if not args.base_url else None,
            "modelFile": model.name if not args.base_url else None,
            "baseUrl": args.base_url,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "timeoutSeconds": timeout,
            "taskTimeouts": {t.name: timeout * t.timeout_factor for t in tasks},
            "maxSteps": args.max_steps,
            "maxTokens": args.max_tokens,
            "context": args.context,
            "agentSettings": args.agent,
            "errorKinds": args.error_kinds,
            "firstRequestsOnly": args.first_requests,
            "serverThreads": None if args.base_url else args.threads,
            "cpuCount": os.cpu_count(),
            "tasks": [dict(asdict(o), tokens=o.tokens, calls=o.calls) for o in outcomes],
            "finished": sum(o.finished for o in outcomes),
            "correct": sum(o.correct for o in outcomes),
            "parrotsErrors": sum(o.parrots_errors for o in outcomes),
            "exampleCopies": sum(len(o.example_copies) for o in outcomes),
            "total": len(outcomes),
            "table": shown,
            "firstRequests": firsts,
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
