//! A Wassette permission policy (`policy.yaml`, the file Wassette reads beside a component) read
//! and turned into the cordon.toml grants that allow the same or less, never more: storage URIs
//! become directory grants, network hosts become HTTPS origins, environment keys become env names,
//! a memory limit becomes `limits.memory`. What cordon cannot express as narrowly (globs inside a
//! path, single files, write-only access, wildcard hosts, CIDR ranges, plain http, a deny inside an
//! allow) is left out and listed with the reason, for the operator to decide. Deny rules fail
//! closed: an allow is proposed only when every deny provably cannot reach it.

mod addresses;
mod disk_walk;
mod env_keys;
mod file_identity;
mod memory_sizes;
mod name_pattern;
mod network_origins;
mod policy_text;
mod storage_paths;

use env_keys::env_grants;
use memory_sizes::{memory_bytes, memory_limit};
use network_origins::{allowed_origin, cidr_text_deny_covers, host_deny_covers};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use storage_paths::{DenyReach, allowed_dir, deny_reach, may_reach};

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
    #[error(
        "the policy {path} is a symbolic link; give the path of the file itself (its relative paths are read from the directory it is in, which a link would make two)"
    )]
    Link { path: PathBuf },
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

/// A policy file. Keys cordon does not read are refused inside `permissions` (one could hold a
/// deny cordon would otherwise drop); at the top level, beside `version` and `description`,
/// they are Wassette's extensions and listed as left out.
#[derive(Deserialize)]
struct Policy {
    #[serde(default)]
    permissions: Permissions,
    #[serde(default, rename = "version")]
    _version: Option<serde_yaml::Value>,
    #[serde(default, rename = "description")]
    _description: Option<serde_yaml::Value>,
    #[serde(flatten)]
    extensions: std::collections::BTreeMap<String, serde_yaml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Permissions {
    storage: Option<Rules<StorageRule>>,
    network: Option<Rules<NetworkRule>>,
    environment: Option<Rules<EnvRule>>,
    resources: Option<Resources>,
    ipc: Option<serde_json::Value>,
    runtime: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules<T> {
    #[serde(default = "Vec::new")]
    allow: Vec<T>,
    #[serde(default = "Vec::new")]
    deny: Vec<T>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StorageRule {
    uri: String,
    #[serde(default, deserialize_with = "one_or_more")]
    access: Vec<String>,
}

/// `access: ["read", "write"]`, or one access written alone (`access: read`).
fn one_or_more<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMore {
        One(String),
        More(Vec<String>),
    }
    Ok(match OneOrMore::deserialize(deserializer)? {
        OneOrMore::One(access) => vec![access],
        OneOrMore::More(accesses) => accesses,
    })
}

/// A network rule: a `host`, a `cidr`, or (read as both, in a deny) the two.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetworkRule {
    host: Option<String>,
    cidr: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvRule {
    key: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Resources {
    /// Megabytes (the older policy form).
    memory: Option<serde_json::Value>,
    cpu: Option<serde_json::Value>,
    io: Option<serde_json::Value>,
    /// `limits: { memory: "512Mi", cpu: "500m" }` (the newer form).
    limits: Option<ResourceLimits>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
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
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) => PolicyError::Link {
                path: path.to_path_buf(),
            },
            _ => read(err),
        })?;
    if !file.metadata().map_err(read)?.is_file() {
        return Err(PolicyError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let mut text = String::new();
    (&file)
        .take(MAX_POLICY_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read)?;
    if text.len() as u64 > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    // Where the opened file really is (not the path again, which may have changed since).
    use std::os::fd::AsRawFd as _;
    let full = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .or_else(|_| path.canonicalize())
        .map_err(read)?;
    let base = full.parent().unwrap_or(Path::new("/"));
    propose(&text, base).map_err(|message| PolicyError::Syntax {
        path: path.to_path_buf(),
        message,
    })
}

/// The grants for the policy `text`, with relative storage URIs taken from `base`.
pub fn propose(text: &str, base: &Path) -> Result<ProposedGrants, String> {
    policy_text::check_nesting(text)?;
    policy_text::check_no_tags(text)?;
    policy_text::check_memory_numbers(text)?;
    let policy: Policy = serde_yaml::from_str(text).map_err(|err| {
        format!("{err} (cordon reads permissions.storage, network, environment, resources, ipc and runtime, each with the keys Wassette documents; a key it does not read could hold a deny, so the policy is refused)")
    })?;
    if policy.extensions.contains_key("<<") {
        return Err("it uses a YAML merge key (<<); write the rules out where they apply".into());
    }
    let mut out = ProposedGrants::default();
    for key in policy.extensions.keys() {
        out.left_out.push(format!(
            "{key:?}: not a permission cordon reads (only `permissions` is)"
        ));
    }
    let permissions = policy.permissions;
    check_rule_counts(&permissions)?;
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
        resource_limits(resources, &mut out)?;
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
    // One budget of entries looked at on disk for all the denies (see MAX_ENTRIES_LOOKED_AT).
    let mut looked_at = 0;
    let denies: Vec<(&StorageRule, DenyReach, bool)> = storage
        .deny
        .iter()
        .map(|deny| {
            let write_only =
                deny.access.iter().all(|access| access == "write") && !deny.access.is_empty();
            (
                deny,
                deny_reach(&deny.uri, base, &mut looked_at),
                write_only,
            )
        })
        .collect();
    for rule in &storage.allow {
        let what = format!("storage {:?}", rule.uri);
        let dir = match allowed_dir(&rule.uri, base) {
            Ok(dir) => dir,
            Err(why) => {
                out.left_out.push(format!("{what}: {}", why.reason()));
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
        let host = match (&rule.host, &rule.cidr) {
            (_, Some(cidr)) => {
                out.left_out.push(format!(
                    "network cidr {cidr:?}: cordon grants origins (scheme, host, port), not address ranges"
                ));
                continue;
            }
            (None, None) => {
                out.left_out
                    .push("network: an allow rule with neither host nor cidr".into());
                continue;
            }
            (Some(host), None) => host,
        };
        let origin = match allowed_origin(host) {
            Ok(origin) => origin,
            Err(reason) => {
                out.left_out
                    .push(format!("network host {host:?}: {reason}"));
                continue;
            }
        };
        // A deny is read in each form it is written in; one with neither covers everything.
        let covered = network.deny.iter().find_map(|deny| match (&deny.host, &deny.cidr) {
            (None, None) => Some(
                "the policy has a network deny with neither host nor cidr, which cordon cannot read, so no host is proposed"
                    .to_string(),
            ),
            (host, cidr) => host
                .as_ref()
                .and_then(|denied| host_deny_covers(denied, &origin))
                .or_else(|| {
                    cidr.as_ref()
                        .and_then(|cidr| cidr_text_deny_covers(cidr, &origin))
                }),
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

/// A memory limit cordon cannot read refuses the policy: leaving it out would give the plugin
/// cordon's default, which may be more than the policy allows.
fn resource_limits(resources: Resources, out: &mut ProposedGrants) -> Result<(), String> {
    // A number with no unit is megabytes (10^6 bytes) in Wassette's own field, bytes in the
    // Kubernetes one;
    // when both fields are written, the smaller limit is proposed.
    let written = [
        resources
            .limits
            .as_ref()
            .and_then(|limits| limits.memory.clone())
            .map(|memory| (memory, 1)),
        // Wassette's own field is megabytes: read as decimal ones, the smaller reading.
        resources.memory.clone().map(|memory| (memory, 1_000_000)),
    ];
    let mut smallest: Option<(u64, serde_json::Value)> = None;
    for (memory, unitless_scale) in written.into_iter().flatten() {
        // One cordon cannot read, or one too small to run in, refuses the policy; one over
        // 4 GiB is left out, and cordon's default is less than such a limit.
        let bytes = memory_bytes(&memory, unitless_scale).map_err(|reason| {
            format!("resources memory: {reason}; write it with a unit (512Mi, 512MB, 1Gi)")
        })?;
        if bytes < memory_sizes::MIN_MEMORY_BYTES {
            return Err(format!(
                "resources memory: {memory} is read as {bytes} bytes (a number without a unit is bytes in limits.memory), less than one WebAssembly page (64KiB): no component runs in it, and leaving it out would give cordon's larger default; write it with a unit (512Mi)"
            ));
        }
        if smallest.as_ref().is_none_or(|(least, _)| bytes < *least) {
            smallest = Some((bytes, memory));
        }
    }
    if let Some((bytes, memory)) = smallest {
        match memory_limit(bytes, &memory) {
            Ok(limit) => out.memory = Some(limit),
            Err(reason) => out.left_out.push(format!("resources memory: {reason}")),
        }
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
    Ok(())
}

/// The most rules one list (`storage.allow`, `network.deny`, ...) may hold: a real policy has a
/// handful, and each allow is checked against every deny.
const MAX_RULES_PER_LIST: usize = 256;

/// Refuses a policy with more than [`MAX_RULES_PER_LIST`] rules in a list.
fn check_rule_counts(permissions: &Permissions) -> Result<(), String> {
    let counts = [
        (
            "storage",
            permissions
                .storage
                .as_ref()
                .map(|r| (r.allow.len(), r.deny.len())),
        ),
        (
            "network",
            permissions
                .network
                .as_ref()
                .map(|r| (r.allow.len(), r.deny.len())),
        ),
        (
            "environment",
            permissions
                .environment
                .as_ref()
                .map(|r| (r.allow.len(), r.deny.len())),
        ),
    ];
    for (section, count) in counts {
        let Some((allows, denies)) = count else {
            continue;
        };
        for (list, count) in [("allow", allows), ("deny", denies)] {
            if count > MAX_RULES_PER_LIST {
                return Err(format!(
                    "{section}.{list} has {count} rules, more than the {MAX_RULES_PER_LIST} cordon reads; no policy needs that many"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod spelling_tests;
#[cfg(test)]
mod unreadable_tests;
