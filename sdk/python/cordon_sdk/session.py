"""Session stages (contract 0.3): what a session hook sees and decides, and the decorator that
registers one. docs/session-hooks.md says what each stage's payload holds and which decisions it
takes."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from .aio import resolve

# The stages by their contract names, in the order a session meets them.
STAGES = ("session-start", "prompt", "model-request", "model-response", "compaction", "stop", "session-end")


@dataclass
class SessionEvent:
    """One stage of a session: ``stage`` is its contract name (``"model-request"``), ``payload``
    the stage's JSON object (texts cut to the documented bounds, secrets masked)."""

    stage: str
    payload: Dict[str, Any]


@dataclass
class SessionDecision:
    """What a session hook decides; the default leaves everything alone. A field its stage does
    not take makes the decision malformed, and the host stops the turn (it fails closed)."""

    block: Optional[str] = None
    replace: Optional[str] = None
    add_context: Optional[str] = None
    only_tools: Optional[List[str]] = None
    drop_calls: List[str] = field(default_factory=list)


@dataclass
class SessionHookEntry:
    function: Callable
    stages: List[str]


SESSION_HOOKS: List[SessionHookEntry] = []


def session_hook(stages: Sequence[str]):
    """Registers ``function(event) -> SessionDecision | None`` for these stages (contract names:
    ``"prompt"``, ``"stop"``, ...). Several functions on one stage run in registration order and
    their decisions combine: the first ``block`` ends it, a later ``replace`` wins, contexts are
    joined, ``only_tools`` lists intersect and ``drop_calls`` add up."""

    unknown = [stage for stage in stages if stage not in STAGES]
    if unknown or not stages:
        raise ValueError(f"session_hook stages must be some of {', '.join(STAGES)}; got {list(stages)!r}")

    def register(function: Callable) -> Callable:
        SESSION_HOOKS.append(SessionHookEntry(function, list(stages)))
        return function

    return register


def declared_stages() -> List[str]:
    return [stage for stage in STAGES if any(stage in entry.stages for entry in SESSION_HOOKS)]


def decide(event: SessionEvent) -> SessionDecision:
    """Runs every function registered for the event's stage and combines their decisions."""
    combined = SessionDecision()
    contexts = []
    for entry in SESSION_HOOKS:
        if event.stage not in entry.stages:
            continue
        decision = resolve(entry.function(event))
        if decision is None:
            continue
        if not isinstance(decision, SessionDecision):
            raise TypeError(f"{entry.function.__name__} returned {type(decision).__name__}, not a SessionDecision")
        if decision.block is not None:
            return SessionDecision(block=decision.block)
        if decision.replace is not None:
            combined.replace = decision.replace
        if decision.add_context is not None:
            contexts.append(decision.add_context)
        if decision.only_tools is not None:
            names = list(decision.only_tools)
            combined.only_tools = (
                names if combined.only_tools is None else [n for n in combined.only_tools if n in names]
            )
        combined.drop_calls += [i for i in decision.drop_calls if i not in combined.drop_calls]
    if contexts:
        combined.add_context = "\n".join(contexts)
    return combined
