//! The audit log: one JSON line per call, appended and flushed as each call ends. It records who ran
//! (plugin id and sha256), what (tool, a sha256 of the arguments, never the arguments), what the
//! hooks decided, the outcome and duration, and the capabilities exercised by the tool and by the
//! hooks around it, each entry naming the plugin whose sandbox acted (and the hook stage): HTTP
//! requests (let through or refused; URLs without query strings) and paths opened (the guest's
//! path, the host path it maps to, the mode asked for, and whether the host opened or refused it).
//! A line lists at most 1,000 requests and 1,000 opens, with paths and URLs cut past 1 KiB; the
//! rest are counted. A session hook that ran gets a line of its own (`sessionHook`, its stage, decision
//! and effects, and the same capabilities). No secrets, ever.

use super::events::Event;
use crate::capabilities::grant::DirGrant;
use crate::registry::Registry;
use crate::report::json_lines::JsonLinesFile;
use crate::report::secrets::Secrets;
use crate::report::utc_time::UtcTime;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The open audit log file.
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<JsonLinesFile>,
}

impl AuditLog {
    /// Opens (creating) the log for appending; `secrets` masks every line.
    pub fn open(path: &Path, secrets: Secrets) -> std::io::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(JsonLinesFile::append_to(path, secrets)?),
        })
    }

    /// A line that is not a call's (a reload of the plugins).
    pub(crate) fn append_record(&self, line: &Value) {
        self.append(line);
    }

    fn append(&self, line: &Value) {
        let written = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .append(line);
        if let Err(err) = written {
            tracing::error!(path = %self.path.display(), "cannot write the audit log: {err}");
        }
    }
}

/// What has been seen of one call so far.
#[derive(Default)]
struct Pending {
    tool: String,
    arguments_sha256: String,
    hooks: Vec<Value>,
    /// Who approved or refused the call, when it needed approval.
    approval: Option<Value>,
    http: Vec<Value>,
    paths: Vec<Value>,
    /// Requests past [`MAX_ENTRIES_PER_LINE`] (or past a sandbox's own bound), counted not listed.
    http_omitted: u64,
    /// Opens past [`MAX_ENTRIES_PER_LINE`] (or past a sandbox's own bound), counted not listed.
    paths_omitted: u64,
}

impl Pending {
    /// The HTTP requests and opens seen, with the counts of those left out.
    fn capabilities(&self) -> Value {
        let mut capabilities = json!({ "http": self.http, "pathsOpened": self.paths });
        if self.paths_omitted > 0 {
            capabilities["pathsOpenedOmitted"] = json!(self.paths_omitted);
        }
        if self.http_omitted > 0 {
            capabilities["httpOmitted"] = json!(self.http_omitted);
        }
        capabilities
    }
}

/// Requests, and opens, listed per line; a tool that walks a large tree would otherwise write
/// megabyte lines.
const MAX_ENTRIES_PER_LINE: usize = 1_000;

/// Follows one batch's events and writes a line per finished call.
pub(crate) struct AuditRecorder {
    log: Arc<AuditLog>,
    registry: Arc<Registry>,
    calls: Mutex<HashMap<String, Pending>>,
}

impl AuditRecorder {
    pub fn new(log: Arc<AuditLog>, registry: Arc<Registry>) -> Self {
        Self {
            log,
            registry,
            calls: Mutex::default(),
        }
    }

    pub fn observe(&self, event: &Event) {
        let mut calls = self
            .calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let pending = calls.entry(event.tool_call_id().to_string()).or_default();
        match event {
            Event::ToolExecutionStart {
                tool_name,
                arguments,
                ..
            } => {
                pending.tool = tool_name.clone();
                pending.arguments_sha256 = hex::encode(Sha256::digest(arguments.to_string()));
            }
            Event::HookDecision {
                hook,
                stage,
                decision,
                ..
            } => {
                pending
                    .hooks
                    .push(json!({ "hook": hook, "stage": stage, "decision": decision }));
            }
            Event::HttpRequest {
                plugin,
                stage,
                method,
                url,
                allowed,
                ..
            } => {
                if pending.http.len() >= MAX_ENTRIES_PER_LINE {
                    pending.http_omitted += 1;
                    return;
                }
                let mut entry =
                    json!({ "method": method, "url": url, "allowed": allowed, "plugin": plugin });
                if let Some(stage) = stage {
                    entry["hook"] = json!(stage);
                }
                pending.http.push(entry);
            }
            Event::PathOpen {
                plugin,
                stage,
                path,
                host_path: real,
                mode,
                outcome,
                error,
                ..
            } => {
                if pending.paths.len() >= MAX_ENTRIES_PER_LINE {
                    pending.paths_omitted += 1;
                    return;
                }
                // Where an opened file really is; for a refused open, where the path points
                // (nowhere for one outside the grants, which never reached the file system).
                let outside = *error == Some(crate::sandbox::fs::gate::OUTSIDE_GRANTS);
                let host_path = real.clone().or_else(|| {
                    self.registry
                        .plugin(plugin)
                        .filter(|_| !outside)
                        .and_then(|plugin| host_path(&plugin.grant.dirs, path))
                });
                let mut entry = json!({ "path": path, "hostPath": host_path, "mode": mode, "outcome": outcome, "plugin": plugin });
                if let Some(stage) = stage {
                    entry["hook"] = json!(stage);
                }
                if let Some(error) = error {
                    entry["error"] = json!(error);
                }
                pending.paths.push(entry);
            }
            Event::Approval {
                asked_by,
                approved,
                decided_by,
                reason,
                ..
            } => {
                pending.approval = Some(json!({
                    "askedBy": asked_by,
                    "approved": approved,
                    "decidedBy": decided_by,
                    "reason": reason,
                }));
            }
            Event::SessionHook {
                call_id,
                stage,
                hook,
                decision,
                reason,
                effects,
                duration_ms,
            } => {
                let pending = calls.remove(call_id).unwrap_or_default();
                let plugin = self.registry.plugin(hook);
                self.log.append(&json!({
                    "time": UtcTime::now().rfc3339(),
                    "callId": call_id,
                    "sessionHook": hook,
                    "stage": stage,
                    "pluginSha256": plugin.map(|p| hex::encode(p.sha256)),
                    "decision": decision,
                    "reason": reason,
                    "effects": effects,
                    "durationMs": duration_ms,
                    "capabilities": pending.capabilities(),
                }));
            }
            Event::HookAnswered {
                call_id,
                hook,
                stage,
                tool_name,
                decision,
                reason,
                duration_ms,
            } => {
                let pending = calls.remove(call_id).unwrap_or_default();
                let plugin = self.registry.plugin(hook);
                self.log.append(&json!({
                    "time": UtcTime::now().rfc3339(),
                    "callId": call_id,
                    "hookAsked": hook,
                    "stage": stage,
                    "tool": tool_name,
                    "pluginSha256": plugin.map(|p| hex::encode(p.sha256)),
                    "decision": decision,
                    "reason": reason,
                    "durationMs": duration_ms,
                    "capabilities": pending.capabilities(),
                }));
            }
            Event::RecordsOmitted { omitted, .. } => {
                pending.http_omitted += omitted.http;
                pending.paths_omitted += omitted.paths;
            }
            Event::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                duration_ms,
                is_error,
                error_kind,
            } => {
                let pending = calls.remove(tool_call_id).unwrap_or_default();
                let plugin = self.registry.tool(tool_name).map(|(plugin, _)| plugin);
                let capabilities = pending.capabilities();
                self.log.append(&json!({
                    "time": UtcTime::now().rfc3339(),
                    "callId": tool_call_id,
                    "tool": tool_name,
                    "plugin": plugin.map(|p| p.id.to_string()),
                    "pluginSha256": plugin.map(|p| hex::encode(p.sha256)),
                    "argumentsSha256": pending.arguments_sha256,
                    "hooks": &pending.hooks,
                    "approval": &pending.approval,
                    "isError": is_error,
                    "errorKind": error_kind,
                    "durationMs": duration_ms,
                    "capabilities": capabilities,
                }));
            }
            Event::ToolExecutionUpdate { .. } | Event::ToolLog { .. } => {}
        }
    }
}

/// Where a guest path lies on the host: the granted directory it is under (the longest match) joined
/// with the rest of the path as written. Symlinks inside the grant are not followed.
fn host_path(dirs: &[DirGrant], guest_path: &str) -> Option<String> {
    dirs.iter()
        .filter_map(|dir| {
            let rest = guest_path.strip_prefix(dir.guest.trim_end_matches('/'))?;
            (rest.is_empty() || rest.starts_with('/')).then_some((dir, rest))
        })
        .max_by_key(|(dir, _)| dir.guest.len())
        .map(|(dir, rest)| format!("{}{rest}", dir.host.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_paths_follow_the_longest_grant_and_keep_the_rest_as_written() {
        let dir = |host: &str, guest: &str| DirGrant {
            host: host.into(),
            guest: guest.into(),
            access: crate::capabilities::grant::Access::ReadOnly,
        };
        let dirs = [dir("/srv/repo", "/repo"), dir("/srv/cache", "/repo/cache")];
        let cases = [
            ("/repo/a.txt", Some("/srv/repo/a.txt")),
            ("/repo/cache/b", Some("/srv/cache/b")),
            ("/repo", Some("/srv/repo")),
            ("/repo/../etc", Some("/srv/repo/../etc")),
            ("/repository/x", None),
            ("/etc/passwd", None),
        ];
        for (guest, host) in cases {
            assert_eq!(host_path(&dirs, guest).as_deref(), host, "{guest}");
        }
    }
}
