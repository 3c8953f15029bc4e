//! Every plugin in the plugins directory, loaded side by side: the tools they provide by name, the
//! hooks they declare, and the files that were refused and why. A bad file never stops the others;
//! a tool name several plugins declare is settled by tool_claims.rs, never by file order.

pub mod declarations;
pub mod offer_catalog;
pub mod tool_claims;

use crate::capabilities::lock::Lockfile;
use crate::config::Config;
use crate::report::secrets::Secrets;
use crate::sandbox::cache::CompileCache;
use crate::sandbox::engine::{self, EngineSettings};
use crate::sandbox::plugin::{ComponentSource, LoadError, Plugin, PluginHost, ToolInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A plugin file that was not loaded.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Rejected {
    /// The plugin file (`ID.wasm (given in code)` for one given as bytes).
    pub file: PathBuf,
    /// Why it was not loaded.
    pub reason: String,
}

/// Why the registry could not be built at all.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The plugins directory could not be read.
    #[error(
        "cannot read the plugins directory {path} (build the plugins with `make build`, or pass --plugins DIR)"
    )]
    PluginsDir {
        /// The plugins directory.
        path: PathBuf,
        /// Why reading it failed.
        source: std::io::Error,
    },
    /// The WebAssembly engine could not be built with the config's settings.
    #[error("cannot start the WebAssembly engine: {0}")]
    Engine(#[from] crate::sandbox::engine::EngineError),
    /// A read-write grant covers one of cordon's own files: the plugins directory, the compile
    /// cache, the lockfile, or a plugin's file or WIT.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A plugin granted a hook is missing or was refused: the calls or the session it guards
    /// would run unguarded.
    #[error(
        "plugin `{id}` is granted a hook in cordon.toml, but {why}; without it, what it guards would run unguarded. Fix or restore the plugin, remove its `hook` grant, or start without it on purpose with --allow-missing-hooks ([host] allow_missing_hooks = true)"
    )]
    GrantedHookMissing {
        /// The plugin's id.
        id: String,
        /// What became of it.
        why: String,
    },
    /// Loading is locked and the deployment is not the approved one.
    #[error("loading is locked and the deployment is not the one approved in cordon.lock: {0}")]
    Locked(#[from] crate::capabilities::lock::DeploymentRefusal),
}

/// Under a lock, a plugin whose declarations are not the approved ones is refused.
fn approved_declarations(plugin: Plugin, lock: Option<&Lockfile>) -> Result<Plugin, LoadError> {
    if let Some(lock) = lock {
        lock.check_declarations(&plugin.id, &crate::registry::declarations::lines(&plugin))
            .map_err(LoadError::NotApproved)?;
    }
    Ok(plugin)
}

/// How to build a registry.
#[derive(Clone)]
pub struct RegistryOptions {
    /// Every `*.wasm` file directly in this directory is a plugin (none when `None`).
    pub plugins_dir: Option<PathBuf>,
    /// Plugins given as bytes in code, by id, loaded after the directory's.
    pub given: Vec<(String, Arc<[u8]>)>,
    /// The grants, limits and host settings to load with.
    pub config: Config,
    /// Where compiled components are kept between runs.
    pub cache: CompileCache,
    /// When set, only plugins approved in this lockfile (same sha256, no wider grants) load.
    pub lock: Option<Lockfile>,
    /// Where the lockfile lives (checked, like the plugins directory and the compile cache, to be
    /// outside every read-write grant).
    pub lock_path: Option<PathBuf>,
    /// The embedder's own check of each plugin before it is compiled.
    pub admission: Option<crate::sandbox::plugin::Admission>,
}

/// The loaded plugins and their tools.
pub struct Registry {
    plugins: Vec<Arc<Plugin>>,
    tools: BTreeMap<String, Arc<Plugin>>,
    rejected: Vec<Rejected>,
    /// Tool names declared by more than one plugin, and who provides each.
    collisions: Vec<tool_claims::Collision>,
    /// The process-wide sandbox slots every plugin's calls take (`[host] max_sandboxes`).
    sandbox_slots: Arc<tokio::sync::Semaphore>,
    max_sandboxes: usize,
    /// The host's scrubber (the config's): what it masks in every output.
    secrets: Secrets,
    /// Whether the engine has the component model's async ABI.
    component_model_async: bool,
    /// The operator's own skills (`[skills] dirs`), read at load.
    folder_skills: crate::skills::folder::FolderSkills,
}

impl Registry {
    /// Loads every `*.wasm` file directly inside the plugins directory (and those given in code).
    /// The engine has the component model's async ABI when `[host] component_model_async` says
    /// so; by default only when a plugin needs it: the plugins load without it first (every call
    /// then takes wasmtime's quicker synchronous path) and, when one cannot compile without it,
    /// all load again with it.
    pub async fn load(options: RegistryOptions) -> Result<Self, RegistryError> {
        let chosen = options.config.component_model_async;
        if chosen.is_none() {
            if let Some(registry) = Self::load_pass(options.clone(), false, true).await? {
                return Ok(registry);
            }
            tracing::debug!("a plugin uses the component model's async ABI: loading with it");
        }
        let registry = Self::load_pass(options, chosen.unwrap_or(true), false).await?;
        Ok(registry.expect("a pass that may not ask for the async ABI loads"))
    }

    /// Whether the engine has the component model's async ABI (see [`Registry::load`]).
    pub fn component_model_async(&self) -> bool {
        self.component_model_async
    }

    /// One pass of [`Registry::load`], with the async ABI or without. With `may_ask_for_async`,
    /// a plugin that needs the async ABI ends the pass with `None`: load again with it.
    async fn load_pass(
        options: RegistryOptions,
        component_model_async: bool,
        may_ask_for_async: bool,
    ) -> Result<Option<Self>, RegistryError> {
        let files = match &options.plugins_dir {
            Some(dir) => plugin_files(dir)?,
            None => Vec::new(),
        };
        let mut own_files: Vec<(&str, &Path)> = Vec::new();
        if let Some(dir) = &options.plugins_dir {
            own_files.push(("the plugins directory", dir));
        }
        if let Some(dir) = options.cache.dir() {
            own_files.push(("the compile cache", dir));
        }
        if let Some(lock) = &options.lock_path {
            own_files.push(("the lockfile", lock));
        }
        // A skill's instructions reach the model: no plugin may rewrite them.
        for dir in &options.config.skill_dirs {
            own_files.push(("a skills folder", dir));
        }
        // The WIT a plain component's descriptions are read from decides what the model is told.
        let wit_files: Vec<(String, &Path)> = options
            .config
            .plugins
            .iter()
            .filter_map(|(id, grant)| {
                Some((format!("the WIT of plugin {id}"), grant.wit.as_deref()?))
            })
            .collect();
        own_files.extend(wit_files.iter().map(|(what, path)| (what.as_str(), *path)));
        options.config.check_own_files(&own_files)?;
        let settings = EngineSettings {
            fuel: options.config.uses_fuel(),
            max_memory_bytes: options.config.max_memory_bytes(),
            // A config made in code skips cordon.toml's checks; no sandbox slot would hang calls.
            max_instances: options.config.max_sandboxes.max(1),
            component_model_async,
        };
        let engine = engine::build(&settings)?;
        let host = Arc::new(PluginHost::new(
            engine,
            options.cache,
            &settings,
            options.config.max_http_connections,
            options.config.max_open_files,
            options.config.secrets.clone(),
        )?);
        register_header_secrets(&options.config);
        let sources = plugin_sources(files, options.given);

        let lock = options.lock.map(Arc::new);
        let mut loads = tokio::task::JoinSet::new();
        for (index, source) in sources.iter().cloned().enumerate() {
            // A plugin file is cordon's own like the directory it is in: one that is a link into
            // a read-write grant (where a plugin could rewrite it) is refused.
            if let ComponentSource::File(file) = &source.component
                && let Err(err) = options.config.check_own_files(&[("the plugin file", file)])
            {
                loads.spawn(async move { (index, Err(LoadError::OwnFile(err.to_string()))) });
                continue;
            }
            if sources[..index]
                .iter()
                .any(|earlier| earlier.id == source.id)
            {
                let reason = format!(
                    "plugin id `{}` is taken by an earlier plugin; give each plugin its own id",
                    source.id
                );
                loads.spawn(async move { (index, Err(LoadError::DuplicateId(reason))) });
                continue;
            }
            let host = host.clone();
            let grant = Arc::new(options.config.grant_for(&source.id));
            let lock = lock.clone();
            let admission = options.admission.clone();
            loads.spawn(async move {
                (
                    index,
                    Plugin::load(
                        &host,
                        &source.id,
                        &source.component,
                        grant,
                        lock.as_deref(),
                        admission.as_ref(),
                    )
                    .await,
                )
            });
        }
        let skill_dirs = options.config.skill_dirs.clone();
        let folder_skills =
            tokio::task::spawn_blocking(move || crate::skills::folder::read_all(&skill_dirs));
        let mut outcomes: Vec<(usize, Result<Plugin, LoadError>)> = Vec::new();
        while let Some(joined) = loads.join_next().await {
            match joined {
                Ok(outcome) => outcomes.push(outcome),
                Err(err) => tracing::error!("a plugin load task failed: {err}"),
            }
        }
        outcomes.sort_by_key(|(index, _)| *index);
        if may_ask_for_async
            && outcomes
                .iter()
                .any(|(_, outcome)| matches!(outcome, Err(LoadError::AsyncTurnedOff(_))))
        {
            return Ok(None);
        }
        warn_about_unused_grants(&options.config, &sources);

        let mut registry = Self {
            plugins: Vec::new(),
            tools: BTreeMap::new(),
            rejected: Vec::new(),
            collisions: Vec::new(),
            sandbox_slots: host.sandbox_slots.clone(),
            max_sandboxes: settings.max_instances as usize,
            secrets: options.config.secrets.clone(),
            component_model_async,
            folder_skills: folder_skills.await.unwrap_or_default(),
        };
        // Each skill's folder and file as resolved (a link, a hard link, a mount), not only the
        // folders named in [skills]: no plugin may be able to rewrite what the model is told.
        let skill_files: Vec<(&str, &Path)> = registry
            .folder_skills
            .on_disk
            .iter()
            .map(|path| ("a skill's file", path.as_path()))
            .collect();
        options.config.check_own_files(&skill_files)?;
        let outcomes: Vec<(usize, Result<Plugin, LoadError>)> = outcomes
            .into_iter()
            .map(|(index, outcome)| {
                (
                    index,
                    outcome.and_then(|plugin| approved_declarations(plugin, lock.as_deref())),
                )
            })
            .collect();
        let loaded: Vec<&Plugin> = outcomes
            .iter()
            .filter_map(|(_, outcome)| outcome.as_ref().ok())
            .collect();
        let (collisions, taken) = tool_claims::settle(&loaded, &options.config);
        registry.collisions = collisions;
        for (index, outcome) in outcomes {
            let file = &sources[index].shown_as;
            let outcome = outcome.map_err(|err| err.to_string()).and_then(|plugin| {
                match taken.get(&*plugin.id) {
                    Some(reason) => Err(reason.clone()),
                    None => Ok(plugin),
                }
            });
            match outcome {
                Ok(plugin) => {
                    tracing::info!(plugin = %plugin.id, tools = plugin.tools.len(), source = ?plugin.compiled, "loaded plugin");
                    let plugin = Arc::new(plugin);
                    for tool in &plugin.tools {
                        registry.tools.insert(tool.name.clone(), plugin.clone());
                    }
                    registry.plugins.push(plugin);
                }
                Err(reason) => {
                    // Each refusal is logged, up to a point; the rest are counted in one line
                    // (2,000 copies of one plugin are one mistake, not 2,000).
                    if registry.rejected.len() < LOGGED_REJECTIONS {
                        tracing::warn!(file = %file.display(), "rejected plugin: {reason}");
                    }
                    registry.rejected.push(Rejected {
                        file: file.clone(),
                        reason,
                    });
                }
            }
        }
        if let Some(unlogged) = registry.rejected.len().checked_sub(LOGGED_REJECTIONS)
            && unlogged > 0
        {
            tracing::warn!(
                "{unlogged} more plugins were rejected (not logged one by one); `cordon list` shows every one with its reason"
            );
        }
        if let Some(lock) = &lock {
            let loaded: Vec<&str> = registry.plugins.iter().map(|p| &*p.id).collect();
            let deployment = crate::capabilities::lock::deployment(
                options.config.audit_path.as_deref(),
                &options.config.hook_order,
                options.config.batches.approval.lock_line(),
            );
            let refused: BTreeMap<String, String> = registry
                .rejected
                .iter()
                .map(|rejected| (plugin_id(&rejected.file), rejected.reason.clone()))
                .collect();
            lock.check_deployment(&deployment, &loaded, &refused)
                .map_err(RegistryError::Locked)?;
        }
        // After the lock's check, whose refusal names what was approved.
        if !options.config.allow_missing_hooks {
            granted_hooks_loaded(&options.config, &sources, &registry)?;
        }
        Ok(Some(registry))
    }

    /// The host's scrubber: the config's, with its secrets and every grant header's registered.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The operator's own skills (`[skills] dirs`), and those left out with why.
    pub fn folder_skills(&self) -> &crate::skills::folder::FolderSkills {
        &self.folder_skills
    }

    /// The loaded plugins, in load order: the directory's files by name, then those given in code.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// The loaded plugin with this id.
    pub fn plugin(&self, id: &str) -> Option<&Arc<Plugin>> {
        self.plugins.iter().find(|plugin| &*plugin.id == id)
    }

    /// The plugin files (and plugins given in code) that were refused, with why, in load order.
    pub fn rejected(&self) -> &[Rejected] {
        &self.rejected
    }

    /// Tool names declared by more than one plugin, and how each was settled.
    pub fn collisions(&self) -> &[tool_claims::Collision] {
        &self.collisions
    }

    /// The plugin providing `name`, and the tool.
    pub fn tool(&self, name: &str) -> Option<(&Arc<Plugin>, &ToolInfo)> {
        let plugin = self.tools.get(name)?;
        Some((plugin, plugin.tool(name)?))
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = (&Arc<Plugin>, &ToolInfo)> {
        self.tools
            .iter()
            .filter_map(|(name, plugin)| Some((plugin, plugin.tool(name)?)))
    }

    /// The names of every loaded tool, sorted.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// Sandboxes running now (tools' and hooks' alike), out of [`Self::max_sandboxes`].
    pub fn sandboxes_in_use(&self) -> usize {
        self.max_sandboxes
            .saturating_sub(self.sandbox_slots.available_permits())
    }

    /// Sandboxes that may run at once (`[host] max_sandboxes`); calls beyond it queue.
    pub fn max_sandboxes(&self) -> usize {
        self.max_sandboxes
    }
}

/// How many rejected plugins are logged one by one in one load.
const LOGGED_REJECTIONS: usize = 20;

/// `*.wasm` files directly in `dir`, sorted by file name.
pub fn plugin_files(dir: &Path) -> Result<Vec<PathBuf>, RegistryError> {
    let entries = std::fs::read_dir(dir).map_err(|source| RegistryError::PluginsDir {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm") && path.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// A plugin's id: its file's name without the `.wasm` extension.
pub fn plugin_id(file: &Path) -> String {
    file.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// One plugin to load: its id, its component, and how lists and errors name it.
#[derive(Clone)]
struct PluginSource {
    id: String,
    component: ComponentSource,
    shown_as: PathBuf,
}

/// The directory's files, then the plugins given in code, in that order.
fn plugin_sources(files: Vec<PathBuf>, given: Vec<(String, Arc<[u8]>)>) -> Vec<PluginSource> {
    let from_files = files.into_iter().map(|file| PluginSource {
        id: plugin_id(&file),
        component: ComponentSource::File(file.clone()),
        shown_as: file,
    });
    let from_code = given.into_iter().map(|(id, bytes)| PluginSource {
        shown_as: PathBuf::from(format!("{id}.wasm (given in code)")),
        id,
        component: ComponentSource::Bytes(bytes),
    });
    from_files.chain(from_code).collect()
}

/// Registers with the scrubber every credential header of every HTTP grant, however the grant
/// was made: cordon.toml's are registered as they are read, a grant built field by field in code
/// is registered here, so no route leaves a configured secret unmasked.
fn register_header_secrets(config: &Config) {
    let headers = config
        .plugins
        .values()
        .flat_map(|grant| grant.http.iter())
        .flat_map(|http| http.headers.iter());
    for header in headers {
        if crate::config::header_carries_credentials(header.name.as_str())
            && let Ok(value) = header.value.to_str()
        {
            config.secrets.register_header_value(value);
        }
    }
}

/// Refuses a start where a plugin granted a hook has none: no file of that id, a file refused, or
/// a plugin that declares no hook (the first such plugin, by id).
fn granted_hooks_loaded(
    config: &Config,
    sources: &[PluginSource],
    registry: &Registry,
) -> Result<(), RegistryError> {
    for (id, grant) in &config.plugins {
        if grant.hook.is_none() {
            continue;
        }
        let why = match registry.rejected.iter().find(|r| plugin_id(&r.file) == *id) {
            Some(refused) => format!("{} was refused: {}", refused.file.display(), refused.reason),
            None if !sources.iter().any(|source| source.id == *id) => {
                format!("there is no {id}.wasm in the plugins directory")
            }
            None if registry
                .plugin(id)
                .is_some_and(|plugin| plugin.hook.is_none()) =>
            {
                format!("{id}.wasm declares no hook (is it the plugin that was granted?)")
            }
            None => continue,
        };
        return Err(RegistryError::GrantedHookMissing {
            id: id.clone(),
            why,
        });
    }
    Ok(())
}

fn warn_about_unused_grants(config: &Config, sources: &[PluginSource]) {
    for id in config.plugins.keys() {
        if !sources.iter().any(|source| source.id == *id) {
            tracing::warn!(
                "cordon.toml has a grant for plugin `{id}` but there is no {id}.wasm in the plugins directory"
            );
        }
    }
}
