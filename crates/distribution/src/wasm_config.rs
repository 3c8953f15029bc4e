//! The config blob of the Wasm component OCI artifact (the CNCF "Wasm OCI Artifact layout", as
//! `wkg` and `oci-wasm` write it): media type `application/vnd.wasm.config.v0+json`, with the
//! component's imports and exports so a registry UI or a scanner can tell what it would use.

use serde_json::{Value, json};

pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";

/// What a component imports and exports, by interface name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComponentSummary {
    pub imports: Vec<String>,
    pub exports: Vec<String>,
}

/// The config JSON for a component whose layer has `layer_digest` (`sha256:…`).
pub fn config(summary: &ComponentSummary, layer_digest: &str, created: &str) -> Value {
    json!({
        "created": created,
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": {
            "exports": summary.exports,
            "imports": summary.imports,
            "target": null,
        },
    })
}

/// Now as RFC 3339 in UTC, without a date library.
pub fn now_rfc3339() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_names_the_layer_and_the_interfaces() {
        let summary = ComponentSummary {
            imports: vec!["wasi:filesystem/types@0.2.6".into()],
            exports: vec!["cordon:plugin/plugin@0.2.0".into()],
        };
        let value = config(&summary, "sha256:ab", "2026-12-01T00:00:00Z");
        assert_eq!(value["os"], "wasip2");
        assert_eq!(value["layerDigests"][0], "sha256:ab");
        assert_eq!(
            value["component"]["imports"][0],
            "wasi:filesystem/types@0.2.6"
        );
        let now = now_rfc3339();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.starts_with("20"), "{now}");
    }
}
