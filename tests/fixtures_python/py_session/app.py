"""Test fixture: a session hook written with the Python SDK, deciding as the other SDKs' session
fixtures do (tests/integration/session_sdks.rs): a prompt that says "forbidden" is blocked; any
other gets context naming what the hook saw and is routed to `echo` only; a reply's call with id
`drop-me` is dropped; an answer without DONE is continued once."""

from cordon_sdk import Plugin, SessionDecision, session_hook

LANG = "python"


@session_hook(stages=["prompt"])
def on_prompt(event):
    prompt = event.payload.get("prompt", "")
    if "forbidden" in prompt:
        return SessionDecision(block=f"{LANG} hook: forbidden prompt")
    return SessionDecision(add_context=f"{LANG} hook saw: {prompt}", only_tools=["echo"])


@session_hook(stages=["model-response"])
def on_reply(event):
    dropped = [call["id"] for call in event.payload.get("calls", []) if call["id"] == "drop-me"]
    return SessionDecision(drop_calls=dropped)


@session_hook(stages=["stop"])
def on_stop(event):
    if "DONE" in event.payload.get("answer", "") or event.payload.get("continuations", 0) > 0:
        return None
    return SessionDecision(replace=f"{LANG} hook: finish with DONE")


__all__ = ["Plugin"]
