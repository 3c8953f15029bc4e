"""The component's exports: describe, execute, the tool hooks and the session hook, answered from
the registry.

The generated bindings (`wit_world`) exist only inside a componentized build, so they are imported
when an export is called; an app can be imported and its tool functions tested with plain Python.
"""

import json
import traceback

from . import registry, session
from .decisions import Allow, Ask, Block, CallResult, Keep, Replace, Rewrite, ToolCall
from .output import CapabilityDenied, Image, as_output
from .schema import convert_arguments
from .aio import resolve


def _bindings():
    from componentize_py_types import Err
    from wit_world.imports import types

    return types, Err


def _content(items):
    types, _ = _bindings()
    out = []
    for item in items:
        if isinstance(item, Image):
            out.append(types.Content_Image(types.Image(item.mime_type, bytes(item.data))))
        else:
            out.append(types.Content_Text(str(item)))
    return out


def _from_content(items):
    types, _ = _bindings()
    return [Image(c.value.mime_type, c.value.data) if isinstance(c, types.Content_Image) else c.value for c in items]


def _details(value) -> str:
    return "" if value is None else json.dumps(value, default=str)


def _structured(value):
    return None if value is None else json.dumps(value, default=str)


def _failure(kind, message: str, details=None):
    types, Err = _bindings()
    return Err(types.ToolFailure(kind, message, _details(details)))


def _traceback(error, limit=5):
    """The traceback of `error`, as `traceback.format_exc` writes it but without source lines:
    the sources are not in the sandbox, and looking for them would ask the host to open paths
    outside the plugin's grants (which it refuses, and reports)."""
    lines = ["Traceback (most recent call last):\n"]
    for frame, lineno in list(traceback.walk_tb(error.__traceback__))[:limit]:
        code = frame.f_code
        lines.append(f'  File "{code.co_filename}", line {lineno}, in {code.co_name}\n')
    lines.extend(traceback.format_exception_only(type(error), error))
    return "".join(lines)


class Plugin:
    """The `plugin` export (componentize-py finds it by name in the app module)."""

    def describe(self):
        types, _ = _bindings()
        tools = [
            types.ToolSpec(
                name=t.name,
                title=t.title,
                description=t.description,
                parameters=json.dumps(t.parameters),
                output_schema=None if t.output_schema is None else json.dumps(t.output_schema),
                execution_mode=types.ExecutionMode.SEQUENTIAL if t.sequential else types.ExecutionMode.PARALLEL,
                annotations=types.ToolAnnotations(
                    read_only=t.annotations.get("read_only"),
                    destructive=t.annotations.get("destructive"),
                    idempotent=t.annotations.get("idempotent"),
                    open_world=t.annotations.get("open_world"),
                ),
                prompt_guidelines=list(t.guidelines),
                locks=list(t.locks),
            )
            for t in registry.TOOLS.values()
        ]
        hook = None
        stages = session.declared_stages()
        if registry.BEFORE or registry.AFTER or stages:
            globs = sorted({g for e in registry.BEFORE + registry.AFTER for g in e.tools})
            everything = any(not e.tools for e in registry.BEFORE + registry.AFTER)
            hook = types.HookSpec(
                [] if everything else globs,
                bool(registry.BEFORE),
                bool(registry.AFTER),
                [getattr(types.SessionStage, stage.upper().replace("-", "_")) for stage in stages],
            )
        return types.PluginInfo(tools, hook)

    def execute(self, call):
        types, _ = _bindings()
        entry = registry.TOOLS.get(call.name)
        if entry is None:
            raise _failure(types.FailureKind.TOOL_ERROR, f"this plugin has no tool named {call.name!r}")
        try:
            arguments = convert_arguments(entry.function, json.loads(call.arguments or "{}"))
            output = as_output(resolve(entry.function(**arguments)))
        except CapabilityDenied as error:
            raise _failure(types.FailureKind.CAPABILITY_DENIED, str(error))
        except Exception as error:  # noqa: BLE001 - every exception is the tool's failure
            raise _failure(
                types.FailureKind.TOOL_ERROR,
                f"{type(error).__name__}: {error}",
                {"exception": type(error).__name__, "traceback": _traceback(error)},
            )
        return types.ToolOutput(_content(output.content), _structured(output.structured), _details(output.details))

    def before_tool_call(self, call):
        types, _ = _bindings()
        view = ToolCall(call.id, call.name, json.loads(call.arguments or "{}"))
        for entry in registry.watching(registry.BEFORE, call.name):
            decision = resolve(entry.function(view))
            if isinstance(decision, Block):
                return types.BeforeDecision_Block(decision.reason)
            if isinstance(decision, Rewrite):
                view.arguments = decision.arguments
                return types.BeforeDecision_Rewrite(json.dumps(decision.arguments))
            if isinstance(decision, Ask):
                return types.BeforeDecision_Ask(decision.reason)
        return types.BeforeDecision_Allow()

    def after_tool_call(self, call, outcome):
        types, _ = _bindings()
        view = ToolCall(call.id, call.name, json.loads(call.arguments or "{}"))
        result = CallResult(
            _from_content(outcome.content),
            json.loads(outcome.details) if outcome.details else None,
            outcome.is_error,
            json.loads(outcome.structured) if outcome.structured else None,
        )
        replaced = False
        for entry in registry.watching(registry.AFTER, call.name):
            decision = resolve(entry.function(view, result))
            if isinstance(decision, Replace):
                result, replaced = decision.result, True
        if not replaced:
            return types.AfterDecision_Keep()
        return types.AfterDecision_Replace(
            types.ToolResult(_content(result.content), _structured(result.structured), _details(result.details), result.is_error)
        )

    def session_hook(self, event):
        """An exception in a session hook fails it, and the host stops the turn (fail closed)."""
        types, _ = _bindings()
        stage = event.stage.name.lower().replace("_", "-")
        payload = json.loads(event.payload) if event.payload else {}
        decision = session.decide(session.SessionEvent(stage, payload))
        return types.SessionDecision(
            block=decision.block,
            replace=decision.replace,
            add_context=decision.add_context,
            only_tools=None if decision.only_tools is None else list(decision.only_tools),
            drop_calls=list(decision.drop_calls),
        )
