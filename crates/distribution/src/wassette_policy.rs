//! A Wassette permission policy (`policy.yaml`, the file Wassette reads beside a component) read
//! and turned into the cordon.toml grants that allow the same or less, never more: storage URIs
//! become directory grants, network hosts become HTTPS origins, environment keys become env names,
//! a memory limit becomes `limits.memory`. What cordon cannot express as narrowly (globs inside a
//! path, single files, write-only access, wildcard hosts, CIDR ranges, a deny inside an allow) is
//! left out and listed with the reason, for the operator to decide.

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
    /// HTTPS (or the URI's own scheme) origins, such as `https://api.example.com`.
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
    let size = std::fs::metadata(path).map_err(read)?.len();
    if size > MAX_POLICY_BYTES {
        return Err(PolicyError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(read)?;
    let full = path.canonicalize().map_err(read)?;
    let base = full.parent().unwrap_or(Path::new("/"));
    propose(&text, base).map_err(|message| PolicyError::Syntax {
        path: path.to_path_buf(),
        message,
    })
}

/// The grants for the policy `text`, with relative storage URIs taken from `base`.
pub fn propose(text: &str, base: &Path) -> Result<ProposedGrants, String> {
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
        for rule in environment.allow {
            let key = rule.key.trim().to_string();
            if key.is_empty() || key.contains('=') || key.contains('\0') {
                out.left_out.push(format!(
                    "environment key {:?}: not a variable name",
                    rule.key
                ));
            } else if environment.deny.iter().any(|denied| denied.key == key) {
                out.left_out
                    .push(format!("environment key {key}: the policy also denies it"));
            } else if !out.env.contains(&key) {
                out.env.push(key);
            }
        }
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
    for rule in &storage.allow {
        let what = format!("storage {:?}", rule.uri);
        let Some(path) = directory_of(&rule.uri) else {
            out.left_out.push(format!(
                "{what}: cordon grants whole directories (fs://DIR or fs://DIR/**); a glob or file pattern inside a path cannot be granted as narrowly"
            ));
            continue;
        };
        let reads = rule.access.iter().any(|access| access == "read");
        let writes = rule.access.iter().any(|access| access == "write");
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
        let (host, guest) = if path.starts_with('/') {
            (PathBuf::from(&path), path.clone())
        } else {
            (base.join(&path), format!("/{path}"))
        };
        if !host.is_dir() {
            out.left_out.push(format!(
                "{what}: {} is not a directory here; cordon grants directories that exist",
                host.display()
            ));
            continue;
        }
        if let Some(denied) = storage
            .deny
            .iter()
            .filter_map(|deny| directory_of(&deny.uri).or_else(|| Some(deny.uri.clone())))
            .find(|denied| inside(denied, &path))
        {
            out.left_out.push(format!(
                "{what}: the policy denies {denied:?} inside it, and a cordon grant cannot leave a hole"
            ));
            continue;
        }
        out.dirs.push(ProposedDir {
            host,
            guest,
            read_write: writes,
        });
    }
}

fn network_grants(network: &Rules<NetworkRule>, out: &mut ProposedGrants) {
    for rule in &network.allow {
        match rule {
            NetworkRule::Cidr { cidr } => out.left_out.push(format!(
                "network cidr {cidr:?}: cordon grants origins (scheme, host, port), not address ranges"
            )),
            NetworkRule::Host { host } => match origin_of(host) {
                Err(reason) => out.left_out.push(format!("network host {host:?}: {reason}")),
                Ok(origin) => {
                    let denied = network.deny.iter().any(|deny| match deny {
                        NetworkRule::Host { host: denied } => {
                            origin_of(denied).is_ok_and(|d| d == origin)
                        }
                        NetworkRule::Cidr { .. } => false,
                    });
                    if denied {
                        out.left_out
                            .push(format!("network host {host:?}: the policy also denies it"));
                    } else if !out.origins.contains(&origin) {
                        out.origins.push(origin);
                    }
                }
            },
        }
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

/// `fs://DIR`, `fs://DIR/`, `fs://DIR/**` or `fs://DIR/*` as the directory `DIR`; `None` for
/// anything with another glob, or not an `fs://` URI.
fn directory_of(uri: &str) -> Option<String> {
    let path = uri.strip_prefix("fs://")?;
    let path = path
        .strip_suffix("/**")
        .or_else(|| path.strip_suffix("/*"))
        .unwrap_or(path);
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    let clean = !path.is_empty()
        && !path.contains(['*', '?', '[', ']', '{', '}'])
        && !path.split('/').any(|part| part == "..");
    clean.then(|| path.to_string())
}

/// Whether path `inner` is `outer` or lies under it.
fn inside(inner: &str, outer: &str) -> bool {
    let outer = outer.trim_end_matches('/');
    let inner = inner.strip_prefix("fs://").unwrap_or(inner);
    inner == outer || outer.is_empty() || inner.starts_with(&format!("{outer}/"))
}

/// A network host as a cordon origin: `api.example.com` is `https://api.example.com`; a URL keeps
/// its scheme, host and port (and nothing after).
fn origin_of(host: &str) -> Result<String, String> {
    let host = host.trim();
    let (scheme, rest) = match host.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("https".to_string(), host),
    };
    if scheme != "https" && scheme != "http" {
        return Err(format!("scheme {scheme} is not HTTP"));
    }
    let authority = rest
        .split('/')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if authority.is_empty() {
        return Err("no host".into());
    }
    if authority.contains('*') {
        return Err("a wildcard host; cordon grants exact origins, so list each host".into());
    }
    if authority.contains('@') {
        return Err("credentials in a host".into());
    }
    let valid = authority
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    if !valid {
        return Err("not a host name".into());
    }
    Ok(format!("{scheme}://{authority}"))
}

/// A memory limit in cordon's form: a number is megabytes; `512Mi`, `1Gi`, `512M` are sizes.
fn memory_limit(value: &serde_json::Value) -> Result<String, String> {
    if let Some(megabytes) = value.as_u64().filter(|mb| *mb > 0) {
        return Ok(format!("{megabytes}MiB"));
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
    Ok(format!("{number}{unit}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_policy_allows_and_no_more() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("workspace")).unwrap();
        std::fs::create_dir_all(dir.path().join("shared/system")).unwrap();
        let policy = r#"
version: "1.0"
permissions:
  storage:
    allow:
      - uri: "fs://workspace/**"
        access: ["read", "write"]
      - uri: "fs://config/app.yaml"
        access: ["read"]
      - uri: "fs://shared"
        access: ["read"]
      - uri: "fs://workspace/*.log"
        access: ["read"]
    deny:
      - uri: "fs://shared/system/**"
        access: ["read"]
  network:
    allow:
      - host: "api.openai.com"
      - host: "https://rss.example.com/feed"
      - host: "*.internal.company.com"
      - cidr: "10.0.0.0/8"
  environment:
    allow:
      - key: "API_KEY"
  resources:
    memory: 512
    cpu: 50.0
"#;
        let proposed = propose(policy, dir.path()).unwrap();
        assert_eq!(
            proposed.dirs,
            vec![ProposedDir {
                host: dir.path().join("workspace"),
                guest: "/workspace".into(),
                read_write: true,
            }]
        );
        assert_eq!(
            proposed.origins,
            ["https://api.openai.com", "https://rss.example.com"]
        );
        assert_eq!(proposed.env, ["API_KEY"]);
        assert_eq!(proposed.memory.as_deref(), Some("512MiB"));
        let left_out = proposed.left_out.join("\n");
        for expected in [
            "config/app.yaml",
            "shared/system",
            "*.log",
            "wildcard",
            "10.0.0.0/8",
            "cpu",
        ] {
            assert!(left_out.contains(expected), "{expected} in:\n{left_out}");
        }
    }

    #[test]
    fn write_only_and_broken_policies_grant_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("out")).unwrap();
        let proposed = propose(
            "permissions:\n  storage:\n    allow:\n      - uri: \"fs://out\"\n        access: [\"write\"]\n",
            dir.path(),
        )
        .unwrap();
        assert!(proposed.is_empty(), "{proposed:?}");
        assert!(propose("permissions: [1, 2", dir.path()).is_err());
        assert_eq!(memory_limit(&serde_json::json!("1Gi")).unwrap(), "1GiB");
        assert!(origin_of("ftp://x").is_err());
        assert!(origin_of("user@host").is_err());
    }
}
