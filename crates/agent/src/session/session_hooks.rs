//! The session's stages as hooks see them (contract 0.3): the event each stage sends, bounded as
//! docs/session-hooks.md states, and what the loop does with the hooks' decisions. A stage with
//! no hook watching it costs nothing: no event is built and no sandbox starts.

use super::*;
use crate::context::window::Window;
use crate::conversation::message::{Message, Reply};
use crate::conversation::user_text::{Prompt, Source};
use cordon_runtime::SessionStage;
use cordon_runtime::pipeline::{StageOptions, StageOutcome};
use serde_json::json;

use cordon_runtime::pipeline::stage_payload;
/// The bounds of a stage's event: the runtime's, which it applies to every event whoever builds
/// it (an MCP client asking a hook tool included); the loop cuts to them as it builds its own.
pub use cordon_runtime::pipeline::stage_payload::{
    MAX_COMPACTION_MESSAGES, MAX_MESSAGE_BYTES as MAX_EVENT_MESSAGE_BYTES,
    MAX_MESSAGES as MAX_EVENT_MESSAGES, MAX_TEXT_BYTES as MAX_EVENT_TEXT_BYTES,
};

/// `text` with configured secrets masked, then cut as the runtime cuts an event's texts.
/// Masking comes first: a secret cut in two would match no mask.
fn bounded(text: &str, limit: usize, secrets: &Secrets) -> String {
    let text = &*secrets.scrub(text);
    stage_payload::cut(text, limit).into_owned()
}

/// One message as a `model-request` event shows it, or `None` for a record that is no message.
fn message_view(message: &Message, secrets: &Secrets) -> Option<Value> {
    let (role, text) = match message {
        Message::System { content } => ("system", content.clone()),
        Message::User { content } => ("user", content.as_str().to_string()),
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let calls: Vec<&str> = tool_calls.iter().map(|call| call.name.as_str()).collect();
            let text = if calls.is_empty() {
                content.clone()
            } else {
                format!("{content}\n[calls: {}]", calls.join(", "))
            };
            ("assistant", text)
        }
        Message::Tool(outcome) => (
            "tool",
            format!("{}: {}", outcome.tool_name, outcome.content),
        ),
        _ => return None,
    };
    Some(json!({"role": role, "text": bounded(&text, MAX_EVENT_MESSAGE_BYTES, secrets)}))
}

/// The newest `limit` of `messages` as events show them, oldest first.
fn newest_views(messages: &[Message], limit: usize, secrets: &Secrets) -> Vec<Value> {
    let mut views: Vec<Value> = messages
        .iter()
        .rev()
        .filter_map(|message| message_view(message, secrets))
        .take(limit)
        .collect();
    views.reverse();
    views
}

/// An observer that holds back a reply's streamed text: with a `model-response` hook watching,
/// the text a user sees is the reply as the hook left it, never the text before it.
struct TextHeldBack(Arc<dyn AgentObserver>);

impl AgentObserver for TextHeldBack {
    fn model_request(&self, step: u32) {
        self.0.model_request(step)
    }
    fn retry(&self, retry: u32, delay: std::time::Duration, reason: &str) {
        self.0.retry(retry, delay, reason)
    }
    fn model_reply(&self, reply: &Reply) {
        self.0.model_reply(reply)
    }
    fn tool_event(&self, event: &cordon_runtime::pipeline::Event) {
        self.0.tool_event(event)
    }
    fn compaction(&self, report: &crate::conversation::observer::CompactionReport) {
        self.0.compaction(report)
    }
    fn routed(&self, route: &crate::conversation::observer::Route) {
        self.0.routed(route)
    }
    fn warning(&self, text: &str) {
        self.0.warning(text)
    }
    fn tools_loaded(&self, tools: &[String]) {
        self.0.tools_loaded(tools)
    }
    fn tools_changed(&self, changes: &cordon_runtime::pipeline::ToolChanges) {
        self.0.tools_changed(changes)
    }
    fn turn_end(&self, model_requests: u32, usage: Option<crate::conversation::message::Usage>) {
        self.0.turn_end(model_requests, usage)
    }
}

impl Agent {
    /// The observer a request streams to: `observer`, or, when a `model-response` hook may
    /// change the reply, one that does not show its text as it arrives.
    pub(super) fn request_observer(
        &self,
        observer: &Arc<dyn AgentObserver>,
    ) -> Arc<dyn AgentObserver> {
        match self
            .pipeline
            .session_hooks(SessionStage::ModelResponse)
            .next()
        {
            Some(_) => Arc::new(TextHeldBack(observer.clone())),
            None => observer.clone(),
        }
    }

    /// Runs the hooks watching `stage` on the event `payload` builds; `None` when none watches it.
    pub(super) async fn stage(
        &self,
        stage: SessionStage,
        payload: impl FnOnce() -> Value,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Option<StageOutcome> {
        self.pipeline.session_hooks(stage).next()?;
        let watcher = observer.clone();
        let options = StageOptions {
            events: Some(Arc::new(move |event| watcher.tool_event(&event))),
            cancel: cancel.clone(),
        };
        Some(
            self.pipeline
                .session_stage(stage, payload(), &options)
                .await,
        )
    }

    /// `session-start`, once per session, before its first prompt: context the hooks add.
    pub(super) async fn start_session(
        &mut self,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<Vec<(String, String)>, AgentError> {
        if self.started {
            return Ok(Vec::new());
        }
        let this = &*self;
        let payload = || {
            let resumed = this
                .messages
                .iter()
                .any(|m| matches!(m, Message::User { .. }));
            let tools: Vec<String> = this.offered_tools().into_iter().map(|t| t.name).collect();
            json!({"resumed": resumed, "messages": this.messages.len(), "tools": tools})
        };
        let Some(outcome) = self
            .stage(SessionStage::SessionStart, payload, observer, cancel)
            .await
        else {
            self.started = true;
            return Ok(Vec::new());
        };
        // A session whose start failed has not started: the next turn runs its hooks again.
        blocked(
            SessionStage::SessionStart,
            &outcome,
            self.pipeline.secrets(),
        )?;
        self.started = true;
        Ok(outcome.context)
    }

    /// `prompt`: the prompt as the hooks leave it, with `context` (the session start's) and
    /// theirs after it, all through the gate; and the rewrite, if a hook rewrote it. Or a block.
    /// A hook's `only-tools` narrows this turn's tools.
    pub(super) async fn prompt_stage(
        &mut self,
        prompt: &str,
        mut context: Vec<(String, String)>,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<(UserText, Option<String>), AgentError> {
        self.prompt_fits_its_hooks(prompt)?;
        let payload =
            || json!({"prompt": bounded(prompt, MAX_EVENT_TEXT_BYTES, self.pipeline.secrets())});
        let mut rewrite = None;
        if let Some(outcome) = self
            .stage(SessionStage::Prompt, payload, observer, cancel)
            .await
        {
            blocked(SessionStage::Prompt, &outcome, self.pipeline.secrets())?;
            rewrite = outcome.replaced;
            context.extend(outcome.context);
            self.turn_tools = outcome.only_tools;
        }
        let text = match &rewrite {
            Some((hook, text)) => Prompt::Rewritten { hook, text },
            None => Prompt::Typed(prompt),
        };
        Ok((
            UserText::prompt_with_context(text, &context),
            rewrite.map(|(_, text)| text),
        ))
    }

    /// Refuses a prompt the `prompt` hooks could not read whole: one that, as they are shown it
    /// (secrets masked, which may lengthen it), is over the event's bound. A hook that saw only
    /// part of it would let the rest through unread.
    fn prompt_fits_its_hooks(&self, prompt: &str) -> Result<(), AgentError> {
        if self
            .pipeline
            .session_hooks(SessionStage::Prompt)
            .next()
            .is_none()
        {
            return Ok(());
        }
        let shown = self.pipeline.secrets().scrub(prompt).len();
        if shown > MAX_EVENT_TEXT_BYTES {
            return Err(AgentError::PromptTooLong {
                bytes: shown,
                limit: MAX_EVENT_TEXT_BYTES,
            });
        }
        Ok(())
    }

    /// `prompt` for a resumed turn's prompt, on record from before the session stopped: the
    /// hooks see it again (`resumed: true`), so what they narrow or block holds after a resume
    /// too. Their context and `context` (the session start's) are added as a message of their
    /// own. The prompt the model has is the one on record: a hook that rewrites it otherwise
    /// than it was rewritten then stops the turn (give the prompt again to have it rewritten).
    pub(super) async fn resumed_prompt_stage(
        &mut self,
        pending: &PendingPrompt,
        mut context: Vec<(String, String)>,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        let prompt = pending.prompt.as_str();
        self.prompt_fits_its_hooks(prompt)?;
        let payload = || json!({"prompt": bounded(prompt, MAX_EVENT_TEXT_BYTES, self.pipeline.secrets()), "resumed": true});
        if let Some(outcome) = self
            .stage(SessionStage::Prompt, payload, observer, cancel)
            .await
        {
            blocked(SessionStage::Prompt, &outcome, self.pipeline.secrets())?;
            let on_record = pending.rewritten.as_deref().unwrap_or(prompt);
            let now = outcome
                .replaced
                .as_ref()
                .map_or(prompt, |(_, text)| text.as_str());
            if now != on_record {
                let hook = outcome
                    .replaced
                    .as_ref()
                    .map_or("a prompt hook", |(hook, _)| hook.as_str());
                return Err(AgentError::Blocked {
                    stage: SessionStage::Prompt.as_str(),
                    hook: hook.to_string(),
                    reason: "the resumed turn's prompt is on record as it was sent, and the prompt hooks now make it something else; give the prompt again (cordon run --resume FILE PROMPT) to have it rewritten".into(),
                });
            }
            self.turn_tools = outcome.only_tools;
            context.extend(outcome.context);
        }
        if let Some(content) = UserText::context(&context) {
            self.push(Message::User { content })?;
        }
        Ok(())
    }

    /// `model-request` for a request that is no step of the turn (`purpose` `routing`, or
    /// `compaction` for a summary request): the hooks see the messages it sends and no tools;
    /// they may add context to it, or block it (which ends the turn, as at a step).
    pub(super) async fn side_request_stage(
        &self,
        purpose: &'static str,
        messages: &mut Vec<Message>,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<(), AgentError> {
        let sent = &*messages;
        let payload = || json!({"step": 0, "purpose": purpose, "messages": newest_views(sent, MAX_EVENT_MESSAGES, self.pipeline.secrets()), "tools": []});
        let Some(outcome) = self
            .stage(SessionStage::ModelRequest, payload, observer, cancel)
            .await
        else {
            return Ok(());
        };
        blocked(
            SessionStage::ModelRequest,
            &outcome,
            self.pipeline.secrets(),
        )?;
        if let Some(content) = UserText::context(&outcome.context) {
            messages.push(Message::User { content });
        }
        Ok(())
    }

    /// `model-request`: the tools this request offers (never more than `tools`), after the
    /// hooks' context was added to the conversation; or a block. The hooks see the messages as
    /// they will be sent: fitted to `window` (compacted first if it must be).
    pub(super) async fn request_stage(
        &mut self,
        step: u32,
        tools: Vec<ToolSpec>,
        window: Window,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<Vec<ToolSpec>, AgentError> {
        let narrowing = self.turn_tools.is_some();
        let tools = self.narrowed(tools, self.turn_tools.clone());
        if self
            .pipeline
            .session_hooks(SessionStage::ModelRequest)
            .next()
            .is_none()
        {
            self.narrowed_offer = narrowing.then(|| offered_names(&tools));
            return Ok(tools);
        }
        let (sent, _) = self
            .fitted(window, &tools, false, observer, cancel, tally)
            .await?;
        let offered = &tools;
        let payload = || {
            let names: Vec<&str> = offered.iter().map(|tool| tool.name.as_str()).collect();
            json!({"step": step, "purpose": "turn", "messages": newest_views(&sent, MAX_EVENT_MESSAGES, self.pipeline.secrets()), "tools": names})
        };
        let Some(outcome) = self
            .stage(SessionStage::ModelRequest, payload, observer, cancel)
            .await
        else {
            self.narrowed_offer = narrowing.then(|| offered_names(&tools));
            return Ok(tools);
        };
        blocked(
            SessionStage::ModelRequest,
            &outcome,
            self.pipeline.secrets(),
        )?;
        if let Some(content) = UserText::context(&outcome.context) {
            self.push(Message::User { content })?;
        }
        let narrowing = narrowing || outcome.only_tools.is_some();
        let tools = self.narrowed(tools, outcome.only_tools);
        self.narrowed_offer = narrowing.then(|| offered_names(&tools));
        Ok(tools)
    }

    /// `model-response`: the reply as the hooks leave it (its text replaced, calls dropped), and
    /// the hook that replaced its text, if one did.
    pub(super) async fn response_stage(
        &self,
        step: u32,
        mut reply: Reply,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<(Reply, Option<String>), AgentError> {
        let shown = &reply;
        let payload = || {
            let calls: Vec<Value> = shown
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": stage_payload::shown_name(&call.id),
                        "name": stage_payload::shown_name(&call.name),
                        "arguments": bounded(&call.arguments, MAX_EVENT_MESSAGE_BYTES, self.pipeline.secrets()),
                    })
                })
                .collect();
            json!({"step": step, "text": bounded(&shown.text, MAX_EVENT_TEXT_BYTES, self.pipeline.secrets()), "calls": calls})
        };
        let Some(outcome) = self
            .stage(SessionStage::ModelResponse, payload, observer, cancel)
            .await
        else {
            return Ok((reply, None));
        };
        blocked(
            SessionStage::ModelResponse,
            &outcome,
            self.pipeline.secrets(),
        )?;
        let mut replaced_by = None;
        if let Some((hook, text)) = outcome.replaced {
            reply.text = text;
            replaced_by = Some(hook);
        }
        // A hook names a call by the id it was shown (a long id is shown cut).
        reply.tool_calls.retain(|call| {
            !outcome
                .drop_calls
                .iter()
                .any(|dropped| *dropped == stage_payload::shown_name(&call.id))
        });
        Ok((reply, replaced_by))
    }

    /// `stop`: the message to continue the turn with, if a hook asks for one and the turn has
    /// continuations left (`[agent] max_continuations`).
    pub(super) async fn stop_stage(
        &mut self,
        answer: &str,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<Option<UserText>, AgentError> {
        let continuations = self.continuations;
        let payload = || json!({"answer": bounded(answer, MAX_EVENT_TEXT_BYTES, self.pipeline.secrets()), "continuations": continuations});
        let Some(outcome) = self
            .stage(SessionStage::Stop, payload, observer, cancel)
            .await
        else {
            return Ok(None);
        };
        blocked(SessionStage::Stop, &outcome, self.pipeline.secrets())?;
        let Some((hook, message)) = outcome.replaced else {
            return Ok(None);
        };
        if self.continuations >= self.options.max_continuations {
            observer.warning(&format!(
                "hook `{hook}` asked to continue the turn, but it has continued {} times already ([agent] max_continuations); the answer stands",
                self.continuations
            ));
            return Ok(None);
        }
        self.continuations += 1;
        Ok(Some(UserText::gated(
            Source::Continuation { hook: &hook },
            &message,
        )))
    }

    /// `compaction`, before: the summary a hook supplies for the `folded` messages instead of
    /// the model's (or the digest's), if one does.
    pub(super) async fn compaction_stage(
        &self,
        previous: Option<&str>,
        folded: &[Message],
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, AgentError> {
        let payload = || {
            json!({
                "phase": "before",
                "previous_summary": previous.map(|text| bounded(text, MAX_EVENT_TEXT_BYTES, self.pipeline.secrets())),
                "folded": folded.len(),
                "messages": newest_views(folded, MAX_COMPACTION_MESSAGES, self.pipeline.secrets()),
            })
        };
        let Some(outcome) = self
            .stage(SessionStage::Compaction, payload, observer, cancel)
            .await
        else {
            return Ok(None);
        };
        blocked(SessionStage::Compaction, &outcome, self.pipeline.secrets())?;
        // Kept as the hook wrote it: every request quotes it through the gate (context/fit.rs).
        Ok(outcome.replaced.map(|(_, summary)| summary))
    }

    /// `compaction`, after: what the compaction made, for hooks that watch it (observe only).
    pub(super) async fn compacted_stage(
        &self,
        report: &crate::conversation::observer::CompactionReport,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) {
        let summary = self.messages.iter().rev().find_map(|m| match m {
            Message::Compaction { summary, .. } => Some(summary.clone()),
            _ => None,
        });
        let payload = || {
            json!({
                "phase": "after",
                "method": report.method,
                "summary": summary.as_deref().map(|text| bounded(text, MAX_EVENT_TEXT_BYTES, self.pipeline.secrets())),
                "folded": report.folded_messages,
                "tokens_before": report.tokens_before,
                "tokens_after": report.tokens_after,
            })
        };
        if let Some(outcome) = self
            .stage(SessionStage::Compaction, payload, observer, cancel)
            .await
        {
            for (hook, message) in outcome.failures {
                observer.warning(&format!(
                    "compaction hook `{hook}` failed after the compaction: {message}"
                ));
            }
        }
    }

    /// `session-end`: how the session ended (`answered`, or the error's kind), for hooks that
    /// watch it; nothing they decide changes anything, and a failure is only a warning.
    pub async fn end_session(
        &mut self,
        outcome: &str,
        observer: Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) {
        let messages = self.messages.len();
        let payload = || json!({"outcome": outcome, "messages": messages});
        if let Some(outcome) = self
            .stage(SessionStage::SessionEnd, payload, &observer, cancel)
            .await
        {
            for (hook, message) in outcome.failures {
                observer.warning(&format!("session-end hook `{hook}` failed: {message}"));
            }
        }
    }

    /// `tools` narrowed to the names (or groups) of `only`; all of them when `only` is `None`.
    /// The output contract's `final_result` is never taken away (a plugin tool of that name is
    /// never offered beside it, and without a contract it is narrowed like any other). Under tool
    /// search a narrowing names what the request offers: the active tools it names are offered
    /// themselves, without `search_tools` (a route to a group offers the group).
    fn narrowed(&self, tools: Vec<ToolSpec>, only: Option<Vec<String>>) -> Vec<ToolSpec> {
        let Some(only) = only else {
            return tools;
        };
        let allowed = self.pipeline.expand_groups(only);
        let contract_set = self.options.contract.is_some();
        // With skills served, the tools of those names are the built-in ones (a plugin's of the
        // same name is not offered); without, a plugin's is narrowed like any other.
        let skills_served = !self.pipeline.offers().skills().is_empty();
        let mut narrowed: Vec<ToolSpec> = tools
            .into_iter()
            .filter(|tool| {
                allowed.contains(&tool.name)
                    || (contract_set && tool.name == contract::FINAL_RESULT)
                    || (skills_served && super::skill_tools::is_skill_tool(&tool.name))
            })
            .collect();
        if self.searching_tools() {
            for name in &allowed {
                if narrowed.iter().any(|tool| tool.name == *name) || !self.pipeline.is_active(name)
                {
                    continue;
                }
                if let Some((_, tool)) = self.pipeline.registry().tool(name) {
                    narrowed.push(crate::tool_search::spec_for_model(
                        tool,
                        self.options.tool_search.send_examples,
                    ));
                }
            }
        }
        narrowed
    }
}

use cordon_runtime::report::secrets::Secrets;
use std::collections::BTreeSet;

/// The stage's block (a hook's, or a failure that stops the session), as the turn's error.
fn blocked(
    stage: SessionStage,
    outcome: &StageOutcome,
    secrets: &Secrets,
) -> Result<(), AgentError> {
    match &outcome.blocked {
        // The reason is the hook's text, printed on a terminal: one line, no control characters,
        // cut at 1 KiB.
        Some((hook, reason)) => Err(AgentError::Blocked {
            stage: stage.as_str(),
            hook: hook.clone(),
            reason: bounded(
                &cordon_runtime::report::terminal_text::one_line(reason),
                1024,
                secrets,
            ),
        }),
        None => Ok(()),
    }
}

/// The names of `tools`.
fn offered_names(tools: &[ToolSpec]) -> BTreeSet<String> {
    tools.iter().map(|tool| tool.name.clone()).collect()
}
