//! The span of one MCP request `cordon serve` handles (`{mcp.method.name} {target}`, a server
//! span, for OpenTelemetry export), named and attributed as the MCP semantic conventions (v1.41)
//! say, and made a child of the client's trace when the request's `params._meta` carries W3C
//! trace context (`traceparent`, `tracestate`). A `tools/call` whose result is an error gets
//! `error.type = tool_error`, and cordon's error kind beside it.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tracing::Span;
use tracing::field::Empty;

/// The span of a request for `method` (on `target`, a tool's name, when there is one).
pub(super) fn for_request(
    method: &str,
    target: Option<&str>,
    context: &RequestContext<RoleServer>,
    secrets: &cordon_runtime::report::secrets::Secrets,
) -> Span {
    let span = tracing::info_span!(
        target: "cordon_otel",
        "mcp_request",
        otel.name = Empty,
        otel.kind = "server",
        mcp.method.name = %method,
        mcp.protocol.version = Empty,
        jsonrpc.request.id = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        error.type = Empty,
        cordon.error.kind = Empty,
        otel.status_code = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    // The request id is the client's to choose: masked like every output, and bounded.
    span.record(
        "jsonrpc.request.id",
        cordon_runtime::trace_spans::captured_id(&context.id.to_string(), secrets),
    );
    let over_http = context
        .extensions
        .get::<axum::http::request::Parts>()
        .is_some();
    let version = context
        .meta
        .protocol_version()
        .map(|version| version.to_string())
        .or_else(|| {
            context
                .peer
                .peer_info()
                .map(|info| info.protocol_version.to_string())
        })
        .unwrap_or_default();
    span.record("mcp.protocol.version", version);
    span.record("network.transport", if over_http { "tcp" } else { "pipe" });
    if over_http {
        span.record("network.protocol.name", "http");
    }
    match target {
        // A tool name comes from the client: masked like every output, and bounded.
        Some(tool) => {
            let tool = cordon_runtime::trace_spans::captured_id(tool, secrets);
            span.record("otel.name", format!("{method} {tool}"));
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool);
        }
        None => {
            span.record("otel.name", method);
        }
    }
    cordon_telemetry::continue_trace(&span, &context.meta.0.0);
    span
}

/// Records how a `tools/call` ended: `ok`, `input_required`, or an error kind.
pub(super) fn record_outcome(span: &Span, outcome: &str) {
    if outcome != "ok" && outcome != "input_required" {
        span.record("error.type", "tool_error");
        span.record("cordon.error.kind", outcome);
        span.record("otel.status_code", "ERROR");
    }
}
