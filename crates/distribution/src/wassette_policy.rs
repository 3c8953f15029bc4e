//! A Wassette permission policy (`policy.yaml`, the file Wassette reads beside a component) read
//! and turned into the cordon.toml grants that allow the same or less, by refusal rather than
//! interpretation: cordon never reads a deny rule. A category (storage, network, environment)
//! whose `deny` list holds any rule proposes none of its allows; each is listed as left out, for
//! the operator to grant by hand. The allows of a category without denies become directory
//! grants, HTTPS origins and env names where cordon can express them as narrowly; the rest
//! (globs, single files, write-only access, wildcard hosts, CIDR ranges, plain http) is left out
//! with the reason. A memory limit becomes `limits.memory`.

mod memory_sizes;
mod network_origins;
mod policy_text;
mod storage_dirs;

use serde::Deserialize;
use std::path::{Path, PathBuf};

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

/// A policy file. Keys cordon does not read are refused inside `permissions` (a misspelt `Deny:`
/// would otherwise hide a deny); at the top level, beside `version` and `description`, they are
/// Wassette's extensions and listed as left out.
#[derive(Deserialize)]
struct Policy {
    #[serde(default)]
    permissions: Permissions,
    #[serde(flatten)]
    extensions: std::collections::BTreeMap<String, serde_yaml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Permissions {
    storage: Option<Rules<StorageRule>>,
    network: Option<Rules<NetworkRule>>,
    environment: Option<Rules<EnvRule>>,
    resources: Option<memory_sizes::Resources>,
    ipc: Option<serde_yaml::Value>,
    runtime: Option<serde_yaml::Value>,
}

/// One category's rules. Its denies are counted, never read: any one of them, whatever it says,
/// keeps every allow of the category out.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Rules<T> {
    #[serde(default = "Vec::new")]
    allow: Vec<T>,
    #[serde(default)]
    deny: Vec<serde_yaml::Value>,
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
    policy_text::check(text)?;
    let policy: Policy = serde_yaml::from_str(text).map_err(|err| {
        format!("{err} (cordon reads permissions.storage, network, environment, resources, ipc and runtime, each with the keys Wassette documents; a key it does not read could hold a deny, so the policy is refused)")
    })?;
    if policy.extensions.contains_key("<<") {
        return Err("it uses a YAML merge key (<<); write the rules out where they apply".into());
    }
    let mut out = ProposedGrants::default();
    for key in policy
        .extensions
        .keys()
        .filter(|key| *key != "version" && *key != "description")
    {
        out.left_out.push(format!(
            "{key:?}: not a permission cordon reads (only `permissions` is)"
        ));
    }
    let permissions = policy.permissions;
    let left_out = &mut out.left_out;
    propose_allows(
        "storage",
        permissions.storage.as_ref(),
        |rule| format!("storage {:?}", rule.uri),
        |rule| storage_dirs::proposed_dir(&rule.uri, &rule.access, base),
        &mut out.dirs,
        left_out,
    );
    propose_allows(
        "network",
        permissions.network.as_ref(),
        |rule| match (&rule.host, &rule.cidr) {
            (Some(host), _) => format!("network host {host:?}"),
            (None, Some(cidr)) => format!("network cidr {cidr:?}"),
            (None, None) => "network: an allow with neither host nor cidr".into(),
        },
        |rule| match (&rule.host, &rule.cidr) {
            (Some(host), None) => network_origins::https_origin(host),
            (None, None) => Err("there is nothing to grant".into()),
            _ => Err("cordon grants origins (scheme, host, port), not address ranges".into()),
        },
        &mut out.origins,
        left_out,
    );
    propose_allows(
        "environment",
        permissions.environment.as_ref(),
        |rule| format!("environment key {:?}", rule.key),
        |rule| env_name(&rule.key),
        &mut out.env,
        left_out,
    );
    if let Some(resources) = permissions.resources {
        memory_sizes::resource_limits(resources, &mut out)?;
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

/// Proposes each allow of `rules` that `grant` turns into a grant (once), and lists the others
/// with the reason. When the category has any deny rule, none is proposed: cordon does not read
/// denies, so each allow is listed for the operator to grant by hand.
fn propose_allows<T, G: PartialEq>(
    category: &str,
    rules: Option<&Rules<T>>,
    describe: impl Fn(&T) -> String,
    grant: impl Fn(&T) -> Result<G, String>,
    granted: &mut Vec<G>,
    left_out: &mut Vec<String>,
) {
    let Some(rules) = rules else { return };
    for rule in &rules.allow {
        if !rules.deny.is_empty() {
            left_out.push(format!(
                "{}: the policy has {category} deny rules, which cordon does not interpret, so no {category} allow is proposed; grant what the denies leave allowed by hand in [plugins.NAME]",
                describe(rule)
            ));
            continue;
        }
        match grant(rule) {
            Ok(grant) if granted.contains(&grant) => {}
            Ok(grant) => granted.push(grant),
            Err(reason) => left_out.push(format!("{}: {reason}", describe(rule))),
        }
    }
}

/// An environment key as the variable name cordon passes through (surrounding ASCII spaces
/// trimmed), or why it is not one.
fn env_name(key: &str) -> Result<String, String> {
    let key = key.trim_ascii();
    if key.contains(['*', '?', '[', ']', '{', '}']) {
        return Err("a pattern; cordon passes named variables, so list each".into());
    }
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err("not a variable name (letters, digits and _)".into());
    }
    Ok(key.to_string())
}

#[cfg(test)]
mod tests;
