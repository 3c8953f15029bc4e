//! A Wassette permission policy (`policy.yaml`, the file Wassette reads beside a component) read
//! and turned into the cordon.toml grants that allow the same or less, never more: storage URIs
//! become directory grants, network hosts become HTTPS origins, environment keys become env names,
//! a memory limit becomes `limits.memory`. What cordon cannot express as narrowly (globs inside a
//! path, single files, write-only access, wildcard hosts, CIDR ranges, plain http, a deny inside an
//! allow) is left out and listed with the reason, for the operator to decide. Deny rules fail
//! closed: an allow is proposed only when every deny provably cannot reach it.

mod name_pattern;
mod network_origins;
mod storage_paths;

use network_origins::{allowed_origin, cidr_text_deny_covers, host_deny_covers};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use storage_paths::{DenyReach, NotADirectory, allowed_dir, deny_reach, may_reach};

/// The most bytes of policy read.
const MAX_POLICY_BYTES: u64 = 1 << 20;

/// Why a policy file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read the policy {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the policy {path} is larger than {MAX_POLICY_BYTES} bytes")]
    TooLarge { path: PathBuf },
    #[error(
        "the policy {path} is not a regular file (a FIFO, a device or a directory); give the path of the policy.yaml itself"
    )]
    NotAFile { path: PathBuf },
    #[error("{path} is not a Wassette policy: {message}")]
    Syntax { path: PathBuf, message: String },
}

/// A directory grant the policy allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedDir {
    pub host: PathBuf,
    pub guest: String,
    pub read_write: bool,
}

/// The grants that allow what the policy allows, or less.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProposedGrants {
    pub dirs: Vec<ProposedDir>,
    /// HTTPS origins, such as `https://api.example.com` (plain http is never proposed).
    pub origins: Vec<String>,
    pub env: Vec<String>,
    /// `limits.memory`, as cordon.toml writes it (`"512MiB"`).
    pub memory: Option<String>,
    /// What the policy allows that is not granted, each with the reason.
    pub left_out: Vec<String>,
}

impl ProposedGrants {
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
            && self.origins.is_empty()
            && self.env.is_empty()
            && self.memory.is_none()
    }
}

#[derive(Deserialize)]
struct Policy {
    #[serde(default)]
    permissions: Permissions,
}

#[derive(Deserialize, Default)]
struct Permissions {
    storage: Option<Rules<StorageRule>>,
    network: Option<Rules<NetworkRule>>,
    environment: Option<Rules<EnvRule>>,
    resources: Option<Resources>,
    ipc: Option<serde_json::Value>,
    runtime: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Rules<T> {
    #[serde(default = "Vec::new")]
    allow: Vec<T>,
    #[serde(default = "Vec::new")]
    deny: Vec<T>,
}

#[derive(Deserialize)]
struct StorageRule {
    uri: String,
    #[serde(default)]
    access: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum NetworkRule {
    Host { host: String },
    Cidr { cidr: String },
}

#[derive(Deserialize)]
struct EnvRule {
    key: String,
}

#[derive(Deserialize)]
struct Resources {
    /// Megabytes (the older policy form).
    memory: Option<serde_json::Value>,
    cpu: Option<serde_json::Value>,
    io: Option<serde_json::Value>,
    /// `limits: { memory: "512Mi", cpu: "500m" }` (the newer form).
    limits: Option<ResourceLimits>,
}

#[derive(Deserialize)]
struct ResourceLimits {
    memory: Option<serde_json::Value>,
    cpu: Option<serde_json::Value>,
}

/// Reads the policy at `path`; relative storage URIs are taken from its directory.
pub fn read_policy(path: &Path) -> Result<ProposedGrants, PolicyError> {
    let read = |source| PolicyError::Read {
        path: path.to_path_buf(),
        source,
    };
    // Opened without waiting (a FIFO does not hold the command) and read only when it is a
    // regular file, at most one byte past the limit (a device such as /dev/zero reports no size).
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read)?;
    if !file.metadata().map_err(read)?.is_file() {
        return Err(PolicyError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut text = String::new();
    file.take(MAX_POLICY_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read)?;
    if text.len() as u64 > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let full = path.canonicalize().map_err(read)?;
    let base = full.parent().unwrap_or(Path::new("/"));
    propose(&text, base).map_err(|message| PolicyError::Syntax {
        path: path.to_path_buf(),
        message,
    })
}

/// The grants for the policy `text`, with relative storage URIs taken from `base`.
pub fn propose(text: &str, base: &Path) -> Result<ProposedGrants, String> {
    check_nesting(text)?;
    let policy: Policy = serde_yaml::from_str(text).map_err(|err| err.to_string())?;
    let mut out = ProposedGrants::default();
    let permissions = policy.permissions;
    if let Some(storage) = permissions.storage {
        storage_grants(&storage, base, &mut out);
    }
    if let Some(network) = permissions.network {
        network_grants(&network, &mut out);
    }
    if let Some(environment) = permissions.environment {
        env_grants(&environment, &mut out);
    }
    if let Some(resources) = permissions.resources {
        resource_limits(resources, &mut out);
    }
    if permissions.ipc.is_some() {
        out.left_out
            .push("ipc: cordon gives plugins no pipes or sockets, whatever is allowed".into());
    }
    if permissions.runtime.is_some() {
        out.left_out.push(
            "runtime (docker, hyperlight): cordon runs every plugin in its own wasmtime sandbox"
                .into(),
        );
    }
    Ok(out)
}

fn storage_grants(storage: &Rules<StorageRule>, base: &Path, out: &mut ProposedGrants) {
    let denies: Vec<(&StorageRule, DenyReach, bool)> = storage
        .deny
        .iter()
        .map(|deny| {
            let write_only =
                deny.access.iter().all(|access| access == "write") && !deny.access.is_empty();
            (deny, deny_reach(&deny.uri, base), write_only)
        })
        .collect();
    for rule in &storage.allow {
        let what = format!("storage {:?}", rule.uri);
        let dir = match allowed_dir(&rule.uri, base) {
            Ok(dir) => dir,
            Err(NotADirectory::LeavesBase) => {
                out.left_out.push(format!(
                    "{what}: a relative path whose `..` leaves the policy's directory; grant it by hand if you mean it"
                ));
                continue;
            }
            Err(NotADirectory::NotFs | NotADirectory::Empty) => {
                out.left_out
                    .push(format!("{what}: not an fs:// URI naming a directory"));
                continue;
            }
            Err(NotADirectory::Pattern) => {
                out.left_out.push(format!(
                    "{what}: cordon grants whole directories (fs://DIR or fs://DIR/**); a glob or file pattern inside a path cannot be granted as narrowly"
                ));
                continue;
            }
        };
        let reads = rule.access.iter().any(|access| access == "read");
        let mut writes = rule.access.iter().any(|access| access == "write");
        if let Some(unknown) = rule
            .access
            .iter()
            .find(|a| !matches!(a.as_str(), "read" | "write"))
        {
            out.left_out
                .push(format!("{what}: unknown access {unknown:?}"));
            continue;
        }
        if !reads && writes {
            out.left_out.push(format!(
                "{what}: write-only access; cordon's read-write grant would allow reading too"
            ));
            continue;
        }
        if !reads {
            out.left_out.push(format!("{what}: no access is listed"));
            continue;
        }
        if !dir.host.is_dir() {
            out.left_out.push(format!(
                "{what}: {} is not a directory here; cordon grants directories that exist",
                dir.host.display()
            ));
            continue;
        }
        let reaching = |write_only: bool| {
            denies
                .iter()
                .filter(move |(_, _, only_write)| *only_write == write_only)
                .find(|(_, reach, _)| may_reach(reach, &dir.host))
        };
        if let Some((deny, reach, _)) = reaching(false) {
            let why = match reach {
                DenyReach::Anywhere(why) => format!(" ({why})"),
                DenyReach::From { .. } => String::new(),
            };
            out.left_out.push(format!(
                "{what}: the policy denies {:?}{why}, which can reach inside or over it, and a cordon grant cannot leave a hole",
                deny.uri
            ));
            continue;
        }
        if writes && let Some((deny, _, _)) = reaching(true) {
            out.left_out.push(format!(
                "{what}: write access, since the policy denies writing to {:?}, which can reach inside or over it (proposed read-only)",
                deny.uri
            ));
            writes = false;
        }
        out.dirs.push(ProposedDir {
            host: dir.host,
            guest: dir.guest,
            read_write: writes,
        });
    }
}

fn network_grants(network: &Rules<NetworkRule>, out: &mut ProposedGrants) {
    for rule in &network.allow {
        let host = match rule {
            NetworkRule::Cidr { cidr } => {
                out.left_out.push(format!(
                    "network cidr {cidr:?}: cordon grants origins (scheme, host, port), not address ranges"
                ));
                continue;
            }
            NetworkRule::Host { host } => host,
        };
        let origin = match allowed_origin(host) {
            Ok(origin) => origin,
            Err(reason) => {
                out.left_out
                    .push(format!("network host {host:?}: {reason}"));
                continue;
            }
        };
        let covered = network.deny.iter().find_map(|deny| match deny {
            NetworkRule::Host { host: denied } => host_deny_covers(denied, &origin),
            NetworkRule::Cidr { cidr } => cidr_text_deny_covers(cidr, &origin),
        });
        if let Some(reason) = covered {
            out.left_out
                .push(format!("network host {host:?}: {reason}"));
            continue;
        }
        let grant = origin.as_grant();
        if !out.origins.contains(&grant) {
            out.origins.push(grant);
        }
    }
}

fn env_grants(environment: &Rules<EnvRule>, out: &mut ProposedGrants) {
    for rule in &environment.allow {
        let key = rule.key.trim().to_string();
        if key.is_empty() || key.contains(['=', '\0']) {
            out.left_out.push(format!(
                "environment key {:?}: not a variable name",
                rule.key
            ));
        } else if name_pattern::is_pattern(&key) {
            out.left_out.push(format!(
                "environment key {key:?}: a pattern; cordon passes named variables, so list each"
            ));
        } else if let Some(denied) = environment
            .deny
            .iter()
            .find(|denied| env_deny_covers(denied.key.trim(), &key))
        {
            out.left_out.push(format!(
                "environment key {key}: the policy denies {:?}",
                denied.key
            ));
        } else if !out.env.contains(&key) {
            out.env.push(key);
        }
    }
}

/// Whether the deny `pattern` (trimmed) names `key`: exactly, or as a `*`/`?` glob; one with
/// other glob syntax is not read and covers every key. It is read every way it could be meant:
/// as written, with glob escapes (`\_`) taken as the character, without a shell's `$` or
/// `${...}`, and with `%XX` escapes decoded.
fn env_deny_covers(pattern: &str, key: &str) -> bool {
    env_deny_readings(pattern)
        .iter()
        .any(|reading| env_reading_covers(reading, key))
}

fn env_deny_readings(pattern: &str) -> Vec<String> {
    let mut readings = vec![pattern.to_string()];
    if pattern.contains('\\') {
        readings.push(pattern.replace('\\', ""));
    }
    for reading in readings.clone() {
        if let Some(name) = reading.strip_prefix('$') {
            let name = name
                .strip_prefix('{')
                .and_then(|name| name.strip_suffix('}'))
                .unwrap_or(name);
            readings.push(name.to_string());
        }
    }
    for reading in readings.clone() {
        if reading.contains('%') {
            // An escape that cannot be decoded is a deny that cannot be read: it covers all.
            readings.push(storage_paths::percent_decoded(&reading).unwrap_or_else(|| "*".into()));
        }
    }
    readings
}

fn env_reading_covers(pattern: &str, key: &str) -> bool {
    if name_pattern::is_unreadable(pattern) {
        true
    } else if name_pattern::is_pattern(pattern) {
        name_pattern::matches(pattern, key)
    } else {
        pattern == key
    }
}

fn resource_limits(resources: Resources, out: &mut ProposedGrants) {
    let memory = resources
        .limits
        .as_ref()
        .and_then(|limits| limits.memory.clone())
        .or(resources.memory);
    match memory.as_ref().map(memory_limit) {
        Some(Ok(limit)) => out.memory = Some(limit),
        Some(Err(reason)) => out.left_out.push(format!("resources memory: {reason}")),
        None => {}
    }
    let cpu = resources.cpu.is_some()
        || resources
            .limits
            .as_ref()
            .is_some_and(|limits| limits.cpu.is_some());
    if cpu {
        out.left_out.push(
            "resources cpu: cordon bounds CPU with limits.timeout and limits.fuel; set them by hand"
                .into(),
        );
    }
    if resources.io.is_some() {
        out.left_out
            .push("resources io: cordon has no I/O rate limit".into());
    }
}

/// How deeply a policy may nest `[` and `{`: a real one nests three or four levels, and the YAML
/// parser takes time that grows with the square of the depth.
const MAX_POLICY_NESTING: usize = 64;

/// Refuses a policy nested deeper than [`MAX_POLICY_NESTING`] before it is parsed.
fn check_nesting(text: &str) -> Result<(), String> {
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_POLICY_NESTING {
                    return Err(format!(
                        "it nests [ and {{ more than {MAX_POLICY_NESTING} levels deep, which no policy needs"
                    ));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The largest memory limit cordon.toml accepts: what 32-bit WebAssembly can address.
const MAX_MEMORY_BYTES: u64 = 4 << 30;

/// A memory limit in cordon's form: a number is megabytes; `512Mi`, `1Gi`, `512M` are sizes.
/// One cordon.toml would refuse (zero, or over 4 GiB) is not proposed.
fn memory_limit(value: &serde_json::Value) -> Result<String, String> {
    let (number, unit) = memory_number_and_unit(value)?;
    let scale: u64 = match unit {
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        _ => 1 << 30,
    };
    match number.checked_mul(scale) {
        Some(0) => Err("zero; a limit must be positive".into()),
        Some(bytes) if bytes <= MAX_MEMORY_BYTES => Ok(format!("{number}{unit}")),
        _ => Err(format!(
            "{number}{unit} is more than 32-bit WebAssembly can address (cordon's limit is at most 4GiB)"
        )),
    }
}

fn memory_number_and_unit(value: &serde_json::Value) -> Result<(u64, &'static str), String> {
    if let Some(megabytes) = value.as_u64() {
        return Ok((megabytes, "MiB"));
    }
    let text = value.as_str().ok_or("not a size")?.trim();
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size"))?;
    let unit = match &text[digits.len()..] {
        "Ki" | "K" | "k" => "KiB",
        "Mi" | "M" | "" => "MiB",
        "Gi" | "G" => "GiB",
        other => return Err(format!("unit {other:?} is not one cordon reads")),
    };
    Ok((number, unit))
}

#[cfg(test)]
mod tests;
