//! `cordon run` and `cordon chat`: model settings from `[model]` and `[agent]` with flags on top,
//! the prompt from the argument or stdin, transcripts and resuming, the output contract, Ctrl-C,
//! and exit codes (0 answered, 1 no answer, 2 setup error, 130 cancelled).

use crate::cli::host_secrets::host_secrets;
use crate::cli::interrupt::interrupt_watcher;
use crate::cli::live_view::LiveView;
use anyhow::{Context as _, bail};
use cordon_agent::settings::{AgentSettings, ModelSettings, Provider};
use cordon_agent::{
    Agent, AgentError, AgentOptions, Answer, Message, ModelClient, OutputContract,
    TranscriptWriter, load_transcript,
};
use cordon_runtime::pipeline::{Approver, Pipeline};
use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

/// Flags shared by `run` and `chat`; each overrides its cordon.toml setting.
#[derive(Debug, clap::Args)]
pub struct SessionArgs {
    /// The API's wire protocol [default: [model] provider, or openai].
    #[arg(long, value_parser = provider_parser())]
    pub provider: Option<Provider>,
    /// The API's base URL, e.g. http://127.0.0.1:11434/v1 for Ollama [default: [model] base_url,
    /// or the provider's].
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The model name [default: [model] model].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The environment variable holding the API key [default: [model] api_key_env, or
    /// OPENAI_API_KEY / ANTHROPIC_API_KEY].
    #[arg(long, value_name = "NAME")]
    pub api_key_env: Option<String>,
    /// Model replies per turn before giving up [default: [agent] max_steps, or 20].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: Option<u32>,
    /// Replace the system prompt [default: [agent] system_prompt, or one listing the tools].
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Wait for whole replies instead of streaming them.
    #[arg(long)]
    pub no_stream: bool,
    /// The model's context window in tokens [default: [model] context_window, else what the
    /// server reports (llama.cpp), else 128000 for OpenAI, 200000 for Anthropic, 8192 for other
    /// servers].
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u32).range(i64::from(cordon_agent::settings::MIN_CONTEXT_WINDOW)..))]
    pub context_window: Option<u32>,
    /// The longest pause of a streamed reply, or the longest wait for a whole reply with
    /// --no-stream, e.g. 90s or 10m [default: [model] timeout, else 120s between streamed bytes
    /// and no limit on a whole reply].
    #[arg(long, value_name = "DURATION", value_parser = duration_parser)]
    pub timeout: Option<std::time::Duration>,
    /// Append every message to this JSON-lines file as it happens.
    #[arg(long, value_name = "FILE.jsonl")]
    pub transcript: Option<PathBuf>,
    /// Continue the conversation in this transcript (and append to it, unless --transcript
    /// names another file).
    #[arg(long, value_name = "FILE.jsonl")]
    pub resume: Option<PathBuf>,
    /// Report activity as JSON lines on stderr instead of the live view.
    #[arg(long)]
    pub events: bool,
}

impl SessionArgs {
    fn model_settings(&self, mut settings: ModelSettings) -> anyhow::Result<ModelSettings> {
        if let Some(provider) = self.provider {
            if settings.provider != provider && self.base_url.is_none() {
                // A base URL configured for one protocol is wrong for the other.
                settings.base_url = None;
            }
            settings.provider = provider;
        }
        if let Some(url) = &self.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!("--base-url {url:?} must start with http:// or https://");
            }
            if let Some(reason) = cordon_agent::settings::base_url_credentials(url) {
                bail!("--base-url: {reason}");
            }
            settings.base_url = Some(url.trim_end_matches('/').to_string());
        }
        if let Some(model) = &self.model {
            settings.model = Some(model.clone());
        }
        if let Some(name) = &self.api_key_env {
            settings.api_key_env = Some(name.clone());
        }
        if self.no_stream {
            settings.stream = false;
        }
        if let Some(window) = self.context_window {
            settings.context_window = Some(window);
        }
        if let Some(timeout) = self.timeout {
            settings.timeout = Some(timeout);
        }
        Ok(settings)
    }

    fn agent_options(
        &self,
        agent: &AgentSettings,
        model: &ModelSettings,
        contract: Option<OutputContract>,
        approver: Option<Arc<dyn Approver>>,
        routing: cordon_agent::Routing,
    ) -> AgentOptions {
        AgentOptions {
            routing,
            max_steps: self.max_steps.unwrap_or(agent.max_steps),
            system_prompt: self.system.clone().or_else(|| agent.system_prompt.clone()),
            parse_text_tool_calls: model.parse_text_tool_calls,
            contract,
            approver,
            max_repeated_calls: agent.max_repeated_calls,
            max_calls_per_reply: agent.max_calls_per_reply,
            max_continuations: agent.max_continuations,
            tool_search: cordon_agent::tool_search::SearchSettings {
                mode: agent.tool_search,
                threshold: agent.tool_search_threshold,
                send_examples: agent.send_tool_examples,
            },
        }
    }

    /// The agent, with its transcript set up (and the resumed conversation loaded).
    fn agent(
        &self,
        pipeline: Pipeline,
        model: &ModelSettings,
        agent: &AgentSettings,
        contract: Option<OutputContract>,
        approver: Option<Arc<dyn Approver>>,
    ) -> anyhow::Result<Agent> {
        let settings = self.model_settings(model.clone())?;
        let mut client = ModelClient::new(&settings, host_secrets())?;
        client.set_reply_deadline(agent.max_reply_time);
        let routing = routing_for(&agent.routing, &settings, agent)?;
        let options = self.agent_options(agent, &settings, contract, approver, routing);
        let mut agent = Agent::new(pipeline, client, options);
        match (&self.resume, &self.transcript) {
            (Some(resume), transcript) => {
                let loaded = load_transcript(resume)?;
                if loaded.skipped_partial_line {
                    crate::cli::stdio_output::stderr_line(&format!(
                        "note: the last line of {} was cut off mid-write and is ignored",
                        resume.display()
                    ));
                }
                let target = transcript.as_deref().unwrap_or(resume);
                let copy = !same_file(target, resume);
                agent.record_to(TranscriptWriter::append_to(target, host_secrets().clone())?);
                agent.resume(loaded, copy)?;
            }
            (None, Some(transcript)) => agent.record_to(TranscriptWriter::append_to(
                transcript,
                host_secrets().clone(),
            )?),
            (None, None) => {}
        }
        Ok(agent)
    }
}

/// How turns are routed (`[agent.routing]`): by the session's model, or by a client of its own
/// for the `model` (and `base_url`) the table names, with the session's key and settings.
fn routing_for(
    routing: &cordon_agent::settings::RoutingSettings,
    session: &ModelSettings,
    agent: &AgentSettings,
) -> anyhow::Result<cordon_agent::Routing> {
    if !routing.enabled {
        return Ok(cordon_agent::Routing::Off);
    }
    if routing.model.is_none() && routing.base_url.is_none() {
        return Ok(cordon_agent::Routing::SessionModel);
    }
    let mut settings = session.clone();
    if let Some(model) = &routing.model {
        settings.model = Some(model.clone());
    }
    if let Some(url) = &routing.base_url {
        settings.base_url = Some(url.clone());
    }
    let mut client = ModelClient::new(&settings, host_secrets())?;
    client.set_reply_deadline(agent.max_reply_time);
    Ok(cordon_agent::Routing::Model(Box::new(client)))
}

/// `cordon run`: one turn, the answer on stdout.
pub async fn run(
    pipeline: Pipeline,
    model: &ModelSettings,
    agent_settings: &AgentSettings,
    args: &SessionArgs,
    prompt: Option<&str>,
    output_schema: Option<&Path>,
    approver: Option<Arc<dyn Approver>>,
) -> anyhow::Result<ExitCode> {
    let contract = match output_schema {
        Some(path) => Some(load_contract(path, &pipeline)?),
        None => None,
    };
    let structured = contract.is_some();
    let mut agent = args.agent(pipeline, model, agent_settings, contract, approver)?;
    let prompt = read_prompt(prompt, args.resume.is_some())?;
    let last = agent.messages().iter().rev().find(|m| m.is_conversation());
    if prompt.is_none()
        && matches!(last, Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty())
    {
        bail!(
            "the resumed conversation ends with the model's answer: give a new prompt to continue it"
        );
    }
    let view = LiveView::new(args.events, structured);
    let cancel = CancellationToken::new();
    let watcher = interrupt_watcher(cancel.clone());
    let outcome = agent.turn(prompt.as_deref(), view.clone(), &cancel).await;
    let how = match &outcome {
        Ok(_) => "answered",
        Err(err) => err.kind(),
    };
    agent.end_session(how, view.clone(), &cancel).await;
    watcher.abort();
    view.finish_turn();
    report(outcome, &view, args)
}

/// `cordon chat`: turns until end of input or `/exit`.
pub async fn chat(
    pipeline: Pipeline,
    updates: tokio::sync::watch::Receiver<Pipeline>,
    model: &ModelSettings,
    agent_settings: &AgentSettings,
    args: &SessionArgs,
    approver: Option<Arc<dyn Approver>>,
) -> anyhow::Result<ExitCode> {
    let mut agent = args.agent(pipeline, model, agent_settings, None, approver)?;
    agent.follow_pipeline(updates);
    let interactive = std::io::stdin().is_terminal();
    if interactive {
        let tools = agent.offered_tools();
        crate::cli::stdio_output::stderr_line(&format!(
            "cordon chat: {} tool(s); /exit or Ctrl-D to leave, Ctrl-C cancels a running turn",
            tools.len()
        ));
    }
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut code = ExitCode::SUCCESS;
    loop {
        if interactive {
            crate::cli::stdio_output::stderr_write(b"you> ");
        }
        let line = tokio::select! {
            line = lines.next_line() => line.context("reading from stdin")?,
            _ = tokio::signal::ctrl_c() => { crate::cli::stdio_output::stderr_line(""); return Ok(ExitCode::from(130)); }
        };
        let Some(line) = line else { break };
        let prompt = line.trim();
        if prompt.is_empty() {
            continue;
        }
        if matches!(prompt, "/exit" | "/quit") {
            break;
        }
        let view = LiveView::new(args.events, false);
        let cancel = CancellationToken::new();
        let watcher = interrupt_watcher(cancel.clone());
        let outcome = agent.turn(Some(prompt), view.clone(), &cancel).await;
        watcher.abort();
        view.finish_turn();
        code = report(outcome, &view, args)?;
    }
    let view = LiveView::new(args.events, false);
    agent
        .end_session("ended", view.clone(), &CancellationToken::new())
        .await;
    view.finish_turn();
    Ok(code)
}

/// Prints a turn's answer (or why there is none) and picks the exit code.
fn report(
    outcome: Result<Answer, AgentError>,
    view: &LiveView,
    args: &SessionArgs,
) -> anyhow::Result<ExitCode> {
    let kept = || match args.transcript.as_ref().or(args.resume.as_ref()) {
        Some(path) => format!(" (the transcript is kept in {})", path.display()),
        None => String::new(),
    };
    match outcome {
        Ok(Answer::Text { text, cut_off }) => {
            if !view.answer_was_streamed() {
                crate::cli::render::stdout_line(text.trim_end())?;
            }
            if let Some(cause) = cut_off {
                crate::cli::stdio_output::stderr_line(&format!(
                    "warning: the answer was cut off by {cause}"
                ));
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Answer::Structured(value)) => {
            crate::cli::render::stdout_line(&serde_json::to_string_pretty(&value)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(AgentError::Cancelled) => {
            crate::cli::stdio_output::stderr_line(&format!("cancelled{}", kept()));
            Ok(ExitCode::from(130))
        }
        Err(AgentError::Transcript(err)) => Err(err.into()),
        Err(err) => {
            crate::cli::stdio_output::stderr_line(&format!("error: {err}{}", kept()));
            Ok(ExitCode::from(1))
        }
    }
}

/// The output schema file as a contract; no plugin tool may already be called `final_result`.
fn load_contract(path: &Path, pipeline: &Pipeline) -> anyhow::Result<OutputContract> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the output schema {}", path.display()))?;
    let schema = serde_json::from_str(&text)
        .with_context(|| format!("the output schema {} is not JSON", path.display()))?;
    let contract =
        OutputContract::new(schema).map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))?;
    if pipeline.is_active(cordon_agent::FINAL_RESULT)
        && pipeline
            .registry()
            .tool(cordon_agent::FINAL_RESULT)
            .is_some()
    {
        bail!(
            "a plugin provides a tool named {:?}, which --output-schema needs for itself; leave that tool out with --tools",
            cordon_agent::FINAL_RESULT
        );
    }
    Ok(contract)
}

/// The prompt: the argument, or stdin when it is not a terminal; none only when resuming.
fn read_prompt(argument: Option<&str>, resuming: bool) -> anyhow::Result<Option<String>> {
    if let Some(prompt) = argument {
        if prompt == "-" {
            return read_prompt(None, resuming);
        }
        return Ok(Some(prompt.to_string()));
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        let mut text = String::new();
        stdin
            .lock()
            .read_to_string(&mut text)
            .context("reading the prompt from stdin")?;
        if !text.trim().is_empty() {
            return Ok(Some(text.trim_end().to_string()));
        }
    }
    if resuming {
        return Ok(None);
    }
    bail!("no prompt: pass it as an argument (cordon run \"...\") or on stdin")
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// `--timeout`: a duration as cordon.toml writes them.
fn duration_parser(text: &str) -> Result<std::time::Duration, String> {
    cordon_runtime::config::parse_duration(text)
}

/// `--provider`: the names cordon.toml uses, listed in `--help`.
fn provider_parser() -> impl clap::builder::TypedValueParser<Value = Provider> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(Provider::ALL.map(Provider::as_str))
        .map(|name| Provider::named(&name).expect("a listed provider"))
}
