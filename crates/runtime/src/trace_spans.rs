//! The spans the host opens for OpenTelemetry export (target [`TARGET`]): a batch, a tool call
//! (`execute_tool {tool}`, from its preparation to its final result), and a hook's decision (on a
//! tool call or at a session stage).
//! Field names follow the GenAI semantic conventions (v1.41) where they have one and `cordon.*`
//! otherwise; the `cordon-telemetry` crate turns them into OTLP spans and metrics. With telemetry
//! off no layer wants [`TARGET`], so these spans are disabled at their call sites and cost a
//! check of a cached flag.
//!
//! Nothing secret goes into a span: names, ids, kinds and decisions. Tool arguments and results
//! are recorded only when the operator opted in ([`set_capture_content`], `[telemetry]
//! capture_content`), and then as the after-hooks and the scrubber left them.

use crate::report::ToolResult;
use crate::report::secrets::Secrets;
use std::sync::atomic::{AtomicBool, Ordering};
use tracing::Span;
use tracing::field::Empty;

/// The `tracing` target of every span meant for export.
pub const TARGET: &str = "cordon_otel";

/// The most bytes of arguments or result text put in a span when content is captured.
const MAX_CAPTURED_BYTES: usize = 8 << 10;

/// Process-wide on purpose, unlike the scrubber: it says what the exporter may receive, and the
/// `tracing` subscriber that exports these spans is the process's own, shared by every runtime in
/// it. What is captured is masked with each call's own runtime's secrets.
static CAPTURE_CONTENT: AtomicBool = AtomicBool::new(false);

/// Puts tool arguments and results in the spans from now on (`[telemetry] capture_content`).
pub fn set_capture_content(on: bool) {
    CAPTURE_CONTENT.store(on, Ordering::Relaxed);
}

/// Whether tool arguments and results go into spans.
pub fn captures_content() -> bool {
    CAPTURE_CONTENT.load(Ordering::Relaxed)
}

/// `text`, masked and cut for a span.
pub fn captured(text: &str, secrets: &Secrets) -> String {
    crate::report::budget::masked_cut(text, MAX_CAPTURED_BYTES, secrets)
}

/// The most bytes of a name or id (a tool's name, a call or request id) put in a span.
const MAX_ID_BYTES: usize = 256;

/// A name or id a model, client or plugin chose, masked and cut for a span.
pub fn captured_id(text: &str, secrets: &Secrets) -> String {
    crate::report::budget::masked_cut(text, MAX_ID_BYTES, secrets)
}

/// A batch of `calls` tool calls.
pub fn batch(calls: usize) -> Span {
    tracing::info_span!(
        target: "cordon_otel",
        "batch",
        otel.name = "cordon.batch",
        cordon.batch.calls = calls as i64,
    )
}

/// One tool call, from its preparation (lookup, schema, before-hooks, approval) to its result.
/// The name and id come from the model: masked like every output and bounded, and only when the
/// span is wanted (with telemetry off this is one check of a cached flag).
pub fn tool_call(id: &str, name: &str, secrets: &Secrets) -> Span {
    let span = tracing::info_span!(
        target: "cordon_otel",
        "execute_tool",
        otel.name = Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = Empty,
        gen_ai.tool.call.id = Empty,
        gen_ai.tool.type = "function",
        cordon.plugin = Empty,
        error.type = Empty,
        otel.status_code = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
    );
    if !span.is_disabled() {
        let name = captured_id(name, secrets);
        span.record("otel.name", format!("execute_tool {name}"));
        span.record("gen_ai.tool.name", name);
        span.record("gen_ai.tool.call.id", captured_id(id, secrets));
    }
    span
}

/// Records which plugin runs the call and, when content is captured, the arguments it runs with.
pub fn record_run(span: &Span, plugin: &str, arguments: &serde_json::Value, secrets: &Secrets) {
    span.record("cordon.plugin", plugin);
    if captures_content() {
        span.record(
            "gen_ai.tool.call.arguments",
            captured(&arguments.to_string(), secrets),
        );
    }
}

/// Records how the call ended: its error kind as `error.type`, and (captured) its result.
pub fn record_result(span: &Span, result: &ToolResult, secrets: &Secrets) {
    if let Some(kind) = result.error_kind.filter(|_| result.is_error) {
        span.record("error.type", kind.as_str());
        span.record("otel.status_code", "ERROR");
    }
    if captures_content() {
        span.record("gen_ai.tool.call.result", captured(&result.text(), secrets));
    }
}

/// One hook's decision on a call to `tool`, at `stage` (`before` or `after`).
pub fn hook(hook: &str, stage: &str, tool: &str) -> Span {
    let span = hook_span(hook, stage);
    span.record("gen_ai.tool.name", tool);
    span
}

/// One session hook's decision at a session `stage` (`prompt`, `model-request`, ...): the same
/// `hook {id}` span as a tool hook's, without a tool.
pub fn session_hook(hook: &str, stage: &str) -> Span {
    hook_span(hook, stage)
}

/// The `hook {id}` span both kinds of hook share; a tool hook records its tool's name.
fn hook_span(hook: &str, stage: &str) -> Span {
    tracing::info_span!(
        target: "cordon_otel",
        "hook",
        otel.name = %format_args!("hook {hook}"),
        cordon.hook.id = %hook,
        cordon.hook.stage = %stage,
        gen_ai.tool.name = Empty,
        cordon.hook.decision = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// Records a hook's decision (`allow`, `block`, `rewrite`, `ask`, `keep`, `replace`, `failed`;
/// a session hook's `proceed`, `narrow`, `add_context`, `drop_calls` too).
pub fn record_decision(span: &Span, decision: &str) {
    span.record("cordon.hook.decision", decision);
    if decision == "failed" {
        span.record("error.type", "hook_failed");
        span.record("otel.status_code", "ERROR");
    }
}
