//! One hook asked one question on its own, outside any session or call: what would it decide
//! about this tool call, this result, this prompt? `cordon serve --hooks-as-tools` offers each
//! granted hook to MCP clients this way, so another agent's hook system gets a sandboxed cordon
//! hook's decision. The hook runs exactly as it would in `cordon run`: in its own sandbox, with
//! its plugin's grants and limits, its decision checked by the same rules, every configured
//! secret masked in what it sees and in what it answers, and its decision an event and a line
//! of the audit log. Nothing else runs: no tool, no other hook, no model.

use super::Pipeline;
use super::events::{Emitter, Event, EventSink, HookStage};
use super::reports::{self, Reporter};
use crate::report::ToolResult;
use crate::report::secrets::Secrets;
use crate::sandbox::plugin::{AfterDecision, BeforeDecision, CallOptions, Plugin, SessionStage};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// What a hook is asked.
#[derive(Debug, Clone)]
pub enum HookQuestion {
    /// A tool call about to run: allow, ask, block or rewrite it?
    BeforeToolCall {
        /// The tool called.
        tool: String,
        /// The call's arguments (a JSON object).
        arguments: Value,
    },
    /// A call's result: keep or replace it?
    AfterToolCall {
        /// The tool called.
        tool: String,
        /// The call's arguments (a JSON object).
        arguments: Value,
        /// What the call returned.
        result: Box<ToolResult>,
    },
    /// A session stage's event.
    Session {
        /// The stage.
        stage: SessionStage,
        /// The event's payload, in the stage's documented form (docs/session-hooks.md).
        payload: Value,
    },
}

impl HookQuestion {
    /// The stage asked about, as the hook tools spell it (`before-tool-call`, `prompt`).
    pub fn stage_name(&self) -> &'static str {
        match self {
            Self::BeforeToolCall { .. } => "before-tool-call",
            Self::AfterToolCall { .. } => "after-tool-call",
            Self::Session { stage, .. } => stage.as_str(),
        }
    }
}

/// What the hook answered: one word for the decision, and what it carries. Its JSON schema
/// ([`HookAnswer::json_schema`]) is derived from this type; fields are added, never renamed or
/// removed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct HookAnswer {
    /// The plugin whose hook answered.
    pub hook: String,
    /// The stage asked about.
    pub stage: &'static str,
    /// Before a call: `allow`, `ask`, `block`, `rewrite`. After: `keep`, `replace`. At a session
    /// stage: `proceed`, `block`, `replace`, `narrow`, `add_context`, `drop_calls`. Anywhere:
    /// `failed` (the hook trapped, timed out or answered what its stage does not take; where it
    /// runs for real, that stops the call or the turn).
    #[schemars(extend("enum" = [
        "allow", "ask", "block", "rewrite", "keep", "replace", "proceed", "narrow",
        "add_context", "drop_calls", "failed"
    ]))]
    pub decision: &'static str,
    /// Why it blocked or asks, or what went wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// False when the hook does not watch this tool (its declaration or its grant leaves it
    /// out): it did not run, and the call would go ahead as far as it is concerned.
    pub watched: bool,
    /// The arguments a `rewrite` gives the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub arguments: Option<Value>,
    /// The result a `replace` after the call gives it (`content`, `isError`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub result: Option<Value>,
    /// A session stage's replacement text (the prompt, the reply, the summary, the message to
    /// continue with).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replace: Option<String>,
    /// Context a session stage adds to the next request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub add_context: Option<String>,
    /// The only tools (or groups) a session stage would offer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only_tools: Option<Vec<String>>,
    /// The ids of the reply's calls a `model-response` hook drops.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drop_calls: Vec<String>,
    /// How long the hook's sandbox ran, in milliseconds.
    pub duration_ms: u64,
    /// The fields of the event that were cut before the hook saw them (as a session cuts them:
    /// docs/session-hooks.md), so the asker knows what the hook decided on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cut: Vec<String>,
}

impl HookAnswer {
    /// The JSON schema of the answer as it is serialised (subschemas inline).
    pub fn json_schema() -> Value {
        let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
        settings.inline_subschemas = true;
        let mut schema = settings
            .into_generator()
            .into_root_schema_for::<Self>()
            .to_value();
        if let Value::Object(schema) = &mut schema {
            schema.remove("$schema");
            schema.remove("title");
            schema.remove("description");
        }
        schema
    }
}

/// Why a question could not be put to a hook at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HookQuestionError {
    /// No granted hook has this id.
    #[error("there is no granted hook `{hook}` (granted hooks: {available})")]
    NoSuchHook {
        /// The id asked for.
        hook: String,
        /// The granted hooks' ids, comma-separated (`none` when there are none).
        available: String,
    },
    /// The event cannot be shown whole enough (a reply of too many calls).
    #[error("{0}")]
    Unbounded(String),
    /// The hook does not run at the stage asked about (it does not declare it, or a grant for
    /// some tools only keeps it from the session stages).
    #[error(
        "hook `{hook}` does not run at `{stage}` (it runs at: {declared}; a hook runs at its session stages only with `hook = true`)"
    )]
    StageNotDeclared {
        /// The hook asked.
        hook: String,
        /// The stage asked about.
        stage: &'static str,
        /// The stages it declares, comma-separated.
        declared: String,
    },
}

/// The stages `plugin`'s hook runs at, as the hook tools spell them, in session order.
pub fn stages_of(plugin: &Plugin) -> Vec<&'static str> {
    let Some(hook) = &plugin.hook else {
        return Vec::new();
    };
    let mut stages = Vec::new();
    if hook.before {
        stages.push("before-tool-call");
    }
    if hook.after {
        stages.push("after-tool-call");
    }
    stages.extend(
        SessionStage::ALL
            .iter()
            .filter(|stage| plugin.watches_session() && hook.stages.contains(stage))
            .map(|stage| stage.as_str()),
    );
    stages
}

impl Pipeline {
    /// Puts `question` to the granted hook `hook_id` alone, under `call_id`. Its log lines,
    /// requests and opens go to `events` (and the audit log), as its decision does.
    pub async fn ask_hook(
        &self,
        hook_id: &str,
        call_id: &str,
        question: HookQuestion,
        events: Option<EventSink>,
        cancel: &CancellationToken,
    ) -> Result<HookAnswer, HookQuestionError> {
        let Some(hook) = self.hooks().iter().find(|plugin| &*plugin.id == hook_id) else {
            let available: Vec<&str> = self.hooks().iter().map(|plugin| &*plugin.id).collect();
            return Err(HookQuestionError::NoSuchHook {
                hook: hook_id.to_string(),
                available: if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                },
            });
        };
        let stage = question.stage_name();
        let declared = stages_of(hook);
        if !declared.contains(&stage) {
            return Err(HookQuestionError::StageNotDeclared {
                hook: hook_id.to_string(),
                stage,
                declared: declared.join(", "),
            });
        }
        let emitter = Emitter::new(self.audited(events));
        let mut answer = HookAnswer {
            hook: hook_id.to_string(),
            stage,
            watched: true,
            ..HookAnswer::default()
        };
        match question {
            HookQuestion::Session { stage, mut payload } => {
                self.secrets().scrub_json(&mut payload);
                // The same view as in a session: what is cut is cut the same way, and said.
                answer.cut = super::stage_payload::bound(&mut payload)
                    .map_err(HookQuestionError::Unbounded)?;
                let started = Instant::now();
                let decided = self
                    .run_session_hook(hook, stage, &payload, call_id, &emitter, cancel)
                    .await;
                answer.duration_ms = started.elapsed().as_millis() as u64;
                match decided {
                    Err(message) => {
                        answer.decision = "failed";
                        answer.reason = Some(message);
                    }
                    Ok(decision) => {
                        answer.decision = super::session_stages::summary(&decision);
                        answer.reason = decision.block;
                        answer.replace = decision.replace;
                        answer.add_context = decision.add_context;
                        answer.only_tools = decision.only_tools;
                        answer.drop_calls = decision.drop_calls;
                    }
                }
            }
            HookQuestion::BeforeToolCall {
                tool,
                mut arguments,
            } => {
                if !super::hooks::watches(hook, &tool) {
                    answer.decision = "allow";
                    answer.watched = false;
                    return Ok(answer);
                }
                self.secrets().scrub_json(&mut arguments);
                let started = Instant::now();
                let options = options_for(hook, &tool, HookStage::Before, &emitter, cancel);
                let span = crate::trace_spans::hook(&hook.id, "before", &tool);
                let decided = hook
                    .before_tool_call(call_id, &tool, &arguments, &options.0)
                    .instrument(span.clone())
                    .await;
                options.1.store(false, Ordering::SeqCst);
                answer.duration_ms = started.elapsed().as_millis() as u64;
                match decided {
                    Ok(BeforeDecision::Allow) => answer.decision = "allow",
                    Ok(BeforeDecision::Ask(reason)) => {
                        answer.decision = "ask";
                        answer.reason = Some(reason);
                    }
                    Ok(BeforeDecision::Block(reason)) => {
                        answer.decision = "block";
                        answer.reason = Some(reason);
                    }
                    Ok(BeforeDecision::Rewrite(text)) => {
                        match serde_json::from_str::<Value>(&text) {
                            Ok(same) if same == arguments => answer.decision = "allow",
                            Ok(rewritten @ Value::Object(_)) => {
                                answer.decision = "rewrite";
                                answer.arguments = Some(rewritten);
                            }
                            _ => {
                                answer.decision = "failed";
                                answer.reason = Some(format!(
                                    "it rewrote the arguments to something that is not a JSON object: {}",
                                    crate::report::budget::cut(&self.secrets().scrub(&text), 1_024)
                                ));
                            }
                        }
                    }
                    Err(failure) => {
                        answer.decision = "failed";
                        answer.reason = Some(failure.message);
                    }
                }
                crate::trace_spans::record_decision(&span, answer.decision);
                answered(
                    &mut answer,
                    call_id,
                    &tool,
                    HookStage::Before,
                    &emitter,
                    self.secrets(),
                );
            }
            HookQuestion::AfterToolCall {
                tool,
                mut arguments,
                mut result,
            } => {
                if !super::hooks::watches(hook, &tool) {
                    answer.decision = "keep";
                    answer.watched = false;
                    return Ok(answer);
                }
                self.secrets().scrub_json(&mut arguments);
                self.secrets().scrub_result(&mut result);
                let started = Instant::now();
                let options = options_for(hook, &tool, HookStage::After, &emitter, cancel);
                let span = crate::trace_spans::hook(&hook.id, "after", &tool);
                let decided = hook
                    .after_tool_call(call_id, &tool, &arguments, &result, None, &options.0)
                    .instrument(span.clone())
                    .await;
                options.1.store(false, Ordering::SeqCst);
                answer.duration_ms = started.elapsed().as_millis() as u64;
                match decided {
                    Ok(AfterDecision::Keep) => answer.decision = "keep",
                    Ok(AfterDecision::Replace(replacement)) => {
                        let schema = self
                            .registry()
                            .tool(&tool)
                            .and_then(|(_, info)| info.output_schema.as_ref());
                        match super::replacement_output::refusal(&replacement, &tool, schema).await
                        {
                            Some(reason) => {
                                answer.decision = "failed";
                                answer.reason = Some(reason);
                            }
                            None => {
                                let mut replacement = *replacement;
                                self.secrets().scrub_result(&mut replacement);
                                answer.decision = "replace";
                                answer.result = Some(replacement_json(&replacement));
                            }
                        }
                    }
                    Err(failure) => {
                        answer.decision = "failed";
                        answer.reason = Some(failure.message);
                    }
                }
                crate::trace_spans::record_decision(&span, answer.decision);
                answered(
                    &mut answer,
                    call_id,
                    &tool,
                    HookStage::After,
                    &emitter,
                    self.secrets(),
                );
            }
        }
        Ok(answer)
    }
}

/// The sandbox options of a tool hook asked alone, and the flag that ends its reports.
fn options_for(
    hook: &Plugin,
    tool: &str,
    stage: HookStage,
    emitter: &Emitter,
    cancel: &CancellationToken,
) -> (CallOptions, Arc<AtomicBool>) {
    let running = Arc::new(AtomicBool::new(true));
    let reporter = Reporter {
        tool_name: tool.to_string(),
        plugin: hook.id.to_string(),
        stage: Some(stage),
    };
    let options = CallOptions {
        reports: reports::hook_sink(reporter, emitter, running.clone()),
        cancel: cancel.clone(),
    };
    (options, running)
}

/// Masks every configured secret in the tool hook's answer and reports it.
fn answered(
    answer: &mut HookAnswer,
    call_id: &str,
    tool: &str,
    stage: HookStage,
    emitter: &Emitter,
    secrets: &Secrets,
) {
    if let Some(reason) = answer.reason.as_mut()
        && let std::borrow::Cow::Owned(masked) = secrets.scrub(reason)
    {
        *reason = masked;
    }
    if let Some(arguments) = answer.arguments.as_mut() {
        secrets.scrub_json(arguments);
    }
    emitter.emit(|| Event::HookAnswered {
        call_id: call_id.to_string(),
        hook: answer.hook.clone(),
        stage,
        tool_name: tool.to_string(),
        decision: answer.decision,
        reason: answer.reason.clone(),
        duration_ms: answer.duration_ms,
    });
}

/// A replacement result as the answer carries it: what an MCP client would be given.
fn replacement_json(result: &ToolResult) -> Value {
    let mut json = serde_json::json!({
        "content": result.content,
        "isError": result.is_error,
    });
    if let Some(kind) = result.error_kind {
        json["errorKind"] = serde_json::json!(kind);
    }
    if let Some(structured) = &result.structured {
        json["structuredContent"] = structured.clone();
    }
    json
}

#[cfg(test)]
mod answer_schema_tests {
    use super::HookAnswer;
    use serde_json::json;

    #[test]
    fn every_answer_fits_the_derived_schema_and_a_wrong_decision_does_not() {
        let schema = HookAnswer::json_schema();
        assert_eq!(
            schema["required"],
            json!(["hook", "stage", "decision", "watched", "duration_ms"]),
            "{schema}"
        );
        let validator = jsonschema::validator_for(&schema).unwrap();
        let full = HookAnswer {
            hook: "guard".into(),
            stage: "after-tool-call",
            decision: "replace",
            reason: Some("r".into()),
            watched: true,
            arguments: Some(json!({"path": "a"})),
            result: Some(json!({"content": []})),
            replace: Some("t".into()),
            add_context: Some("c".into()),
            only_tools: Some(vec!["a".into()]),
            drop_calls: vec!["1".into()],
            duration_ms: 1,
            cut: vec!["prompt".into()],
        };
        for answer in [full.clone(), HookAnswer::default()] {
            let value = serde_json::to_value(&answer).unwrap();
            if answer.decision.is_empty() {
                assert!(!validator.is_valid(&value), "an empty decision is not one");
            } else {
                assert!(validator.is_valid(&value), "{value}");
            }
        }
        let mut wrong = serde_json::to_value(&full).unwrap();
        wrong["decision"] = json!("approve");
        assert!(!validator.is_valid(&wrong));
        wrong["decision"] = json!("allow");
        wrong["arguments"] = json!("text");
        assert!(!validator.is_valid(&wrong));
    }
}
