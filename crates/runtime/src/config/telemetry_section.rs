//! `[telemetry]`: where cordon sends OpenTelemetry traces and metrics, and what they may carry.
//! Every key is optional; what is left out comes from the standard `OTEL_*` environment
//! variables, and with no endpoint either way nothing is exported (the `cordon-telemetry` crate
//! resolves the two).

use super::*;
use cordon_telemetry::settings::SAMPLERS;

/// The operator's telemetry settings, checked: the `cordon-telemetry` crate's own form of them.
pub use cordon_telemetry::FileSettings as TelemetryConfig;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTelemetry {
    endpoint: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    service_name: Option<String>,
    sampler: Option<String>,
    sampler_ratio: Option<f64>,
    #[serde(default)]
    capture_content: bool,
    metrics: Option<bool>,
    metrics_interval: Option<String>,
    timeout: Option<String>,
}

impl RawTelemetry {
    pub(super) fn validate(self) -> Result<TelemetryConfig, KeyError> {
        if let Some(url) = &self.endpoint
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err((
                "endpoint".into(),
                format!(
                    "{url:?} must be an http:// or https:// URL (the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318)"
                ),
            ));
        }
        let mut headers = BTreeMap::new();
        for (name, template) in self.headers {
            let key = format!("headers.{name}");
            http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| (key.clone(), format!("{name:?} is not a header name")))?;
            let (value, parts) =
                super::http_section::expand_env_parts(&template).map_err(|m| (key.clone(), m))?;
            crate::report::secrets::register_header_value(&value);
            parts
                .iter()
                .for_each(|part| crate::report::secrets::register(part));
            headers.insert(name, value);
        }
        if let Some(sampler) = &self.sampler
            && !SAMPLERS.contains(&sampler.as_str())
        {
            return Err((
                "sampler".into(),
                format!("{sampler:?} is not one of {}", SAMPLERS.join(", ")),
            ));
        }
        if let Some(ratio) = self.sampler_ratio
            && !(0.0..=1.0).contains(&ratio)
        {
            return Err((
                "sampler_ratio".into(),
                format!("{ratio} is not between 0 and 1"),
            ));
        }
        let duration = |key: &str, text: Option<String>| {
            text.map(|text| {
                units::parse_duration(&text)
                    .ok()
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| {
                        (
                            key.to_string(),
                            format!("{text:?} is not a duration above zero (e.g. \"10s\")"),
                        )
                    })
            })
            .transpose()
        };
        Ok(TelemetryConfig {
            endpoint: self.endpoint,
            headers,
            service_name: self.service_name,
            sampler: self.sampler,
            sampler_ratio: self.sampler_ratio,
            capture_content: self.capture_content,
            metrics: self.metrics,
            metrics_interval: duration("metrics_interval", self.metrics_interval)?,
            timeout: duration("timeout", self.timeout)?,
        })
    }
}
