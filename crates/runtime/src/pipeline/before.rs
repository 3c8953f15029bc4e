//! The before-hooks of one call, run until they agree. Each hook watching the tool sees the
//! arguments and allows, blocks, rewrites them, or asks for a person's approval (an allow that
//! stands only if a person approves; approval.rs asks once the hooks agree). A rewrite counts as the rewriting hook's own
//! approval of the new arguments, but every other hook that allowed the old ones sees the new ones
//! again, so no call runs with arguments some hook watching it has not allowed exactly as they are.
//! The chain is walked at most [`MAX_PASSES`] times; hooks that keep rewriting each other's
//! arguments fail closed (`hooks::hook_failed`).

use super::Pipeline;
use super::approval::AskedBy;
use super::events::{Emitter, Event, HookStage};
use super::hooks::hook_failed;
use super::reports::{self, Reporter};
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::plugin::{BeforeDecision, CallOptions};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// Walks of the hook chain for one call before the hooks must have agreed.
pub const MAX_PASSES: usize = 4;

/// What the before-hooks made of a call.
pub(crate) enum BeforeOutcome {
    /// Every hook watching the call allowed these arguments; `rewritten_by` names the last hook
    /// that changed them.
    Allowed {
        arguments: Value,
        rewritten_by: Option<String>,
        /// The hooks that asked for a person's approval of these arguments, with their reasons.
        asks: Vec<AskedBy>,
    },
    /// Blocked, failed or cancelled: the call's result.
    Done(ToolResult),
}

impl Pipeline {
    pub(crate) async fn before_hooks(
        &self,
        id: &str,
        name: &str,
        mut arguments: Value,
        cancel: &CancellationToken,
        emitter: &Emitter,
    ) -> BeforeOutcome {
        let hooks: Vec<_> = self.inner.hooks.before(name).collect();
        // The version of the arguments each hook last allowed; the arguments' version goes up with
        // every rewrite.
        let mut agreed: Vec<Option<usize>> = vec![None; hooks.len()];
        // Each hook's `ask` reason, from its last decision.
        let mut asks: Vec<Option<String>> = vec![None; hooks.len()];
        let mut version = 0;
        let mut rewritten_by: Option<String> = None;
        for _pass in 0..MAX_PASSES {
            for (index, hook) in hooks.iter().enumerate() {
                if agreed[index] == Some(version) {
                    continue;
                }
                let running = Arc::new(AtomicBool::new(true));
                let reporter = Reporter {
                    tool_name: name.to_string(),
                    plugin: hook.id.to_string(),
                    stage: Some(HookStage::Before),
                };
                let options = CallOptions {
                    reports: reports::hook_sink(reporter, emitter, running.clone()),
                    cancel: cancel.clone(),
                };
                let span = crate::trace_spans::hook(&hook.id, "before", name);
                let decision = hook
                    .before_tool_call(id, name, &arguments, &options)
                    .instrument(span.clone())
                    .await;
                running.store(false, Ordering::SeqCst);
                let emit = |decision: &'static str, reason: Option<String>| {
                    crate::trace_spans::record_decision(&span, decision);
                    emitter.emit(|| Event::HookDecision {
                        tool_call_id: id.to_string(),
                        tool_name: name.to_string(),
                        hook: hook.id.to_string(),
                        stage: HookStage::Before,
                        decision,
                        reason,
                    })
                };
                match decision {
                    Ok(BeforeDecision::Allow) => {
                        emit("allow", None);
                        agreed[index] = Some(version);
                        asks[index] = None;
                    }
                    Ok(BeforeDecision::Ask(reason)) => {
                        emit("ask", Some(reason.clone()));
                        agreed[index] = Some(version);
                        asks[index] = Some(reason);
                    }
                    Ok(BeforeDecision::Block(reason)) => {
                        emit("block", Some(reason.clone()));
                        return BeforeOutcome::Done(ToolResult::error(
                            id,
                            name,
                            ErrorKind::Blocked,
                            format!("The call was blocked by hook `{}`: {reason}", hook.id),
                            json!({ "hook": &*hook.id, "reason": reason }),
                        ));
                    }
                    Ok(BeforeDecision::Rewrite(text)) => match serde_json::from_str::<Value>(&text)
                    {
                        Ok(same) if same == arguments => {
                            emit("allow", None);
                            agreed[index] = Some(version);
                            asks[index] = None;
                        }
                        Ok(rewritten @ Value::Object(_)) => {
                            emit("rewrite", None);
                            arguments = rewritten;
                            version += 1;
                            agreed[index] = Some(version);
                            asks[index] = None;
                            rewritten_by = Some(hook.id.to_string());
                        }
                        _ => {
                            let reason = format!(
                                "it rewrote the arguments to something that is not a JSON object: {}",
                                crate::report::budget::cut(&self.secrets().scrub(&text), 1_024)
                            );
                            emit("failed", Some(reason.clone()));
                            return BeforeOutcome::Done(hook_failed(
                                id,
                                name,
                                &hook.id,
                                HookStage::Before,
                                &reason,
                                None,
                            ));
                        }
                    },
                    Err(failure) if failure.kind == ErrorKind::Cancelled => {
                        return BeforeOutcome::Done(ToolResult::error(
                            id,
                            name,
                            ErrorKind::Cancelled,
                            "The call was cancelled before it ran.",
                            json!({}),
                        ));
                    }
                    Err(failure) => {
                        emit("failed", Some(failure.message.clone()));
                        return BeforeOutcome::Done(hook_failed(
                            id,
                            name,
                            &hook.id,
                            HookStage::Before,
                            &failure.message,
                            Some(failure.kind),
                        ));
                    }
                }
            }
            if agreed.iter().all(|seen| *seen == Some(version)) {
                let asks = hooks
                    .iter()
                    .zip(asks)
                    .filter_map(|(hook, reason)| {
                        Some(AskedBy {
                            who: format!("hook `{}`", hook.id),
                            reason: reason?,
                        })
                    })
                    .collect();
                return BeforeOutcome::Allowed {
                    arguments,
                    rewritten_by,
                    asks,
                };
            }
        }
        let unsettled: Vec<String> = hooks
            .iter()
            .zip(&agreed)
            .filter(|(_, seen)| **seen != Some(version))
            .map(|(hook, _)| format!("`{}`", hook.id))
            .collect();
        let last = rewritten_by.unwrap_or_default();
        let reason = format!(
            "the before-hooks did not settle on the arguments in {MAX_PASSES} passes: `{last}` rewrote them last and {} did not allow the result",
            unsettled.join(", ")
        );
        BeforeOutcome::Done(hook_failed(
            id,
            name,
            &last,
            HookStage::Before,
            &reason,
            None,
        ))
    }
}
