//! `[telemetry]` of cordon.toml, read and checked by the crate that uses it: where traces and
//! metrics go and what they may carry. Every key is optional; what is left out comes from the
//! standard `OTEL_*` environment variables ([`crate::settings`] resolves the two). Only this table
//! is read, so the exporter can start before anything else (logging included) and without reading
//! every plugin's grants twice; the runtime's [`Config`] leaves the table to this crate.

use crate::settings::{FileSettings, SAMPLERS};
#[cfg(any(doc, test))]
use cordon_runtime::config::Config;
use cordon_runtime::config::{self, ConfigDocument, ConfigError};
use cordon_runtime::report::secrets::Secrets;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The `[telemetry]` table of the config file at `path`, checked; errors name the file and the key
/// (`telemetry.sampler`), and TOML that does not parse is refused as [`Config::load`] refuses it.
/// Header values (and the `${env:NAME}` values in them) are registered with `secrets`.
pub fn load_file_settings(path: &Path, secrets: &Secrets) -> Result<FileSettings, ConfigError> {
    read_file_settings(&ConfigDocument::load(path, secrets)?)
}

/// The `[telemetry]` table of a config document, checked (and claimed for
/// [`ConfigDocument::check_all_read`]).
pub fn read_file_settings(document: &ConfigDocument) -> Result<FileSettings, ConfigError> {
    document
        .table::<RawTelemetry>("telemetry")?
        .validate(document.secrets())
        .map_err(|(key, message)| document.invalid(format!("telemetry.{key}"), message))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTelemetry {
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
    fn validate(self, secrets: &Secrets) -> Result<FileSettings, (String, String)> {
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
                config::expand_env_template(&template).map_err(|m| (key.clone(), m))?;
            secrets.register_header_value(&value);
            parts.iter().for_each(|part| secrets.register(part));
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
                config::parse_duration(&text)
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
        Ok(FileSettings {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telemetry_alone_is_read_without_checking_the_rest() {
        let dir =
            std::env::temp_dir().join(format!("cordon-telemetry-only-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cordon.toml");
        // A plugin's bad limit fails the whole config, not `[telemetry]`.
        std::fs::write(
            &path,
            "[telemetry]\nendpoint = \"http://127.0.0.1:4318\"\nsampler = \"always_off\"\n\n[plugins.fs]\nlimits = { memory = \"lots\" }\n",
        )
        .unwrap();
        let telemetry = load_file_settings(&path, &Secrets::default()).unwrap();
        assert_eq!(telemetry.endpoint.as_deref(), Some("http://127.0.0.1:4318"));
        assert_eq!(telemetry.sampler.as_deref(), Some("always_off"));
        assert!(Config::load(&path).is_err());

        std::fs::write(&path, "[telemetry]\nsampler = \"sometimes\"\n").unwrap();
        match load_file_settings(&path, &Secrets::default()) {
            Err(ConfigError::Invalid { key, .. }) => assert_eq!(key, "telemetry.sampler"),
            other => panic!("expected telemetry.sampler to be named: {other:?}"),
        }
        std::fs::write(&path, "[telemetry\n").unwrap();
        assert!(matches!(
            load_file_settings(&path, &Secrets::default()),
            Err(ConfigError::Syntax { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let dir =
            std::env::temp_dir().join(format!("cordon-telemetry-unknown-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("cordon.toml");
        std::fs::write(
            &path,
            "[host]\nlocked = false\n\n[telemetry]\nendpiont = \"http://x\"\n",
        )
        .unwrap();
        let message = load_file_settings(&path, &Secrets::default())
            .unwrap_err()
            .to_string();
        assert!(message.contains("endpiont"), "{message}");
        assert!(message.contains("line 5"), "{message}");
        assert!(message.contains(&path.display().to_string()), "{message}");
        // The runtime leaves the table to this crate, whatever is in it; together they read all.
        std::fs::write(
            &path,
            "[host]\nlocked = false\n\n[telemetry]\nendpoint = \"http://x\"\n",
        )
        .unwrap();
        let document = ConfigDocument::load(&path, &Secrets::default()).unwrap();
        assert!(Config::from_document(&document).is_ok());
        assert!(document.check_all_read().is_err());
        read_file_settings(&document).unwrap();
        assert!(document.check_all_read().is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
