//! Grants made in code, for a program that embeds the runtime: a [`GrantBuilder`] writes down
//! what a `[plugins.ID]` table of cordon.toml would say, and [`Config::grant`] checks it with the
//! very code that checks the file (host paths, guest paths, modes, overlapping grants, HTTP
//! origins, methods and headers, env names, limits), registering its secrets with the scrubber as
//! the file's are. A grant made in code can therefore be no looser, and no less masked, than the
//! same grant written in cordon.toml.

use super::*;
use crate::capabilities::grant::Access;

/// One plugin's grants, written in code; checked by [`Config::grant`].
#[derive(Debug, Clone, Default)]
pub struct GrantBuilder {
    table: toml::Table,
}

/// One outbound HTTP grant for [`GrantBuilder::http`]: an origin and what may be sent to it.
#[derive(Debug, Clone)]
pub struct HttpAccess {
    table: toml::Table,
}

impl HttpAccess {
    /// Requests to `origin` (`https://api.example.com`, `http://127.0.0.1:8080`, `https://*.example.com`).
    pub fn to(origin: &str) -> Self {
        let mut table = toml::Table::new();
        table.insert("origin".into(), origin.into());
        Self { table }
    }

    /// Only these methods (`GET`, `POST`, ...); every method but TRACE, TRACK and CONNECT when
    /// never called.
    pub fn methods<'a>(mut self, methods: impl IntoIterator<Item = &'a str>) -> Self {
        let methods: Vec<toml::Value> = methods.into_iter().map(Into::into).collect();
        self.table.insert("methods".into(), methods.into());
        self
    }

    /// Only paths under `prefix` (which starts with `/`).
    pub fn path_prefix(mut self, prefix: &str) -> Self {
        self.table.insert("path_prefix".into(), prefix.into());
        self
    }

    /// A header the host adds to every request to this origin; the plugin never sees it, and its
    /// value (when it is a credential, or holds `${env:NAME}`) is masked in every output.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        let headers = self
            .table
            .entry("headers")
            .or_insert_with(|| toml::Table::new().into());
        if let Some(headers) = headers.as_table_mut() {
            headers.insert(name.into(), value.into());
        }
        self
    }

    /// Allows the origin to resolve to a private or loopback address.
    pub fn private(mut self) -> Self {
        self.table.insert("private".into(), true.into());
        self
    }
}

impl GrantBuilder {
    /// A grant of nothing, with the default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// Host directory `host` at guest path `guest`, read-only or read-write.
    pub fn dir(mut self, host: impl AsRef<Path>, guest: &str, access: Access) -> Self {
        let mut dir = toml::Table::new();
        dir.insert(
            "host".into(),
            host.as_ref().to_string_lossy().into_owned().into(),
        );
        dir.insert("guest".into(), guest.into());
        let mode = match access {
            Access::ReadOnly => "ro",
            Access::ReadWrite => "rw",
        };
        dir.insert("mode".into(), mode.into());
        self.push("dirs", dir.into());
        self
    }

    /// Passes host environment variable `name` through (when it is set on the host).
    pub fn env(mut self, name: &str) -> Self {
        self.push("env", name.into());
        self
    }

    /// Sets environment variable `name` to `value` in the plugin.
    pub fn env_set(mut self, name: &str, value: &str) -> Self {
        self.subtable("env_set").insert(name.into(), value.into());
        self
    }

    /// Outbound HTTP to one origin.
    pub fn http(mut self, access: HttpAccess) -> Self {
        self.push("http", access.table.into());
        self
    }

    /// One limit, by its cordon.toml name and in its cordon.toml form: `("timeout", "5s")`,
    /// `("memory", "64MiB")`, `("fuel", 1_000_000)`.
    pub fn limit(mut self, key: &str, value: impl Into<toml::Value>) -> Self {
        self.subtable("limits").insert(key.into(), value.into());
        self
    }

    /// Lets the plugin's hook run over every tool (`tools` empty) or over the tools matching
    /// these globs.
    pub fn hook<'a>(mut self, tools: impl IntoIterator<Item = &'a str>) -> Self {
        let tools: Vec<toml::Value> = tools.into_iter().map(Into::into).collect();
        let value = if tools.is_empty() {
            true.into()
        } else {
            tools.into()
        };
        self.table.insert("hook".into(), value);
        self
    }

    /// Free-form settings handed to the plugin as JSON.
    pub fn settings(mut self, settings: toml::Table) -> Self {
        self.table.insert("settings".into(), settings.into());
        self
    }

    /// Loads the plugin only when its bytes have this sha256 (64 hex digits).
    pub fn sha256(mut self, hex: &str) -> Self {
        self.table.insert("sha256".into(), hex.into());
        self
    }

    fn push(&mut self, key: &str, value: toml::Value) {
        let list = self
            .table
            .entry(key)
            .or_insert_with(|| toml::Value::Array(Vec::new()));
        if let Some(list) = list.as_array_mut() {
            list.push(value);
        }
    }

    fn subtable(&mut self, key: &str) -> &mut toml::Table {
        let entry = self
            .table
            .entry(key)
            .or_insert_with(|| toml::Table::new().into());
        if !entry.is_table() {
            *entry = toml::Table::new().into();
        }
        entry.as_table_mut().expect("made a table above")
    }
}

impl Config {
    /// Grants `grant` to plugin `id` (the plugin file's stem, or the id it was given in code),
    /// checked exactly as `[plugins.ID]` of cordon.toml is, and against every other grant of this
    /// config; relative host paths are taken from the config file's directory, else the current
    /// one. Errors name `plugins.ID.KEY`, as the file's do. Replaces an earlier grant to `id`.
    pub fn grant(&mut self, id: &str, grant: GrantBuilder) -> Result<&mut Self, ConfigError> {
        let origin = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from("(grants made in code)"));
        let invalid = |key: String, message: String| ConfigError::Invalid {
            path: origin.clone(),
            key,
            message,
        };
        if id.is_empty() || id.contains(['/', '\\', '\0']) {
            return Err(invalid(
                format!("plugins.{id}"),
                "a plugin id is a file name without .wasm".into(),
            ));
        }
        let raw: RawPlugin =
            toml::Value::Table(grant.table)
                .try_into()
                .map_err(|err: toml::de::Error| {
                    invalid(format!("plugins.{id}"), err.message().to_string())
                })?;
        let base = self
            .path
            .as_deref()
            .and_then(Path::parent)
            .filter(|dir| !dir.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let validated = raw
            .validate(id, &base, &self.default_limits, &self.secrets)
            .map_err(|(key, message)| invalid(format!("plugins.{id}.{key}"), message))?;
        let previous = self.plugins.insert(id.to_string(), validated);
        if let Err((key, message)) =
            layout::check_grants(&self.plugins, &origin, self.audit_path.as_deref())
        {
            match previous {
                Some(previous) => self.plugins.insert(id.to_string(), previous),
                None => self.plugins.remove(id),
            };
            return Err(invalid(key, message));
        }
        Ok(self)
    }
}
