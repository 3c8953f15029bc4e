//! `[plugins.ID] secrets`: values a component reads through `wasi:config/store` (as Wassette's
//! components read their API keys), written in cordon.toml as templates (`"${env:WEATHER_KEY}"`)
//! and expanded from the host's environment when the configuration is read. Each value is
//! registered with the secret scrubber, so a component echoing one reaches no output; it is never
//! printed, and the lock pins each key's template, not its value (rotating a key is not a new
//! approval). config/secrets_section.rs reads them.

use std::fmt;

/// One secret config key as granted: its template and the value it expanded to.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigSecret {
    /// The config key the component asks for.
    pub key: String,
    /// As written in cordon.toml (what the lock pins).
    pub template: String,
    value: String,
}

impl ConfigSecret {
    /// A key granted with `template`, which expanded to `value`.
    pub(crate) fn new(key: String, template: String, value: String) -> Self {
        Self {
            key,
            template,
            value,
        }
    }

    /// The key's value, for `wasi:config/store` only.
    pub(crate) fn value(&self) -> &str {
        &self.value
    }
}

/// Keys and templates only: a value never reaches a log line or an error through `Debug`.
impl fmt::Debug for ConfigSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigSecret")
            .field("key", &self.key)
            .field("template", &self.template)
            .finish_non_exhaustive()
    }
}
