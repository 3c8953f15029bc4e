"""`cordon call` and `cordon batch` on a pseudo-terminal: a call a hook asks about is shown with who
asked and why, and the person's answer (yes, no, always for this tool) decides."""

import fcntl
import json
import os
import pty
import select
import subprocess
import termios
import time


def take_terminal():
    """In the child, after setsid: make the pseudo-terminal on stdin the controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Terminal:
    """cordon on a pseudo-terminal (stdin, stdout and stderr, and its controlling terminal)."""

    def __init__(self, cordon_bin, workspace, *args):
        self.main, secondary = pty.openpty()
        self.process = subprocess.Popen(
            [cordon_bin, *args], cwd=workspace, stdin=secondary, stdout=secondary, stderr=secondary,
            env={"XDG_CACHE_HOME": str(workspace / "cache"), "PATH": os.environ.get("PATH", ""), "TERM": "dumb"},
            start_new_session=True, preexec_fn=take_terminal,
        )
        os.close(secondary)
        self.seen = b""

    def read_until(self, text: str, timeout=60.0, start=0) -> str:
        """What cordon wrote, once `text` is in it (at or after byte `start`)."""
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} in {self.seen.decode(errors='replace')!r}"
            ready, _, _ = select.select([self.main], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.main, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"cordon ended before {text!r}: {self.seen.decode(errors='replace')!r}"
                self.seen += chunk
        return self.seen.decode(errors="replace")

    def type(self, line: str):
        os.write(self.main, line.encode() + b"\r")

    def finish(self) -> tuple[int, str]:
        code = self.process.wait(timeout=60)
        try:
            while True:
                chunk = os.read(self.main, 4096)
                if not chunk:
                    break
                self.seen += chunk
        except OSError:
            pass
        os.close(self.main)
        return code, self.seen.decode(errors="replace")


def audit(workspace):
    return [json.loads(line) for line in (workspace / "audit.jsonl").read_text().splitlines()]


def test_yes_runs_the_call_and_the_audit_log_says_the_user_approved(cordon_bin, approval_workspace):
    term = Terminal(cordon_bin, approval_workspace, "call", "word_stats",
                    '{"text": "a b c", "ask": "it reads private notes"}')
    shown = term.read_until("this session: ")
    assert "? approve word_stats (plugin v2)" in shown and '"text": "a b c"' in shown
    assert "asked by hook `v2`: it reads private notes" in shown
    term.type("y")
    code, out = term.finish()
    assert code == 0, out
    assert '"words": 3' in out
    assert audit(approval_workspace)[0]["approval"]["decidedBy"] == "user"


def test_no_refuses_the_call_with_a_result_the_model_can_read(cordon_bin, approval_workspace):
    term = Terminal(cordon_bin, approval_workspace, "call", "word_stats", '{"text": "x", "ask": "check"}')
    term.read_until("this session: ")
    term.type("n")
    code, out = term.finish()
    assert code == 1, out
    assert "[not_approved]" in out and "user said no" in out
    line = audit(approval_workspace)[0]
    assert line["approval"] == {"askedBy": [{"who": "hook `v2`", "reason": "check"}], "approved": False,
                                "decidedBy": "user", "reason": None}


def test_always_approves_the_tool_for_the_rest_of_the_session(cordon_bin, approval_workspace):
    """Always covers the tool asked about for the same reasons; another reason is asked again."""
    calls = [{"id": str(n), "name": "word_stats", "arguments": {"text": f"x{n}", "ask": reason}}
             for n, reason in ((1, "same"), (2, "same"), (3, "another"))]
    (approval_workspace / "calls.json").write_text(json.dumps(calls))
    term = Terminal(cordon_bin, approval_workspace, "batch", "calls.json")
    term.read_until("this session: ")
    term.type("a")
    shown = term.read_until("asked by hook `v2`: another")
    term.read_until("this session: ", start=len(shown) - 200)
    term.type("n")
    code, out = term.finish()
    assert code == 1, out
    assert out.count("? approve") == 2, out
    decided = {line["callId"]: line["approval"]["decidedBy"] for line in audit(approval_workspace)}
    assert decided == {"1": "user", "2": "user (always for this tool)", "3": "user"}
