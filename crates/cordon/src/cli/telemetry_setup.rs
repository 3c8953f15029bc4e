//! Turning OpenTelemetry export on for the commands that run tools (`run`, `chat`, `serve`,
//! `call`, `batch`): the settings from `[telemetry]` of the config the command will use and the
//! standard `OTEL_*` variables, the exporter started before logging is set up (so its layer is
//! part of the one subscriber), capture of content when opted in, and a gauge of the sandboxes in
//! use. Any other command, or no endpoint configured, exports nothing and starts nothing.

use crate::cli::host_secrets::host_secrets;
use crate::cli::{Cli, Command};
use cordon_telemetry::{FileSettings, Telemetry, TelemetrySettings};
use opentelemetry::metrics::ObservableGauge;
use std::path::PathBuf;

/// Telemetry as started for this process, with what must live as long as it.
pub struct Started {
    pub telemetry: Telemetry,
    _sandboxes_gauge: Option<ObservableGauge<u64>>,
}

/// Starts telemetry when `cli`'s command runs tools and an endpoint is configured. A `[telemetry]`
/// table that does not check out leaves it off here; the command's own load of the config then
/// reports the error. Returns a warning to log once logging is up, when the settings were wrong.
pub fn start(cli: &Cli) -> (Option<Started>, Option<String>) {
    let runs_tools = matches!(
        cli.command,
        Command::Run { .. }
            | Command::Chat { .. }
            | Command::Serve { .. }
            | Command::Call { .. }
            | Command::Batch { .. }
    );
    if !runs_tools {
        return (None, None);
    }
    let path = cli
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from("cordon.toml"));
    let file = match path
        .exists()
        .then(|| cordon_telemetry::load_file_settings(&path, host_secrets()))
    {
        Some(Ok(telemetry)) => telemetry,
        _ => FileSettings::default(),
    };
    let settings = match TelemetrySettings::resolve(&file, |name| std::env::var(name).ok()) {
        Ok(Some(settings)) => settings,
        Ok(None) => return (None, None),
        Err(err) => {
            return (None, Some(format!("telemetry is off: {err}")));
        }
    };
    // Collector credentials are secrets like every other configured one, including the
    // per-signal header variables the exporter reads on its own.
    for value in settings.headers.values() {
        host_secrets().register_header_value(value);
    }
    for variable in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    ] {
        let list = std::env::var(variable).unwrap_or_default();
        for pair in list.split(',') {
            if let Some((_, value)) = pair.split_once('=') {
                host_secrets().register_header_value(value.trim());
            }
        }
    }
    cordon_runtime::trace_spans::set_capture_content(settings.capture_content);
    let scrub: cordon_telemetry::Redactor =
        std::sync::Arc::new(|text: &str| host_secrets().scrub(text).into_owned());
    match Telemetry::start(&settings, scrub) {
        Ok(telemetry) => {
            let gauge = telemetry.meter().map(|meter| {
                meter
                    .u64_observable_gauge(cordon_telemetry::conventions::metrics::SANDBOXES_IN_USE)
                    .with_description("Sandboxes running tool and hook calls now.")
                    .with_unit("{sandbox}")
                    .with_callback(|observer| {
                        observer.observe(cordon_runtime::sandboxes_running() as u64, &[])
                    })
                    .build()
            });
            (
                Some(Started {
                    telemetry,
                    _sandboxes_gauge: gauge,
                }),
                None,
            )
        }
        Err(err) => (None, Some(format!("telemetry is off: {err}"))),
    }
}
