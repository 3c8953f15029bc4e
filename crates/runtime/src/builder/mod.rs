//! One way to assemble a runtime, used by the `cordon` binary, the tests, the benchmarks and
//! anyone embedding cordon: a plugins directory and a config in, a [`Pipeline`] out, with its
//! registry (every plugin loaded with its grant, through the compile cache, checked against the
//! lock when one is given) and the audit log the config names.
//!
//! ```no_run
//! # async fn run() -> Result<(), cordon_runtime::BuildError> {
//! let pipeline = cordon_runtime::RuntimeBuilder::new("plugins")
//!     .config_file("cordon.toml")
//!     .build()
//!     .await?;
//! let result = pipeline
//!     .call(
//!         cordon_runtime::CallRequest::new("1", "read_file", r#"{"path": "README.md"}"#),
//!         &Default::default(),
//!     )
//!     .await;
//! println!("{}", result.text());
//! # Ok(())
//! # }
//! ```
//!
//! `watch.rs` tells a running front end when what it was built from changed on disk.

pub mod watch;

use crate::capabilities::lock::Lockfile;
use crate::config::{Config, ConfigError};
use crate::pipeline::audit::AuditLog;
use crate::pipeline::{Pipeline, ToolSetError};
use crate::registry::{Registry, RegistryError, RegistryOptions};
use crate::sandbox::cache::CompileCache;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a runtime could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The config file could not be read or is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The plugins could not be loaded (an unreadable directory, a plugin refused, a lock not
    /// satisfied).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The audit log the config names could not be opened.
    #[error("cannot open the audit log {path} ([audit] path): {source}")]
    AuditLog {
        /// The audit log's path (`[audit] path`).
        path: PathBuf,
        /// Why opening it failed.
        #[source]
        source: std::io::Error,
    },
    /// A tool to offer (`[agent] tools` or `RuntimeBuilder::active_tools`) is not among the loaded
    /// ones, or a group has a tool's name.
    #[error(transparent)]
    ToolSet(#[from] ToolSetError),
}

/// Where the configuration comes from.
enum ConfigSource {
    Given(Box<Config>),
    /// A cordon.toml; when `optional`, a missing file means the defaults.
    File {
        path: PathBuf,
        optional: bool,
    },
}

/// Assembles a [`Pipeline`] from a plugins directory and a config.
pub struct RuntimeBuilder {
    plugins_dir: Option<PathBuf>,
    given: Vec<(String, Arc<[u8]>)>,
    config: ConfigSource,
    cache: Option<CompileCache>,
    lock: Option<Lockfile>,
    lock_path: Option<PathBuf>,
    active_tools: Option<Vec<String>>,
    admission: Option<crate::Admission>,
}

impl RuntimeBuilder {
    /// A runtime over every `*.wasm` in `plugins_dir`, with the default config (nothing granted)
    /// and the user's compile cache, until told otherwise.
    pub fn new(plugins_dir: impl Into<PathBuf>) -> Self {
        Self {
            plugins_dir: Some(plugins_dir.into()),
            ..Self::without_directory()
        }
    }

    /// A runtime of only the plugins given with [`RuntimeBuilder::plugin`], with the default
    /// config and the user's compile cache, until told otherwise.
    pub fn without_directory() -> Self {
        Self {
            plugins_dir: None,
            given: Vec::new(),
            config: ConfigSource::Given(Box::default()),
            cache: None,
            lock: None,
            lock_path: None,
            active_tools: None,
            admission: None,
        }
    }

    /// Adds a plugin given as the bytes of its component, under `id` (the name its grant has in
    /// the config, as a file's stem is). It passes every check a plugin file does (component
    /// header, size, sha256 pin, the lock) and is listed as `ID.wasm (given in code)`.
    pub fn plugin(mut self, id: impl Into<String>, component: impl Into<Arc<[u8]>>) -> Self {
        self.given.push((id.into(), component.into()));
        self
    }

    /// Uses this configuration.
    pub fn config(mut self, config: Config) -> Self {
        self.config = ConfigSource::Given(Box::new(config));
        self
    }

    /// Reads the configuration from `path` when the runtime is built; a missing file is an error.
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = ConfigSource::File {
            path: path.into(),
            optional: false,
        };
        self
    }

    /// Reads the configuration from `path` if that file exists, else uses the defaults.
    pub fn config_file_if_present(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = ConfigSource::File {
            path: path.into(),
            optional: true,
        };
        self
    }

    /// Compiles through `cache` instead of the user's (`$XDG_CACHE_HOME/cordon/compiled`).
    pub fn cache(mut self, cache: CompileCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Loads only what `lock` approved (same files, declarations and grants, or narrower).
    pub fn locked(mut self, lock: Lockfile) -> Self {
        self.lock = Some(lock);
        self
    }

    /// Where the lockfile lives, checked like the plugins directory to be outside every
    /// read-write grant.
    pub fn lock_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.lock_path = Some(path.into());
        self
    }

    /// Checks each plugin (its id and component sha256) before it is compiled: one `admit`
    /// refuses is listed as rejected with the reason it gives.
    pub fn admission(
        mut self,
        admit: impl Fn(&str, &[u8; 32]) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.admission = Some(std::sync::Arc::new(admit));
        self
    }

    /// Offers only these tools (they must be loaded), whatever `[agent] tools` says.
    pub fn active_tools(mut self, tools: Vec<String>) -> Self {
        self.active_tools = Some(tools);
        self
    }

    /// Loads the plugins, opens the audit log and assembles the pipeline.
    pub async fn build(self) -> Result<Pipeline, BuildError> {
        let config = match self.config {
            ConfigSource::Given(config) => *config,
            ConfigSource::File { path, optional } => load_config(&path, optional)?,
        };
        let mut batches = config.batches.clone();
        if let Some(tools) = self.active_tools {
            batches.tools = Some(tools);
        }
        let hook_order = config.hook_order.clone();
        let audit =
            match &config.audit_path {
                Some(path) => Some(AuditLog::open(path, config.secrets.clone()).map_err(
                    |source| BuildError::AuditLog {
                        path: path.clone(),
                        source,
                    },
                )?),
                None => None,
            };
        let registry = Registry::load(RegistryOptions {
            plugins_dir: self.plugins_dir,
            given: self.given,
            config,
            cache: self.cache.unwrap_or_else(CompileCache::default_location),
            lock: self.lock,
            lock_path: self.lock_path,
            admission: self.admission,
        })
        .await?;
        Ok(Pipeline::assemble(
            Arc::new(registry),
            batches,
            &hook_order,
            audit,
        )?)
    }
}

fn load_config(path: &Path, optional: bool) -> Result<Config, ConfigError> {
    if optional && !path.exists() {
        return Ok(Config::default());
    }
    Config::load(path)
}
