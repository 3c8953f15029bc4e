//! Metrics made from the spans as they close, so the host's code records each thing once: a
//! closed `execute_tool` span counts a tool call and its duration (by tool and outcome), a `chat`
//! span the model request's duration and tokens (`gen_ai.client.operation.duration`,
//! `gen_ai.client.token.usage`), an `mcp_request` span `mcp.server.operation.duration`.

use crate::conventions::{attributes as attr, metrics, spans};
use crate::export_guard::ExportGuard;
use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, Meter};
use std::collections::BTreeMap;
use std::time::Instant;
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// The instruments, made once.
pub struct SpanMetrics {
    tool_calls: Counter<u64>,
    tool_duration: Histogram<f64>,
    token_usage: Histogram<u64>,
    operation_duration: Histogram<f64>,
    mcp_duration: Histogram<f64>,
    /// Label values are masked and bounded like span attributes.
    guard: ExportGuard,
}

/// What a span said, kept until it closes.
struct Seen {
    started: Instant,
    fields: BTreeMap<&'static str, String>,
}

/// The fields metrics are made of; others are not kept.
const KEPT: &[&str] = &[
    attr::TOOL_NAME,
    attr::ERROR_TYPE,
    attr::PROVIDER_NAME,
    attr::REQUEST_MODEL,
    attr::USAGE_INPUT_TOKENS,
    attr::USAGE_OUTPUT_TOKENS,
    attr::MCP_METHOD_NAME,
    attr::MCP_PROTOCOL_VERSION,
    attr::NETWORK_TRANSPORT,
    attr::OPERATION_NAME,
    attr::CORDON_ERROR_KIND,
];

/// The label a tool name the model or client made up gets: names are label values only when a
/// tool of that name exists, so no caller can add series.
const UNKNOWN_TOOL: &str = "(unknown)";

/// The tool name to label a metric with: the span's, or [`UNKNOWN_TOOL`] when the call found no
/// such tool.
fn tool_label(tool: Option<String>, kind: Option<&str>) -> String {
    match kind {
        Some("not_found") => UNKNOWN_TOOL.to_string(),
        _ => tool.unwrap_or_default(),
    }
}

struct Collect<'a> {
    fields: &'a mut BTreeMap<&'static str, String>,
    guard: &'a ExportGuard,
}

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if let Some(name) = KEPT.iter().find(|name| **name == field.name()) {
            self.fields
                .insert(name, self.guard.label(&format!("{value:?}")));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if let Some(name) = KEPT.iter().find(|name| **name == field.name()) {
            self.fields.insert(name, self.guard.label(value));
        }
    }
}

impl SpanMetrics {
    pub fn new(meter: &Meter, guard: ExportGuard) -> Self {
        Self {
            guard,
            tool_calls: meter
                .u64_counter(metrics::TOOL_CALLS)
                .with_description("Tool calls by tool and outcome (ok, or the error kind).")
                .with_unit("{call}")
                .build(),
            tool_duration: meter
                .f64_histogram(metrics::TOOL_DURATION)
                .with_description("How long tool calls took, hooks and waiting for a sandbox included.")
                .with_unit("s")
                .with_boundaries(metrics::TOOL_DURATION_BUCKETS.to_vec())
                .build(),
            token_usage: meter
                .u64_histogram(metrics::TOKEN_USAGE)
                .with_description("Number of input and output tokens used.")
                .with_unit("{token}")
                .with_boundaries(metrics::TOKEN_BUCKETS.to_vec())
                .build(),
            operation_duration: meter
                .f64_histogram(metrics::OPERATION_DURATION)
                .with_description("GenAI operation duration.")
                .with_unit("s")
                .with_boundaries(metrics::GEN_AI_DURATION_BUCKETS.to_vec())
                .build(),
            mcp_duration: meter
                .f64_histogram(metrics::MCP_OPERATION_DURATION)
                .with_description("The duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.")
                .with_unit("s")
                .with_boundaries(metrics::MCP_DURATION_BUCKETS.to_vec())
                .build(),
        }
    }

    fn record(&self, name: &str, seen: &Seen) {
        let seconds = seen.started.elapsed().as_secs_f64();
        let field = |key: &str| seen.fields.get(key).cloned();
        let error = field(attr::ERROR_TYPE);
        match name {
            spans::EXECUTE_TOOL => {
                let tool = tool_label(field(attr::TOOL_NAME), error.as_deref());
                let outcome = error.clone().unwrap_or_else(|| "ok".into());
                let labels = [
                    KeyValue::new(attr::TOOL_NAME, tool),
                    KeyValue::new("cordon.outcome", outcome),
                ];
                self.tool_calls.add(1, &labels);
                self.tool_duration.record(seconds, &labels);
            }
            spans::CHAT => {
                let mut labels = vec![
                    KeyValue::new(attr::OPERATION_NAME, "chat"),
                    KeyValue::new(
                        attr::PROVIDER_NAME,
                        field(attr::PROVIDER_NAME).unwrap_or_default(),
                    ),
                ];
                if let Some(model) = field(attr::REQUEST_MODEL) {
                    labels.push(KeyValue::new(attr::REQUEST_MODEL, model));
                }
                for (key, kind) in [
                    (attr::USAGE_INPUT_TOKENS, "input"),
                    (attr::USAGE_OUTPUT_TOKENS, "output"),
                ] {
                    if let Some(tokens) = field(key).and_then(|n| n.parse::<u64>().ok()) {
                        let mut with_type = labels.clone();
                        with_type.push(KeyValue::new(attr::TOKEN_TYPE, kind));
                        self.token_usage.record(tokens, &with_type);
                    }
                }
                if let Some(error) = error {
                    labels.push(KeyValue::new(attr::ERROR_TYPE, error));
                }
                self.operation_duration.record(seconds, &labels);
            }
            spans::MCP_REQUEST => {
                let mut labels = vec![KeyValue::new(
                    attr::MCP_METHOD_NAME,
                    field(attr::MCP_METHOD_NAME).unwrap_or_default(),
                )];
                let kind = field(attr::CORDON_ERROR_KIND);
                if let Some(tool) = field(attr::TOOL_NAME).filter(|tool| !tool.is_empty()) {
                    labels.push(KeyValue::new(
                        attr::TOOL_NAME,
                        tool_label(Some(tool), kind.as_deref()),
                    ));
                }
                for key in [
                    attr::MCP_PROTOCOL_VERSION,
                    attr::NETWORK_TRANSPORT,
                    attr::ERROR_TYPE,
                ] {
                    if let Some(value) = field(key).filter(|value| !value.is_empty()) {
                        labels.push(KeyValue::new(key, value));
                    }
                }
                self.mcp_duration.record(seconds, &labels);
            }
            _ => {}
        }
    }
}

impl<S> tracing_subscriber::Layer<S> for SpanMetrics
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut fields = BTreeMap::new();
        attrs.record(&mut Collect {
            fields: &mut fields,
            guard: &self.guard,
        });
        span.extensions_mut().insert(Seen {
            started: Instant::now(),
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        if let Some(seen) = span.extensions_mut().get_mut::<Seen>() {
            values.record(&mut Collect {
                fields: &mut seen.fields,
                guard: &self.guard,
            });
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let name = span.name();
        if let Some(seen) = span.extensions().get::<Seen>() {
            self.record(name, seen);
        }
    }
}
