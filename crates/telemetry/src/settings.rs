//! Where telemetry goes and what it carries, from the standard `OTEL_*` environment variables and
//! cordon.toml's `[telemetry]` (what cordon.toml sets wins; what it leaves unset comes from the
//! environment; headers are the exception: the exporter library adds `OTEL_EXPORTER_OTLP_HEADERS`
//! after the file's, so a header named in both goes out with the variable's value). Telemetry is off unless an endpoint is given one way or the other, and
//! `OTEL_SDK_DISABLED=true` turns it off whatever else is set.

use std::collections::BTreeMap;
use std::time::Duration;

/// What cordon.toml's `[telemetry]` says (every field optional).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileSettings {
    /// The OTLP/HTTP base URL (`/v1/traces` and `/v1/metrics` are appended).
    pub endpoint: Option<String>,
    /// Headers sent with every export (already expanded; their values are secrets).
    pub headers: BTreeMap<String, String>,
    pub service_name: Option<String>,
    /// `always_on`, `always_off`, `traceidratio`, `parentbased_always_on`,
    /// `parentbased_always_off` or `parentbased_traceidratio`.
    pub sampler: Option<String>,
    pub sampler_ratio: Option<f64>,
    /// Export tool arguments and results (and the prompt-free parts only otherwise).
    pub capture_content: bool,
    /// Export metrics as well as traces.
    pub metrics: Option<bool>,
    pub metrics_interval: Option<Duration>,
    pub timeout: Option<Duration>,
}

/// What the exporter does, once resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetrySettings {
    /// `…/v1/traces`, or none (traces off).
    pub traces_url: Option<String>,
    /// `…/v1/metrics`, or none (metrics off).
    pub metrics_url: Option<String>,
    pub headers: BTreeMap<String, String>,
    pub service_name: String,
    pub sampler: Option<(String, Option<f64>)>,
    pub capture_content: bool,
    pub metrics_interval: Duration,
    /// The longest one export may take (a collector that never answers costs this, on the
    /// exporter's own thread, and drops that batch).
    pub timeout: Duration,
}

/// Spans and metrics sent per export at most, and how long the queue may wait for a batch.
pub const DEFAULT_METRICS_INTERVAL: Duration = Duration::from_secs(10);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Why the settings cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SettingsError {
    #[error("{name}: {value:?} is not an http:// or https:// URL")]
    Endpoint { name: String, value: String },
    #[error("OTEL_EXPORTER_OTLP_HEADERS: {0:?} is not a list of key=value pairs")]
    Headers(String),
    #[error(
        "{name}: {value:?} is not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio"
    )]
    Sampler { name: String, value: String },
    #[error("{name}: {value:?} is not a number of {unit}")]
    Number {
        name: String,
        value: String,
        unit: &'static str,
    },
}

/// The sampler names the `OTEL_TRACES_SAMPLER` specification defines that cordon takes.
pub const SAMPLERS: &[&str] = &[
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
];

impl TelemetrySettings {
    /// Resolves `file` over the environment `env` reads; `None` when telemetry is off.
    pub fn resolve(
        file: &FileSettings,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, SettingsError> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let base = match &file.endpoint {
            Some(endpoint) => Some(("[telemetry] endpoint".to_string(), endpoint.clone())),
            None => env("OTEL_EXPORTER_OTLP_ENDPOINT")
                .map(|value| ("OTEL_EXPORTER_OTLP_ENDPOINT".to_string(), value)),
        };
        let signal_url = |signal: &str, variable: &str, exporter_variable: &str| {
            if env(exporter_variable).is_some_and(|v| v.trim() == "none") {
                return Ok(None);
            }
            let (name, url) = match (file.endpoint.is_none(), env(variable)) {
                (true, Some(url)) => (variable.to_string(), url),
                _ => match &base {
                    Some((name, base)) => (
                        name.clone(),
                        format!("{}/v1/{signal}", base.trim().trim_end_matches('/')),
                    ),
                    None => return Ok(None),
                },
            };
            let url = url.trim().to_string();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(SettingsError::Endpoint { name, value: url });
            }
            Ok(Some(url))
        };
        let traces_url = signal_url(
            "traces",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_TRACES_EXPORTER",
        )?;
        let metrics_url = match file.metrics {
            Some(false) => None,
            _ => signal_url(
                "metrics",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "OTEL_METRICS_EXPORTER",
            )?,
        };
        if traces_url.is_none() && metrics_url.is_none() {
            return Ok(None);
        }
        let mut headers = BTreeMap::new();
        if let Some(list) = env("OTEL_EXPORTER_OTLP_HEADERS") {
            headers.extend(parse_headers(&list)?);
        }
        headers.extend(file.headers.clone());
        let sampler = match &file.sampler {
            Some(sampler) => Some(("[telemetry] sampler".to_string(), sampler.clone())),
            None => env("OTEL_TRACES_SAMPLER").map(|s| ("OTEL_TRACES_SAMPLER".to_string(), s)),
        };
        let sampler = match sampler {
            Some((name, value)) => {
                let value = value.trim().to_ascii_lowercase();
                if !SAMPLERS.contains(&value.as_str()) {
                    return Err(SettingsError::Sampler { name, value });
                }
                let ratio = match file.sampler_ratio {
                    Some(ratio) => Some(ratio),
                    None => env("OTEL_TRACES_SAMPLER_ARG")
                        .map(|arg| number("OTEL_TRACES_SAMPLER_ARG", &arg, "a ratio"))
                        .transpose()?,
                };
                Some((value, ratio))
            }
            None => None,
        };
        let millis = |name: &str| {
            env(name)
                .map(|value| number(name, &value, "milliseconds"))
                .transpose()
                .map(|ms| ms.map(|ms| Duration::from_millis(ms.max(1.0) as u64)))
        };
        let metrics_interval = match file.metrics_interval {
            Some(interval) => interval,
            None => millis("OTEL_METRIC_EXPORT_INTERVAL")?.unwrap_or(DEFAULT_METRICS_INTERVAL),
        };
        let timeout = match file.timeout {
            Some(timeout) => timeout,
            None => millis("OTEL_EXPORTER_OTLP_TIMEOUT")?.unwrap_or(DEFAULT_TIMEOUT),
        };
        let service_name = file
            .service_name
            .clone()
            .or_else(|| env("OTEL_SERVICE_NAME"))
            .unwrap_or_else(|| "cordon".to_string());
        Ok(Some(Self {
            traces_url,
            metrics_url,
            headers,
            service_name,
            sampler,
            capture_content: file.capture_content,
            metrics_interval,
            timeout,
        }))
    }
}

fn number(name: &str, value: &str, unit: &'static str) -> Result<f64, SettingsError> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| SettingsError::Number {
            name: name.to_string(),
            value: value.to_string(),
            unit,
        })
}

/// `key1=value1,key2=value2`, values percent-decoded (the W3C baggage format the spec names).
fn parse_headers(list: &str) -> Result<BTreeMap<String, String>, SettingsError> {
    let mut headers = BTreeMap::new();
    for pair in list.split(',').filter(|pair| !pair.trim().is_empty()) {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| SettingsError::Headers(list.to_string()))?;
        let key = key.trim();
        if key.is_empty() {
            return Err(SettingsError::Headers(list.to_string()));
        }
        headers.insert(key.to_string(), percent_decoded(value.trim()));
    }
    Ok(headers)
}

fn percent_decoded(text: &str) -> String {
    let hex = |byte: u8| (byte as char).to_digit(16);
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn off_unless_an_endpoint_is_given_and_the_sdk_not_disabled() {
        assert_eq!(
            TelemetrySettings::resolve(&FileSettings::default(), env(&[])),
            Ok(None)
        );
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")];
        let settings = TelemetrySettings::resolve(&FileSettings::default(), env(&on))
            .unwrap()
            .unwrap();
        assert_eq!(
            settings.traces_url.as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
        assert_eq!(
            settings.metrics_url.as_deref(),
            Some("http://127.0.0.1:4318/v1/metrics")
        );
        assert_eq!(settings.service_name, "cordon");
        let disabled = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "true"),
        ];
        assert_eq!(
            TelemetrySettings::resolve(&FileSettings::default(), env(&disabled)),
            Ok(None)
        );
    }

    #[test]
    fn signal_endpoints_headers_sampler_and_the_file_over_the_environment() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://traces:9999/custom",
            ),
            ("OTEL_METRICS_EXPORTER", "none"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "api-key=abc%3D1, x-team = core",
            ),
            ("OTEL_TRACES_SAMPLER", "parentbased_traceidratio"),
            ("OTEL_TRACES_SAMPLER_ARG", "0.25"),
            ("OTEL_SERVICE_NAME", "from-env"),
        ];
        let settings = TelemetrySettings::resolve(&FileSettings::default(), env(&vars))
            .unwrap()
            .unwrap();
        assert_eq!(
            settings.traces_url.as_deref(),
            Some("http://traces:9999/custom")
        );
        assert_eq!(settings.metrics_url, None);
        assert_eq!(settings.headers["api-key"], "abc=1");
        assert_eq!(settings.headers["x-team"], "core");
        assert_eq!(
            settings.sampler,
            Some(("parentbased_traceidratio".into(), Some(0.25)))
        );
        assert_eq!(settings.service_name, "from-env");
        let file = FileSettings {
            endpoint: Some("https://otel.example/".into()),
            service_name: Some("from-file".into()),
            ..FileSettings::default()
        };
        let settings = TelemetrySettings::resolve(&file, env(&vars))
            .unwrap()
            .unwrap();
        assert_eq!(
            settings.traces_url.as_deref(),
            Some("https://otel.example/v1/traces"),
            "the file's endpoint wins over every endpoint variable"
        );
        assert_eq!(settings.service_name, "from-file");
        let bad = [("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")];
        assert!(TelemetrySettings::resolve(&FileSettings::default(), env(&bad)).is_err());
        let bad_sampler = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
            ("OTEL_TRACES_SAMPLER", "sometimes"),
        ];
        assert!(TelemetrySettings::resolve(&FileSettings::default(), env(&bad_sampler)).is_err());
    }
}
