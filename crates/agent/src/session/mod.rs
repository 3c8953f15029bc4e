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
pub(crate) mod repetition;
mod system_prompt;

use crate::context::ContextBudget;
use crate::context::fit::TooSmall;
use crate::context::window::Window;
use crate::conversation::message::{Message, Reply, StopReason, ToolCall, ToolOutcome, Usage};
use crate::conversation::observer::AgentObserver;
use crate::conversation::stream_gate::StreamGate;
use crate::conversation::text_calls;
use crate::conversation::transcript::{Loaded, TranscriptError, TranscriptWriter};
use crate::model::client::{ModelClient, ModelError};
use crate::model::provider::ToolSpec;
use crate::tool_search::{SearchSettings, ToolOffer};
use contract::{OutputContract, Verdict};
use cordon_runtime::config::Provider;
use cordon_runtime::pipeline::{Approver, BatchOptions, CallRequest, Event, Pipeline};
use cordon_runtime::report::ErrorKind;
use repetition::{Repeat, RepetitionGuard};
use serde_json::Value;
use std::sync::Arc;
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
    /// loaded ones and `search_tools`), and `final_result` under a contract.
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
        if let Some(contract) = &self.options.contract {
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
        if let Some(prompt) = prompt {
            self.push(Message::User {
                content: prompt.to_string(),
            })?;
        }
        self.contract_failures = 0;
        let mut tally = TurnTally::default();
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
        let outcome = self
            .steps(&observer, cancel, &mut tally)
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

    async fn steps(
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
            let tools = self.offered_tools();
            let window = self.context.window(&self.client).await;
            let reply = self
                .request(window, &tools, observer, cancel, tally)
                .await?;
            let (reply, over_cap) = call_cap::apply(reply, self.options.max_calls_per_reply);
            if let Some(over) = &over_cap {
                observer.warning(&over.warning());
            }
            observer.model_reply(&reply);
            self.push(reply.clone().into_message())?;
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
                        content: EMPTY_ANSWER_REMINDER.into(),
                    })?;
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

    /// Asks for one reply: the history fitted to the window (compacting first when it must),
    /// text that may be a call held back from the screen, calls written as text recovered. A
    /// refusal for exceeding the context window is answered once: learn, compact, ask again.
    async fn request(
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
    fn estimated_usage(&self, raw_sent: u64, text: &str) -> Usage {
        let counter = self.context.counter();
        Usage {
            prompt_tokens: counter.calibrated(raw_sent),
            completion_tokens: counter.calibrated(counter.raw_text(text)),
        }
    }

    /// With `parse_text_tool_calls`, a reply without calls whose text holds some gets them, with
    /// ids unique in the session. Without it, such a reply gets a warning naming the switch.
    fn recover_text_calls(
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

    /// The reply limit sent: the user's `max_tokens`, or cordon's default for servers that have
    /// none of their own (local servers generate until their context is full); OpenAI's own API
    /// keeps its per-model limit unless the user set one.
    fn reply_limit(&self, window: Window) -> Option<u32> {
        if self.context.max_tokens_set().is_none() && self.client.has_own_output_limit() {
            return None;
        }
        Some(self.context.reply_tokens(window))
    }

    /// What cut a reply off: the context window filling up, the user's `max_tokens`, or the
    /// limit cordon set.
    fn cut_off_cause(&self, reply: &Reply, window: Window) -> String {
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

    /// Runs a reply's calls: `final_result` against the contract, `search_tools` against the
    /// tool index, the rest as one pipeline batch. Returns the outcomes in call order, the
    /// accepted answer if there is one, and the tools searches loaded.
    async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> (Vec<ToolOutcome>, Option<Value>, Vec<String>) {
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        let mut answer = None;
        let mut loaded = Vec::new();
        let mut batch = Vec::new();
        let mut batch_positions = Vec::new();
        for (position, call) in calls.iter().enumerate() {
            if let Some(offer) = self.offer.as_mut().filter(|offer| offer.answers(call)) {
                let (outcome, newly) = offer.search(&self.pipeline, call);
                loaded.extend(newly);
                outcomes[position] = Some(outcome);
                continue;
            }
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
                let mut outcome = ToolOutcome::from_result(&result);
                // A name no tool has, while searching: the pipeline answered it (events, audit,
                // trace) and its answer becomes a search for the name instead of every tool's.
                if let Some(offer) = self
                    .offer
                    .as_mut()
                    .filter(|offer| offer.is_guess(&self.pipeline, &calls[position]))
                    && matches!(
                        outcome.error_kind,
                        Some(ErrorKind::NotFound | ErrorKind::NotActive)
                    )
                {
                    let (content, newly) = offer.answer_guess(&self.pipeline, &calls[position]);
                    outcome.content = content;
                    loaded.extend(newly);
                }
                outcomes[position] = Some(outcome);
            }
        }
        let outcomes = outcomes
            .into_iter()
            .map(|outcome| outcome.expect("every call has an outcome"))
            .collect();
        (outcomes, answer, loaded)
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

/// A reply whose calls came out of text, and whether any did.
struct Recovered {
    reply: Reply,
    recovered: bool,
}

/// Ids given to calls recovered from text: `text_call_1`, `text_call_2`, … across the session.
const TEXT_CALL_PREFIX: &str = "text_call_";
/// The highest number a recovered call's id gets; a transcript's higher ones are not counted.
const MAX_TEXT_CALL_NUMBER: u64 = u32::MAX as u64;

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
