//! The pipeline: what happens between "the model asked for these tool calls" and "these results go
//! back to it". One code path for `cordon call`, `cordon batch`, the agent loop and the MCP server.
//!
//! 1. Prepare each call in call order (`prepare.rs`): lookup, active set, schema, before-hooks.
//! 2. Execute the prepared calls concurrently (bounded), or one at a time in call order when the
//!    batch is sequential (`[agent] execution`, or any tool in it declares `sequential`).
//! 3. After-hooks and 4. the size budget, per call (`execute.rs`).
//! 5. Results in the original call order; events as things happen (`events.rs`).
//! 6. Cancellation through a token: running sandboxes are interrupted, pending calls end as
//!    `cancelled`.

pub mod audit;
mod before;
mod budget;
pub mod events;
mod execute;
mod hooks;
pub mod input;
mod prepare;
mod reports;

use crate::config::{BatchSettings, Execution};
use crate::registry::Registry;
use crate::report::ToolResult;
use crate::sandbox::plugin::{Plugin, ToolInfo};
use audit::{AuditLog, AuditRecorder};
use events::{Emitter, EventSink};
use hooks::HookChain;
use prepare::Prepared;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use events::{Event, HookStage};
pub use input::{BatchInputError, CallRequest, parse_batch};

/// The active set names a tool that no plugin provides.
#[derive(Debug, thiserror::Error)]
#[error(
    "the active tool set names {name:?}, which no loaded plugin provides; loaded tools: {available}"
)]
pub struct UnknownActiveTool {
    pub name: String,
    pub available: String,
}

/// What a caller gives a batch besides its calls.
#[derive(Clone, Default)]
pub struct BatchOptions {
    /// Cancelling ends running calls within an epoch tick and pending ones at once, as `cancelled`.
    pub cancel: CancellationToken,
    /// Receives events as they happen.
    pub events: Option<EventSink>,
}

/// Runs batches of tool calls against a registry. Cheap to clone.
#[derive(Clone)]
pub struct Pipeline {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Arc<Registry>,
    audit: Option<Arc<AuditLog>>,
    hooks: HookChain,
    settings: BatchSettings,
    active: Option<BTreeSet<String>>,
}

impl Pipeline {
    /// A pipeline over `registry`, with no audit log; `settings.tools` (if any) must name loaded
    /// tools. [`crate::RuntimeBuilder`] assembles one from a config, audit log included.
    pub fn new(
        registry: Arc<Registry>,
        settings: BatchSettings,
        hook_order: &[String],
    ) -> Result<Self, UnknownActiveTool> {
        Self::assemble(registry, settings, hook_order, None)
    }

    /// A pipeline over `registry` that appends one line per call to `audit` (see audit.rs).
    pub(crate) fn assemble(
        registry: Arc<Registry>,
        settings: BatchSettings,
        hook_order: &[String],
        audit: Option<AuditLog>,
    ) -> Result<Self, UnknownActiveTool> {
        let active = match &settings.tools {
            Some(names) => {
                for name in names {
                    if registry.tool(name).is_none() {
                        return Err(UnknownActiveTool {
                            name: name.clone(),
                            available: registry.tool_names().join(", "),
                        });
                    }
                }
                Some(names.iter().cloned().collect())
            }
            None => None,
        };
        let hooks = HookChain::new(registry.plugins(), hook_order);
        Ok(Self {
            inner: Arc::new(Inner {
                registry,
                audit: audit.map(Arc::new),
                hooks,
                settings,
                active,
            }),
        })
    }

    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The plugins with granted hooks, in the order their hooks run.
    pub fn hooks(&self) -> &[Arc<Plugin>] {
        self.inner.hooks.all()
    }

    /// Whether an after-hook reviews `tool`'s results (and so whatever else of its text should wait
    /// for that review: its progress messages and log lines are not forwarded to MCP clients).
    pub fn results_reviewed(&self, tool: &str) -> bool {
        self.inner.hooks.after(tool).next().is_some()
    }

    /// The plugins whose hooks were not granted (and never run).
    pub fn ungranted_hooks(&self) -> &[Arc<Plugin>] {
        self.inner.hooks.ungranted()
    }

    pub fn is_active(&self, tool: &str) -> bool {
        self.inner
            .active
            .as_ref()
            .is_none_or(|active| active.contains(tool))
    }

    /// The active tools, sorted by name.
    pub fn active_tools(&self) -> impl Iterator<Item = (&Arc<Plugin>, &ToolInfo)> {
        self.inner
            .registry
            .tools()
            .filter(|(_, tool)| self.is_active(&tool.name))
    }

    fn active_tool_names(&self) -> Vec<String> {
        self.active_tools()
            .map(|(_, tool)| tool.name.clone())
            .collect()
    }

    /// Runs one call as a batch of one.
    pub async fn call(&self, request: CallRequest, options: &BatchOptions) -> ToolResult {
        self.run(vec![request], options)
            .await
            .pop()
            .expect("one result per call")
    }

    /// Runs a batch; returns exactly one result per call, in call order.
    pub async fn run(&self, calls: Vec<CallRequest>, options: &BatchOptions) -> Vec<ToolResult> {
        let events = match &self.inner.audit {
            None => options.events.clone(),
            Some(log) => {
                let recorder = AuditRecorder::new(log.clone(), self.inner.registry.clone());
                let user = options.events.clone();
                let sink: EventSink = Arc::new(move |event: Event| {
                    recorder.observe(&event);
                    if let Some(user) = &user {
                        user(event);
                    }
                });
                Some(sink)
            }
        };
        self.run_with(calls, options, Emitter::new(events)).await
    }

    /// A call whose id an earlier call of the batch has: not run, so no two calls share a record.
    /// Its events (and audit line) carry the id with its position, `id#N`, or another suffix when
    /// a call of the batch already has that id (`taken` holds every id in use).
    fn refuse_duplicate(
        &self,
        index: usize,
        request: &CallRequest,
        started: Instant,
        emitter: &Emitter,
        taken: &mut std::collections::HashSet<String>,
    ) -> ToolResult {
        let result = ToolResult::error(
            &request.id,
            &request.name,
            crate::report::ErrorKind::InvalidArguments,
            format!(
                "Another call of this batch already has the id {:?}, so this one was not run; every call of a batch needs its own id. Call it again with a new id.",
                request.id
            ),
            serde_json::json!({ "duplicateId": request.id }),
        );
        let mut distinct = format!("{}#{}", request.id, index + 1);
        let mut attempt = 1;
        while taken.contains(&distinct) {
            distinct = format!("{}#{}.{attempt}", request.id, index + 1);
            attempt += 1;
        }
        taken.insert(distinct.clone());
        emitter.emit(|| Event::ToolExecutionStart {
            tool_call_id: distinct.clone(),
            tool_name: request.name.clone(),
            arguments: serde_json::Value::Null,
        });
        emitter.emit(|| Event::ToolExecutionEnd {
            tool_call_id: distinct,
            tool_name: request.name.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
            is_error: true,
            error_kind: result.error_kind,
        });
        result
    }

    async fn run_with(
        &self,
        calls: Vec<CallRequest>,
        options: &BatchOptions,
        emitter: Emitter,
    ) -> Vec<ToolResult> {
        let cancel = &options.cancel;
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut ready = Vec::new();
        let mut ids = std::collections::HashSet::new();
        let mut taken: std::collections::HashSet<String> =
            calls.iter().map(|call| call.id.clone()).collect();
        for (index, request) in calls.iter().enumerate() {
            let started = Instant::now();
            if !ids.insert(request.id.as_str()) {
                results[index] =
                    Some(self.refuse_duplicate(index, request, started, &emitter, &mut taken));
                continue;
            }
            match self.prepare(request, cancel, &emitter).await {
                Prepared::Ready(call) => ready.push((index, call)),
                Prepared::Done(mut result) => {
                    emitter.emit(|| Event::ToolExecutionStart {
                        tool_call_id: request.id.clone(),
                        tool_name: request.name.clone(),
                        arguments: serde_json::from_str(&request.arguments)
                            .unwrap_or_else(|_| request.arguments.clone().into()),
                    });
                    budget::apply(&mut result, &self.inner.settings);
                    self.end(&result, started, &emitter);
                    results[index] = Some(result);
                }
            }
        }

        let sequential = self.inner.settings.execution == Execution::Sequential
            || ready.iter().any(|(_, call)| call.sequential);
        // One call (or a sequential batch) runs on this task: no spawn, no slot to wait for.
        if sequential || ready.len() == 1 {
            for (index, call) in ready {
                results[index] = Some(self.execute(call, cancel, &emitter).await);
            }
        } else {
            let slots = Arc::new(Semaphore::new(self.inner.settings.max_concurrency));
            let mut running = tokio::task::JoinSet::new();
            let mut task_index = std::collections::HashMap::new();
            // Slots are taken here, in call order, so calls start in the order the model gave them.
            for (index, call) in ready {
                let slot = tokio::select! {
                    slot = slots.clone().acquire_owned() => slot.ok(),
                    () = cancel.cancelled() => None,
                };
                let (pipeline, cancel, emitter) = (self.clone(), cancel.clone(), emitter.clone());
                let (id, name) = (call.id.clone(), call.name.clone());
                let handle = running.spawn(async move {
                    let _slot = slot;
                    pipeline.execute(call, &cancel, &emitter).await
                });
                task_index.insert(handle.id(), (index, id, name));
            }
            while let Some(joined) = running.join_next_with_id().await {
                match joined {
                    Ok((task, result)) => results[task_index[&task].0] = Some(result),
                    Err(err) => {
                        let (index, id, name) = &task_index[&err.id()];
                        tracing::error!(call = %id, "a call's task failed: {err}");
                        results[*index] = Some(ToolResult::error(
                            id,
                            name,
                            crate::report::ErrorKind::Trap,
                            "The host failed while running this call; it was not completed.",
                            serde_json::json!({ "hostError": err.to_string() }),
                        ));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|result| result.expect("every call has a result"))
            .collect()
    }
}
