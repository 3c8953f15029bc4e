//! `[plugins.ID]` and `[defaults]`: one plugin's grants (directories, HTTP origins, env vars, the
//! hook), its settings and secrets, its pin and its limits, checked and turned into a [`PluginGrant`].

use super::http_section::RawHttpGrant;
use super::*;
use crate::report::secrets::Secrets;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlugin {
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
    secrets: BTreeMap<String, String>,
    #[serde(default)]
    settings: toml::Table,
    sha256: Option<String>,
    hook: Option<RawHookGrant>,
    #[serde(default)]
    unreviewed_progress: bool,
    #[serde(default)]
    tools: BTreeMap<String, super::tool_section::RawToolOverride>,
    wit: Option<PathBuf>,
    working_dir: Option<String>,
}

/// `hook = true` (every tool the hook declares), `hook = false`, or `hook = ["write_*", ...]`.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawHookGrant {
    All(bool),
    Tools(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDir {
    host: PathBuf,
    guest: String,
    #[serde(default)]
    mode: RawMode,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(super) enum RawMode {
    #[default]
    #[serde(rename = "ro")]
    ReadOnly,
    #[serde(rename = "rw")]
    ReadWrite,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
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
    disk_write: Option<String>,
    files_created: Option<u64>,
}

impl RawLimits {
    pub(super) fn apply(&self, mut limits: Limits) -> Result<Limits, KeyError> {
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
        if let Some(text) = &self.disk_write {
            limits.disk_write_bytes =
                parse_bytes(text).map_err(|m| ("disk_write".to_string(), m))?;
        }
        if let Some(count) = self.files_created {
            limits.files_created = count;
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
    pub(super) fn validate(
        self,
        id: &str,
        base: &Path,
        defaults: &Limits,
        secrets: &Secrets,
    ) -> Result<PluginGrant, KeyError> {
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
                        "{:?} must be an absolute path without `.`, `..` or an empty segment (`//`), such as \"/data\"",
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
        let mut unset = Vec::new();
        for (index, raw) in self.http.into_iter().enumerate() {
            http_grants.push(
                raw.validate(secrets, &mut unset)
                    .map_err(|(field, message)| (format!("http[{index}]{field}"), message))?,
            );
        }
        let config_secrets =
            super::secrets_section::expand(&self.secrets, &self.settings, secrets, &mut unset)?;
        unset.sort();
        unset.dedup();
        let unavailable = (!unset.is_empty()).then(|| {
            format!(
                "its grant in cordon.toml reads the environment variable{} {}, not set where cordon runs; set {} and reload (the other plugins are not affected)",
                if unset.len() == 1 { "" } else { "s" },
                unset.join(", "),
                if unset.len() == 1 { "it" } else { "them" },
            )
        });
        let settings = serde_json::to_value(&self.settings)
            .map_err(|err| ("settings".to_string(), err.to_string()))?;
        let hook = match self.hook {
            None | Some(RawHookGrant::All(false)) => None,
            Some(RawHookGrant::All(true)) => Some(HookGrant {
                tools: Vec::new(),
                unreviewed_progress: self.unreviewed_progress,
            }),
            Some(RawHookGrant::Tools(tools)) => {
                if tools.is_empty() {
                    return Err((
                        "hook".into(),
                        "an empty list grants nothing; write `hook = false` or leave it out".into(),
                    ));
                }
                if let Some(bad) = tools
                    .iter()
                    .find(|glob| !crate::capabilities::tool_glob::is_valid(glob))
                {
                    return Err((
                        "hook".into(),
                        format!("{bad:?} is not a tool-name glob (letters, digits, _, -, * and ?)"),
                    ));
                }
                Some(HookGrant {
                    tools,
                    unreviewed_progress: self.unreviewed_progress,
                })
            }
        };
        if self.unreviewed_progress && hook.is_none() {
            return Err((
                "unreviewed_progress".into(),
                "it lets progress pass this plugin's after-hook unreviewed, and the plugin is granted no hook; grant it one (`hook = true`) or leave the key out".into(),
            ));
        }
        let tools = super::tool_section::validate(self.tools)?;
        let wit = match &self.wit {
            None => None,
            Some(path) => {
                let full = base.join(path);
                if !full.exists() {
                    return Err((
                        "wit".into(),
                        format!(
                            "{} does not exist; give the WIT directory, .wit file or WIT package the component was built from",
                            full.display()
                        ),
                    ));
                }
                Some(full)
            }
        };
        if let Some(working_dir) = &self.working_dir
            && !dirs.iter().any(|dir| dir.guest == *working_dir)
        {
            let granted: Vec<&str> = dirs.iter().map(|dir| dir.guest.as_str()).collect();
            return Err((
                "working_dir".into(),
                if granted.is_empty() {
                    format!(
                        "{working_dir:?} is not a granted directory: this plugin is granted none; grant it in `dirs` first"
                    )
                } else {
                    format!(
                        "{working_dir:?} is not a granted directory's guest path; it is one of: {}",
                        granted.join(", ")
                    )
                },
            ));
        }
        register_credential_values(&self.env, secrets);
        Ok(PluginGrant {
            unavailable,
            config_secrets: config_secrets.into(),
            working_dir: self.working_dir,
            tools,
            wit,
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

pub(super) fn parse_sha256(text: &str) -> Option<[u8; 32]> {
    let bytes = hex::decode(text.trim()).ok()?;
    bytes.try_into().ok()
}

/// Whether `path` is absolute and written as wasi-libc matches it: no `.` or `..`, no empty
/// segment (`/data//x`, which a guest's path would never match, so every read under it would
/// land outside the grants), at most one trailing `/`.
pub(super) fn is_clean_absolute(path: &str) -> bool {
    let segments: Vec<&str> = path
        .strip_suffix('/')
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
        .split('/')
        .skip(1)
        .collect();
    Path::new(path).is_absolute()
        && (path == "/"
            || segments
                .iter()
                .all(|segment| !segment.is_empty() && !matches!(*segment, "." | "..")))
        && Path::new(path)
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

/// The words that mark an environment variable as a credential.
const CREDENTIAL_WORDS: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "AUTH",
    "CREDENTIAL",
    "COOKIE",
    "SESSION",
];

/// Registers with the scrubber the host values of the passed-through variables whose names say
/// they are credentials (`GITHUB_TOKEN`, `OPENAI_API_KEY`, `DB_PASSWORD`), so a plugin echoing
/// one reaches neither the model, the transcript nor the telemetry exporter. Other values
/// (`LANG`, `TZ`) are not: masking them would mask ordinary words.
fn register_credential_values(names: &[String], secrets: &Secrets) {
    for name in names {
        let upper = name.to_ascii_uppercase();
        if CREDENTIAL_WORDS.iter().any(|word| upper.contains(word))
            && let Ok(value) = std::env::var(name)
        {
            secrets.register(&value);
        }
    }
}
