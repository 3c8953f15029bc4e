//! Steps 2 to 4 for one prepared call: run it in a fresh sandbox (streaming its progress and logs as
//! events), pass the result through the after-hooks, and apply the size budget.

use super::events::{Emitter, Event, HookStage};
use super::prepare::{ReadyCall, hook_failed};
use super::{Pipeline, budget};
use crate::bindings;
use crate::call_state::{GuestReport, ReportSink};
use crate::convert;
use crate::plugin::CallOptions;
use crate::result::{ErrorKind, ToolResult};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

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
        let mut result = if cancel.is_cancelled() {
            cancelled(&call.id, &call.name)
        } else {
            let running = Arc::new(AtomicBool::new(true));
            // Guest reports become events only when someone listens.
            let reports = emitter
                .is_listening()
                .then(|| report_events(&call, emitter, running.clone()));
            let options = CallOptions {
                reports,
                cancel: cancel.clone(),
            };
            let result = call
                .plugin
                .call_tool(&call.id, &call.name, &call.arguments, &options)
                .await;
            // Progress a guest reports after its call ended is ignored.
            running.store(false, Ordering::SeqCst);
            let options = CallOptions {
                reports: None,
                cancel: cancel.clone(),
            };
            self.after_hooks(&call, result, &options, emitter).await
        };
        budget::apply(&mut result, self.inner.settings.max_result_bytes);
        self.end(&result, started, emitter);
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
        options: &CallOptions,
        emitter: &Emitter,
    ) -> ToolResult {
        let wit_call = bindings::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.to_string(),
        };
        for hook in self.inner.hooks.after(&call.name) {
            let decision = hook
                .after_tool_call(&wit_call, &to_wit_result(&result), options)
                .await;
            let emit = |decision: &'static str, reason: Option<String>| {
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
                Ok(bindings::AfterDecision::Keep) => emit("keep", None),
                Ok(bindings::AfterDecision::Replace(replacement)) => {
                    emit("replace", None);
                    result = from_wit_result(&call.id, &call.name, replacement, result.error_kind);
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

/// Turns what a call reports into events while it runs: progress into `tool_execution_update`,
/// log lines into `tool_log`, HTTP requests into `http_request`, file opens into `path_open`. Reports after the call ended are dropped.
fn report_events(call: &ReadyCall, emitter: &Emitter, running: Arc<AtomicBool>) -> ReportSink {
    let (emitter, name) = (emitter.clone(), call.name.clone());
    Arc::new(move |report: GuestReport| {
        if !running.load(Ordering::SeqCst) {
            return;
        }
        emitter.emit(|| match report {
            GuestReport::Progress(update) => Event::ToolExecutionUpdate {
                tool_call_id: update.call_id,
                tool_name: name.clone(),
                content: update.content,
                details: update.details,
            },
            GuestReport::Log(line) => Event::ToolLog {
                tool_call_id: line.call_id,
                tool_name: name.clone(),
                level: line.level,
                message: line.message,
            },
            GuestReport::Http(attempt) => Event::HttpRequest {
                tool_call_id: attempt.call_id,
                tool_name: name.clone(),
                method: attempt.method,
                url: attempt.url,
                allowed: attempt.allowed,
            },
            GuestReport::PathOpen(open) => Event::PathOpen {
                outcome: open.outcome(),
                tool_call_id: open.call_id,
                tool_name: name.clone(),
                path: open.path,
                mode: open.mode,
                error: open.error,
            },
        });
    })
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

fn to_wit_result(result: &ToolResult) -> bindings::ToolResult {
    bindings::ToolResult {
        content: result.content.iter().map(convert::content_to_wit).collect(),
        details: result.details.to_string(),
        is_error: result.is_error,
    }
}

/// A hook's replacement result. An error keeps the kind it had, or becomes `tool_error`.
fn from_wit_result(
    id: &str,
    name: &str,
    replacement: bindings::ToolResult,
    previous: Option<ErrorKind>,
) -> ToolResult {
    let content = replacement
        .content
        .into_iter()
        .map(convert::content_from_wit)
        .collect();
    let details = convert::details_from_wit(&replacement.details);
    let mut result = ToolResult::success(id, name, content, details);
    if replacement.is_error {
        result.is_error = true;
        result.error_kind = Some(previous.unwrap_or(ErrorKind::ToolError));
    }
    result
}
