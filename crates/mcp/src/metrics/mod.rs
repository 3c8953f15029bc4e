//! What `/metrics` reports: tool calls answered over MCP by tool and outcome, their latency as a
//! histogram by tool, and the gauges the transport reads at scrape time (sandboxes in use, MCP
//! requests in flight, readiness), reloads of the served tools by outcome, with the process's
//! start time and cordon's version. Rendered
//! in the Prometheus text format (`exposition.rs`).
//!
//! The `tool` label is a tool the server offers, or [`UNKNOWN_TOOL`] for any other name a client
//! sent, so clients cannot grow the number of series; `outcome` is `ok`, a result's `errorKind`,
//! or `input_required` (a 2026-07-28 approval question sent back instead of a result).

mod exposition;
mod process;

pub use exposition::CONTENT_TYPE;
use exposition::{Exposition, Kind};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The `tool` label of a call naming a tool the server does not offer.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// Upper bounds of the latency buckets, in seconds (a `+Inf` bucket follows).
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

/// One tool's latency histogram: counts per bucket (not cumulative), their sum and count.
#[derive(Default, Clone)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        if let Some(bucket) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.buckets[bucket] += 1;
        }
        self.sum += seconds;
        self.count += 1;
    }
}

#[derive(Default)]
struct Calls {
    /// (tool, outcome) → calls.
    counts: BTreeMap<(String, String), u64>,
    /// tool → latency.
    latency: BTreeMap<String, Histogram>,
    /// Reloads of the served tools: applied, refused.
    reloads: [u64; 2],
}

/// The values read when a scrape arrives rather than recorded as things happen.
#[derive(Debug, Clone, Copy)]
pub struct Gauges {
    pub sandboxes_in_use: usize,
    pub max_sandboxes: usize,
    pub requests_in_flight: usize,
    pub ready: bool,
}

/// The server's metrics. Cheap to clone; every clone records into the same counters.
#[derive(Clone)]
pub struct Metrics {
    calls: Arc<Mutex<Calls>>,
    started: f64,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            calls: Arc::default(),
            started: process::start_time_seconds(),
        }
    }
}

impl Metrics {
    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records one answered call of `tool` (already mapped to [`UNKNOWN_TOOL`] when not offered).
    pub fn record_call(&self, tool: &str, outcome: &str, took: Duration) {
        let mut calls = self.lock();
        *calls
            .counts
            .entry((tool.to_string(), outcome.to_string()))
            .or_default() += 1;
        calls
            .latency
            .entry(tool.to_string())
            .or_default()
            .observe(took.as_secs_f64());
    }

    /// Counts one reload of the served tools: `applied`, or refused (the running set kept).
    pub fn record_reload(&self, applied: bool) {
        self.lock().reloads[usize::from(!applied)] += 1;
    }

    /// Everything, in the text exposition format.
    pub fn render(&self, gauges: Gauges) -> String {
        let (counts, latency, reloads) = {
            let calls = self.lock();
            (calls.counts.clone(), calls.latency.clone(), calls.reloads)
        };
        let mut out = Exposition::default();
        out.family(
            "cordon_reloads_total",
            "Reloads of the plugins and the config while serving, by outcome (applied, or refused with the running set kept).",
            Kind::Counter,
        );
        for (outcome, count) in [("applied", reloads[0]), ("refused", reloads[1])] {
            out.sample(
                "cordon_reloads_total",
                &[("outcome", outcome)],
                count as f64,
            );
        }
        out.family(
            "cordon_tool_calls_total",
            "Tool calls answered over MCP, by tool and outcome (ok, the result's errorKind, or input_required).",
            Kind::Counter,
        );
        for ((tool, outcome), count) in &counts {
            out.sample(
                "cordon_tool_calls_total",
                &[("tool", tool), ("outcome", outcome)],
                *count as f64,
            );
        }
        out.family(
            "cordon_tool_call_duration_seconds",
            "How long tool calls over MCP took, hooks, approval and waiting for a sandbox included, by tool.",
            Kind::Histogram,
        );
        for (tool, histogram) in &latency {
            let mut cumulative = 0;
            for (bound, count) in BUCKETS.iter().zip(histogram.buckets) {
                cumulative += count;
                let le = exposition::number(*bound);
                out.sample(
                    "cordon_tool_call_duration_seconds_bucket",
                    &[("tool", tool), ("le", &le)],
                    cumulative as f64,
                );
            }
            out.sample(
                "cordon_tool_call_duration_seconds_bucket",
                &[("tool", tool), ("le", "+Inf")],
                histogram.count as f64,
            );
            out.sample(
                "cordon_tool_call_duration_seconds_sum",
                &[("tool", tool)],
                histogram.sum,
            );
            out.sample(
                "cordon_tool_call_duration_seconds_count",
                &[("tool", tool)],
                histogram.count as f64,
            );
        }
        let gauge = |out: &mut Exposition, name: &str, help: &str, value: f64| {
            out.family(name, help, Kind::Gauge);
            out.sample(name, &[], value);
        };
        gauge(
            &mut out,
            "cordon_sandboxes_in_use",
            "Sandboxes running now (tools' and hooks').",
            gauges.sandboxes_in_use as f64,
        );
        gauge(
            &mut out,
            "cordon_sandboxes_max",
            "Sandboxes that may run at once ([host] max_sandboxes); calls beyond it queue.",
            gauges.max_sandboxes as f64,
        );
        gauge(
            &mut out,
            "cordon_mcp_requests_in_flight",
            "MCP requests being served now (until their response has been sent).",
            gauges.requests_in_flight as f64,
        );
        gauge(
            &mut out,
            "cordon_ready",
            "1 while the server accepts calls, 0 once it is shutting down.",
            if gauges.ready { 1.0 } else { 0.0 },
        );
        gauge(
            &mut out,
            "process_start_time_seconds",
            "Start time of the process since the Unix epoch, in seconds.",
            self.started,
        );
        out.family(
            "cordon_build_info",
            "The running cordon's version.",
            Kind::Gauge,
        );
        out.sample(
            "cordon_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))],
            1.0,
        );
        out.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAUGES: Gauges = Gauges {
        sandboxes_in_use: 2,
        max_sandboxes: 64,
        requests_in_flight: 1,
        ready: true,
    };

    #[test]
    fn calls_are_counted_by_tool_and_outcome_with_cumulative_buckets() {
        let metrics = Metrics::default();
        metrics.record_call("echo", "ok", Duration::from_millis(3));
        metrics.record_call("echo", "ok", Duration::from_millis(700));
        metrics.record_call("echo", "trap", Duration::from_secs(400));
        let text = metrics.render(GAUGES);
        for line in [
            "cordon_tool_calls_total{tool=\"echo\",outcome=\"ok\"} 2",
            "cordon_tool_calls_total{tool=\"echo\",outcome=\"trap\"} 1",
            "cordon_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.005\"} 1",
            "cordon_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.5\"} 1",
            "cordon_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"1\"} 2",
            "cordon_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"300\"} 2",
            "cordon_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"+Inf\"} 3",
            "cordon_tool_call_duration_seconds_count{tool=\"echo\"} 3",
            "cordon_sandboxes_in_use 2",
            "cordon_mcp_requests_in_flight 1",
            "cordon_ready 1",
            "# TYPE cordon_tool_call_duration_seconds histogram",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in:\n{text}");
        }
    }

    #[test]
    fn families_are_declared_before_their_samples_even_when_empty() {
        let text = Metrics::default().render(GAUGES);
        assert!(text.contains("# TYPE cordon_tool_calls_total counter\n"));
        assert!(!text.contains("cordon_tool_calls_total{"));
        assert!(text.ends_with('\n'));
    }
}
