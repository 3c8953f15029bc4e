//! The last check on everything cordon exports: every string of a finished span (its name, each
//! attribute, each event's name and attributes, each link's attributes, its status message) and
//! every metric label value is masked by the redactor the binary supplies (cordon's secret
//! scrubber), then cut to a stated length, before it is queued. A `tracestate` (the span's own,
//! continued from a client's request, and each link's) is exported only whole: when it is longer
//! than [`MAX_TRACE_STATE_BYTES`] or masking would change it, it is dropped. So a value a client or plugin
//! chose (a JSON-RPC request id, a tool name, a protocol version, an error message) can neither
//! carry a configured secret to the collector nor make the export queue hold megabytes, whatever
//! the code that recorded it forgot.

use cordon_runtime::report::text_cut::{self, CutMark};
use opentelemetry::trace::{SpanContext, TraceState};
use opentelemetry::{Array, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::SpanData;
use std::borrow::Cow;
use std::sync::Arc;

/// Masks configured secrets in a string (cordon's scrubber; the identity when nothing is set).
pub type Redactor = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The most bytes of a span name, an attribute, event or label value exported.
pub const MAX_EXPORTED_BYTES: usize = 1 << 10;
/// The most bytes of captured content (`gen_ai.tool.call.arguments` / `.result`, opt-in).
pub const MAX_CONTENT_BYTES: usize = 8 << 10;
/// The longest `tracestate` exported (the W3C Trace Context limit); a longer one is dropped.
pub const MAX_TRACE_STATE_BYTES: usize = 512;
/// Content attributes, allowed [`MAX_CONTENT_BYTES`].
const CONTENT_KEYS: &[&str] = &["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];

/// Masks and bounds what is exported.
#[derive(Clone)]
pub struct ExportGuard {
    redact: Redactor,
}

impl std::fmt::Debug for ExportGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExportGuard")
    }
}

impl ExportGuard {
    pub fn new(redact: Redactor) -> Self {
        Self { redact }
    }

    /// A guard that only bounds (for tests and embedders with no secrets).
    pub fn bounding_only() -> Self {
        Self::new(Arc::new(str::to_string))
    }

    /// `text` masked, then cut to `limit` bytes. Masked first, so a cut never leaves a secret's
    /// first bytes behind.
    pub fn text(&self, text: &str, limit: usize) -> String {
        let masked = (self.redact)(text);
        cut(masked, limit)
    }

    /// A metric label value or span field, masked and cut to [`MAX_EXPORTED_BYTES`].
    pub fn label(&self, text: &str) -> String {
        self.text(text, MAX_EXPORTED_BYTES)
    }

    /// Every string of `span`, masked and cut.
    pub fn span(&self, span: &mut SpanData) {
        let name = self.label(&span.name);
        if name != span.name {
            span.name = Cow::Owned(name);
        }
        for attribute in &mut span.attributes {
            self.attribute(attribute);
        }
        for event in span.events.events.iter_mut() {
            let name = self.label(&event.name);
            if name != event.name {
                event.name = Cow::Owned(name);
            }
            for attribute in &mut event.attributes {
                self.attribute(attribute);
            }
        }
        if let Some(context) = self.span_context(&span.span_context) {
            span.span_context = context;
        }
        for link in span.links.links.iter_mut() {
            if let Some(context) = self.span_context(&link.span_context) {
                link.span_context = context;
            }
            for attribute in &mut link.attributes {
                self.attribute(attribute);
            }
        }
        if let opentelemetry::trace::Status::Error { description } = &mut span.status {
            let masked = self.label(description);
            if masked != *description {
                *description = Cow::Owned(masked);
            }
        }
    }

    /// `context` without its `tracestate`, when that may not be exported: too long to be a valid
    /// one, or carrying something the redactor masks (a part of it cannot be cut out and stay
    /// well-formed, so it all goes).
    fn span_context(&self, context: &SpanContext) -> Option<SpanContext> {
        let state = context.trace_state().header();
        if state.is_empty()
            || (state.len() <= MAX_TRACE_STATE_BYTES && (self.redact)(&state) == state)
        {
            return None;
        }
        Some(SpanContext::new(
            context.trace_id(),
            context.span_id(),
            context.trace_flags(),
            context.is_remote(),
            TraceState::default(),
        ))
    }

    fn attribute(&self, attribute: &mut KeyValue) {
        let limit = if CONTENT_KEYS.contains(&attribute.key.as_str()) {
            MAX_CONTENT_BYTES
        } else {
            MAX_EXPORTED_BYTES
        };
        let replaced = match &attribute.value {
            Value::String(text) => {
                let masked = self.text(text.as_str(), limit);
                (masked != text.as_str()).then(|| Value::String(masked.into()))
            }
            Value::Array(Array::String(items)) => {
                // The array as a whole gets the attribute's budget.
                let mut left = limit;
                let guarded: Vec<StringValue> = items
                    .iter()
                    .map_while(|item| {
                        let masked = self.text(item.as_str(), left);
                        left = left.checked_sub(masked.len().max(1))?;
                        Some(StringValue::from(masked))
                    })
                    .collect();
                let changed = guarded.len() != items.len()
                    || guarded
                        .iter()
                        .zip(items)
                        .any(|(a, b)| a.as_str() != b.as_str());
                changed.then_some(Value::Array(Array::String(guarded)))
            }
            _ => None,
        };
        if let Some(value) = replaced {
            attribute.value = value;
        }
    }
}

/// `text` cut to at most `limit` bytes on a character boundary, marked when cut.
fn cut(text: String, limit: usize) -> String {
    match text_cut::cut_within(&text, limit, CutMark::Ellipsis) {
        Cow::Borrowed(_) => text,
        Cow::Owned(cut) => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masking(secret: &'static str) -> ExportGuard {
        ExportGuard::new(Arc::new(move |text: &str| text.replace(secret, "[masked]")))
    }

    #[test]
    fn a_value_is_masked_before_it_is_cut() {
        let guard = masking("s3cr3t-value");
        let text = format!("{}s3cr3t-value", "x".repeat(MAX_EXPORTED_BYTES - 4));
        let out = guard.label(&text);
        assert!(out.len() <= MAX_EXPORTED_BYTES, "{}", out.len());
        assert!(
            !out.contains("s3cr"),
            "a secret's first bytes survived the cut"
        );
    }

    #[test]
    fn a_trace_state_goes_whole_or_not_at_all() {
        use opentelemetry::trace::{SpanId, TraceFlags, TraceId};
        let guard = masking("s3cr3t-value");
        let context = |state: &str| {
            SpanContext::new(
                TraceId::from(7),
                SpanId::from(9),
                TraceFlags::SAMPLED,
                true,
                state.parse().unwrap(),
            )
        };
        let fine = context("vendor=abc,other=1");
        assert!(
            guard.span_context(&fine).is_none(),
            "a harmless one is kept"
        );
        for state in [
            "vendor=s3cr3t-value".to_string(),
            (0..32)
                .map(|i| format!("k{i:02}{}=v{}", "a".repeat(200), "z".repeat(200)))
                .collect::<Vec<_>>()
                .join(","),
        ] {
            let kept = guard.span_context(&context(&state)).expect("dropped");
            assert_eq!(kept.trace_state().header(), "");
            assert_eq!(kept.trace_id(), TraceId::from(7), "the trace is kept");
            assert_eq!(kept.span_id(), SpanId::from(9));
        }
    }

    #[test]
    fn long_values_are_cut_on_a_character_boundary() {
        let guard = ExportGuard::bounding_only();
        let out = guard.label(&"é".repeat(5_000));
        assert!(out.len() <= MAX_EXPORTED_BYTES);
        assert!(out.ends_with('…'));
        assert_eq!(guard.label("short"), "short");
    }

    #[test]
    fn content_attributes_get_the_larger_budget_and_arrays_share_one() {
        let guard = ExportGuard::bounding_only();
        let mut content = KeyValue::new("gen_ai.tool.call.result", "y".repeat(20_000));
        guard.attribute(&mut content);
        assert!(content.value.as_str().len() <= MAX_CONTENT_BYTES);
        assert!(content.value.as_str().len() > MAX_EXPORTED_BYTES);
        let items: Vec<StringValue> = (0..100).map(|_| "z".repeat(100).into()).collect();
        let mut array = KeyValue::new(
            "gen_ai.response.finish_reasons",
            Value::Array(Array::String(items)),
        );
        guard.attribute(&mut array);
        let Value::Array(Array::String(kept)) = &array.value else {
            panic!("not a string array")
        };
        let total: usize = kept.iter().map(|item| item.as_str().len()).sum();
        assert!(total <= MAX_EXPORTED_BYTES, "{total}");
    }
}
