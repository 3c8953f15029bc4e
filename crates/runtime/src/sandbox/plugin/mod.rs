//! One loaded plugin: its compiled component pre-linked into an `InstancePre`, what it declared in
//! `describe`, and its grant. Every call runs in a fresh `Store` instantiated from the
//! `InstancePre`, with the plugin's limits, and ends as a value, never a crash.

mod component_file;
pub(crate) mod component_outline;
pub(crate) mod declared;
mod host;
mod load_error;
mod offer_checks;
pub(crate) mod offers;
mod output;
mod panic_guard;
mod run;
mod session_hook;
pub use load_error::LoadError;
use load_error::innermost;
pub use run::sandboxes_running;

use crate::capabilities::grant::{OpenedDirs, PluginGrant};
use crate::capabilities::lock::Lockfile;
use crate::report::ReportSink;
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::cache::CompileSource;
use crate::sandbox::contract::host_terms::{Declared, GuestCall, GuestOutput};
use crate::sandbox::contract::offer_terms::Offered;
use crate::sandbox::contract::{ContractPre, ContractVersion, contract_of};
use crate::sandbox::failure::{Failure, human_bytes};
use crate::sandbox::fs::open_files::ProcessFiles;
use crate::sandbox::http::ConnectionPool;
use crate::sandbox::plain::PlainSetup;
use crate::sandbox::plain::docs::ComponentDocs;
use crate::schema::ArgumentSchema;
pub(crate) use component_file::ComponentSource;
use declared::{check_declarations, tool_info};
pub(crate) use host::PluginHost;
use run::Grants;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use wasmtime::Engine;

pub use crate::sandbox::contract::host_terms::{
    BeforeDecision, ExecutionMode, HookInfo, SessionDecision, SessionStage, ToolAnnotations,
};

/// A tool as its plugin declared it, with its schemas compiled.
pub struct ToolInfo {
    /// The name the model calls it by.
    pub name: String,
    /// Short human-readable title (the name when the plugin gave none).
    pub title: String,
    /// What the tool does, as the model reads it.
    pub description: String,
    /// The compiled parameters schema, which every call's arguments are checked against.
    pub schema: ArgumentSchema,
    /// The schema its structured output must match, if it declared one.
    pub output_schema: Option<ArgumentSchema>,
    /// Whether the tool may share its batch with other running calls.
    pub execution_mode: ExecutionMode,
    /// Hints about what the tool does.
    pub annotations: ToolAnnotations,
    /// Lines the agent loop adds to its system prompt while the tool is active.
    pub prompt_guidelines: Vec<String>,
    /// JSON pointers into the arguments naming what a call touches.
    pub locks: Vec<String>,
}

/// An after-hook's verdict: keep the result, or replace it with this one (an error keeps its
/// kind, or becomes `tool_error`).
#[derive(Debug, Clone, PartialEq)]
pub enum AfterDecision {
    /// Keep the result as it is.
    Keep,
    /// Replace the result with this one.
    Replace(Box<ToolResult>),
}

/// What a call needs besides its arguments.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Receives the call's progress updates and log lines.
    pub reports: Option<ReportSink>,
    /// Cancelling stops the call within an epoch tick; it ends as `cancelled`.
    pub cancel: CancellationToken,
}

/// A loaded, described plugin.
pub struct Plugin {
    /// The plugin's id: its file's stem, or the id it was given in code.
    pub id: Arc<str>,
    /// The plugin file (`ID.wasm (given in code)` for one given as bytes).
    pub path: PathBuf,
    /// The sha256 of the component's bytes.
    pub sha256: [u8; 32],
    /// The tools it provides, checked, in the order declared.
    pub tools: Vec<ToolInfo>,
    /// The calls its hook watches; `None` when it declares no hook (whether it may run is its
    /// grant's `hook`).
    pub hook: Option<HookInfo>,
    /// The resources, resource templates and prompts it serves (contract 0.4), checked.
    pub offered: Offered,
    /// The skills its component carries (`skills/embedded.rs`), checked.
    pub skills: Vec<crate::skills::Skill>,
    /// Whether its code came from the compile cache or was compiled at this load.
    pub compiled: CompileSource,
    /// What the operator granted it.
    pub grant: Arc<PluginGrant>,
    /// The contract version the component targets.
    pub contract: ContractVersion,
    /// The interfaces the component imports (`wasi:filesystem/types@0.2.6`, …), which say what it
    /// could use if granted, and those it exports.
    pub imports: Vec<String>,
    /// The interfaces the component exports.
    pub exports: Vec<String>,
    /// The granted directories, opened once at load; every call's preopens are clones of these.
    preopens: OpenedDirs,
    settings: Arc<str>,
    engine: Engine,
    fuel_metering: bool,
    sandbox_slots: Arc<Semaphore>,
    connections: ConnectionPool,
    files: ProcessFiles,
    secrets: crate::report::secrets::Secrets,
    pre: ContractPre,
}

/// A check the embedder makes of each plugin, by id and the sha256 of its component, before it is
/// compiled: `Err` says why it is refused (it is then listed as rejected, with that reason).
pub type Admission = Arc<dyn Fn(&str, &[u8; 32]) -> Result<(), String> + Send + Sync>;

impl Plugin {
    /// Reads, verifies (sha256 pin, lockfile approval), compiles (or loads from cache), links and
    /// describes one plugin file.
    pub(crate) async fn load(
        host: &PluginHost,
        id: &str,
        source: &ComponentSource,
        grant: Arc<PluginGrant>,
        lock: Option<&Lockfile>,
        admission: Option<&Admission>,
    ) -> Result<Self, LoadError> {
        let id: Arc<str> = id.into();
        let path = match source {
            ComponentSource::File(path) => path.clone(),
            ComponentSource::Bytes(_) => PathBuf::from(format!("{id}.wasm (given in code)")),
        };
        if let Some(why) = &grant.unavailable {
            return Err(LoadError::GrantUnavailable(why.clone()));
        }
        let hashed = source.sha256()?;
        let sha256 = hashed.sha256;
        if let Some(expected) = grant.sha256
            && expected != sha256
        {
            return Err(LoadError::PinMismatch {
                expected: hex::encode(expected),
                actual: hex::encode(sha256),
            });
        }
        if let Some(lock) = lock {
            lock.check(&id, &sha256, &grant)
                .map_err(LoadError::NotApproved)?;
        }
        // Before anything is compiled, on the digest of the bytes that will be.
        if let Some(admit) = admission {
            admit(&id, &sha256).map_err(LoadError::NotAdmitted)?;
        }
        let skills = match &hashed.skills_section {
            Some(payload) => {
                check_id_for_skills(&id)?;
                crate::skills::embedded::decode(payload, &id).map_err(LoadError::Skills)?
            }
            None => Vec::new(),
        };
        let preopens = grant.open_dirs()?;
        let engine = host.engine.clone();
        let cache = host.cache.clone();
        let file = source.clone();
        // On a cache miss, the outline is checked before anything is compiled.
        let (component, compiled) = tokio::task::spawn_blocking(move || {
            cache.load_or_compile(&engine, &sha256, || {
                let bytes = file.read(&sha256)?;
                component_outline::check(&bytes)?;
                Ok(bytes)
            })
        })
        .await
        .map_err(LoadError::CompileTask)?
        .map_err(
            |err| match err.downcast::<component_outline::OutlineRefusal>() {
                Ok(refusal) => LoadError::Outline(refusal),
                Err(err) if !host.component_model_async && needs_async_abi(&err) => {
                    LoadError::AsyncTurnedOff(innermost(&err))
                }
                Err(err) => LoadError::Compile(err),
            },
        )?;
        // A plain component's doc comments are read from its bytes (not kept by the compile
        // cache), checked again against the sha256 the file had.
        let contract = contract_of(&host.engine, &component);
        let docs = if let Some(wit) = &grant.wit {
            if contract != ContractVersion::Plain {
                return Err(LoadError::Wit {
                    path: wit.clone(),
                    reason: format!(
                        "`wit` gives the doc comments of a plain component's functions, and this plugin follows contract {contract}"
                    ),
                });
            }
            let wit = wit.clone();
            tokio::task::spawn_blocking(move || {
                ComponentDocs::from_wit(&wit).map_err(|reason| (wit, reason))
            })
            .await
            .map_err(LoadError::CompileTask)?
            .map_err(|(path, reason)| LoadError::Wit { path, reason })?
        } else if contract == ContractVersion::Plain {
            let file = source.clone();
            tokio::task::spawn_blocking(move || match file.read(&sha256) {
                Ok(bytes) => ComponentDocs::read(&bytes),
                Err(_) => ComponentDocs::none(),
            })
            .await
            .map_err(LoadError::CompileTask)?
        } else {
            ComponentDocs::none()
        };
        let setup = PlainSetup {
            plugin: &id,
            grant: &grant,
            overrides: &grant.tools,
            docs: &docs,
        };
        let (pre, contract) = ContractPre::new(&host.linker, &component, &setup)?;
        let component_type = component.component_type();
        let imports = component_type
            .imports(&host.engine)
            .map(|(name, _)| name.to_string())
            .collect();
        let exports = component_type
            .exports(&host.engine)
            .map(|(name, _)| name.to_string())
            .collect();
        let settings: Arc<str> = grant.settings.to_string().into();
        // A command starts in its working directory (grant.rs, `with_working_dir`).
        let preopens = if contract == ContractVersion::Command {
            grant.with_working_dir(preopens)
        } else {
            preopens
        };
        let mut plugin = Self {
            id,
            path,
            sha256,
            tools: Vec::new(),
            hook: None,
            offered: Offered::default(),
            skills,
            compiled,
            grant,
            contract,
            imports,
            exports,
            preopens,
            settings,
            engine: host.engine.clone(),
            fuel_metering: host.fuel_metering,
            sandbox_slots: host.sandbox_slots.clone(),
            connections: host.connections.clone(),
            files: host.files.clone(),
            secrets: host.secrets.clone(),
            pre,
        };
        let info = plugin.describe().await?;
        check_declarations(&info)?;
        plugin.tools = info
            .tools
            .into_iter()
            .map(tool_info)
            .collect::<Result<_, _>>()?;
        plugin.hook = info.hook;
        offer_checks::check(&info.offered)?;
        plugin.offered = info.offered;
        Ok(plugin)
    }

    /// This plugin's tool named `name`, if it has one.
    pub fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Whether its hook is granted the session stages it declares (`hook = true`; see
    /// [`crate::capabilities::grant::HookGrant::covers_session`]).
    pub fn watches_session(&self) -> bool {
        self.grant
            .hook
            .as_ref()
            .is_some_and(|grant| grant.covers_session())
    }

    /// `describe`, with nothing granted and a short time limit; for a plain component or a
    /// command, what cordon derived from its types.
    async fn describe(&self) -> Result<Declared, LoadError> {
        if let Some(declared) = self.pre.derived_declarations() {
            return Ok(declared);
        }
        let outcome = self
            .in_sandbox(
                "describe",
                "describe",
                Grants::None,
                &CallOptions::default(),
                |store, plugin| Box::pin(plugin.describe(store)),
            )
            .await;
        outcome
            .map(|(info, _)| info)
            .map_err(|failure| LoadError::Describe {
                kind: failure.kind,
                message: failure.message,
            })
    }

    /// Runs one call of tool `name` in a fresh sandbox, with arguments already validated against
    /// its schema (no hooks: the pipeline adds those), and turns whatever happened into a result.
    pub async fn call_tool(
        &self,
        id: &str,
        name: &str,
        arguments: &serde_json::Value,
        options: &CallOptions,
    ) -> ToolResult {
        let call = GuestCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let (output, budget) = match self.execute(&call, options).await {
            Ok(done) => done,
            Err(failure) => {
                return ToolResult::error(id, name, failure.kind, failure.message, failure.details);
            }
        };
        let output_schema = self.tool(name).and_then(|tool| tool.output_schema.as_ref());
        match self
            .checked_output(name, "result", output, budget, output_schema)
            .await
        {
            Ok(result) => result.into_tool_result(id, name),
            Err(failure) => {
                ToolResult::error(id, name, failure.kind, failure.message, failure.details)
            }
        }
    }

    /// What to say when a result (or a hook's replacement) of `size` bytes does not fit the `left`
    /// bytes of output limit the plugin had left after its log and progress messages.
    fn over_output_limit(&self, what: &str, part: &str, size: u64, left: u64) -> String {
        let limit = self.grant.limits.output_bytes;
        let spent = limit.saturating_sub(left);
        let earlier = if spent > 0 {
            format!(" after {} of log and progress messages", human_bytes(spent))
        } else {
            String::new()
        };
        format!(
            "{what} produced a {part} of {}{earlier}, over its plugin's output limit of {} per call. Ask for less at a time (use offsets, limits or filters).",
            human_bytes(size),
            human_bytes(limit)
        )
    }

    /// Runs one tool call whose arguments were already validated.
    async fn execute(
        &self,
        call: &GuestCall,
        options: &CallOptions,
    ) -> Result<(GuestOutput, u64), Failure> {
        let owned_call = call.clone();
        let command_input = match self.pre.command() {
            Some(command) => Some(command.input(call)?),
            None => None,
        };
        let (outcome, budget) = self
            .in_sandbox(
                &call.id,
                &call.name,
                Grants::Granted { command_input },
                options,
                move |store, plugin| {
                    Box::pin(async move { plugin.execute(store, &owned_call).await })
                },
            )
            .await?;
        outcome.map(|output| (output, budget))
    }

    /// Runs this plugin's before-hook on call `id` of tool `name` with `arguments`.
    pub(crate) async fn before_tool_call(
        &self,
        id: &str,
        name: &str,
        arguments: &serde_json::Value,
        options: &CallOptions,
    ) -> Result<BeforeDecision, Failure> {
        let owned_call = GuestCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let what = format!("before-hook of {}", self.id);
        let (decision, _) = self
            .in_sandbox(
                id,
                &what,
                Grants::granted(),
                options,
                move |store, plugin| {
                    Box::pin(async move { plugin.before_tool_call(store, &owned_call).await })
                },
            )
            .await?;
        Ok(decision)
    }

    /// Runs this plugin's after-hook on the `result` of call `id` of tool `name`. A replacement
    /// larger than what is left of this plugin's output limit is a failure (the hook fails closed).
    pub(crate) async fn after_tool_call(
        &self,
        id: &str,
        name: &str,
        arguments: &serde_json::Value,
        result: &ToolResult,
        output_schema: Option<&ArgumentSchema>,
        options: &CallOptions,
    ) -> Result<AfterDecision, Failure> {
        let owned_call = GuestCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let owned_result = result.clone();
        let what = format!("after-hook of {}", self.id);
        let (decision, left) = self
            .in_sandbox(
                id,
                &what,
                Grants::granted(),
                options,
                move |store, plugin| {
                    Box::pin(async move {
                        plugin
                            .after_tool_call(store, &owned_call, &owned_result)
                            .await
                    })
                },
            )
            .await?;
        let Some(replacement) = decision else {
            return Ok(AfterDecision::Keep);
        };
        let is_error = replacement.is_error;
        let checked = self
            .checked_output(
                &what,
                "replacement result",
                replacement,
                left,
                output_schema,
            )
            .await?;
        let mut replaced = checked.into_tool_result(id, name);
        if is_error {
            replaced.is_error = true;
            replaced.error_kind = Some(result.error_kind.unwrap_or(ErrorKind::ToolError));
        }
        Ok(AfterDecision::Replace(Box::new(replaced)))
    }
}

/// Whether wasmtime refused to compile a component because it uses the async ABI the engine
/// was built without (it names the feature in its message).
fn needs_async_abi(err: &wasmtime::Error) -> bool {
    innermost(err).contains("component model async")
}

/// A plugin carrying skills serves them under `skill://ID/`: its id must stand there as written.
fn check_id_for_skills(id: &str) -> Result<(), LoadError> {
    let fits = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'_' | b'-'));
    if fits {
        Ok(())
    } else {
        Err(LoadError::Skills(format!(
            "they are served under skill://{id}/, and a plugin id there may hold only a-z, 0-9, `_` and `-`; rename its file"
        )))
    }
}
