//! `[agent.routing]`: intent routing before the tool loop, off unless `mode = "model"`. One short
//! request with no tools asks a model (the session's, or a smaller one named here) whether the
//! prompt needs tools: `none`, `all`, or one `[agent.groups]` group.

use serde::Deserialize;

/// Whether and how each turn is routed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoutingSettings {
    /// Routing is on (`mode = "model"`).
    pub enabled: bool,
    /// The model that routes, when not the session's (`model`).
    pub model: Option<String>,
    /// Where that model is served, when not at the session's base URL (`base_url`).
    pub base_url: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRouting {
    mode: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
}

impl RawRouting {
    pub(super) fn validate(self) -> Result<RoutingSettings, super::KeyError> {
        let enabled = match self.mode.as_deref() {
            None | Some("off") => false,
            Some("model") => true,
            Some(other) => {
                return Err((
                    "routing.mode".into(),
                    format!("{other:?} is not a routing mode; use \"off\" or \"model\""),
                ));
            }
        };
        if let Some(url) = &self.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err((
                    "routing.base_url".into(),
                    format!("{url:?} must start with http:// or https://"),
                ));
            }
            if let Some(reason) = super::base_url_credentials(url) {
                return Err(("routing.base_url".into(), reason));
            }
        }
        if self.model.as_deref() == Some("") {
            return Err(("routing.model".into(), "names no model".into()));
        }
        Ok(RoutingSettings {
            enabled,
            model: self.model,
            base_url: self
                .base_url
                .map(|url| url.trim_end_matches('/').to_string()),
        })
    }
}
