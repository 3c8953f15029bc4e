//! Live plugins for `cordon serve` and `cordon chat`: the plugins directory, the config and the lockfile are watched
//! (`cordon_runtime::watch`; SIGHUP asks too), and a settled change is loaded in the background
//! exactly as at start (every check: schemas, grants, hook grants, the lock under `--locked`), then
//! swapped in whole: a call runs on the old set or on the new one, never both, and nothing is
//! compiled on a request's path. A load that fails leaves the running set serving. Each reload is a
//! log line, an audit-log record and a `cordon_reloads_total` count, and the clients watching the
//! tool list are told.

use super::trust_policy::TrustPolicy;
use cordon_runtime::capabilities::lock::{Lockfile, capabilities};
use cordon_runtime::config::Config;
use cordon_runtime::pipeline::ToolChanges;
use cordon_runtime::watch::{ChangeWatcher, POLL_INTERVAL, WatchedFiles};
use cordon_runtime::{CompileCache, Pipeline, RuntimeBuilder};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything needed to load the pipeline again the way the command line asked for it.
#[derive(Clone)]
pub struct PipelineLoader {
    pub plugins: PathBuf,
    /// `--config`, else `cordon.toml` when it exists.
    pub config: Option<PathBuf>,
    /// `--locked` (the config's `[host] locked` is read at each load).
    pub locked: bool,
    pub lock_path: PathBuf,
    pub no_cache: bool,
    pub tools: Option<Vec<String>>,
    /// `--allow-missing-hooks`, or a command that runs nothing (`list`, `describe`), which
    /// shows a refused hook rather than refusing to start.
    pub allow_missing_hooks: bool,
    /// Files of the host's own beside the config's (a chat's transcripts): no grant of any
    /// config loaded, at start or on a reload, may reach them.
    pub host_files: Vec<(&'static str, PathBuf)>,
}

impl PipelineLoader {
    /// Every part of the config as it is on disk now.
    pub fn config_file(&self) -> anyhow::Result<super::config_file::ConfigFile> {
        Ok(match &self.config {
            Some(path) => super::config_file::load(path)?,
            None if PathBuf::from("cordon.toml").is_file() => {
                super::config_file::load("cordon.toml".as_ref())?
            }
            None => super::config_file::ConfigFile {
                runtime: super::host_secrets::empty_config(),
                session: Default::default(),
                trust: Default::default(),
            },
        })
    }

    /// The lock the load must satisfy, when loading is locked.
    pub fn lock(&self, config: &Config) -> anyhow::Result<Option<Lockfile>> {
        use anyhow::Context as _;
        if !(self.locked || config.locked) {
            return Ok(None);
        }
        Ok(Some(Lockfile::load(&self.lock_path).with_context(
            || "loading is locked (--locked or [host] locked = true)",
        )?))
    }

    /// A pipeline over `config`, checked against `lock`.
    pub async fn build(
        &self,
        mut config: Config,
        trust: &TrustPolicy,
        lock: Option<Lockfile>,
    ) -> anyhow::Result<Pipeline> {
        config.allow_missing_hooks |= self.allow_missing_hooks;
        let cache = if self.no_cache {
            CompileCache::disabled()
        } else {
            CompileCache::default_location()
        };
        let mut builder = RuntimeBuilder::new(&self.plugins)
            .config(config)
            .cache(cache)
            .lock_path(self.lock_path.clone());
        if let Some(lock) = lock {
            builder = builder.locked(lock);
        }
        if let Some(tools) = &self.tools {
            builder = builder.active_tools(tools.clone());
        }
        if let Some(admit) = super::signatures::admission(trust, &self.lock_path)? {
            builder = builder.admission(move |id, sha256| admit(id, sha256));
        }
        Ok(builder.build().await?)
    }

    /// Refuses `config` when a read-write grant of it reaches one of the host's own files.
    pub fn check_host_files(&self, config: &Config) -> anyhow::Result<()> {
        let files: Vec<(&str, &std::path::Path)> = self
            .host_files
            .iter()
            .map(|(what, path)| (*what, path.as_path()))
            .collect();
        Ok(config.check_own_files(&files)?)
    }

    /// Reads the config and the lock from disk and builds from them.
    pub async fn load(&self) -> anyhow::Result<Pipeline> {
        let file = self.config_file()?;
        self.check_host_files(&file.runtime)?;
        let lock = self.lock(&file.runtime)?;
        self.build(file.runtime, &file.trust, lock).await
    }

    /// Starts watching: what is on disk now counts as loaded. Called before the first load, so a
    /// change made while that load runs (or before the reload task is first scheduled) is still
    /// seen and loaded, never mistaken for what the running set came from.
    pub fn watch_from_now(&self) -> ChangeWatcher {
        ChangeWatcher::new(self.watched())
    }

    fn watched(&self) -> WatchedFiles {
        let config = self
            .config
            .clone()
            .unwrap_or_else(|| PathBuf::from("cordon.toml"));
        let mut files = vec![config, self.lock_path.clone()];
        // The trusted keys as the config names them at the start: a key file replaced or
        // removed is a change like the config's own.
        if let Ok(file) = self.config_file() {
            files.extend(file.trust.key_files().map(|(_, path)| path.to_path_buf()));
        }
        WatchedFiles {
            plugins_dir: self.plugins.clone(),
            files,
        }
    }

    /// The running plugins `[trust]` on disk now refuses (a key revoked), in words; `None` when
    /// it refuses none or cannot be read (then nothing is decided on it).
    pub fn running_plugins_refused_by_trust(&self, running: &Pipeline) -> Option<String> {
        let file = self.config_file().ok()?;
        let admit = super::signatures::admission(&file.trust, &self.lock_path).ok()??;
        let refused: Vec<String> = running
            .registry()
            .plugins()
            .iter()
            .filter_map(|plugin| {
                admit(&plugin.id, &plugin.sha256)
                    .err()
                    .map(|reason| format!("{}: {reason}", plugin.id))
            })
            .collect();
        (!refused.is_empty()).then(|| refused.join("; "))
    }
}

/// What a reload swaps a new pipeline into: the MCP server's served set, or a chat session's.
pub trait ReloadTarget: Send + Sync {
    /// The pipeline serving now.
    fn current(&self) -> Pipeline;
    /// Serves `pipeline` from now on (telling whoever watches); what changed for tool users.
    fn replace(&self, pipeline: Pipeline) -> impl Future<Output = ToolChanges> + Send;
    /// Counts a reload, applied or refused (the MCP server's `/metrics`).
    fn count(&self, _applied: bool) {}
}

impl ReloadTarget for cordon_mcp::McpServer {
    fn current(&self) -> Pipeline {
        self.pipeline()
    }

    fn replace(&self, pipeline: Pipeline) -> impl Future<Output = ToolChanges> + Send {
        self.replace_pipeline(pipeline)
    }

    fn count(&self, applied: bool) {
        self.count_reload(applied);
    }
}

/// A chat session's pipeline: the agent takes the newest at the start of each step.
pub struct SessionPipeline(pub tokio::sync::watch::Sender<Pipeline>);

impl ReloadTarget for SessionPipeline {
    fn current(&self) -> Pipeline {
        self.0.borrow().clone()
    }

    fn replace(&self, pipeline: Pipeline) -> impl Future<Output = ToolChanges> + Send {
        let changes = ToolChanges::between(&self.0.borrow(), &pipeline);
        self.0.send_replace(pipeline);
        std::future::ready(changes)
    }
}

/// Reloads until the process ends: on every settled change `watcher` sees (when there is one; see
/// [`PipelineLoader::watch_from_now`]), and on SIGHUP either way.
pub async fn reload_while_running(
    loader: PipelineLoader,
    target: impl ReloadTarget,
    mut watcher: Option<ChangeWatcher>,
) {
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(signal) => Some(signal),
        Err(err) => {
            tracing::warn!("SIGHUP will not reload: {err}");
            None
        }
    };
    if watcher.is_none() && hangup.is_none() {
        return;
    }
    loop {
        let asked = tokio::select! {
            () = tokio::time::sleep(POLL_INTERVAL), if watcher.is_some() => false,
            Some(()) = async {
                match hangup.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            } => true,
        };
        let cause = if asked { "SIGHUP" } else { "a change on disk" };
        if let Some(watcher) = watcher.as_mut() {
            let snapshot = if asked {
                Some(watcher.now())
            } else {
                watcher.look()
            };
            let Some(snapshot) = snapshot else {
                continue;
            };
            watcher.loaded(snapshot);
        }
        reload(&loader, &target, cause).await;
    }
}

/// One reload: load in full, then swap, or keep the running set and say why.
pub async fn reload(loader: &PipelineLoader, target: &impl ReloadTarget, cause: &str) {
    let before = target.current();
    let loaded = loader.load().await.and_then(|pipeline| {
        hooks_keep_watching(&before, &pipeline)?;
        Ok(pipeline)
    });
    match loaded {
        Ok(pipeline) => {
            let plugins = plugin_changes(&before, &pipeline);
            let tools = target.replace(pipeline.clone()).await;
            target.count(true);
            let summary = summary_line(&plugins, &tools);
            tracing::info!(cause, "reloaded the plugins: {summary}");
            let mut record = json!({
                "event": "reload",
                "cause": cause,
                "outcome": "applied",
                "tools": {"added": tools.added, "removed": tools.removed, "changed": tools.changed},
            });
            for (key, value) in plugins {
                record[key] = value;
            }
            pipeline.record_in_audit_log(record);
        }
        Err(err) => {
            target.count(false);
            let reason = format!("{err:#}");
            // A failed load must not keep serving what [trust] now refuses (a revoked key):
            // then nothing is served until a load succeeds.
            if let Some(refused) = loader.running_plugins_refused_by_trust(&before)
                && let Ok(empty) = RuntimeBuilder::without_directory()
                    .config(super::host_secrets::empty_config())
                    .build()
                    .await
            {
                target.replace(empty).await;
                tracing::error!(
                    cause,
                    "reload refused ({reason}), and [trust] now refuses running plugins ({refused}): serving no plugins until a load succeeds"
                );
                before.record_in_audit_log(json!({
                    "event": "reload",
                    "cause": cause,
                    "outcome": "withdrawn",
                    "reason": format!("{reason}; [trust] refuses {refused}"),
                }));
                return;
            }
            tracing::error!(
                cause,
                "reload refused, the running plugins keep serving: {reason}"
            );
            before.record_in_audit_log(json!({
                "event": "reload",
                "cause": cause,
                "outcome": "refused",
                "reason": reason,
            }));
        }
    }
}

/// Where a hook runs: `before`, `after` and the session stages it is granted.
fn watched_points(plugin: &cordon_runtime::Plugin) -> std::collections::BTreeSet<&'static str> {
    cordon_runtime::pipeline::hook_questions::stages_of(plugin)
        .into_iter()
        .collect()
}

/// Refuses a reload in which a granted hook, its grant unchanged, would watch less than it does
/// (its file replaced by one that declares fewer stages, or no hook): what it guards would run
/// unguarded from then on, with nothing but a log line to say so. When the operator changed the
/// grant, the reload applies and a warning says what the hook no longer watches.
fn hooks_keep_watching(before: &Pipeline, after: &Pipeline) -> anyhow::Result<()> {
    for old in before.hooks() {
        let now = after.hooks().iter().find(|plugin| plugin.id == old.id);
        let watched_now = now.map(|plugin| watched_points(plugin)).unwrap_or_default();
        let lost: Vec<&str> = watched_points(old)
            .difference(&watched_now)
            .copied()
            .collect();
        if lost.is_empty() {
            continue;
        }
        let grant_changed = now.is_none_or(|plugin| plugin.grant.hook != old.grant.hook);
        if grant_changed {
            tracing::warn!(
                hook = %old.id,
                "after this reload hook `{}` no longer watches {} (its grant in cordon.toml changed)",
                old.id,
                lost.join(", ")
            );
            continue;
        }
        anyhow::bail!(
            "hook `{}` would no longer watch {}: its plugin file changed and declares less; restore it, or change its grant in cordon.toml if that is what you mean",
            old.id,
            lost.join(", ")
        );
    }
    Ok(())
}

/// The plugins added, replaced (another file), removed and refused, with their digests.
fn plugin_changes(before: &Pipeline, after: &Pipeline) -> Vec<(&'static str, Value)> {
    let digests = |pipeline: &Pipeline| -> BTreeMap<String, String> {
        pipeline
            .registry()
            .plugins()
            .iter()
            .map(|plugin| (plugin.id.to_string(), hex::encode(plugin.sha256)))
            .collect()
    };
    let (old, new) = (digests(before), digests(after));
    let added: Vec<Value> = new
        .iter()
        .filter(|(id, _)| !old.contains_key(*id))
        .map(|(id, sha256)| json!({"plugin": id, "sha256": sha256}))
        .collect();
    let replaced: Vec<Value> = new
        .iter()
        .filter_map(|(id, sha256)| {
            let previous = old.get(id)?;
            (previous != sha256)
                .then(|| json!({"plugin": id, "sha256": sha256, "previous": previous}))
        })
        .collect();
    let removed: Vec<Value> = old
        .iter()
        .filter(|(id, _)| !new.contains_key(*id))
        .map(|(id, sha256)| json!({"plugin": id, "sha256": sha256}))
        .collect();
    let regranted: Vec<Value> = after
        .registry()
        .plugins()
        .iter()
        .filter_map(|plugin| {
            let previous = before.registry().plugin(&plugin.id)?;
            if previous.sha256 != plugin.sha256 {
                return None;
            }
            let (was, now) = (capabilities(&previous.grant), capabilities(&plugin.grant));
            let granted: Vec<&String> = now.iter().filter(|line| !was.contains(line)).collect();
            let withdrawn: Vec<&String> = was.iter().filter(|line| !now.contains(line)).collect();
            (!granted.is_empty() || !withdrawn.is_empty()).then(|| {
                json!({
                    "plugin": plugin.id.to_string(),
                    "sha256": hex::encode(plugin.sha256),
                    "granted": granted,
                    "withdrawn": withdrawn,
                })
            })
        })
        .collect();
    let refused: Vec<Value> = after
        .registry()
        .rejected()
        .iter()
        .map(|rejected| json!({"file": rejected.file, "reason": rejected.reason}))
        .collect();
    vec![
        ("added", Value::Array(added)),
        ("replaced", Value::Array(replaced)),
        ("removed", Value::Array(removed)),
        ("regranted", Value::Array(regranted)),
        ("refused", Value::Array(refused)),
    ]
}

/// `added a (sha 1a2b…), replaced b, removed c; refused d.wasm: …; tools +x -y ~z`.
fn summary_line(plugins: &[(&'static str, Value)], tools: &ToolChanges) -> String {
    let mut parts = Vec::new();
    for (key, entries) in plugins {
        let Some(entries) = entries.as_array().filter(|entries| !entries.is_empty()) else {
            continue;
        };
        let named: Vec<String> = entries
            .iter()
            .map(
                |entry| match (entry["plugin"].as_str(), entry["file"].as_str()) {
                    (Some(plugin), _) if entry.get("granted").is_some() => {
                        let lines = |key: &str, sign: char| -> Vec<String> {
                            entry[key]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .filter_map(Value::as_str)
                                .map(|line| format!("{sign}{line}"))
                                .collect()
                        };
                        let mut changes = lines("granted", '+');
                        changes.extend(lines("withdrawn", '-'));
                        format!("{plugin} ({})", changes.join("; "))
                    }
                    (Some(plugin), _) => format!(
                        "{plugin} (sha256 {})",
                        entry["sha256"]
                            .as_str()
                            .unwrap_or_default()
                            .get(..12)
                            .unwrap_or("")
                    ),
                    (None, Some(file)) => {
                        format!("{file}: {}", entry["reason"].as_str().unwrap_or(""))
                    }
                    _ => String::new(),
                },
            )
            .collect();
        parts.push(format!("{key} {}", named.join(", ")));
    }
    if !tools.is_empty() {
        parts.push(format!("tools {}", tools.summary()));
    }
    if parts.is_empty() {
        "nothing changed".into()
    } else {
        parts.join("; ")
    }
}
/// Stops the reload task when dropped: the reloads end with the server or the conversation.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
