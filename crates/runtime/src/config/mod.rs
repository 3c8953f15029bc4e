//! The runtime's part of the operator's `cordon.toml`, read from a [`ConfigDocument`] into a
//! validated [`Config`]: the plugins' grants and limits, `[hooks]`, `[host]`, `[audit]`,
//! `[approval]`, `[tool_providers]`, `[skills]` and the batch keys of `[agent]`. Relative host paths are taken
//! from the config file's directory and every mistake is reported with the key it concerns. The
//! other tables belong to the crates that use them (`[model]` and the loop's keys of `[agent]`:
//! `cordon-agent`; `[telemetry]`: `cordon-telemetry`), which read them from the same document.

mod approval_section;
mod batch_section;
mod document;
mod grant_in_code;
mod http_section;
mod layout;
mod mount_source;
mod plugin_section;
mod secrets_section;
#[cfg(test)]
mod tests;
mod tool_section;
mod units;

use crate::report::secrets::Secrets;
use approval_section::RawApproval;
pub use approval_section::{ApprovalPolicy, Unattended};
use batch_section::RawBatches;
pub use batch_section::{BatchSettings, Execution};
pub use document::ConfigDocument;
pub use grant_in_code::{GrantBuilder, HttpAccess};
use plugin_section::{RawLimits, RawPlugin};

use crate::capabilities::grant::{Access, DirGrant, HookGrant, PluginGrant};
use crate::capabilities::limits::Limits;
use crate::capabilities::net::HttpGrant;
use crate::capabilities::net::grant::SecretHeader;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

pub use http_section::carries_credentials as header_carries_credentials;
pub use http_section::expand_env_parts as expand_env_template;
pub use units::{parse_bytes, parse_duration};

/// A configuration problem; the message names the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}")]
    Read {
        /// The config file.
        path: PathBuf,
        /// Why reading it failed.
        source: std::io::Error,
    },
    /// The text is not TOML, or a value has the wrong type or shape.
    #[error("{path} is not valid cordon.toml: {message}")]
    Syntax {
        /// The config file (or the name the text was given).
        path: PathBuf,
        /// The TOML parser's message, with the line it concerns.
        message: String,
    },
    /// A value is well-formed but not acceptable (a size that does not parse, a read-write grant
    /// over cordon's own files, ...).
    #[error("{path}: `{key}`: {message}")]
    Invalid {
        /// The config file (or the name the text was given).
        path: PathBuf,
        /// The key it concerns, as a dotted path (`plugins.fs.limits.memory`).
        key: String,
        /// What is wrong with it and what to write instead.
        message: String,
    },
    /// A table or key the runtime does not read (a misspelling, or a key of another version).
    #[error("{path} line {line}: unknown key `{key}`; {known}")]
    UnknownKey {
        /// The config file (or the name the text was given).
        path: PathBuf,
        /// The line of the key, counting from 1.
        line: usize,
        /// The key, as a dotted path.
        key: String,
        /// The keys that are read there, as a sentence (`the keys cordon reads there are ...`).
        known: String,
    },
}

/// Sandboxes that may exist at once unless `[host] max_sandboxes` says otherwise.
pub const DEFAULT_MAX_SANDBOXES: u32 = 64;

/// Files and directories guests may hold open at once in the process unless `[host]
/// max_open_files` says otherwise: the default sandbox count times each call's share, so no call
/// can starve another.
pub const DEFAULT_MAX_OPEN_FILES: usize =
    DEFAULT_MAX_SANDBOXES as usize * crate::capabilities::limits::MAX_OPEN_FILES_PER_CALL;

/// Outgoing HTTP connections open at once in the process unless `[host] max_http_connections`
/// says otherwise; well under the usual limit of 1,024 open files.
pub const DEFAULT_MAX_HTTP_CONNECTIONS: usize = 256;

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Load only the plugins approved in cordon.lock (`[host] locked = true`).
    pub locked: bool,
    /// Start even when a plugin granted a hook is missing or refused (`[host]
    /// allow_missing_hooks = true`, or `--allow-missing-hooks`); otherwise that refuses the start.
    pub allow_missing_hooks: bool,
    /// Sandboxes that may exist at once (`[host] max_sandboxes`); calls beyond it queue.
    pub max_sandboxes: u32,
    /// Outgoing HTTP connections open at once in the process (`[host] max_http_connections`).
    pub max_http_connections: usize,
    /// Files and directories guests may hold open at once in the process (`[host]
    /// max_open_files`).
    pub max_open_files: usize,
    /// The component model's async ABI (`[host] component_model_async`): `async func` exports,
    /// `future`, `stream` and WASI 0.3. `None` (the default): on when a plugin needs it. With it,
    /// every call takes wasmtime's concurrent path, about 1.4 times as long for a trivial call
    /// (docs/performance.md); `Some(false)` refuses components that use it, saying so.
    pub component_model_async: Option<bool>,
    /// Where the audit log goes (`[audit] path`), if anywhere.
    pub audit_path: Option<PathBuf>,
    /// How batches run (`[agent]`: execution, tools, concurrency, result budgets).
    pub batches: BatchSettings,
    /// Plugin ids whose hooks run first, in this order (`[hooks] order`); the other hooks follow
    /// in plugin file-name order.
    pub hook_order: Vec<String>,
    /// Limits for plugins that set none of their own.
    pub default_limits: Limits,
    /// Grants by plugin id (the plugin file's stem).
    pub plugins: BTreeMap<String, PluginGrant>,
    /// Which plugin provides a tool name that several declare (`[tool_providers] NAME = "ID"`).
    pub tool_providers: BTreeMap<String, String>,
    /// The operator's skill folders (`[skills] dirs`), absolute: each a skill (it has a
    /// `SKILL.md`) or a folder of them.
    pub skill_dirs: Vec<PathBuf>,
    /// Where it came from, if from a file.
    pub path: Option<PathBuf>,
    /// The scrubber this config's secrets were registered with (its header values, the
    /// credential variables it passes through), which the runtime built from it masks output
    /// with. A config read from a [`ConfigDocument`] shares the document's.
    pub secrets: Secrets,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            locked: false,
            allow_missing_hooks: false,
            max_sandboxes: DEFAULT_MAX_SANDBOXES,
            max_http_connections: DEFAULT_MAX_HTTP_CONNECTIONS,
            max_open_files: DEFAULT_MAX_OPEN_FILES,
            component_model_async: None,
            audit_path: None,
            batches: BatchSettings::default(),
            hook_order: Vec::new(),
            default_limits: Limits::default(),
            plugins: BTreeMap::new(),
            tool_providers: BTreeMap::new(),
            skill_dirs: Vec::new(),
            path: None,
            secrets: Secrets::default(),
        }
    }
}

impl Config {
    /// Reads and validates a config file that holds only the runtime's tables: any other table
    /// is refused as unknown. A file that also holds other parts' tables (`[model]`,
    /// `[telemetry]`) is read as a [`ConfigDocument`] that each part reads from, then checked once
    /// with [`ConfigDocument::check_all_read`].
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::read_alone(&ConfigDocument::load(path, &Secrets::default())?)
    }

    /// Validates config text as [`Config::load`] validates a file; `origin` names it in errors,
    /// `base` anchors relative host paths.
    pub fn parse(text: &str, origin: &Path, base: &Path) -> Result<Self, ConfigError> {
        Self::read_alone(&ConfigDocument::new(
            text,
            origin,
            base,
            &Secrets::default(),
        )?)
    }

    fn read_alone(document: &ConfigDocument) -> Result<Self, ConfigError> {
        let config = Self::from_document(document)?;
        document.check_all_read()?;
        Ok(config)
    }

    /// The tables of `document` the runtime reads (and claims, for the unread-key check).
    pub fn from_document(document: &ConfigDocument) -> Result<Self, ConfigError> {
        let raw = RawConfig::read(document)?;
        let origin = document.origin();
        let base = document.base();
        let invalid = |key: String, message: String| document.invalid(key, message);
        let default_limits = raw
            .defaults
            .limits
            .apply(Limits::default())
            .map_err(|(k, m)| invalid(format!("defaults.limits.{k}"), m))?;
        let mut plugins = BTreeMap::new();
        for (id, plugin) in raw.plugins {
            let grant = plugin
                .validate(&id, base, &default_limits, document.secrets())
                .map_err(|(key, message)| invalid(format!("plugins.{id}.{key}"), message))?;
            plugins.insert(id, grant);
        }
        let mut batches = raw
            .batches
            .validate()
            .map_err(|(key, message)| invalid(format!("agent.{key}"), message))?;
        batches.approval = raw
            .approval
            .validate()
            .map_err(|(key, message)| invalid(format!("approval.{key}"), message))?;
        let max_sandboxes = raw.host.max_sandboxes.unwrap_or(DEFAULT_MAX_SANDBOXES);
        if !(1..=10_000).contains(&max_sandboxes) {
            return Err(invalid(
                "host.max_sandboxes".into(),
                format!("{max_sandboxes} is out of range; use 1 to 10000"),
            ));
        }
        let max_http_connections = raw
            .host
            .max_http_connections
            .unwrap_or(DEFAULT_MAX_HTTP_CONNECTIONS);
        if !(1..=100_000).contains(&max_http_connections) {
            return Err(invalid(
                "host.max_http_connections".into(),
                format!("{max_http_connections} is out of range; use 1 to 100000"),
            ));
        }
        let max_open_files = raw.host.max_open_files.unwrap_or(
            max_sandboxes as usize * crate::capabilities::limits::MAX_OPEN_FILES_PER_CALL,
        );
        if !(1..=1_000_000).contains(&max_open_files) {
            return Err(invalid(
                "host.max_open_files".into(),
                format!("{max_open_files} is out of range; use 1 to 1000000"),
            ));
        }
        let tool_providers = raw.tool_providers;
        if let Some((tool, id)) = tool_providers.iter().find(|(tool, id)| {
            !crate::capabilities::tool_glob::is_valid(tool)
                || tool.contains(['*', '?'])
                || id.is_empty()
        }) {
            return Err(invalid(
                format!("tool_providers.{tool}"),
                format!(
                    "{tool:?} = {id:?} must name one tool and the id of the plugin that provides it (its file name without .wasm)"
                ),
            ));
        }
        let audit_path = raw.audit.path.map(|path| base.join(path));
        let mut skill_dirs = Vec::new();
        for (index, dir) in raw.skills.dirs.iter().enumerate() {
            let dir = base.join(dir);
            if !dir.is_dir() {
                return Err(invalid(
                    format!("skills.dirs[{index}]"),
                    format!(
                        "{} is not a directory; name a skill's folder (with a SKILL.md) or a folder of them",
                        dir.display()
                    ),
                ));
            }
            skill_dirs.push(dir);
        }
        layout::check_grants(&plugins, origin, audit_path.as_deref())
            .map_err(|(key, message)| invalid(key, message))?;
        Ok(Self {
            locked: raw.host.locked,
            allow_missing_hooks: raw.host.allow_missing_hooks,
            max_sandboxes,
            max_http_connections,
            max_open_files,
            component_model_async: raw.host.component_model_async,
            audit_path,
            batches,
            hook_order: raw.hooks.order,
            default_limits,
            plugins,
            tool_providers,
            skill_dirs,
            path: Some(origin.to_path_buf()),
            secrets: document.secrets().clone(),
        })
    }

    /// The grant for plugin `id`; nothing granted, default limits, when the config names none.
    pub fn grant_for(&self, id: &str) -> PluginGrant {
        self.plugins
            .get(id)
            .cloned()
            .unwrap_or_else(|| PluginGrant {
                limits: self.default_limits.clone(),
                ..PluginGrant::default()
            })
    }

    /// Refuses a read-write grant that covers one of cordon's own files or directories (`files`:
    /// what each is, and its path), so no plugin can rewrite what decides what plugins may do.
    pub fn check_own_files(&self, files: &[(&str, &Path)]) -> Result<(), ConfigError> {
        layout::check_own_files(&self.plugins, files).map_err(|(key, message)| {
            ConfigError::Invalid {
                path: self.path.clone().unwrap_or_default(),
                key,
                message,
            }
        })
    }

    /// Whether any plugin has a fuel limit (fuel metering is engine-wide).
    pub fn uses_fuel(&self) -> bool {
        self.default_limits.fuel.is_some()
            || self
                .plugins
                .values()
                .any(|grant| grant.limits.fuel.is_some())
    }

    /// The largest memory limit of any plugin.
    pub fn max_memory_bytes(&self) -> u64 {
        self.plugins
            .values()
            .map(|grant| grant.limits.memory_bytes)
            .fold(self.default_limits.memory_bytes, u64::max)
    }
}

impl Config {
    /// Registers the HTTP grant header values written in config `text` with the scrubber before
    /// anything else reads it, so a mistake elsewhere on their line (whose error quotes the line)
    /// cannot print them. Only what parses as TOML can be read this way. [`Config::parse`] does
    /// this; a crate that reads its own section of the file first calls it too.
    pub fn register_literal_secrets(text: &str, secrets: &Secrets) {
        register_literal_header_values(text, secrets);
    }
}

fn register_literal_header_values(text: &str, secrets: &Secrets) {
    let Ok(document) = toml::from_str::<toml::Table>(text) else {
        return;
    };
    let Some(plugins) = document.get("plugins").and_then(toml::Value::as_table) else {
        return;
    };
    let grants = plugins
        .values()
        .filter_map(|plugin| plugin.get("http")?.as_array())
        .flatten();
    for grant in grants {
        let Some(headers) = grant.get("headers").and_then(toml::Value::as_table) else {
            continue;
        };
        for (name, value) in headers {
            let Some(value) = value.as_str() else {
                continue;
            };
            // A value with `${env:NAME}` in it holds its secret in the variable, read later.
            if !value.contains("${") && http_section::carries_credentials(name) {
                secrets.register(value);
            }
        }
    }
}

/// The runtime's tables, each read from the document by the runtime.
struct RawConfig {
    host: RawHost,
    audit: RawAudit,
    batches: RawBatches,
    approval: RawApproval,
    hooks: RawHooks,
    defaults: RawDefaults,
    plugins: BTreeMap<String, RawPlugin>,
    tool_providers: BTreeMap<String, String>,
    skills: RawSkills,
}

impl RawConfig {
    fn read(document: &ConfigDocument) -> Result<Self, ConfigError> {
        Ok(Self {
            host: document.table("host")?,
            audit: document.table("audit")?,
            batches: document.keys_of("agent", batch_section::BATCH_KEYS)?,
            approval: document.table("approval")?,
            hooks: document.table("hooks")?,
            defaults: document.table("defaults")?,
            plugins: document.table("plugins")?,
            tool_providers: document.table("tool_providers")?,
            skills: document.table("skills")?,
        })
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    path: Option<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawHost {
    #[serde(default)]
    locked: bool,
    #[serde(default)]
    allow_missing_hooks: bool,
    max_sandboxes: Option<u32>,
    max_http_connections: Option<usize>,
    max_open_files: Option<usize>,
    component_model_async: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSkills {
    #[serde(default)]
    dirs: Vec<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawHooks {
    #[serde(default)]
    order: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawDefaults {
    #[serde(default)]
    limits: RawLimits,
}

type KeyError = (String, String);

/// The most linear memory a 32-bit WebAssembly memory can have.
const MAX_MEMORY_BYTES: u64 = 4 << 30;
