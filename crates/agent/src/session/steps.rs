//! One turn's steps: ask the model, recover calls written as text, run the calls or take the
//! answer, and stop sanely when the model does not (an empty answer gets one reminder; a reply
//! cut off by an output limit runs none of its calls).

use super::*;
use crate::conversation::message::{Message, StopReason, ToolCall, ToolOutcome};
use crate::conversation::observer::AgentObserver;
use cordon_runtime::report::ErrorKind;
use repetition::{Repeat, RepetitionGuard};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Agent {
    pub(super) async fn steps(
        &mut self,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<Answer, AgentError> {
        let mut reminded = false;
        let mut repetition = RepetitionGuard::new(self.options.max_repeated_calls);
        for step in 1..=self.options.max_steps {
            self.take_pipeline_update(observer)?;
            observer.model_request(step);
            // What searches loaded is offered from the next request on.
            let window = self.context.window(&self.client).await;
            let tools = self
                .request_stage(step, self.offered_tools(), window, observer, cancel, tally)
                .await?;
            let streamed_to = self.request_observer(observer);
            let reply = self
                .request(window, &tools, &streamed_to, cancel, tally)
                .await?;
            // The cap first: a `model-response` hook sees exactly the calls that may run (not the
            // one past the cap, answered with the cap's error, nor the dropped ones after it).
            let (mut reply, over_cap) = call_cap::apply(reply, self.options.max_calls_per_reply);
            let past_cap = over_cap.as_ref().and_then(|_| reply.tool_calls.pop());
            let (mut reply, replaced_by) =
                self.response_stage(step, reply, observer, cancel).await?;
            reply.tool_calls.extend(past_cap);
            if let Some(over) = &over_cap {
                observer.warning(&over.warning());
            }
            observer.model_reply(&reply);
            // The user reads a replaced reply as the hook wrote it; the model, in the turns after,
            // reads it quoted under the hook's header, never as its own words.
            let mut message = reply.clone().into_message();
            if let (Some(hook), Message::Assistant { content, .. }) = (&replaced_by, &mut message) {
                *content = crate::conversation::user_text::replaced_reply(hook, content);
            }
            self.push(message)?;
            if reply.tool_calls.is_empty() {
                if let Some(contract) = &self.options.contract {
                    // What a small model writes instead of calling final_result: the answer as
                    // JSON text. Taken when it matches the schema, text is read for calls and the
                    // reply was not cut off (half an answer may hold a matching part).
                    if self.options.parse_text_tool_calls
                        && reply.stop != StopReason::Length
                        && let Some(value) = contract.accept_text(&reply.text)
                    {
                        tracing::info!("took a final result the model wrote as text");
                        return Ok(Answer::Structured(value));
                    }
                    self.text_instead_of_final_result()?;
                    continue;
                }
                let cut_off =
                    (reply.stop == StopReason::Length).then(|| self.cut_off_cause(&reply, window));
                if reply.text.trim().is_empty() {
                    if let Some(cause) = cut_off {
                        return Err(AgentError::CutOffBeforeAnswer { cause });
                    }
                    if reminded {
                        return Err(AgentError::EmptyAnswer);
                    }
                    reminded = true;
                    self.push(Message::User {
                        content: UserText::reminder(EMPTY_ANSWER_REMINDER),
                    })?;
                    continue;
                }
                if let Some(message) = self.stop_stage(&reply.text, observer, cancel).await? {
                    self.push(Message::User { content: message })?;
                    continue;
                }
                return Ok(Answer::Text {
                    text: reply.text,
                    cut_off,
                });
            }
            let (outcomes, answer, loaded) = if reply.stop == StopReason::Length {
                (
                    cut_off(&reply.tool_calls, &self.cut_off_cause(&reply, window)),
                    None,
                    Vec::new(),
                )
            } else {
                let verdicts = repetition.observe(&reply.tool_calls);
                if let Some((call, count)) =
                    reply
                        .tool_calls
                        .iter()
                        .zip(&verdicts)
                        .find_map(|(call, verdict)| match verdict {
                            Repeat::Past(count) => Some((call, *count)),
                            _ => None,
                        })
                {
                    for call in &reply.tool_calls {
                        self.push(Message::Tool(ToolOutcome::error(
                            call,
                            ErrorKind::Cancelled,
                            "not run: the session stopped because the model repeated the same call",
                        )))?;
                    }
                    return Err(AgentError::Repeating {
                        tool: call.name.clone(),
                        count,
                    });
                }
                let runnable = reply.tool_calls.len() - usize::from(over_cap.is_some());
                let (mut outcomes, answer, loaded) = self
                    .run_calls(&reply.tool_calls[..runnable], observer, cancel)
                    .await;
                if let Some(over) = &over_cap {
                    outcomes.push(over.answer(&reply.tool_calls[runnable]));
                }
                for (outcome, verdict) in outcomes.iter_mut().zip(&verdicts) {
                    if let Repeat::AtLimit(count) = verdict {
                        outcome
                            .content
                            .push_str(&repetition::note(&outcome.tool_name, *count));
                    }
                }
                (outcomes, answer, loaded)
            };
            for outcome in outcomes {
                self.push(Message::Tool(outcome))?;
            }
            if !loaded.is_empty() {
                observer.tools_loaded(&loaded);
                self.push(Message::ToolsLoaded { tools: loaded })?;
            }
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
            if let Some(answer) = answer {
                return Ok(Answer::Structured(answer));
            }
            self.check_contract_failures()?;
        }
        Err(AgentError::MaxSteps {
            steps: self.options.max_steps,
        })
    }

    /// Under a contract, a plain-text answer is a failed attempt: remind the model.
    pub(super) fn text_instead_of_final_result(&mut self) -> Result<(), AgentError> {
        self.contract_failures += 1;
        self.check_contract_failures()?;
        self.push(Message::User {
            content: UserText::reminder(
                "You answered in text, but this session must end with a call to the \
                 `final_result` tool whose arguments match its schema. Call it now.",
            ),
        })
    }

    pub(super) fn check_contract_failures(&self) -> Result<(), AgentError> {
        if self.contract_failures <= contract::MAX_RETRIES {
            return Ok(());
        }
        let problems = self
            .messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Tool(outcome)
                    if outcome.tool_name == contract::FINAL_RESULT && outcome.is_error =>
                {
                    Some(outcome.content.clone())
                }
                _ => None,
            })
            .unwrap_or_else(|| "the model answered in text instead of calling final_result".into());
        Err(AgentError::ContractBroken {
            attempts: self.contract_failures,
            problems,
        })
    }
}

/// Ids given to calls recovered from text: `text_call_1`, `text_call_2`, … across the session.
pub(super) const TEXT_CALL_PREFIX: &str = "text_call_";
/// The highest number a recovered call's id gets; a transcript's higher ones are not counted.
pub(super) const MAX_TEXT_CALL_NUMBER: u64 = u32::MAX as u64;

/// Said to the model after an empty final answer.
const EMPTY_ANSWER_REMINDER: &str = "Your last reply was empty. Answer the request above in text, or call a tool if you still need one.";

/// A reply cut off by an output limit: its calls may be incomplete, so none is run.
fn cut_off(calls: &[ToolCall], cause: &str) -> Vec<ToolOutcome> {
    calls
        .iter()
        .map(|call| {
            ToolOutcome::error(
                call,
                ErrorKind::Truncated,
                format!(
                    "not run: your reply was cut off by {cause} before this call was complete. Make the call again (with shorter arguments if you can)."
                ),
            )
        })
        .collect()
}
