//! One loaded plugin: its compiled component pre-linked into an `InstancePre`, what it declared in
//! `describe`, and its grant. Every call runs in a fresh `Store` instantiated from the
//! `InstancePre`, with the plugin's limits, and ends as a value, never a crash.

mod component_file;
mod declared;

use crate::capabilities::grant::{OpenDirError, OpenedDirs, PluginGrant};
use crate::capabilities::limits::{DESCRIBE_TIMEOUT, Limits};
use crate::capabilities::lock::Lockfile;
use crate::capabilities::net::{ConnectionPool, GateSetup, HttpGate};
use crate::report::ReportSink;
use crate::report::budget::ReportBudget;
use crate::report::{Content, ErrorKind, MAX_CONTENT_BLOCKS, ToolResult};
use crate::sandbox::bindings::{self, CordonPlugin, CordonPluginPre};
use crate::sandbox::cache::{CompileCache, CompileSource};
use crate::sandbox::call_state::{CallSetup, CallState};
use crate::sandbox::capture::OutputCapture;
use crate::sandbox::convert;
use crate::sandbox::engine::EngineSettings;
use crate::sandbox::failure::{self, Failure, human_bytes};
use crate::sandbox::fs_gate::{OpenFiles, ProcessFiles};
use crate::schema::ArgumentSchema;
use component_file::{check_component_header, hash_file, read_unchanged};
pub use declared::{MAX_SCHEMA_BYTES_PER_PLUGIN, MAX_TOOLS_PER_PLUGIN, is_valid_tool_name};
use declared::{check_declarations, tool_info};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use wasmtime::component::Linker;
use wasmtime::{Engine, Store, UpdateDeadline};

/// Extra wall time the outer async timeout allows beyond the epoch deadline; it only fires when
/// the guest is stuck inside a host call that does not return.
const HOST_CALL_GRACE: Duration = Duration::from_millis(100);

/// Whether a tool may share its batch with other running calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionMode {
    Parallel,
    Sequential,
}

/// A tool as its plugin declared it, with its schema compiled.
pub struct ToolInfo {
    pub name: String,
    pub label: String,
    pub description: String,
    pub schema: ArgumentSchema,
    pub execution_mode: ExecutionMode,
}

/// The calls a plugin's hook watches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HookInfo {
    /// Tool-name globs; empty means every tool.
    pub tools: Vec<String>,
    pub before: bool,
    pub after: bool,
}

/// A before-hook's verdict, in the host's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeDecision {
    Allow,
    /// Do not run the call, for this reason.
    Block(String),
    /// Run the call with these arguments instead (JSON text, as the hook gave it).
    Rewrite(String),
}

/// An after-hook's verdict: keep the result, or replace it with this one (an error keeps its
/// kind, or becomes `tool_error`).
#[derive(Debug, Clone, PartialEq)]
pub enum AfterDecision {
    Keep,
    Replace(ToolResult),
}

/// Why a plugin file was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read the file: {0}")]
    Read(#[source] std::io::Error),
    #[error(
        "its sha256 is {actual} but cordon.toml pins {expected}; the file changed since it was pinned (update the pin only if you trust the new file)"
    )]
    PinMismatch { expected: String, actual: String },
    #[error("{0}")]
    NotAComponent(String),
    #[error("{0}")]
    NotApproved(String),
    #[error("it does not target the cordon:plugin@0.1.0 `cordon-plugin` world: {0}")]
    WrongWorld(String),
    #[error("its describe() failed: {0}")]
    Describe(String),
    #[error("tool {tool:?}: {reason}")]
    InvalidTool { tool: String, reason: String },
    #[error("{0}")]
    Collision(String),
    #[error("{0}")]
    Dirs(#[from] OpenDirError),
}

/// What a call needs besides its arguments.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Receives the call's progress updates and log lines.
    pub reports: Option<ReportSink>,
    /// Cancelling stops the call within an epoch tick; it ends as `cancelled`.
    pub cancel: CancellationToken,
}

/// The engine-wide parts every plugin shares.
pub struct PluginHost {
    pub engine: Engine,
    pub linker: Linker<CallState>,
    pub cache: CompileCache,
    pub fuel_metering: bool,
    /// One permit per sandbox the pooling allocator has room for; calls beyond it wait their turn
    /// instead of failing to instantiate.
    pub sandbox_slots: Arc<Semaphore>,
    /// Outgoing HTTP connections the whole process may have open.
    pub connections: ConnectionPool,
    /// Files and directories guests of the whole process may hold open.
    pub files: ProcessFiles,
}

impl PluginHost {
    pub fn new(
        engine: Engine,
        cache: CompileCache,
        settings: &EngineSettings,
        max_http_connections: usize,
        max_open_files: usize,
    ) -> anyhow::Result<Self> {
        let mut linker = Linker::new(&engine);
        // All of WASI p2 is linked so every language runtime instantiates; what a plugin can reach
        // through it is decided by its WASI context (see grant.rs): sockets are always off.
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        // Outgoing HTTP passes each call's gate (see net/gate.rs).
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        // Preopens from handles, file opens bounded and recorded, closes counted (see fs_gate.rs).
        crate::sandbox::fs_gate::shadow_in_linker(&mut linker)?;
        // What the guest makes the host hold (header maps, request lines, body buffers, directory
        // listings) is charged to its memory limit (see resource_budget.rs).
        crate::sandbox::resource_budget::shadow_in_linker(&mut linker)?;
        // File streams read and write on the calling thread (see file_streams.rs).
        crate::sandbox::file_streams::shadow_in_linker(&mut linker)?;
        // Directory listings read with their types from the directory (see dir_listing.rs).
        crate::sandbox::dir_listing::shadow_in_linker(&mut linker)?;
        CordonPlugin::add_to_linker::<_, wasmtime::component::HasSelf<_>>(&mut linker, |state| {
            state
        })?;
        Ok(Self {
            engine,
            linker,
            cache,
            fuel_metering: settings.fuel,
            sandbox_slots: Arc::new(Semaphore::new(settings.max_instances as usize)),
            connections: ConnectionPool::new(max_http_connections),
            files: ProcessFiles::new(max_open_files),
        })
    }
}

/// A loaded, described plugin.
pub struct Plugin {
    pub id: Arc<str>,
    pub path: PathBuf,
    pub sha256: [u8; 32],
    pub tools: Vec<ToolInfo>,
    pub hook: Option<HookInfo>,
    pub compiled: CompileSource,
    pub grant: Arc<PluginGrant>,
    /// The granted directories, opened once at load; every call's preopens are clones of these.
    preopens: OpenedDirs,
    settings: Arc<str>,
    engine: Engine,
    fuel_metering: bool,
    sandbox_slots: Arc<Semaphore>,
    connections: ConnectionPool,
    files: ProcessFiles,
    pre: CordonPluginPre<CallState>,
}

/// What a sandbox gets: the plugin's grants and limits, or (for `describe`) nothing granted and a
/// short time limit.
#[derive(Clone, Copy)]
enum Grants {
    Granted,
    None,
}

type BoxedCall<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

impl Plugin {
    /// Reads, verifies (sha256 pin, lockfile approval), compiles (or loads from cache), links and
    /// describes one plugin file.
    pub async fn load(
        host: &PluginHost,
        path: &Path,
        grant: Arc<PluginGrant>,
        lock: Option<&Lockfile>,
    ) -> Result<Self, LoadError> {
        let id: Arc<str> = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into();
        let (sha256, header) = hash_file(path).map_err(LoadError::Read)?;
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
        check_component_header(&header)?;
        let preopens = grant.open_dirs()?;
        let engine = host.engine.clone();
        let cache = host.cache.clone();
        let file = path.to_path_buf();
        let (component, compiled) = tokio::task::spawn_blocking(move || {
            cache.load_or_compile(&engine, &sha256, || read_unchanged(&file, &sha256))
        })
        .await
        .map_err(|err| LoadError::NotAComponent(format!("compilation panicked: {err}")))?
        .map_err(|err| {
            LoadError::NotAComponent(format!("it cannot be compiled: {}", root_cause(&err)))
        })?;
        let instance_pre = host
            .linker
            .instantiate_pre(&component)
            .map_err(|err| LoadError::WrongWorld(format!("{err:#}")))?;
        let pre = CordonPluginPre::new(instance_pre)
            .map_err(|err| LoadError::WrongWorld(format!("{err:#}")))?;
        let settings: Arc<str> = grant.settings.to_string().into();
        let mut plugin = Self {
            id,
            path: path.to_path_buf(),
            sha256,
            tools: Vec::new(),
            hook: None,
            compiled,
            grant,
            preopens,
            settings,
            engine: host.engine.clone(),
            fuel_metering: host.fuel_metering,
            sandbox_slots: host.sandbox_slots.clone(),
            connections: host.connections.clone(),
            files: host.files.clone(),
            pre,
        };
        let info = plugin.describe().await?;
        check_declarations(&info)?;
        plugin.tools = info
            .tools
            .into_iter()
            .map(tool_info)
            .collect::<Result<_, _>>()?;
        plugin.hook = info.hook.map(|hook| HookInfo {
            tools: hook.tools,
            before: hook.before,
            after: hook.after,
        });
        Ok(plugin)
    }

    pub fn tool(&self, name: &str) -> Option<&ToolInfo> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// `describe`, with nothing granted and a short time limit.
    async fn describe(&self) -> Result<bindings::PluginInfo, LoadError> {
        let outcome = self
            .in_sandbox(
                "describe",
                "describe",
                Grants::None,
                &CallOptions::default(),
                |store, plugin| Box::pin(plugin.cordon_plugin_plugin().call_describe(store)),
            )
            .await;
        outcome
            .map(|(info, _)| info)
            .map_err(|failure| LoadError::Describe(failure.message))
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
        let wit_call = bindings::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let (output, budget) = match self.execute(&wit_call, options).await {
            Ok(done) => done,
            Err(failure) => {
                return ToolResult::error(id, name, failure.kind, failure.message, failure.details);
            }
        };
        if output.content.len() > MAX_CONTENT_BLOCKS {
            return ToolResult::error(
                id,
                name,
                ErrorKind::ToolError,
                too_many_blocks(name, output.content.len()),
                serde_json::json!({ "blocks": output.content.len(), "limitBlocks": MAX_CONTENT_BLOCKS }),
            );
        }
        let content: Vec<Content> = output
            .content
            .into_iter()
            .map(convert::content_from_wit)
            .collect();
        let size =
            content.iter().map(Content::size).sum::<usize>() as u64 + output.details.len() as u64;
        if size > budget {
            return ToolResult::error(
                id,
                name,
                ErrorKind::ToolError,
                self.over_output_limit(name, "result", size, budget),
                serde_json::json!({
                    "outputBytes": size,
                    "limitBytes": self.grant.limits.output_bytes,
                    "spentBeforeBytes": self.grant.limits.output_bytes.saturating_sub(budget),
                }),
            );
        }
        ToolResult::success(
            id,
            name,
            content,
            convert::details_from_wit(&output.details),
        )
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
        call: &bindings::ToolCall,
        options: &CallOptions,
    ) -> Result<(bindings::ToolOutput, u64), Failure> {
        let owned_call = call.clone();
        let (outcome, budget) = self
            .in_sandbox(
                &call.id,
                &call.name,
                Grants::Granted,
                options,
                move |store, plugin| {
                    Box::pin(async move {
                        plugin
                            .cordon_plugin_plugin()
                            .call_execute(store, &owned_call)
                            .await
                    })
                },
            )
            .await?;
        match outcome {
            Ok(output) => Ok((output, budget)),
            Err(failure) => Err(failure::from_tool_failure(failure)),
        }
    }

    /// Runs this plugin's before-hook on call `id` of tool `name` with `arguments`.
    pub async fn before_tool_call(
        &self,
        id: &str,
        name: &str,
        arguments: &serde_json::Value,
        options: &CallOptions,
    ) -> Result<BeforeDecision, Failure> {
        let owned_call = bindings::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let what = format!("before-hook of {}", self.id);
        let (decision, _) = self
            .in_sandbox(id, &what, Grants::Granted, options, move |store, plugin| {
                Box::pin(async move {
                    plugin
                        .cordon_plugin_plugin()
                        .call_before_tool_call(store, &owned_call)
                        .await
                })
            })
            .await?;
        Ok(match decision {
            bindings::BeforeDecision::Allow => BeforeDecision::Allow,
            bindings::BeforeDecision::Block(reason) => BeforeDecision::Block(reason),
            bindings::BeforeDecision::Rewrite(arguments) => BeforeDecision::Rewrite(arguments),
        })
    }

    /// Runs this plugin's after-hook on the `result` of call `id` of tool `name`. A replacement
    /// larger than what is left of this plugin's output limit is a failure (the hook fails closed).
    pub async fn after_tool_call(
        &self,
        id: &str,
        name: &str,
        arguments: &serde_json::Value,
        result: &ToolResult,
        options: &CallOptions,
    ) -> Result<AfterDecision, Failure> {
        let owned_call = bindings::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        let owned_outcome = bindings::ToolResult {
            content: result.content.iter().map(convert::content_to_wit).collect(),
            details: result.details.to_string(),
            is_error: result.is_error,
        };
        let what = format!("after-hook of {}", self.id);
        let (decision, left) = self
            .in_sandbox(id, &what, Grants::Granted, options, move |store, plugin| {
                Box::pin(async move {
                    plugin
                        .cordon_plugin_plugin()
                        .call_after_tool_call(store, &owned_call, &owned_outcome)
                        .await
                })
            })
            .await?;
        let replacement = match decision {
            bindings::AfterDecision::Keep => return Ok(AfterDecision::Keep),
            bindings::AfterDecision::Replace(replacement) => replacement,
        };
        if replacement.content.len() > MAX_CONTENT_BLOCKS {
            return Err(Failure::new(
                ErrorKind::ToolError,
                too_many_blocks(&what, replacement.content.len()),
                serde_json::json!({ "blocks": replacement.content.len(), "limitBlocks": MAX_CONTENT_BLOCKS }),
            ));
        }
        let size = replacement
            .content
            .iter()
            .map(convert::content_size)
            .sum::<usize>() as u64
            + replacement.details.len() as u64;
        if size > left {
            return Err(Failure::new(
                ErrorKind::ToolError,
                self.over_output_limit(&what, "replacement result", size, left),
                serde_json::json!({ "outputBytes": size, "limitBytes": self.grant.limits.output_bytes }),
            ));
        }
        let content = replacement
            .content
            .into_iter()
            .map(convert::content_from_wit)
            .collect();
        let details = convert::details_from_wit(&replacement.details);
        let mut replaced = ToolResult::success(id, name, content, details);
        if replacement.is_error {
            replaced.is_error = true;
            replaced.error_kind = Some(result.error_kind.unwrap_or(ErrorKind::ToolError));
        }
        Ok(AfterDecision::Replace(replaced))
    }

    /// Instantiates a fresh sandbox, runs `f` in it under the limits, and classifies any failure.
    /// Returns `f`'s value and the output budget the guest has left.
    async fn in_sandbox<R>(
        &self,
        call_id: &str,
        what: &str,
        grants: Grants,
        options: &CallOptions,
        f: impl for<'a> FnOnce(&'a mut Store<CallState>, &'a CordonPlugin) -> BoxedCall<'a, R>,
    ) -> Result<(R, u64), Failure> {
        let stdout = OutputCapture::new(self.grant.limits.stdio_bytes);
        let stderr = OutputCapture::new(self.grant.limits.stdio_bytes);
        let (limits, wasi, preopens) = match grants {
            Grants::Granted => (
                self.grant.limits.clone(),
                self.grant.wasi_context(stdout.clone(), stderr.clone()),
                self.preopens.clone(),
            ),
            Grants::None => {
                let limits = Limits {
                    timeout: DESCRIBE_TIMEOUT,
                    ..self.grant.limits.clone()
                };
                (
                    limits,
                    crate::sandbox::describe_context::describe_wasi_context(
                        stdout.clone(),
                        stderr.clone(),
                    ),
                    OpenedDirs::from([]),
                )
            }
        };
        let limits = &limits;
        // Waiting for a free slot does not count against the call's time limit.
        let _slot = tokio::select! {
            slot = self.sandbox_slots.acquire() => {
                slot.map_err(|_| Failure::trap("the host is shutting down", ""))?
            }
            () = options.cancel.cancelled() => return Err(failure::cancelled(what)),
        };
        let started = Instant::now();
        let reports = options
            .reports
            .clone()
            .map(|sink| (sink, call_id.to_string()));
        let http_grants = match grants {
            Grants::Granted => self.grant.http.clone(),
            Grants::None => Vec::new().into(),
        };
        let budget = Arc::new(ReportBudget::default());
        let http_gate = HttpGate::new(GateSetup {
            plugin: self.id.clone(),
            grants: http_grants,
            limits: limits.http.clone(),
            connections: self.connections.clone(),
            reports,
            budget: budget.clone(),
        });
        let state = CallState::new(CallSetup {
            wasi,
            preopens,
            open_files: OpenFiles::new(self.files.clone()),
            budget,
            http_gate,
            stdout,
            stderr,
            memory_bytes: limits.memory_bytes,
            plugin_id: self.id.clone(),
            call_id: call_id.to_string(),
            settings: self.settings.clone(),
            reports: options.reports.clone(),
            cancelled: options.cancel.clone(),
            deadline: started + limits.timeout,
            push_budget: limits.output_bytes,
        });
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        if self.fuel_metering {
            store
                .set_fuel(limits.fuel.unwrap_or(u64::MAX))
                .map_err(|err| Failure::trap(format!("cannot set fuel: {err}"), ""))?;
        }
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|context| {
            let state = context.data();
            if state.is_cancelled() || Instant::now() >= state.deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });

        let run = async {
            let plugin = self.pre.instantiate_async(&mut store).await?;
            f(&mut store, &plugin).await
        };
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(limits.timeout + HOST_CALL_GRACE, run) => outcome.ok(),
            () = options.cancel.cancelled() => None,
        };
        let state = store.data();
        state.report_omitted();
        log_stdio(&self.id, call_id, state);
        tracing::debug!(plugin = %self.id, call = call_id, what, elapsed_ms = started.elapsed().as_millis() as u64, "sandbox finished");
        match outcome {
            Some(Ok(value)) => Ok((value, state.push_budget())),
            Some(Err(err)) => Err(failure::classify(&err, state, limits, what)),
            // Stopped from outside: the time limit ran out, or the call was cancelled.
            None => Err(failure::timed_out(state, limits, what)),
        }
    }
}

fn too_many_blocks(what: &str, blocks: usize) -> String {
    format!(
        "{what} returned {blocks} content blocks, more than the {MAX_CONTENT_BLOCKS} a result may have; return fewer, larger blocks"
    )
}

/// The innermost message of an error chain, without wasmtime's backtraces.
fn root_cause(err: &wasmtime::Error) -> String {
    err.chain()
        .last()
        .map(|cause| cause.to_string())
        .unwrap_or_else(|| err.to_string())
}

fn log_stdio(plugin: &str, call: &str, state: &CallState) {
    for (stream, capture) in [("stdout", &state.stdout), ("stderr", &state.stderr)] {
        let (text, dropped) = capture.contents();
        if !text.is_empty() {
            tracing::debug!(
                plugin,
                call,
                stream,
                dropped_bytes = dropped,
                "{}",
                text.trim_end()
            );
        }
    }
}
