//! One request to the model: the conversation fitted to the window, the offered tools, the
//! reply's limit, and what to say when the reply was cut off; the usage estimated when the
//! provider gives none.

use super::*;
use crate::context::window::Window;
use crate::conversation::message::{Reply, StopReason, ToolCall, Usage};
use crate::conversation::observer::AgentObserver;
use crate::conversation::stream_gate::StreamGate;
use crate::conversation::text_calls;
use crate::model::client::ModelError;
use crate::model::provider::ToolSpec;
use crate::settings::Provider;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Agent {
    /// Asks for one reply: the history fitted to the window (compacting first when it must),
    /// text that may be a call held back from the screen, calls written as text recovered. A
    /// refusal for exceeding the context window is answered once: learn, compact, ask again.
    pub(super) async fn request(
        &mut self,
        window: Window,
        tools: &[ToolSpec],
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<Reply, AgentError> {
        let recovering =
            self.options.parse_text_tool_calls && self.client.provider() == Provider::OpenAi;
        let mut window = window;
        let mut refused = false;
        loop {
            let (messages, raw) = self
                .fitted(window, tools, refused, observer, cancel, tally)
                .await?;
            let offered = tools.iter().map(|tool| tool.name.clone()).collect();
            let gate = StreamGate::new(&**observer, recovering, offered);
            let reply_tokens = self.reply_limit(window);
            let outcome = self
                .client
                .complete(
                    &messages,
                    tools,
                    reply_tokens,
                    &gate,
                    &|| gate.enough_at(),
                    cancel,
                )
                .await;
            match outcome {
                Ok(mut reply) => {
                    if reply.cut_short {
                        reply.usage = Some(self.estimated_usage(raw, &reply.text));
                        observer.warning(
                            "the model wrote the same tool call twice in one reply; the rest of the reply was not read, and the call runs once",
                        );
                    } else if let Some(usage) = reply.usage {
                        self.context.calibrate(raw, usage.prompt_tokens);
                    }
                    tally.count(reply.usage);
                    let reply = self.recover_text_calls(reply, tools, &**observer);
                    gate.finish(reply.recovered);
                    return Ok(reply.reply);
                }
                Err(ModelError::ContextExceeded {
                    message,
                    prompt_tokens,
                    window: reported,
                }) if !refused => {
                    refused = true;
                    tally.requests += 1;
                    self.context
                        .learn_from_refusal(raw, prompt_tokens, reported);
                    window = self.context.window(&self.client).await;
                    observer.warning(&format!(
                        "the model refused the request as too long for its context window ({message}); compacting the history and trying once more"
                    ));
                }
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// Usage for a reply cut short, which the server never got to count: the request's
    /// estimate and the text read.
    pub(super) fn estimated_usage(&self, raw_sent: u64, text: &str) -> Usage {
        let counter = self.context.counter();
        Usage {
            prompt_tokens: counter.calibrated(raw_sent),
            completion_tokens: counter.calibrated(counter.raw_text(text)),
        }
    }

    /// The reply limit sent: the user's `max_tokens`, or cordon's default for servers that have
    /// none of their own (local servers generate until their context is full); OpenAI's own API
    /// keeps its per-model limit unless the user set one.
    pub(super) fn reply_limit(&self, window: Window) -> Option<u32> {
        if self.context.max_tokens_set().is_none() && self.client.has_own_output_limit() {
            return None;
        }
        Some(self.context.reply_tokens(window))
    }

    /// What cut a reply off: the context window filling up, the user's `max_tokens`, or the
    /// limit cordon set.
    pub(super) fn cut_off_cause(&self, reply: &Reply, window: Window) -> String {
        let Some(sent) = self.reply_limit(window) else {
            return "the model's own output limit (set [model] max_tokens to choose one)".into();
        };
        if let Some(usage) = reply.usage
            && usage
                .prompt_tokens
                .saturating_add(usage.completion_tokens)
                .saturating_mul(100)
                >= u64::from(window.tokens) * 97
        {
            return format!(
                "the model's context window ({} tokens) filling up",
                window.tokens
            );
        }
        match self.context.max_tokens_set() {
            Some(limit) if limit == sent => {
                format!("the output token limit (max_tokens = {limit})")
            }
            Some(limit) => format!(
                "the output token limit ({sent}: max_tokens = {limit}, held to half the {}-token context window)",
                window.tokens
            ),
            None => format!(
                "cordon's default output limit of {sent} tokens (set [model] max_tokens to change it)"
            ),
        }
    }

    /// With `parse_text_tool_calls`, a reply without calls whose text holds some gets them, with
    /// ids unique in the session. Without it, such a reply gets a warning naming the switch.
    pub(super) fn recover_text_calls(
        &mut self,
        mut reply: Reply,
        tools: &[ToolSpec],
        observer: &dyn AgentObserver,
    ) -> Recovered {
        let unchanged = |reply| Recovered {
            reply,
            recovered: false,
        };
        if !reply.tool_calls.is_empty() || self.client.provider() != Provider::OpenAi {
            return unchanged(reply);
        }
        let offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        let Some((text, calls)) = text_calls::recover(&reply.text, &offered) else {
            return unchanged(reply);
        };
        if !self.options.parse_text_tool_calls {
            observer.warning(
                "the model wrote what looks like a tool call as text, so it was not run; set parse_text_tool_calls = true under [model] in cordon.toml to recover such calls",
            );
            return unchanged(reply);
        }
        tracing::info!(calls = calls.len(), "recovered tool calls written as text");
        reply.text = text;
        // A small model stuck in a loop writes one call dozens of times in one reply: run it once.
        let mut seen = std::collections::HashSet::new();
        reply.tool_calls = calls
            .into_iter()
            .filter(|call| seen.insert(repetition::signature_of(&call.name, &call.arguments)))
            .map(|call| {
                // Saturating at the bound (never reached) repeats an id, which the transcript
                // and the loop tell apart by position.
                self.text_calls = self.text_calls.saturating_add(1).min(MAX_TEXT_CALL_NUMBER);
                ToolCall {
                    id: format!("{TEXT_CALL_PREFIX}{}", self.text_calls),
                    name: call.name,
                    arguments: call.arguments,
                }
            })
            .collect();
        // Only whole calls parse, so a call recovered from a reply cut off is complete.
        reply.stop = StopReason::ToolCalls;
        Recovered {
            reply,
            recovered: true,
        }
    }
}

/// A reply whose calls came out of text, and whether any did.
pub(super) struct Recovered {
    reply: Reply,
    recovered: bool,
}
