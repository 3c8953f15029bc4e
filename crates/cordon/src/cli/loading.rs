//! How a command line loads what it runs: the config, the lock, the transcripts no grant may
//! reach, and the pipeline (again and again, for live reloads); where it installs plugins and
//! keeps its lock.

use super::{Cli, Command, install, live_reload};
use anyhow::Context as _;
use cordon_agent::settings::{AgentSettings, ModelSettings};
use cordon_runtime::CompileCache;
use cordon_runtime::capabilities::lock::Lockfile;
use cordon_runtime::config::Config;
use cordon_runtime::pipeline::Pipeline;
use std::path::PathBuf;

/// What a command that runs tools starts from.
pub(super) struct Loaded {
    pub pipeline: Pipeline,
    pub model: ModelSettings,
    pub agent: AgentSettings,
    /// Watching plugins/, the config and the lock from before the first load (live front ends).
    pub watcher: Option<cordon_runtime::watch::ChangeWatcher>,
    /// `[trust]`, for what `cordon list` shows of who signed each plugin.
    pub trust: super::trust_policy::TrustPolicy,
}

impl Cli {
    /// Loads the config, the lock (when loading is locked) and the pipeline, after checking
    /// that no grant reaches the session's transcripts; with `watch`, changes are watched from
    /// before the first load, so nothing changed from here on goes unloaded.
    pub(super) async fn load(&self, watch: bool) -> anyhow::Result<Loaded> {
        let file = self.pipeline_loader().config_file()?;
        let config = file.runtime;
        let lock = if self.locked || config.locked {
            let path = self.lock_path();
            Some(
                Lockfile::load(&path)
                    .with_context(|| "loading is locked (--locked or [host] locked = true)")?,
            )
        } else {
            None
        };
        // Transcripts are the host's own files, like the config, lock and audit log: a plugin
        // that could rewrite one would write the next session's conversation.
        self.pipeline_loader().check_host_files(&config)?;
        let model = file.session.model;
        let agent = file.session.agent;
        let watcher = watch.then(|| self.pipeline_loader().watch_from_now());
        let pipeline = self.load_pipeline(config, &file.trust, lock).await?;
        Ok(Loaded {
            pipeline,
            model,
            agent,
            watcher,
            trust: file.trust,
        })
    }

    pub(super) fn install_paths(&self) -> install::InstallPaths {
        install::InstallPaths {
            plugins: self.plugins.clone(),
            config: self
                .config
                .clone()
                .unwrap_or_else(|| PathBuf::from("cordon.toml")),
            lock: self.lock_path(),
            cache: if self.no_cache {
                CompileCache::disabled()
            } else {
                CompileCache::default_location()
            },
        }
    }

    /// `--lock-file`, or cordon.lock beside the config file, or in the current directory.
    pub(super) fn lock_path(&self) -> PathBuf {
        if let Some(path) = &self.lock_file {
            return path.clone();
        }
        let dir = self
            .config
            .as_deref()
            .and_then(std::path::Path::parent)
            .filter(|d| !d.as_os_str().is_empty());
        dir.unwrap_or(std::path::Path::new(".")).join("cordon.lock")
    }

    pub(super) async fn load_pipeline(
        &self,
        config: Config,
        trust: &super::trust_policy::TrustPolicy,
        lock: Option<Lockfile>,
    ) -> anyhow::Result<Pipeline> {
        self.pipeline_loader().build(config, trust, lock).await
    }

    /// How this command line loads its pipeline, again and again (live reloads).
    pub(super) fn pipeline_loader(&self) -> live_reload::PipelineLoader {
        live_reload::PipelineLoader {
            plugins: self.plugins.clone(),
            config: self.config.clone(),
            locked: self.locked,
            lock_path: self.lock_path(),
            no_cache: self.no_cache,
            tools: self.tools.clone(),
            allow_missing_hooks: self.allow_missing_hooks
                || matches!(
                    self.command,
                    Command::List { .. } | Command::Describe { .. }
                ),
            host_files: self.session_files(),
        }
    }

    /// The transcripts a `run` or `chat` writes or resumes, which no grant may reach.
    fn session_files(&self) -> Vec<(&'static str, PathBuf)> {
        let (Command::Run { session, .. } | Command::Chat { session, .. }) = &self.command else {
            return Vec::new();
        };
        let mut files = Vec::new();
        if let Some(transcript) = &session.transcript {
            files.push(("the transcript", transcript.clone()));
        }
        if let Some(resume) = &session.resume {
            files.push(("the transcript to resume", resume.clone()));
        }
        files
    }
}
