//! Steps 2 to 4 for one prepared call: run it in a fresh sandbox (streaming its progress, logs,
//! requests and opens as events), pass the result through the after-hooks (a replacement is the
//! whole new result, held to the output schema by replacement_output.rs), and apply the size
//! budget.

use super::events::{Emitter, Event, HookStage};
use super::hooks::hook_failed;
use super::prepare::ReadyCall;
use super::reports::{self, Reporter};
use super::{Pipeline, replacement_output, result_budget};
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::contract::ContractVersion;
use crate::sandbox::plugin::{AfterDecision, CallOptions};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

impl Pipeline {
    /// Runs a prepared call to its final result, emitting its start and end events.
    pub(crate) async fn execute(
        &self,
        call: ReadyCall,
        cancel: &CancellationToken,
        emitter: &Emitter,
    ) -> ToolResult {
        emitter.emit(|| Event::ToolExecutionStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        let started = Instant::now();
        let span = tracing::Span::current();
        crate::trace_spans::record_run(&span, &call.plugin.id, &call.arguments, self.secrets());
        let mut result = if cancel.is_cancelled() {
            cancelled(&call.id, &call.name)
        } else {
            let running = Arc::new(AtomicBool::new(true));
            let reporter = Reporter {
                tool_name: call.name.clone(),
                plugin: call.plugin.id.to_string(),
                stage: None,
            };
            let options = CallOptions {
                reports: reports::sink(reporter, emitter, running.clone()),
                cancel: cancel.clone(),
            };
            let result = call
                .plugin
                .call_tool(&call.id, &call.name, &call.arguments, &options)
                .await;
            // Progress a guest reports after its call ended is ignored.
            running.store(false, Ordering::SeqCst);
            self.after_hooks(&call, result, cancel, emitter).await
        };
        // Masked before it is cut: a cut inside a secret would leave the rest of it unmasked.
        self.secrets().scrub_result(&mut result);
        result_budget::apply(&mut result, &self.inner.settings);
        self.end(&result, started, emitter);
        crate::trace_spans::record_result(&span, &result, self.secrets());
        result
    }

    pub(crate) fn end(&self, result: &ToolResult, started: Instant, emitter: &Emitter) {
        emitter.emit(|| Event::ToolExecutionEnd {
            tool_call_id: result.tool_call_id.clone(),
            tool_name: result.tool_name.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
            is_error: result.is_error,
            error_kind: result.error_kind,
        });
    }

    /// Each after-hook watching the tool sees the result (as replaced by the hooks before it).
    async fn after_hooks(
        &self,
        call: &ReadyCall,
        mut result: ToolResult,
        cancel: &CancellationToken,
        emitter: &Emitter,
    ) -> ToolResult {
        let output_schema = call
            .plugin
            .tool(&call.name)
            .and_then(|tool| tool.output_schema.as_ref());
        for hook in self.inner.hooks.after(&call.name) {
            // A 0.1 hook cannot see structured output, so it cannot review it: nothing it did not
            // review goes out. A tool that promised structured output then fails closed.
            if hook.contract == ContractVersion::V0_1 && result.structured.is_some() {
                if output_schema.is_some() {
                    let reason = format!(
                        "it speaks contract 0.1, which cannot show it {}'s structured output, and that tool promises structured output; upgrade the hook to contract 0.2, or stop it watching this tool",
                        call.name
                    );
                    emitter.emit(|| Event::HookDecision {
                        tool_call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        hook: hook.id.to_string(),
                        stage: HookStage::After,
                        decision: "failed",
                        reason: Some(reason.clone()),
                    });
                    return hook_failed(
                        &call.id,
                        &call.name,
                        &hook.id,
                        HookStage::After,
                        &reason,
                        None,
                    );
                }
                result.structured = None;
                if let Some(details) = result.details.as_object_mut() {
                    details.insert(
                        "structuredDropped".into(),
                        serde_json::json!(format!(
                            "after-hook `{}` (contract 0.1) could not review it",
                            hook.id
                        )),
                    );
                }
            }
            let running = Arc::new(AtomicBool::new(true));
            let reporter = Reporter {
                tool_name: call.name.clone(),
                plugin: hook.id.to_string(),
                stage: Some(HookStage::After),
            };
            let options = CallOptions {
                reports: reports::hook_sink(reporter, emitter, running.clone()),
                cancel: cancel.clone(),
            };
            let span = crate::trace_spans::hook(&hook.id, "after", &call.name);
            // Masked before the hook sees it: a hook is another plugin, which must not read the
            // tool's secrets (a `secrets` key it returned, a header a server echoed), nor those a
            // hook before it put in its replacement.
            self.secrets().scrub_result(&mut result);
            // No schema for the sandbox: it would refuse a replacement without structured output,
            // which here stands as the hook's text alone (replacement_output.rs checks the rest).
            let decision = hook
                .after_tool_call(
                    &call.id,
                    &call.name,
                    &call.arguments,
                    &result,
                    None,
                    &options,
                )
                .instrument(span.clone())
                .await;
            running.store(false, Ordering::SeqCst);
            let emit = |decision: &'static str, reason: Option<String>| {
                crate::trace_spans::record_decision(&span, decision);
                emitter.emit(|| Event::HookDecision {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    hook: hook.id.to_string(),
                    stage: HookStage::After,
                    decision,
                    reason,
                })
            };
            match decision {
                Ok(AfterDecision::Keep) => emit("keep", None),
                Ok(AfterDecision::Replace(replacement)) => {
                    if let Some(reason) =
                        replacement_output::refusal(&replacement, &call.name, output_schema).await
                    {
                        emit("failed", Some(reason.clone()));
                        return hook_failed(
                            &call.id,
                            &call.name,
                            &hook.id,
                            HookStage::After,
                            &reason,
                            None,
                        );
                    }
                    emit("replace", None);
                    // The whole new result: nothing of the old one, structured output included,
                    // outlives a replacement.
                    result = *replacement;
                }
                Err(failure) if failure.kind == ErrorKind::Cancelled => {
                    return cancelled(&call.id, &call.name);
                }
                Err(failure) => {
                    emit("failed", Some(failure.message.clone()));
                    return hook_failed(
                        &call.id,
                        &call.name,
                        &hook.id,
                        HookStage::After,
                        &failure.message,
                        Some(failure.kind),
                    );
                }
            }
        }
        result
    }
}

pub(crate) fn cancelled(id: &str, name: &str) -> ToolResult {
    ToolResult::error(
        id,
        name,
        ErrorKind::Cancelled,
        "The call was cancelled before it finished.",
        json!({}),
    )
}
