//! `cordon.lock`: the plugins an operator approved, each with its sha256 and the grants it was
//! approved with: directories, env vars (and a digest of each fixed value), HTTP origins (with a
//! digest of each secret header's template, so pointing a header at another secret is a change),
//! the hook grant (which tools' calls its hook may see and change), a digest of its settings, and
//! its limits; and what it declared (declarations.rs: its tools and their schemas, its hook). The
//! lock also records the deployment around the plugins: where the audit log goes and the order of
//! hooks. When loading is locked, a plugin that is new, changed, whose grants changed or widened,
//! or that declares something else refuses to load, and the message says what changed; an
//! approved plugin that is missing or fails to load, or a changed deployment, stops cordon from
//! starting (a deleted guard hook must not mean an unguarded host). Secrets themselves are never
//! written: a digest is 64 bits of a SHA-256.

pub use super::lock_refusal::{DeploymentChange, DeploymentRefusal, LockRefusal, MissingPlugin};
use crate::capabilities::grant::{Access, PluginGrant};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A problem reading or writing the lockfile.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The lockfile could not be read (it may not exist yet).
    #[error("cannot read {path} (run `cordon lock` to create it)")]
    Read {
        /// The lockfile's path.
        path: PathBuf,
        /// Why reading it failed.
        source: std::io::Error,
    },
    /// The lockfile is not TOML of the expected shape (an unknown key included).
    #[error("{path} is not a valid cordon.lock: {message}")]
    Syntax {
        /// The lockfile's path.
        path: PathBuf,
        /// The TOML parser's message.
        message: String,
    },
    /// The lockfile could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The lockfile's path.
        path: PathBuf,
        /// Why writing it failed.
        source: std::io::Error,
    },
}

/// One approved plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedPlugin {
    /// The sha256 of the approved component, in lowercase hex.
    pub sha256: String,
    /// Every capability it was granted, one normalized line each.
    pub grants: Vec<String>,
    /// What it declared (declarations.rs); absent in lockfiles written before cordon pinned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declares: Option<Vec<String>>,
}

/// Where an installed plugin came from (`cordon add`), so `cordon sync` can install it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSource {
    /// `oci://host/repository@sha256:…` (pinned by the manifest's digest), an https:// URL, or a
    /// local path.
    pub source: String,
    /// The component's sha256.
    pub sha256: String,
    /// Who signed it, as `cordon add` verified it against `[trust]` (`key sha256:…`, the key's
    /// fingerprint); absent for an unsigned plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
}

/// The approved plugins by id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lockfile {
    /// The deployment's settings that decide what watches the plugins ([`deployment`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<Vec<String>>,
    /// Every approved plugin, by id.
    #[serde(default)]
    pub plugins: BTreeMap<String, LockedPlugin>,
    /// Where `cordon add` installed plugins from, by id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sources: BTreeMap<String, PluginSource>,
}

const HEADER: &str = "# Written by `cordon lock`: the plugins approved to run, with their sha256 and the\n# grants they were approved with. `cordon --locked` refuses anything new, changed or widened.\n\n";

impl Lockfile {
    /// Reads and parses the lockfile at `path`.
    pub fn load(path: &Path) -> Result<Self, LockError> {
        let text = std::fs::read_to_string(path).map_err(|source| LockError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        toml::from_str(&text).map_err(|err| LockError::Syntax {
            path: path.to_path_buf(),
            message: err.to_string(),
        })
    }

    /// Writes the lockfile atomically.
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        let write_error = |source| LockError::Write {
            path: path.to_path_buf(),
            source,
        };
        let text =
            toml::to_string_pretty(self).map_err(|err| write_error(std::io::Error::other(err)))?;
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(write_error)?;
        file.write_all(HEADER.as_bytes())
            .and_then(|()| file.write_all(text.as_bytes()))
            .map_err(write_error)?;
        file.persist(path).map_err(|err| write_error(err.error))?;
        Ok(())
    }

    /// Records plugin `id` as approved with this sha256, grant and declarations, replacing any
    /// earlier entry for it.
    pub fn approve(
        &mut self,
        id: &str,
        sha256: &[u8; 32],
        grant: &PluginGrant,
        declarations: Vec<String>,
    ) {
        self.plugins.insert(
            id.to_string(),
            LockedPlugin {
                sha256: hex::encode(sha256),
                grants: capabilities(grant),
                declares: Some(declarations),
            },
        );
    }

    /// Whether what plugin `id` declared now is what it declared when it was approved.
    pub fn check_declarations(&self, id: &str, declarations: &[String]) -> Result<(), LockRefusal> {
        let locked = self.plugins.get(id).ok_or(LockRefusal::NotLocked)?;
        let approved = locked
            .declares
            .as_ref()
            .ok_or(LockRefusal::DeclarationsNotRecorded)?;
        let added: Vec<String> = declarations
            .iter()
            .filter(|line| !approved.contains(line))
            .cloned()
            .collect();
        let removed: Vec<String> = approved
            .iter()
            .filter(|line| !declarations.contains(line))
            .cloned()
            .collect();
        if added.is_empty() && removed.is_empty() {
            return Ok(());
        }
        Err(LockRefusal::DeclarationsChanged { added, removed })
    }

    /// Records the deployment's settings ([`deployment`]).
    pub fn approve_deployment(&mut self, lines: Vec<String>) {
        self.deployment = Some(lines);
    }

    /// What keeps this lock's deployment from starting as it is now: a deployment setting that
    /// changed, or an approved plugin that did not load (`loaded` are the ids that did; `refused`
    /// says why others were refused, by id).
    pub fn check_deployment(
        &self,
        lines: &[String],
        loaded: &[&str],
        refused: &BTreeMap<String, String>,
    ) -> Result<(), DeploymentRefusal> {
        let setting = match &self.deployment {
            None => Some(DeploymentChange::NotRecorded),
            Some(approved) if approved.as_slice() != lines => Some(DeploymentChange::Changed {
                approved: approved.clone(),
                now: lines.to_vec(),
            }),
            Some(_) => None,
        };
        let missing: Vec<MissingPlugin> = self
            .plugins
            .keys()
            .filter(|id| !loaded.contains(&id.as_str()))
            .map(|id| MissingPlugin {
                id: id.clone(),
                refused: refused.get(id).cloned(),
            })
            .collect();
        if setting.is_none() && missing.is_empty() {
            return Ok(());
        }
        Err(DeploymentRefusal { setting, missing })
    }

    /// Whether plugin `id` with this content and these grants was approved; otherwise what changed.
    pub fn check(
        &self,
        id: &str,
        sha256: &[u8; 32],
        grant: &PluginGrant,
    ) -> Result<(), LockRefusal> {
        let locked = self.plugins.get(id).ok_or(LockRefusal::NotLocked)?;
        let actual = hex::encode(sha256);
        if locked.sha256 != actual {
            return Err(LockRefusal::FileChanged {
                locked: locked.sha256.clone(),
                actual,
            });
        }
        let current = capabilities(grant);
        // A hook is a power over other plugins' calls and, for a guard or a redactor, the
        // protection the operator approved: a hook grant removed or narrowed is a change too.
        let hook_lines = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .filter(|cap| cap.starts_with("hook "))
                .cloned()
                .collect()
        };
        let (approved, now) = (hook_lines(&locked.grants), hook_lines(&current));
        if approved != now {
            return Err(LockRefusal::HookGrantChanged { approved, now });
        }
        let added: Vec<String> = current
            .into_iter()
            .filter(|cap| !locked.grants.contains(cap))
            .collect();
        if !added.is_empty() {
            return Err(LockRefusal::GrantsWidened { added });
        }
        Ok(())
    }
}

/// A grant as normalized, comparable lines ("dir /data ro from /srv/data", "http https://x:443 ...").
pub fn capabilities(grant: &PluginGrant) -> Vec<String> {
    let mut lines = Vec::new();
    for dir in &grant.dirs {
        let mode = match dir.access {
            Access::ReadOnly => "ro",
            Access::ReadWrite => "rw",
        };
        lines.push(format!(
            "dir {} {mode} from {}",
            dir.guest,
            dir.host.display()
        ));
    }
    for name in &grant.env {
        lines.push(format!("env {name}"));
    }
    for (name, value) in &grant.env_set {
        lines.push(format!("env_set {name}={}", digest(value.as_bytes())));
    }
    for http in grant.http.iter() {
        let methods = http
            .methods
            .as_ref()
            .map_or("any".to_string(), |m| m.join(","));
        let headers: Vec<String> = http
            .headers
            .iter()
            .map(|h| format!("{}({})", h.name, digest(h.template.as_bytes())))
            .collect();
        lines.push(format!(
            "http {} methods={methods} path={} private={} headers={}",
            http.origin(),
            http.path_prefix.as_deref().unwrap_or("/"),
            http.private,
            if headers.is_empty() {
                "none".to_string()
            } else {
                headers.join(",")
            }
        ));
    }
    // A secret's template, not its value: rotating the value is not a new approval.
    for secret in grant.config_secrets.iter() {
        lines.push(format!(
            "secret {}({})",
            secret.key,
            digest(secret.template.as_bytes())
        ));
    }
    // No settings at all and an empty settings table are the same approval.
    let settings = match &grant.settings {
        serde_json::Value::Null => "{}".to_string(),
        settings => settings.to_string(),
    };
    lines.push(format!("settings {}", digest(settings.as_bytes())));
    lines.push(limits_line(&grant.limits));
    if let Some(hook) = &grant.hook {
        if hook.tools.is_empty() {
            lines.push("hook *".to_string());
        }
        for glob in &hook.tools {
            lines.push(format!("hook {glob}"));
        }
        // Not a glob (no glob has parentheses): a change of what the hook reviews.
        if hook.unreviewed_progress {
            lines.push("hook (progress unreviewed)".to_string());
        }
    }
    lines.sort();
    lines
}

/// The deployment's settings a lock pins: where the audit log goes (its directory resolved, so the
/// same file reached from another working directory is the same), which hooks run first, and the
/// approval policy when there is one (`approval`, the config's line for it), so a locked start
/// cannot drop a question the operator approved the deployment with.
pub fn deployment(
    audit_path: Option<&Path>,
    hook_order: &[String],
    approval: Option<String>,
) -> Vec<String> {
    let resolved = |path: &Path| -> PathBuf {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        match (
            dir.unwrap_or(Path::new(".")).canonicalize(),
            path.file_name(),
        ) {
            (Ok(dir), Some(name)) => dir.join(name),
            _ => path.to_path_buf(),
        }
    };
    let mut lines = vec![
        match audit_path {
            Some(path) => format!("audit {}", resolved(path).display()),
            None => "audit none".to_string(),
        },
        format!("hooks order={}", hook_order.join(",")),
    ];
    lines.extend(approval);
    lines
}

/// `sha256:` and the first 16 hex digits of the SHA-256 of `bytes`.
pub(crate) fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("sha256:{}", &hex::encode(Sha256::digest(bytes))[..16])
}

/// Every limit of a grant, in one comparable line.
fn limits_line(limits: &crate::capabilities::limits::Limits) -> String {
    format!(
        "limits timeout={}ms memory={} fuel={} output={} stdio={} http_timeout={}ms http_connect_timeout={}ms http_response={} http_requests={} http_connections={} disk_write={} files_created={}",
        limits.timeout.as_millis(),
        limits.memory_bytes,
        limits
            .fuel
            .map_or("none".to_string(), |fuel| fuel.to_string()),
        limits.output_bytes,
        limits.stdio_bytes,
        limits.http.total_timeout.as_millis(),
        limits.http.connect_timeout.as_millis(),
        limits.http.max_response_bytes,
        limits.http.max_concurrent,
        limits.http.max_open,
        limits.disk_write_bytes,
        limits.files_created,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::grant::DirGrant;

    fn grant(dirs: &[(&str, Access)]) -> PluginGrant {
        PluginGrant {
            dirs: dirs
                .iter()
                .map(|(guest, access)| DirGrant {
                    host: "/srv".into(),
                    guest: guest.to_string(),
                    access: *access,
                })
                .collect(),
            ..PluginGrant::default()
        }
    }

    #[test]
    fn new_changed_and_widened_plugins_are_refused() {
        let mut lock = Lockfile::default();
        let approved = grant(&[("/data", Access::ReadOnly)]);
        lock.approve("fs", &[1; 32], &approved, vec![]);
        assert_eq!(lock.check("fs", &[1; 32], &approved), Ok(()));
        assert_eq!(
            lock.check("fs", &[1; 32], &PluginGrant::default()),
            Ok(()),
            "narrower grants are fine"
        );
        assert!(
            lock.check("other", &[1; 32], &approved)
                .unwrap_err()
                .to_string()
                .contains("not in cordon.lock")
        );
        let changed = lock
            .check("fs", &[2; 32], &approved)
            .unwrap_err()
            .to_string();
        assert!(
            changed.contains(&hex::encode([1; 32])) && changed.contains(&hex::encode([2; 32])),
            "{changed}"
        );
        let widened = lock
            .check("fs", &[1; 32], &grant(&[("/data", Access::ReadWrite)]))
            .unwrap_err()
            .to_string();
        assert!(
            widened.contains("added: dir /data rw from /srv"),
            "{widened}"
        );
    }

    #[test]
    fn a_hook_grant_added_widened_narrowed_or_removed_needs_approval() {
        use crate::capabilities::grant::HookGrant;
        let hooked = |tools: &[&str]| PluginGrant {
            hook: Some(HookGrant {
                tools: tools.iter().map(|t| t.to_string()).collect(),
                unreviewed_progress: false,
            }),
            ..PluginGrant::default()
        };
        let mut lock = Lockfile::default();
        lock.approve("guard", &[1; 32], &PluginGrant::default(), vec![]);
        let new = lock
            .check("guard", &[1; 32], &hooked(&[]))
            .unwrap_err()
            .to_string();
        assert!(new.contains("approved no hook, now hook *"), "{new}");
        lock.approve("guard", &[1; 32], &hooked(&["write_*"]), vec![]);
        assert_eq!(lock.check("guard", &[1; 32], &hooked(&["write_*"])), Ok(()));
        let wider = lock.check("guard", &[1; 32], &hooked(&["write_*", "read_*"]));
        assert!(
            wider
                .unwrap_err()
                .to_string()
                .contains("now hook read_*, hook write_*")
        );
        assert!(lock.check("guard", &[1; 32], &hooked(&[])).is_err());
        lock.approve("guard", &[1; 32], &hooked(&[]), vec![]);
        let narrowed = lock.check("guard", &[1; 32], &hooked(&["edit_file"]));
        assert!(
            narrowed
                .unwrap_err()
                .to_string()
                .contains("approved hook *, now hook edit_file"),
            "a narrowed hook stops protecting calls it was approved to see"
        );
        let removed = lock.check("guard", &[1; 32], &PluginGrant::default());
        assert!(
            removed
                .unwrap_err()
                .to_string()
                .contains("approved hook *, now no hook")
        );
    }

    #[test]
    fn other_declarations_are_refused_naming_what_changed() {
        let mut lock = Lockfile::default();
        let approved = vec!["tool read parallel title=a description=b schema=c".to_string()];
        lock.approve("fs", &[1; 32], &PluginGrant::default(), approved.clone());
        assert_eq!(lock.check_declarations("fs", &approved), Ok(()));
        let now = vec![
            "tool read parallel title=a description=b schema=c".to_string(),
            "tool write parallel title=a description=b schema=d".to_string(),
        ];
        let err = lock.check_declarations("fs", &now).unwrap_err().to_string();
        assert!(err.contains("declared now: tool write"), "{err}");
        lock.plugins.get_mut("fs").unwrap().declares = None;
        let old = lock
            .check_declarations("fs", &approved)
            .unwrap_err()
            .to_string();
        assert!(old.contains("predates"), "{old}");
    }

    #[test]
    fn a_missing_plugin_or_another_deployment_stops_a_locked_start() {
        let mut lock = Lockfile::default();
        lock.approve("fs", &[1; 32], &PluginGrant::default(), vec![]);
        lock.approve("guard", &[1; 32], &PluginGrant::default(), vec![]);
        let audited = deployment(Some(Path::new("audit.jsonl")), &[], None);
        lock.approve_deployment(audited.clone());
        let none = BTreeMap::new();
        assert_eq!(
            lock.check_deployment(&audited, &["fs", "guard"], &none),
            Ok(())
        );
        let missing = lock
            .check_deployment(&audited, &["fs"], &none)
            .unwrap_err()
            .to_string();
        assert!(
            missing.contains("did not load: guard (no guard.wasm in the plugins directory)"),
            "{missing}"
        );
        let unaudited = lock
            .check_deployment(&deployment(None, &[], None), &["fs", "guard"], &none)
            .unwrap_err()
            .to_string();
        assert!(
            unaudited.contains("audit.jsonl; hooks order=`, now `audit none"),
            "{unaudited}"
        );
    }

    #[test]
    fn round_trips_through_the_file() {
        let mut lock = Lockfile::default();
        lock.approve(
            "fs",
            &[7; 32],
            &grant(&[("/a", Access::ReadOnly), ("/b", Access::ReadWrite)]),
            vec!["tool read parallel title=t description=d schema=s".to_string()],
        );
        lock.approve_deployment(deployment(None, &["guard".to_string()], None));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cordon.lock");
        lock.write(&path).unwrap();
        assert_eq!(Lockfile::load(&path).unwrap(), lock);
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .starts_with("# Written by `cordon lock`")
        );
    }
}
