//! The operator's `cordon.toml`, parsed once into a validated [`Config`]. Unknown keys are errors,
//! relative host paths are taken from the config file's directory, and every mistake is reported
//! with the key it concerns.

mod layout;
mod model;
mod units;

use crate::grant::{Access, DirGrant, HookGrant, PluginGrant};
use crate::limits::Limits;
use crate::net::HttpGrant;
use crate::net::grant::SecretHeader;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

pub use model::{ModelSettings, Provider};
pub use units::{parse_bytes, parse_duration};

/// A configuration problem; the message names the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid cordon.toml: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("{path}: `{key}`: {message}")]
    Invalid {
        path: PathBuf,
        key: String,
        message: String,
    },
}

/// Sandboxes that may exist at once unless `[host] max_sandboxes` says otherwise.
pub const DEFAULT_MAX_SANDBOXES: u32 = 64;

/// Files and directories guests may hold open at once in the process unless `[host]
/// max_open_files` says otherwise: the default sandbox count times each call's share, so no call
/// can starve another.
pub const DEFAULT_MAX_OPEN_FILES: usize =
    DEFAULT_MAX_SANDBOXES as usize * crate::fs_gate::MAX_OPEN_FILES_PER_CALL;

/// Outgoing HTTP connections open at once in the process unless `[host] max_http_connections`
/// says otherwise; well under the usual limit of 1,024 open files.
pub const DEFAULT_MAX_HTTP_CONNECTIONS: usize = 256;

/// Whether a batch's calls may run at the same time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Execution {
    /// Concurrently, unless a tool in the batch is sequential (the default).
    #[default]
    Parallel,
    /// Always one call at a time, in call order.
    Sequential,
}

/// How batches of tool calls run (`[agent]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    pub execution: Execution,
    /// The active tool set; `None` means every loaded tool.
    pub tools: Option<Vec<String>>,
    /// Calls of one batch running at once.
    pub max_concurrency: usize,
    /// Text bytes of one result kept before it is cut with a marker (and the most bytes of details
    /// kept).
    pub max_result_bytes: u64,
    /// Image bytes of one result kept; further images are dropped with a marker.
    pub max_image_bytes: u64,
    /// Model replies the agent loop asks for before it gives up (`cordon run`).
    pub max_steps: u32,
    /// The agent loop's system prompt; `None` means cordon's default, which lists the tools.
    pub system_prompt: Option<String>,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            execution: Execution::Parallel,
            tools: None,
            max_concurrency: 16,
            max_result_bytes: 64 << 10,
            max_image_bytes: 4 << 20,
            max_steps: 20,
            system_prompt: None,
        }
    }
}

/// The validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Load only the plugins approved in cordon.lock (`[host] locked = true`).
    pub locked: bool,
    /// Sandboxes that may exist at once (`[host] max_sandboxes`); calls beyond it queue.
    pub max_sandboxes: u32,
    /// Outgoing HTTP connections open at once in the process (`[host] max_http_connections`).
    pub max_http_connections: usize,
    /// Files and directories guests may hold open at once in the process (`[host]
    /// max_open_files`).
    pub max_open_files: usize,
    /// Where the audit log goes (`[audit] path`), if anywhere.
    pub audit_path: Option<PathBuf>,
    /// How batches run.
    pub agent: AgentSettings,
    /// The model API the agent loop talks to (`[model]`).
    pub model: ModelSettings,
    /// Plugin ids whose hooks run first, in this order (`[hooks] order`); the other hooks follow
    /// in plugin file-name order.
    pub hook_order: Vec<String>,
    /// Limits for plugins that set none of their own.
    pub default_limits: Limits,
    /// Grants by plugin id (the plugin file's stem).
    pub plugins: BTreeMap<String, PluginGrant>,
    /// Where it came from, if from a file.
    pub path: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            locked: false,
            max_sandboxes: DEFAULT_MAX_SANDBOXES,
            max_http_connections: DEFAULT_MAX_HTTP_CONNECTIONS,
            max_open_files: DEFAULT_MAX_OPEN_FILES,
            audit_path: None,
            agent: AgentSettings::default(),
            model: ModelSettings::default(),
            hook_order: Vec::new(),
            default_limits: Limits::default(),
            plugins: BTreeMap::new(),
            path: None,
        }
    }
}

impl Config {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Self::parse(&text, path, base)
    }

    /// Validates config text; `origin` names it in errors, `base` anchors relative host paths.
    pub fn parse(text: &str, origin: &Path, base: &Path) -> Result<Self, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|err| ConfigError::Syntax {
            path: origin.to_path_buf(),
            message: err.to_string(),
        })?;
        let invalid = |key: String, message: String| ConfigError::Invalid {
            path: origin.to_path_buf(),
            key,
            message,
        };
        let default_limits = raw
            .defaults
            .limits
            .apply(Limits::default())
            .map_err(|(k, m)| invalid(format!("defaults.limits.{k}"), m))?;
        let mut plugins = BTreeMap::new();
        for (id, plugin) in raw.plugins {
            let grant = plugin
                .validate(&id, base, &default_limits)
                .map_err(|(key, message)| invalid(format!("plugins.{id}.{key}"), message))?;
            plugins.insert(id, grant);
        }
        let agent = raw
            .agent
            .validate()
            .map_err(|(key, message)| invalid(format!("agent.{key}"), message))?;
        let model = raw
            .model
            .validate()
            .map_err(|(key, message)| invalid(format!("model.{key}"), message))?;
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
        let max_open_files = raw
            .host
            .max_open_files
            .unwrap_or(max_sandboxes as usize * crate::fs_gate::MAX_OPEN_FILES_PER_CALL);
        if !(1..=1_000_000).contains(&max_open_files) {
            return Err(invalid(
                "host.max_open_files".into(),
                format!("{max_open_files} is out of range; use 1 to 1000000"),
            ));
        }
        let audit_path = raw.audit.path.map(|path| base.join(path));
        layout::check_grants(&plugins, origin, audit_path.as_deref())
            .map_err(|(key, message)| invalid(key, message))?;
        Ok(Self {
            locked: raw.host.locked,
            max_sandboxes,
            max_http_connections,
            max_open_files,
            audit_path,
            agent,
            model,
            hook_order: raw.hooks.order,
            default_limits,
            plugins,
            path: Some(origin.to_path_buf()),
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

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    host: RawHost,
    #[serde(default)]
    audit: RawAudit,
    #[serde(default)]
    agent: RawAgent,
    #[serde(default)]
    model: model::RawModel,
    #[serde(default)]
    hooks: RawHooks,
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    plugins: BTreeMap<String, RawPlugin>,
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
    max_sandboxes: Option<u32>,
    max_http_connections: Option<usize>,
    max_open_files: Option<usize>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    execution: Option<Execution>,
    tools: Option<Vec<String>>,
    max_concurrency: Option<usize>,
    max_result_bytes: Option<String>,
    max_image_bytes: Option<String>,
    max_steps: Option<u32>,
    system_prompt: Option<String>,
}

impl RawAgent {
    fn validate(self) -> Result<AgentSettings, KeyError> {
        let defaults = AgentSettings::default();
        let max_concurrency = self.max_concurrency.unwrap_or(defaults.max_concurrency);
        if max_concurrency == 0 {
            return Err(("max_concurrency".into(), "must be at least 1".into()));
        }
        let max_result_bytes = match &self.max_result_bytes {
            Some(text) => parse_bytes(text).map_err(|m| ("max_result_bytes".to_string(), m))?,
            None => defaults.max_result_bytes,
        };
        let max_image_bytes = match &self.max_image_bytes {
            Some(text) => parse_bytes(text).map_err(|m| ("max_image_bytes".to_string(), m))?,
            None => defaults.max_image_bytes,
        };
        let max_steps = self.max_steps.unwrap_or(defaults.max_steps);
        if max_steps == 0 {
            return Err(("max_steps".into(), "must be at least 1".into()));
        }
        Ok(AgentSettings {
            execution: self.execution.unwrap_or_default(),
            tools: self.tools,
            max_concurrency,
            max_result_bytes,
            max_image_bytes,
            max_steps,
            system_prompt: self.system_prompt,
        })
    }
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    #[serde(default)]
    dirs: Vec<RawDir>,
    #[serde(default)]
    env: Vec<String>,
    #[serde(default)]
    env_set: BTreeMap<String, String>,
    #[serde(default)]
    http: Vec<RawHttpGrant>,
    limits: Option<RawLimits>,
    #[serde(default)]
    settings: toml::Table,
    sha256: Option<String>,
    hook: Option<RawHookGrant>,
}

/// `hook = true` (every tool the hook declares), `hook = false`, or `hook = ["write_*", ...]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawHookGrant {
    All(bool),
    Tools(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDir {
    host: PathBuf,
    guest: String,
    #[serde(default)]
    mode: RawMode,
}

#[derive(Deserialize, Default, Clone, Copy)]
enum RawMode {
    #[default]
    #[serde(rename = "ro")]
    ReadOnly,
    #[serde(rename = "rw")]
    ReadWrite,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttpGrant {
    origin: String,
    methods: Option<Vec<String>>,
    path_prefix: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    private: bool,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    timeout: Option<String>,
    memory: Option<String>,
    fuel: Option<u64>,
    output: Option<String>,
    stdio: Option<String>,
    http_timeout: Option<String>,
    http_connect_timeout: Option<String>,
    http_response: Option<String>,
    http_requests: Option<usize>,
    http_connections: Option<usize>,
}

type KeyError = (String, String);

/// The most linear memory a 32-bit WebAssembly memory can have.
const MAX_MEMORY_BYTES: u64 = 4 << 30;

impl RawLimits {
    fn apply(&self, mut limits: Limits) -> Result<Limits, KeyError> {
        if let Some(text) = &self.timeout {
            limits.timeout = parse_duration(text).map_err(|m| ("timeout".to_string(), m))?;
        }
        if let Some(text) = &self.memory {
            limits.memory_bytes = parse_bytes(text).map_err(|m| ("memory".to_string(), m))?;
            if limits.memory_bytes > MAX_MEMORY_BYTES {
                return Err((
                    "memory".into(),
                    format!(
                        "{text:?} is more than 32-bit WebAssembly can address; use at most \"4GiB\""
                    ),
                ));
            }
        }
        if let Some(fuel) = self.fuel {
            if fuel == 0 {
                return Err((
                    "fuel".into(),
                    "must be positive; leave it out for no fuel limit".into(),
                ));
            }
            limits.fuel = Some(fuel);
        }
        if let Some(text) = &self.output {
            limits.output_bytes = parse_bytes(text).map_err(|m| ("output".to_string(), m))?;
        }
        if let Some(text) = &self.stdio {
            limits.stdio_bytes = parse_bytes(text).map_err(|m| ("stdio".to_string(), m))?;
        }
        if let Some(text) = &self.http_timeout {
            limits.http.total_timeout =
                parse_duration(text).map_err(|m| ("http_timeout".to_string(), m))?;
        }
        if let Some(text) = &self.http_connect_timeout {
            limits.http.connect_timeout =
                parse_duration(text).map_err(|m| ("http_connect_timeout".to_string(), m))?;
        }
        if let Some(text) = &self.http_response {
            limits.http.max_response_bytes =
                parse_bytes(text).map_err(|m| ("http_response".to_string(), m))?;
        }
        if let Some(requests) = self.http_requests {
            if requests == 0 {
                return Err(("http_requests".into(), "must be at least 1".into()));
            }
            limits.http.max_concurrent = requests;
        }
        if let Some(connections) = self.http_connections {
            if connections == 0 {
                return Err(("http_connections".into(), "must be at least 1".into()));
            }
            limits.http.max_open = connections;
        }
        Ok(limits)
    }
}

impl RawPlugin {
    fn validate(self, id: &str, base: &Path, defaults: &Limits) -> Result<PluginGrant, KeyError> {
        let mut dirs = Vec::new();
        for (index, dir) in self.dirs.into_iter().enumerate() {
            let key = |field: &str| format!("dirs[{index}].{field}");
            let host = base.join(&dir.host);
            if let Some(link) = layout::symlink_on_the_way(base, &dir.host) {
                return Err((
                    key("host"),
                    format!(
                        "{} goes through the symlink {}; grant the real directory (a grant must name a directory, not a path something could redirect)",
                        host.display(),
                        link.display()
                    ),
                ));
            }
            let host = host.canonicalize().map_err(|err| {
                (
                    key("host"),
                    format!(
                        "{} cannot be used: {err}; create the directory or fix the path",
                        host.display()
                    ),
                )
            })?;
            if !host.is_dir() {
                return Err((
                    key("host"),
                    format!("{} is not a directory", host.display()),
                ));
            }
            if !is_clean_absolute(&dir.guest) {
                return Err((
                    key("guest"),
                    format!(
                        "{:?} must be an absolute path without `.` or `..`, such as \"/data\"",
                        dir.guest
                    ),
                ));
            }
            if dirs
                .iter()
                .any(|existing: &DirGrant| existing.guest == dir.guest)
            {
                return Err((key("guest"), format!("{:?} is granted twice", dir.guest)));
            }
            // Nested guest paths would let one handle reach what the path names under the other.
            if let Some((other, existing)) = dirs.iter().enumerate().find(|(_, existing)| {
                let (a, b) = (
                    existing.guest.trim_end_matches('/'),
                    dir.guest.trim_end_matches('/'),
                );
                b.starts_with(&format!("{a}/"))
                    || a.starts_with(&format!("{b}/"))
                    || a.is_empty()
                    || b.is_empty()
            }) {
                return Err((
                    key("guest"),
                    format!(
                        "{:?} and {:?} (dirs[{other}]) nest; give each granted directory a guest path of its own, such as \"/data\" and \"/work\"",
                        dir.guest, existing.guest
                    ),
                ));
            }
            let access = match dir.mode {
                RawMode::ReadOnly => Access::ReadOnly,
                RawMode::ReadWrite => Access::ReadWrite,
            };
            dirs.push(DirGrant {
                host,
                guest: dir.guest,
                access,
            });
        }
        for (index, name) in self.env.iter().enumerate() {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err((
                    format!("env[{index}]"),
                    format!("{name:?} is not an environment variable name"),
                ));
            }
        }
        let limits = match &self.limits {
            Some(raw) => raw
                .apply(defaults.clone())
                .map_err(|(k, m)| (format!("limits.{k}"), m))?,
            None => defaults.clone(),
        };
        let sha256 = match &self.sha256 {
            Some(text) => Some(parse_sha256(text).ok_or_else(|| {
                ("sha256".to_string(), format!("{text:?} is not a sha256 (64 hex digits); `sha256sum plugins/{id}.wasm` prints it"))
            })?),
            None => None,
        };
        for name in self.env_set.keys() {
            if name.is_empty() || name.contains('=') || name.contains('\0') {
                return Err((
                    format!("env_set.{name}"),
                    format!("{name:?} is not an environment variable name"),
                ));
            }
        }
        let mut http_grants = Vec::new();
        for (index, raw) in self.http.into_iter().enumerate() {
            http_grants.push(
                raw.validate()
                    .map_err(|(field, message)| (format!("http[{index}]{field}"), message))?,
            );
        }
        let settings = serde_json::to_value(&self.settings)
            .map_err(|err| ("settings".to_string(), err.to_string()))?;
        let hook = match self.hook {
            None | Some(RawHookGrant::All(false)) => None,
            Some(RawHookGrant::All(true)) => Some(HookGrant { tools: Vec::new() }),
            Some(RawHookGrant::Tools(tools)) => {
                if tools.is_empty() {
                    return Err((
                        "hook".into(),
                        "an empty list grants nothing; write `hook = false` or leave it out".into(),
                    ));
                }
                if let Some(bad) = tools.iter().find(|glob| !crate::tool_glob::is_valid(glob)) {
                    return Err((
                        "hook".into(),
                        format!("{bad:?} is not a tool-name glob (letters, digits, _, -, * and ?)"),
                    ));
                }
                Some(HookGrant { tools })
            }
        };
        Ok(PluginGrant {
            dirs,
            env: self.env,
            env_set: self.env_set.into_iter().collect(),
            http: http_grants.into(),
            limits,
            settings,
            sha256,
            hook,
        })
    }
}

impl RawHttpGrant {
    /// A typed grant; `${env:NAME}` in header values is read from the host environment now, so a
    /// missing secret is a configuration error, not a surprise at call time.
    fn validate(self) -> Result<HttpGrant, KeyError> {
        let (scheme, host, port) =
            HttpGrant::parse_origin(&self.origin).map_err(|m| (".origin".to_string(), m))?;
        let methods: Option<Vec<String>> = self
            .methods
            .map(|methods| methods.iter().map(|m| m.to_ascii_uppercase()).collect());
        if let Some(method) = methods
            .iter()
            .flatten()
            .find(|method| crate::net::grant::is_never_sent(method))
        {
            return Err((
                ".methods".into(),
                format!(
                    "{method} is never sent: TRACE and TRACK echo the request (secret headers included) back, CONNECT opens a tunnel past every check"
                ),
            ));
        }
        if let Some(prefix) = &self.path_prefix {
            if !prefix.starts_with('/') {
                return Err((
                    ".path_prefix".into(),
                    format!("{prefix:?} must start with /"),
                ));
            }
            if let Some(problem) = prefix
                .split('/')
                .find_map(crate::net::grant::ambiguous_segment)
            {
                return Err((
                    ".path_prefix".into(),
                    format!("{prefix:?} has {problem}; write the path as the server names it"),
                ));
            }
        }
        let mut headers = Vec::new();
        for (name, template) in &self.headers {
            let key = format!(".headers.{name}");
            let header = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| (key.clone(), format!("{name:?} is not a header name")))?;
            if header == http::header::HOST {
                return Err((
                    key,
                    "the Host header always names the granted origin and cannot be set".into(),
                ));
            }
            let value = expand_env(template).map_err(|m| (key.clone(), m))?;
            let value = http::HeaderValue::from_str(&value)
                .map_err(|_| (key, "the value is not a valid header value".to_string()))?;
            headers.push(SecretHeader {
                name: header,
                value,
                template: template.clone(),
            });
        }
        Ok(HttpGrant {
            scheme,
            host,
            port,
            methods,
            path_prefix: self.path_prefix,
            headers,
            private: self.private,
        })
    }
}

/// Replaces every `${env:NAME}` with the host's value of NAME.
fn expand_env(template: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${env:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 6..];
        let end = after
            .find('}')
            .ok_or_else(|| "an unclosed ${env:...}".to_string())?;
        let name = &after[..end];
        let value = std::env::var(name)
            .map_err(|_| format!("the environment variable {name} is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn parse_sha256(text: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(text.trim()).ok()?;
    bytes.try_into().ok()
}

fn is_clean_absolute(path: &str) -> bool {
    let path = Path::new(path);
    path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(
            text,
            Path::new("cordon.toml"),
            Path::new(env!("CARGO_MANIFEST_DIR")),
        )
    }

    #[test]
    fn full_grant_is_parsed_into_typed_values() {
        let config = parse(
            r#"
            [defaults.limits]
            timeout = "5s"

            [plugins.fs]
            dirs = [{ host = "src", guest = "/src" }, { host = "benches", guest = "/crate", mode = "rw" }]
            env = ["HOME"]
            sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
            settings = { max_lines = 10 }
            limits = { memory = "64MiB", fuel = 1000 }
            "#,
        )
        .unwrap();
        let fs = config.grant_for("fs");
        assert_eq!(fs.dirs.len(), 2);
        assert_eq!(fs.dirs[0].access, Access::ReadOnly);
        assert_eq!(fs.dirs[1].access, Access::ReadWrite);
        assert!(fs.dirs[0].host.is_absolute());
        assert_eq!(
            fs.limits.timeout,
            Duration::from_secs(5),
            "defaults apply under plugin limits"
        );
        assert_eq!(fs.limits.memory_bytes, 64 << 20);
        assert_eq!(fs.limits.fuel, Some(1000));
        assert_eq!(fs.settings, serde_json::json!({ "max_lines": 10 }));
        assert_eq!(fs.sha256, Some([0; 32]));
        assert!(config.uses_fuel());
        let other = config.grant_for("other");
        assert!(other.dirs.is_empty() && other.env.is_empty());
        assert_eq!(other.limits.timeout, Duration::from_secs(5));
    }

    #[test]
    fn mistakes_name_their_key() {
        let cases = [
            ("[plugins.fs]\ndirz = []", "dirz"),
            (
                "[plugins.fs]\ndirs = [{ host = \"no/such/dir\", guest = \"/x\" }]",
                "plugins.fs.dirs[0].host",
            ),
            (
                "[plugins.fs]\ndirs = [{ host = \".\", guest = \"relative\" }]",
                "plugins.fs.dirs[0].guest",
            ),
            (
                "[plugins.fs]\ndirs = [{ host = \".\", guest = \"/a/../b\" }]",
                "plugins.fs.dirs[0].guest",
            ),
            (
                "[plugins.fs]\ndirs = [{ host = \".\", guest = \"/x\", mode = \"rwx\" }]",
                "mode",
            ),
            (
                "[plugins.fs]\nlimits = { timeout = \"10 parsecs\" }",
                "plugins.fs.limits.timeout",
            ),
            (
                "[plugins.fs]\nlimits = { memory = \"lots\" }",
                "plugins.fs.limits.memory",
            ),
            (
                "[plugins.fs]\nlimits = { memory = \"5GiB\" }",
                "plugins.fs.limits.memory",
            ),
            (
                "[plugins.fs]\nlimits = { fuel = 0 }",
                "plugins.fs.limits.fuel",
            ),
            ("[plugins.fs]\nsha256 = \"abc\"", "plugins.fs.sha256"),
            ("[plugins.fs]\nenv = [\"A=B\"]", "plugins.fs.env[0]"),
            ("[defaults.limits]\nstdio = \"0\"", "defaults.limits.stdio"),
            ("[plugin.fs]", "plugin"),
        ];
        for (text, key) in cases {
            let err = parse(text).expect_err(text).to_string();
            assert!(
                err.contains(key),
                "error for {text:?} should name {key:?}: {err}"
            );
        }
    }

    #[test]
    fn agent_and_hook_settings() {
        let config = parse(
            "[agent]\nexecution = \"sequential\"\ntools = [\"a\"]\nmax_concurrency = 2\nmax_result_bytes = \"1KiB\"\n[hooks]\norder = [\"redact\", \"guard\"]\n",
        )
        .unwrap();
        assert_eq!(
            config.agent,
            AgentSettings {
                execution: Execution::Sequential,
                tools: Some(vec!["a".into()]),
                max_concurrency: 2,
                max_result_bytes: 1024,
                max_image_bytes: 4 << 20,
                max_steps: 20,
                system_prompt: None,
            }
        );
        assert_eq!(config.hook_order, ["redact", "guard"]);
        assert_eq!(parse("").unwrap().agent, AgentSettings::default());
        for (text, key) in [
            ("[agent]\nexecution = \"random\"", "execution"),
            ("[agent]\nmax_concurrency = 0", "agent.max_concurrency"),
            ("[agent]\nmax_steps = 0", "agent.max_steps"),
            ("[hooks]\nsequence = []", "sequence"),
        ] {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.contains(key), "{err}");
        }
    }

    #[test]
    fn model_settings() {
        let config = parse(
            "[model]\nprovider = \"anthropic\"\nbase_url = \"http://127.0.0.1:9/v1/\"\nmodel = \"m\"\napi_key_env = \"MY_KEY\"\ntimeout = \"30s\"\ntemperature = 0.2\nmax_tokens = 512\nstream = false\nretries = 2\nretry_delay = \"10ms\"\nparse_text_tool_calls = true\n",
        )
        .unwrap();
        assert_eq!(
            config.model,
            ModelSettings {
                provider: Provider::Anthropic,
                base_url: Some("http://127.0.0.1:9/v1".into()),
                model: Some("m".into()),
                api_key_env: Some("MY_KEY".into()),
                timeout: std::time::Duration::from_secs(30),
                temperature: Some(0.2),
                max_tokens: Some(512),
                stream: false,
                retries: 2,
                retry_delay: std::time::Duration::from_millis(10),
                parse_text_tool_calls: true,
            }
        );
        assert_eq!(parse("").unwrap().model, ModelSettings::default());
        for (text, key) in [
            ("[model]\nprovider = \"gemini\"", "provider"),
            ("[model]\nbase_url = \"localhost:8080\"", "model.base_url"),
            ("[model]\napi_key_env = \"KEY=sk-123\"", "model.api_key_env"),
            ("[model]\napi_key = \"sk-123\"", "api_key"),
            ("[model]\ntemperature = 7.0", "model.temperature"),
            ("[model]\ntimeout = \"soon\"", "model.timeout"),
            ("[model]\nmax_tokens = 0", "model.max_tokens"),
        ] {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.contains(key), "{text}: {err}");
        }
    }

    #[test]
    fn http_grants_and_secret_headers() {
        // SAFETY: this test is the only one reading or writing this variable.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("CORDON_CONFIG_TEST_TOKEN", "t0ken")
        };
        let config = parse(
            r#"
            [plugins.web]
            env_set = { MODE = "test" }
            http = [
                { origin = "https://api.example.com", methods = ["get"], path_prefix = "/v1/", headers = { Authorization = "Bearer ${env:CORDON_CONFIG_TEST_TOKEN}" } },
                { origin = "http://localhost:8080", private = true },
            ]
            limits = { http_timeout = "5s", http_response = "1MiB", http_requests = 2 }
            "#,
        )
        .unwrap();
        let web = config.grant_for("web");
        assert_eq!(web.env_set, [("MODE".to_string(), "test".to_string())]);
        assert_eq!(web.http.len(), 2);
        assert_eq!(web.http[0].methods, Some(vec!["GET".to_string()]));
        assert_eq!(web.http[0].headers[0].value, "Bearer t0ken");
        assert!(web.http[1].private);
        assert_eq!(web.limits.http.total_timeout, Duration::from_secs(5));
        assert_eq!(web.limits.http.max_response_bytes, 1 << 20);
        assert_eq!(web.limits.http.max_concurrent, 2);
        for (text, key) in [
            (
                "[plugins.w]\nhttp = [{ origin = \"ftp://x.com\" }]",
                "plugins.w.http[0].origin",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com/path\" }]",
                "plugins.w.http[0].origin",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com\", path_prefix = \"v1\" }]",
                "path_prefix",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com\", headers = { Host = \"evil.com\" } }]",
                "headers.Host",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com\", headers = { X = \"${env:CORDON_SURELY_UNSET}\" } }]",
                "CORDON_SURELY_UNSET is not set",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com\", port = 1 }]",
                "unknown field `port`",
            ),
            (
                "[plugins.w]\nlimits = { http_requests = 0 }",
                "http_requests",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com\", methods = [\"get\", \"trace\"] }]",
                "TRACE is never sent",
            ),
            (
                "[plugins.w]\nhttp = [{ origin = \"https://x.com\", path_prefix = \"/a/../b\" }]",
                "path_prefix",
            ),
        ] {
            let err = parse(text).expect_err(text).to_string();
            assert!(err.contains(key), "{text}: {err}");
        }
    }

    #[test]
    fn empty_config_grants_nothing() {
        let config = parse("").unwrap();
        assert!(config.plugins.is_empty());
        assert!(!config.uses_fuel());
        assert_eq!(config.grant_for("fs").limits, Limits::default());
    }
}
