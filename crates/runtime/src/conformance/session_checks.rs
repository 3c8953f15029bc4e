//! The checks of a session hook (contract 0.3): each stage it declares is run once over a sample
//! event of the stage's documented shape, and must answer, without trapping or running out of
//! time, memory or fuel, a decision that stage takes (what a stage takes is the pipeline's rule,
//! `pipeline/session_stages.rs`). Which decision it takes is the hook's business; the report says
//! what it was.

use super::tool_checks::quote;
use super::{Findings, Outcome};
use crate::pipeline::session_stages::checked;
use crate::sandbox::plugin::{CallOptions, HookInfo, Plugin, SessionDecision, SessionStage};
use serde_json::{Value, json};

pub(super) async fn check_stages(plugin: &Plugin, hook: &HookInfo, list: &mut Vec<super::Finding>) {
    let mut findings = Findings::about("session hook", list);
    for stage in &hook.stages {
        let call_id = super::tool_checks::call_id();
        let sample = sample_event(*stage);
        let decided = plugin
            .session_hook(&call_id, *stage, &sample, &CallOptions::default())
            .await;
        let (outcome, detail) = match decided {
            Err(failure) => (
                Outcome::Fail,
                format!(
                    "{} on the sample event: {}",
                    failure.kind,
                    quote(&failure.message)
                ),
            ),
            Ok(decision) => match checked(*stage, &sample, decision.clone()) {
                Err(problem) => (Outcome::Fail, problem),
                Ok(_) => (Outcome::Pass, describe(&decision)),
            },
        };
        findings.add(stage.as_str(), outcome, detail);
    }
}

/// What a decision does, for the report.
fn describe(decision: &SessionDecision) -> String {
    let mut parts = Vec::new();
    if let Some(reason) = &decision.block {
        parts.push(format!("blocks: {}", quote(reason)));
    }
    if let Some(text) = &decision.replace {
        parts.push(format!("replaces with: {}", quote(text)));
    }
    if let Some(text) = &decision.add_context {
        parts.push(format!("adds context: {}", quote(text)));
    }
    if let Some(tools) = &decision.only_tools {
        parts.push(format!("offers only: {}", quote(&tools.join(", "))));
    }
    if !decision.drop_calls.is_empty() {
        parts.push(format!(
            "drops calls: {}",
            quote(&decision.drop_calls.join(", "))
        ));
    }
    if parts.is_empty() {
        "proceeds on the sample event".to_string()
    } else {
        format!("on the sample event, {}", parts.join("; "))
    }
}

/// A sample event of `stage`, in the shape the agent loop sends (docs/session-hooks.md).
pub fn sample_event(stage: SessionStage) -> Value {
    match stage {
        SessionStage::SessionStart => {
            json!({"resumed": false, "messages": 1, "tools": ["read_file", "write_file"]})
        }
        SessionStage::Prompt => json!({"prompt": "Summarise notes/sample.txt and fix its typos."}),
        SessionStage::ModelRequest => json!({
            "step": 1,
            "messages": [
                {"role": "system", "text": "You are a careful assistant."},
                {"role": "user", "text": "Summarise notes/sample.txt and fix its typos."}
            ],
            "tools": ["read_file", "write_file"],
        }),
        SessionStage::ModelResponse => json!({
            "step": 1,
            "text": "I will read the file first.",
            "calls": [{"id": "sample-1", "name": "read_file", "arguments": "{\"path\": \"notes/sample.txt\"}"}],
        }),
        SessionStage::Compaction => json!({
            "phase": "before",
            "previous_summary": null,
            "folded": 2,
            "messages": [
                {"role": "user", "text": "Summarise notes/sample.txt."},
                {"role": "assistant", "text": "It lists three tasks; the second is done."}
            ],
        }),
        SessionStage::Stop => {
            json!({"answer": "notes/sample.txt lists three tasks.", "continuations": 0})
        }
        SessionStage::SessionEnd => json!({"outcome": "answered", "messages": 4}),
    }
}
