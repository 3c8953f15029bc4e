//! The agent loop: send the conversation (fitted to the context window, see `context/`) and the
//! active tools to the model; run every tool call of its reply as one batch through the
//! pipeline; append the results in call order; repeat until the model answers without tool calls
//! (or, with an output contract, calls `final_result` validly), or `max_steps` replies have been
//! asked for. It stays sane when the model does not: an empty answer gets one reminder, then is an
//! error; the same call repeated gets a note, then stops the turn (`repetition.rs`). Every message
//! is recorded in the transcript as it is added, so the transcript is valid at every stop,
//! cancellation included; compactions and each turn's token usage are recorded there too.

mod call_cap;
mod compaction;
pub mod contract;
mod model_request;
pub(crate) mod repetition;
pub mod routing;
mod session_hooks;
pub mod skill_tools;
mod steps;
mod system_prompt;
mod tool_calls;

use crate::context::ContextBudget;
use crate::context::fit::TooSmall;
use crate::conversation::message::{Message, Usage};
use crate::conversation::observer::AgentObserver;
use crate::conversation::transcript::{Loaded, TranscriptError, TranscriptWriter};
use crate::conversation::user_text::UserText;
use crate::model::client::{ModelClient, ModelError};
use crate::model::provider::ToolSpec;
use crate::tool_search::{SearchSettings, ToolOffer};
use contract::OutputContract;
use cordon_runtime::pipeline::{Approver, Pipeline};
use serde_json::Value;
use std::sync::Arc;
use steps::{MAX_TEXT_CALL_NUMBER, TEXT_CALL_PREFIX};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

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
    #[error(
        "stopped: the model called {tool} with the same arguments {count} times in a row, even after a note saying so; rephrase the request, or raise [agent] max_repeated_calls (0 turns the check off)"
    )]
    Repeating { tool: String, count: u32 },
    #[error(
        "the model's final answer was empty, also after a reminder: there is nothing to print; try again, rephrase the request, or use a stronger model"
    )]
    EmptyAnswer,
    #[error("the model's reply was cut off by {cause} before it wrote an answer")]
    CutOffBeforeAnswer { cause: String },
    #[error("{stage} hook `{hook}` stopped the turn: {reason}")]
    Blocked {
        stage: &'static str,
        hook: String,
        reason: String,
    },
    #[error(
        "the prompt is {bytes} bytes as the prompt hooks would be shown it (configured secrets masked), and they read at most {limit} of one: a prompt longer than they can read is not sent; shorten it, or put the text in a file a tool reads"
    )]
    PromptTooLong { bytes: usize, limit: usize },
    #[error(transparent)]
    ContextTooSmall(#[from] TooSmall),
    #[error("cancelled")]
    Cancelled,
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
}

impl AgentError {
    /// What kind of failure ended the turn, for a span's `error.type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Model(err) => err.kind(),
            Self::MaxSteps { .. } => "max_steps",
            Self::ContractBroken { .. } => "contract_broken",
            Self::Repeating { .. } => "repeating",
            Self::EmptyAnswer => "empty_answer",
            Self::CutOffBeforeAnswer { .. } => "cut_off",
            Self::Blocked { .. } => "blocked",
            Self::PromptTooLong { .. } => "prompt_too_long",
            Self::ContextTooSmall(_) => "context_too_small",
            Self::Cancelled => "cancelled",
            Self::Transcript(_) => "transcript",
        }
    }
}

impl From<ModelError> for AgentError {
    fn from(err: ModelError) -> Self {
        match err {
            ModelError::Cancelled => Self::Cancelled,
            other => Self::Model(other),
        }
    }
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
    /// Identical calls in a row before the note (and one more before the stop); 0: no check.
    pub max_repeated_calls: u32,
    /// When the model gets `search_tools` instead of every tool's spec.
    pub tool_search: SearchSettings,
    /// Tool calls of one reply that run; the first call past them is answered with an error
    /// naming the cap, and the reply's calls after it are dropped (`[agent] max_calls_per_reply`).
    pub max_calls_per_reply: u32,
    /// Times a `stop` hook may continue one turn (`[agent] max_continuations`).
    pub max_continuations: u32,
    /// Intent routing before each turn's tool loop (`[agent.routing]`).
    pub routing: routing::Routing,
}

/// A turn's result.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The model's final text; `cut_off` names what cut it off (an output limit, or the context
    /// window filling up), if something did.
    Text {
        text: String,
        cut_off: Option<String>,
    },
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
    context: ContextBudget,
    /// The last number given to a call recovered from text (ids stay unique in a session).
    text_calls: u64,
    /// Which tools requests carry; decided at the session's first turn.
    offer: Option<ToolOffer>,
    /// Newer pipelines (live reloads), taken at the start of each step.
    updates: Option<tokio::sync::watch::Receiver<Pipeline>>,
    /// Whether the `session-start` hooks have run.
    started: bool,
    /// The tools a `prompt` hook narrowed this turn to, if one did.
    turn_tools: Option<Vec<String>>,
    /// Times a `stop` hook continued this turn.
    continuations: u32,
    /// The tools the current request offers, when a session hook or routing narrowed them: a
    /// call of any other tool is refused.
    narrowed_offer: Option<std::collections::BTreeSet<String>>,
}

/// The prompt of an unfinished turn, as the transcript records it.
struct PendingPrompt {
    /// As the user gave it.
    prompt: String,
    /// As a `prompt` hook rewrote it, if one did.
    rewritten: Option<String>,
    /// The user message that carried it to the model (with the hooks' context).
    sent: UserText,
}

/// What one turn has used so far.
#[derive(Default)]
struct TurnTally {
    requests: u32,
    usage: Option<Usage>,
}

impl TurnTally {
    fn count(&mut self, usage: Option<Usage>) {
        self.requests += 1;
        if let Some(usage) = usage {
            self.usage.get_or_insert_with(Usage::default).add(usage);
        }
    }
}

impl Agent {
    pub fn new(pipeline: Pipeline, client: ModelClient, options: AgentOptions) -> Self {
        let context = ContextBudget::new(client.settings(), client.model());
        Self {
            pipeline,
            client,
            options,
            messages: Vec::new(),
            transcript: None,
            contract_failures: 0,
            context,
            text_calls: 0,
            offer: None,
            updates: None,
            started: false,
            turn_tools: None,
            continuations: 0,
            narrowed_offer: None,
        }
    }

    /// Takes each pipeline `updates` holds (a live reload) from the next step on: the requests
    /// after it offer the new set, and the transcript records what changed.
    pub fn follow_pipeline(&mut self, updates: tokio::sync::watch::Receiver<Pipeline>) {
        self.updates = Some(updates);
    }

    /// Switches to the newest pipeline, if a reload made one since the last step.
    fn take_pipeline_update(
        &mut self,
        observer: &Arc<dyn AgentObserver>,
    ) -> Result<(), AgentError> {
        let Some(updates) = self.updates.as_mut() else {
            return Ok(());
        };
        if !updates.has_changed().unwrap_or(false) {
            return Ok(());
        }
        let pipeline = updates.borrow_and_update().clone();
        let changes = cordon_runtime::pipeline::ToolChanges::between(&self.pipeline, &pipeline);
        self.pipeline = pipeline;
        if changes.is_empty() {
            return Ok(());
        }
        observer.tools_changed(&changes);
        self.push(Message::ToolsChanged {
            added: changes.added,
            removed: changes.removed,
            changed: changes.changed,
        })
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
        // Numbers past the bound (a model can send any id) are not cordon's: they cannot collide
        // with a number this session gives before it reaches the bound, which it never does.
        self.text_calls = self
            .messages
            .iter()
            .flat_map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
                _ => &[],
            })
            .filter_map(|call| call.id.strip_prefix(TEXT_CALL_PREFIX)?.parse::<u64>().ok())
            .filter(|number| *number <= MAX_TEXT_CALL_NUMBER)
            .max()
            .unwrap_or(0);
        Ok(())
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tools the next request offers the model: the active tools (or, with tool search, the
    /// loaded ones and `search_tools`), the skill tools when there are skills, and `final_result`
    /// under a contract.
    pub fn offered_tools(&self) -> Vec<ToolSpec> {
        let mut tools: Vec<ToolSpec> = match &self.offer {
            Some(offer) => offer.specs(&self.pipeline),
            None => self
                .pipeline
                .active_tools()
                .map(|(_, tool)| {
                    crate::tool_search::spec_for_model(tool, self.options.tool_search.send_examples)
                })
                .collect(),
        };
        let skill_specs = skill_tools::specs(&self.pipeline);
        if !skill_specs.is_empty() {
            // The built-in skill tools stand in for any plugin tool of their names.
            tools.retain(|tool| !skill_tools::is_skill_tool(&tool.name));
            tools.extend(skill_specs);
        }
        if let Some(contract) = &self.options.contract {
            // The contract's `final_result` is the only one: a plugin tool of that name would
            // never run (its calls finish the turn), so it is not offered beside it.
            tools.retain(|tool| tool.name != contract::FINAL_RESULT);
            tools.push(contract.tool_spec());
        }
        tools
    }

    /// Whether this session finds its tools through `search_tools` (known after its first turn
    /// has started; see [`Agent::prepare_offer`]).
    pub fn searching_tools(&self) -> bool {
        self.offer.as_ref().is_some_and(ToolOffer::searching)
    }

    /// Decides which tools requests carry, once per session: every active tool's spec, or
    /// `search_tools` (under `auto`, when the tools are many or their specs would fill more than
    /// half the context window); loads again what a resumed transcript's searches loaded.
    pub async fn prepare_offer(&mut self) {
        if self.offer.is_some() {
            return;
        }
        let all: Vec<ToolSpec> = self
            .pipeline
            .active_tools()
            .map(|(_, tool)| {
                crate::tool_search::spec_for_model(tool, self.options.tool_search.send_examples)
            })
            .collect();
        let counter = self.context.counter();
        let spec_tokens = counter.calibrated(counter.raw_tools(&all));
        let window = self.context.window(&self.client).await;
        let mut offer = ToolOffer::decide(
            &self.pipeline,
            self.options.tool_search,
            spec_tokens,
            window.tokens,
        );
        offer.restore(&self.pipeline, &self.messages);
        self.offer = Some(offer);
    }

    /// Adds `prompt` (if any) as the user's message and runs steps until the model answers.
    pub async fn turn(
        &mut self,
        prompt: Option<&str>,
        observer: Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> Result<Answer, AgentError> {
        self.prepare_offer().await;
        if !self
            .messages
            .iter()
            .any(|m| matches!(m, Message::System { .. }))
        {
            let mut content = match &self.options.system_prompt {
                Some(prompt) => prompt.clone(),
                None => system_prompt::default_prompt(
                    &system_prompt::Environment::of(&self.pipeline),
                    self.searching_tools(),
                ),
            };
            if let Some(contract) = &self.options.contract {
                content.push_str("\n\n");
                content.push_str(contract.instructions());
            }
            self.push(Message::System { content })?;
        }
        self.turn_tools = None;
        self.continuations = 0;
        // One span for the whole turn, so session hooks and routing are part of its trace.
        let span = tracing::info_span!(
            target: "cordon_otel",
            "invoke_agent",
            otel.name = "invoke_agent cordon",
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = "cordon",
            gen_ai.provider.name = self.client.provider().as_str(),
            gen_ai.request.model = %self.client.model(),
            gen_ai.usage.input_tokens = tracing::field::Empty,
            gen_ai.usage.output_tokens = tracing::field::Empty,
            cordon.model_requests = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        let mut tally = TurnTally::default();
        let outcome = async {
            let context = self.start_session(&observer, cancel).await?;
            let routed_prompt = match prompt {
                Some(prompt) => {
                    let (content, rewritten) = self
                        .prompt_stage(prompt, context, &observer, cancel)
                        .await?;
                    self.push(Message::TurnStart {
                        prompt: prompt.to_string(),
                        rewritten,
                    })?;
                    let routed = content.clone();
                    self.push(Message::User { content })?;
                    Some(routed)
                }
                // A resumed turn: its prompt is on record, and the prompt hooks and routing
                // see it again whatever `session-start` added, so what they narrowed or
                // blocked holds across a resume.
                None => match self.pending_prompt() {
                    Some(pending) => {
                        self.resumed_prompt_stage(&pending, context, &observer, cancel)
                            .await?;
                        Some(pending.sent)
                    }
                    None => {
                        if let Some(content) = UserText::context(&context) {
                            self.push(Message::User { content })?;
                        }
                        None
                    }
                },
            };
            self.contract_failures = 0;
            if let Some(prompt) = &routed_prompt {
                self.route(prompt, &observer, cancel, &mut tally).await?;
            }
            self.steps(&observer, cancel, &mut tally).await
        }
        .instrument(span.clone())
        .await;
        span.record("cordon.model_requests", i64::from(tally.requests));
        if let Some(usage) = tally.usage {
            span.record("gen_ai.usage.input_tokens", usage.prompt_tokens as i64);
            span.record("gen_ai.usage.output_tokens", usage.completion_tokens as i64);
        }
        if let Err(err) = &outcome {
            span.record("error.type", err.kind());
            span.record("otel.status_code", "ERROR");
        }
        drop(span);
        if tally.requests > 0 {
            observer.turn_end(tally.requests, tally.usage);
            if let Some(usage) = tally.usage {
                let end = Message::TurnEnd {
                    model_requests: tally.requests,
                    usage,
                };
                // The turn's outcome matters more than its record.
                if let Err(err) = self.push(end)
                    && outcome.is_ok()
                {
                    return Err(err);
                }
            }
        }
        outcome
    }

    /// The prompt of the turn the conversation ends in the middle of (no answer ends it), which
    /// a resume without a prompt continues: the latest turn's prompt on record
    /// ([`Message::TurnStart`]), whatever came after it (a reminder, a hook's continuation or
    /// context). `None` when the conversation ends with an answer. A transcript with no record of
    /// that turn (written before turns were recorded, or with the line removed) gives its first
    /// user message after the last answer instead, and one whose record does not match the
    /// message sent gives the message: the prompt hooks always see what the model got.
    fn pending_prompt(&self) -> Option<PendingPrompt> {
        let is_answer = |m: &Message| matches!(m, Message::Assistant { content, tool_calls, .. } if tool_calls.is_empty() && !content.trim().is_empty());
        let last = self.messages.iter().rev().find(|m| m.is_conversation());
        if last.is_some_and(is_answer) {
            return None;
        }
        // The turn began after the last answer a stop hook did not continue.
        let conversation: Vec<(usize, &Message)> = self
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| m.is_conversation())
            .collect();
        let answered = conversation
            .windows(2)
            .filter(|pair| {
                is_answer(pair[0].1)
                    && !matches!(pair[1].1, Message::User { content } if crate::conversation::user_text::is_continuation(content))
            })
            .map(|pair| pair[0].0)
            .next_back();
        let after = answered.map_or(0, |index| index + 1);
        let start = self.messages[after..]
            .iter()
            .rposition(|m| matches!(m, Message::TurnStart { .. }))
            .map(|index| index + after);
        let from = start.unwrap_or(after);
        let sent = self.messages[from..].iter().find_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })?;
        let (prompt, rewritten) = match start.map(|index| &self.messages[index]) {
            Some(Message::TurnStart { prompt, rewritten })
                if rewritten.is_some() || sent.as_str().starts_with(prompt.as_str()) =>
            {
                (prompt.clone(), rewritten.clone())
            }
            _ => (sent.as_str().to_string(), None),
        };
        Some(PendingPrompt {
            prompt,
            rewritten,
            sent,
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
