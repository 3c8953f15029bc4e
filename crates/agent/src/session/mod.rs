//! The agent loop: send the conversation and the active tools to the model; run every tool call of
//! its reply as one batch through the pipeline; append the results in call order; repeat until the
//! model answers without tool calls (or, with an output contract, calls `final_result` validly),
//! or `max_steps` replies have been asked for. Every message is recorded in the transcript as it
//! is added, so the transcript is valid at every stop, cancellation included.

pub mod contract;
mod system_prompt;

use crate::conversation::message::{Message, Reply, StopReason, ToolCall, ToolOutcome};
use crate::conversation::observer::AgentObserver;
use crate::conversation::text_calls;
use crate::conversation::transcript::{Loaded, TranscriptError, TranscriptWriter};
use crate::model::client::{ModelClient, ModelError};
use crate::model::provider::ToolSpec;
use contract::{OutputContract, Verdict};
use cordon_runtime::config::Provider;
use cordon_runtime::pipeline::{Approver, BatchOptions, CallRequest, Event, Pipeline};
use cordon_runtime::report::ErrorKind;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Why a turn ended without an answer.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Model(ModelError),
    #[error(
        "stopped after {steps} model replies without a final answer (max_steps); raise --max-steps or [agent] max_steps, or continue with --resume"
    )]
    MaxSteps { steps: u32 },
    #[error(
        "the model gave no valid final_result in {attempts} attempts; the last problems: {problems}"
    )]
    ContractBroken { attempts: u32, problems: String },
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
}

/// How the loop behaves.
pub struct AgentOptions {
    pub max_steps: u32,
    /// `None`: cordon's default prompt, which lists the tools.
    pub system_prompt: Option<String>,
    /// Recover calls written as text (OpenAI provider only).
    pub parse_text_tool_calls: bool,
    /// `--output-schema`: finish by calling `final_result`.
    pub contract: Option<OutputContract>,
    /// Asks a person to approve calls that need it (a terminal prompt); `None`: `[approval]
    /// unattended` decides.
    pub approver: Option<Arc<dyn Approver>>,
}

/// A turn's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The model's final text; `truncated` when its output limit cut it off.
    Text { text: String, truncated: bool },
    /// The validated `final_result` arguments.
    Structured(Value),
}

/// One conversation with a model over a pipeline's tools.
pub struct Agent {
    pipeline: Pipeline,
    client: ModelClient,
    options: AgentOptions,
    messages: Vec<Message>,
    transcript: Option<TranscriptWriter>,
    contract_failures: u32,
}

impl Agent {
    pub fn new(pipeline: Pipeline, client: ModelClient, options: AgentOptions) -> Self {
        Self {
            pipeline,
            client,
            options,
            messages: Vec::new(),
            transcript: None,
            contract_failures: 0,
        }
    }

    /// Records every message from now on in `transcript`.
    pub fn record_to(&mut self, transcript: TranscriptWriter) {
        self.transcript = Some(transcript);
    }

    /// Continues a loaded conversation. `copy` writes its messages to the transcript first (when
    /// the transcript is a new file, not the one resumed); its repairs are always recorded.
    pub fn resume(&mut self, loaded: Loaded, copy: bool) -> Result<(), AgentError> {
        if copy {
            for message in loaded.messages {
                self.push(message)?;
            }
        } else {
            self.messages = loaded.messages;
        }
        for repair in loaded.repairs {
            self.push(repair)?;
        }
        Ok(())
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tools offered to the model: the active tools, and `final_result` under a contract.
    pub fn offered_tools(&self) -> Vec<ToolSpec> {
        let mut tools: Vec<ToolSpec> = self
            .pipeline
            .active_tools()
            .map(|(_, tool)| ToolSpec {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: tool.schema.as_json().clone(),
            })
            .collect();
        if let Some(contract) = &self.options.contract {
            tools.push(contract.tool_spec());
        }
        tools
    }

    /// Adds `prompt` (if any) as the user's message and runs steps until the model answers.
    pub async fn turn(
        &mut self,
        prompt: Option<&str>,
        observer: Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<Answer, AgentError> {
        let tools = self.offered_tools();
        if !self
            .messages
            .iter()
            .any(|m| matches!(m, Message::System { .. }))
        {
            let mut content = match &self.options.system_prompt {
                Some(prompt) => prompt.clone(),
                None => system_prompt::default_prompt(
                    &tools,
                    &system_prompt::Environment::of(&self.pipeline),
                ),
            };
            if let Some(contract) = &self.options.contract {
                content.push_str("\n\n");
                content.push_str(contract.instructions());
            }
            self.push(Message::System { content })?;
        }
        if let Some(prompt) = prompt {
            self.push(Message::User {
                content: prompt.to_string(),
            })?;
        }
        self.contract_failures = 0;
        for step in 1..=self.options.max_steps {
            observer.model_request(step);
            let reply = self
                .client
                .complete(&self.messages, &tools, &*observer, cancel)
                .await
                .map_err(|err| match err {
                    ModelError::Cancelled => AgentError::Cancelled,
                    other => AgentError::Model(other),
                })?;
            let reply = self.recover_text_calls(reply, &tools);
            observer.model_reply(&reply);
            self.push(reply.clone().into_message())?;
            if reply.tool_calls.is_empty() {
                if self.options.contract.is_some() {
                    self.text_instead_of_final_result()?;
                    continue;
                }
                return Ok(Answer::Text {
                    text: reply.text,
                    truncated: reply.stop == StopReason::Length,
                });
            }
            let (outcomes, answer) = if reply.stop == StopReason::Length {
                (cut_off(&reply.tool_calls), None)
            } else {
                self.run_calls(&reply.tool_calls, &observer, cancel).await
            };
            for outcome in outcomes {
                self.push(Message::Tool(outcome))?;
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

    /// With `parse_text_tool_calls`, a reply without calls whose text holds some gets them.
    fn recover_text_calls(&self, mut reply: Reply, tools: &[ToolSpec]) -> Reply {
        if !self.options.parse_text_tool_calls
            || self.client.provider() != Provider::OpenAi
            || !reply.tool_calls.is_empty()
        {
            return reply;
        }
        let offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        if let Some((text, calls)) = text_calls::recover(&reply.text, &offered) {
            tracing::info!(calls = calls.len(), "recovered tool calls written as text");
            reply.text = text;
            reply.tool_calls = calls;
            if reply.stop != StopReason::Length {
                reply.stop = StopReason::ToolCalls;
            }
        }
        reply
    }

    /// Runs a reply's calls: `final_result` against the contract, the rest as one pipeline batch.
    /// Returns the outcomes in call order, and the accepted answer if there is one.
    async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> (Vec<ToolOutcome>, Option<Value>) {
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        let mut answer = None;
        let mut batch = Vec::new();
        let mut batch_positions = Vec::new();
        for (position, call) in calls.iter().enumerate() {
            match &self.options.contract {
                Some(contract) if call.name == contract::FINAL_RESULT => {
                    let outcome = match contract.check(&call.arguments) {
                        Verdict::Accepted(value) if answer.is_none() => {
                            answer = Some(value);
                            ToolOutcome {
                                tool_call_id: call.id.clone(),
                                tool_name: call.name.clone(),
                                is_error: false,
                                error_kind: None,
                                content: "accepted".into(),
                            }
                        }
                        Verdict::Accepted(_) => ToolOutcome::error(
                            call,
                            ErrorKind::InvalidArguments,
                            "a final result was already accepted in this reply",
                        ),
                        Verdict::Rejected(problems) => {
                            self.contract_failures += 1;
                            ToolOutcome::error(
                                call,
                                ErrorKind::InvalidArguments,
                                format!(
                                    "final_result does not match the output schema: {}. Call final_result again with corrected arguments.",
                                    problems.join("; ")
                                ),
                            )
                        }
                    };
                    outcomes[position] = Some(outcome);
                }
                _ => {
                    batch.push(CallRequest::new(&call.id, &call.name, &call.arguments));
                    batch_positions.push(position);
                }
            }
        }
        if !batch.is_empty() {
            let watcher = observer.clone();
            let options = BatchOptions {
                cancel: cancel.clone(),
                events: Some(Arc::new(move |event: Event| watcher.tool_event(&event))),
                approver: self.options.approver.clone(),
            };
            let results = self.pipeline.run(batch, &options).await;
            for (position, result) in batch_positions.into_iter().zip(results) {
                outcomes[position] = Some(ToolOutcome::from_result(&result));
            }
        }
        let outcomes = outcomes
            .into_iter()
            .map(|outcome| outcome.expect("every call has an outcome"))
            .collect();
        (outcomes, answer)
    }

    /// Under a contract, a plain-text answer is a failed attempt: remind the model.
    fn text_instead_of_final_result(&mut self) -> Result<(), AgentError> {
        self.contract_failures += 1;
        self.check_contract_failures()?;
        self.push(Message::User {
            content: "You answered in text, but this session must end with a call to the \
                      `final_result` tool whose arguments match its schema. Call it now."
                .into(),
        })
    }

    fn check_contract_failures(&self) -> Result<(), AgentError> {
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

    fn push(&mut self, message: Message) -> Result<(), AgentError> {
        if let Some(transcript) = &mut self.transcript {
            transcript.append(&message)?;
        }
        self.messages.push(message);
        Ok(())
    }
}

/// A reply cut off by the output limit: its calls may be incomplete, so none is run.
fn cut_off(calls: &[ToolCall]) -> Vec<ToolOutcome> {
    calls
        .iter()
        .map(|call| {
            ToolOutcome::error(
                call,
                ErrorKind::Truncated,
                "not run: your reply was cut off by the output token limit before this call was \
                 complete. Make the call again (with shorter arguments if you can).",
            )
        })
        .collect()
}
