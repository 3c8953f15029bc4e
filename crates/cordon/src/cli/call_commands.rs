//! `cordon call` and `cordon batch`: calls run through the pipeline from the command line, the
//! first Ctrl-C cancelling them; the exit code says whether any result is an error.

use super::{Cli, approval_prompt, render};
use crate::cli::interrupt::interrupt_watcher;
use anyhow::Context as _;
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Event, Pipeline, parse_batch};
use std::io::Read as _;
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What `cordon call` was given.
pub(super) struct CallArgs<'a> {
    pub tool: &'a str,
    pub args: Option<&'a str>,
    pub json: bool,
    pub id: &'a str,
    pub events: bool,
}

impl Cli {
    /// `cordon call TOOL [ARGS]`: one call, a batch of one.
    pub(super) async fn call(&self, call: CallArgs<'_>) -> anyhow::Result<ExitCode> {
        let pipeline = self.load(false).await?.pipeline;
        let arguments = read_arguments(call.args)?;
        let request = CallRequest::new(call.id.to_string(), call.tool.to_string(), arguments);
        let approver = approval_prompt::approver(self.yes);
        let results = run_batch(&pipeline, vec![request], call.events, approver).await;
        render::call_result(&results[0], call.json)?;
        Ok(exit_code(&results))
    }

    /// `cordon batch [FILE]`: a JSON array of calls, the results in call order.
    pub(super) async fn batch(
        &self,
        file: Option<&std::path::Path>,
        json: bool,
        events: bool,
    ) -> anyhow::Result<ExitCode> {
        let pipeline = self.load(false).await?.pipeline;
        let text = read_input(file)?;
        let calls = parse_batch(&text)?;
        let approver = approval_prompt::approver(self.yes);
        let results = run_batch(&pipeline, calls, events, approver).await;
        render::batch_results(&results, json)?;
        Ok(exit_code(&results))
    }
}

/// Runs a batch; the first Ctrl-C cancels it, a second one exits at once.
async fn run_batch(
    pipeline: &Pipeline,
    calls: Vec<CallRequest>,
    events: bool,
    approver: Option<Arc<dyn cordon_runtime::pipeline::Approver>>,
) -> Vec<cordon_runtime::ToolResult> {
    let cancel = CancellationToken::new();
    let watcher = interrupt_watcher(cancel.clone());
    let sink = events.then(|| -> cordon_runtime::pipeline::events::EventSink {
        Arc::new(|event: Event| render::event_line(&event))
    });
    let results = pipeline
        .run(
            calls,
            &BatchOptions {
                cancel,
                events: sink,
                approver,
            },
        )
        .await;
    watcher.abort();
    results
}

fn exit_code(results: &[cordon_runtime::ToolResult]) -> ExitCode {
    if results.iter().any(|result| result.is_error) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A file's text, or stdin's for `-` or no file.
fn read_input(file: Option<&std::path::Path>) -> anyhow::Result<String> {
    match file {
        Some(path) if path != std::path::Path::new("-") => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the batch from stdin")?;
            Ok(text)
        }
    }
}

/// The arguments text: given, read from stdin (`-`), or `{}`.
fn read_arguments(args: Option<&str>) -> anyhow::Result<String> {
    match args {
        None => Ok("{}".to_string()),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading arguments from stdin")?;
            Ok(text)
        }
        Some(text) => Ok(text.to_string()),
    }
}
