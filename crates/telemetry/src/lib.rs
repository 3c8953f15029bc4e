//! OpenTelemetry for cordon: the host's own `tracing` spans (target
//! [`conventions::SPAN_TARGET`]: a turn of the agent loop, each model request, each batch, tool
//! call and hook decision, compaction, each MCP request `cordon serve` handles) exported as OTLP
//! traces over HTTP/protobuf, and metrics made from them ([`span_metrics`]) exported beside. Off
//! unless an endpoint is configured ([`settings`]); when off, the spans are never even built (the
//! log output's filter leaves their target out, and no layer wants them).
//!
//! What a call costs is bounded whatever the collector does: a span that ends goes into a bounded
//! queue without waiting ([`span_queue`]), the exports run on threads of their own with a deadline
//! per request ([`export_client`]), and [`Telemetry::shutdown`] gives up after its deadline.
//! Trace context arrives with an MCP request's `params._meta` (`traceparent`, `tracestate`):
//! [`continue_trace`] makes the request's span a child of the caller's.

pub mod config_section;
pub mod conventions;
mod export_client;
pub mod export_guard;
pub mod settings;
mod span_metrics;
mod span_queue;

pub use config_section::{load_file_settings, read_file_settings};
pub use export_guard::{ExportGuard, Redactor};
pub use settings::{FileSettings, SettingsError, TelemetrySettings};

use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{KeyValue, metrics::MeterProvider as _};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use opentelemetry_sdk::{Resource, propagation::TraceContextPropagator};
use span_queue::{QueueCounts, SpanQueue};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("cannot set up the OTLP exporter: {0}")]
    Exporter(String),
}

/// Traces and metrics being exported; dropped or shut down at exit.
pub struct Telemetry {
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
    counts: Arc<QueueCounts>,
    capture_content: bool,
    guard: ExportGuard,
}

/// A tracing layer for any subscriber built on the registry.
pub type BoxedLayer<S> = Box<dyn Layer<S> + Send + Sync + 'static>;

impl Telemetry {
    /// Starts exporting as `settings` say. Every string exported (span names, attributes, events,
    /// metric labels) first passes `redact` (the binary gives cordon's secret scrubber), then is cut
    /// to [`export_guard::MAX_EXPORTED_BYTES`].
    pub fn start(settings: &TelemetrySettings, redact: Redactor) -> Result<Self, TelemetryError> {
        let guard = ExportGuard::new(redact);
        let resource = Resource::builder()
            .with_service_name(settings.service_name.clone())
            .with_schema_url(
                [KeyValue::new("service.version", env!("CARGO_PKG_VERSION"))],
                conventions::SCHEMA_URL,
            )
            .build();
        let headers: std::collections::HashMap<String, String> = settings
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let client = export_client::ExportClient::new(settings.timeout)
            .map_err(|err| TelemetryError::Exporter(err.to_string()))?;
        let counts = Arc::new(QueueCounts::default());
        let tracer_provider = match &settings.traces_url {
            Some(url) => {
                let mut exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_endpoint(url.clone())
                    .with_http_client(client.clone())
                    .with_headers(headers.clone())
                    .with_timeout(settings.timeout)
                    .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
                    .build()
                    .map_err(|err| TelemetryError::Exporter(err.to_string()))?;
                opentelemetry_sdk::trace::SpanExporter::set_resource(&mut exporter, &resource);
                let mut builder = SdkTracerProvider::builder()
                    .with_span_processor(SpanQueue::start(exporter, counts.clone(), guard.clone()))
                    .with_resource(resource.clone());
                if let Some((name, ratio)) = &settings.sampler {
                    builder = builder.with_sampler(sampler(name, ratio.unwrap_or(1.0)));
                }
                Some(builder.build())
            }
            None => None,
        };
        let meter_provider = match &settings.metrics_url {
            Some(url) => {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_endpoint(url.clone())
                    .with_http_client(client)
                    .with_headers(headers)
                    .with_timeout(settings.timeout)
                    .with_retry_policy(opentelemetry_otlp::RetryPolicy::disabled())
                    .build()
                    .map_err(|err| TelemetryError::Exporter(err.to_string()))?;
                let reader = PeriodicReader::builder(exporter)
                    .with_interval(settings.metrics_interval)
                    .build();
                Some(
                    SdkMeterProvider::builder()
                        .with_reader(reader)
                        .with_resource(resource)
                        .build(),
                )
            }
            None => None,
        };
        Ok(Self {
            tracer_provider,
            meter_provider,
            counts,
            capture_content: settings.capture_content,
            guard,
        })
    }

    /// The layers that turn cordon's spans into OTLP spans and metrics; they see only spans of
    /// [`conventions::SPAN_TARGET`].
    pub fn layer<S>(&self) -> BoxedLayer<S>
    where
        S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
    {
        let only_ours =
            || Targets::new().with_target(conventions::SPAN_TARGET, tracing::Level::TRACE);
        // A Vec, not Options: a `None` layer hints "no level at all", which would turn the
        // spans off for the whole subscriber when only one of the two exports is on.
        let mut layers: Vec<BoxedLayer<S>> = Vec::new();
        if let Some(provider) = &self.tracer_provider {
            layers.push(Box::new(
                tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer(conventions::SCOPE))
                    .with_location(false)
                    .with_threads(false)
                    .with_target(false)
                    .with_level(false)
                    .with_tracked_inactivity(false)
                    .with_filter(only_ours()),
            ));
        }
        if let Some(meter) = self.meter() {
            layers.push(Box::new(
                span_metrics::SpanMetrics::new(&meter, self.guard.clone()).with_filter(only_ours()),
            ));
        }
        Box::new(layers)
    }

    /// The meter other metrics are made with (a gauge read when metrics are collected), when
    /// metrics are exported.
    pub fn meter(&self) -> Option<opentelemetry::metrics::Meter> {
        self.meter_provider
            .as_ref()
            .map(|provider| provider.meter(conventions::SCOPE))
    }

    /// Whether tool arguments and results go into the spans (`[telemetry] capture_content`).
    pub fn captures_content(&self) -> bool {
        self.capture_content
    }

    /// Spans dropped so far because the export queue was full or an export failed.
    pub fn spans_dropped(&self) -> u64 {
        self.counts.dropped.load(Ordering::Relaxed)
    }

    /// Flushes what is queued and stops, giving up after `within`.
    pub fn shutdown(self, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        let (done, finished) = std::sync::mpsc::channel();
        let Self {
            tracer_provider,
            meter_provider,
            counts,
            ..
        } = self;
        // On a thread of its own: a provider's shutdown may wait longer than we will.
        let _ = std::thread::Builder::new()
            .name("cordon-otel-shutdown".into())
            .spawn(move || {
                if let Some(provider) = tracer_provider {
                    let _ = provider.shutdown_with_timeout(within);
                }
                if let Some(provider) = meter_provider {
                    let _ = provider.shutdown_with_timeout(within);
                }
                let _ = done.send(());
            });
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if finished.recv_timeout(left).is_err() {
            tracing::warn!(
                "telemetry: the collector did not take the last spans and metrics within {within:?}; they were dropped"
            );
        }
        // Read after the flush: its own failures count too.
        let dropped = counts.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(
                "telemetry: {dropped} span(s) were dropped (the export queue was full or the collector failed)"
            );
        }
    }
}

fn sampler(name: &str, ratio: f64) -> Sampler {
    let ratio = ratio.clamp(0.0, 1.0);
    match name {
        "always_off" => Sampler::AlwaysOff,
        "traceidratio" => Sampler::TraceIdRatioBased(ratio),
        "parentbased_always_on" => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        "parentbased_always_off" => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        "parentbased_traceidratio" => {
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)))
        }
        _ => Sampler::AlwaysOn,
    }
}

/// `params._meta` of an MCP request, read for trace context.
struct Meta<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let value = self.0.get(key).and_then(serde_json::Value::as_str)?;
        // A tracestate past the W3C limit is not one: the trace continues without it.
        (key != "tracestate" || value.len() <= export_guard::MAX_TRACE_STATE_BYTES).then_some(value)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Makes `span` a child of the trace `meta` carries (`traceparent`, `tracestate`), when it
/// carries a valid one; otherwise leaves it a root. Call it before the span is first entered.
pub fn continue_trace(span: &tracing::Span, meta: &serde_json::Map<String, serde_json::Value>) {
    if !meta.contains_key("traceparent") || span.is_disabled() {
        return;
    }
    let context = TraceContextPropagator::new().extract(&Meta(meta));
    use opentelemetry::trace::TraceContextExt as _;
    if context.span().span_context().is_valid() {
        let _ = span.set_parent(context);
    }
}
