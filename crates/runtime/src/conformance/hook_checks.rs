//! The checks of a plugin's hook: its before-hook and after-hook run over a sample call of a tool
//! it watches (its own example arguments when it watches one of its own tools) and must answer a
//! decision the host can use, without trapping or running out of time, memory or fuel; the
//! after-hook over a successful result and over an error result. Which
//! decision it takes is the hook's business; the report says what it was.

use super::tool_checks::quote;
use super::{Findings, Outcome};
use crate::report::{Content, ErrorKind, ToolResult};
use crate::sandbox::plugin::{AfterDecision, BeforeDecision, CallOptions, HookInfo, Plugin};
use serde_json::{Value, json};

pub(super) async fn check_hook(plugin: &Plugin, hook: &HookInfo, list: &mut Vec<super::Finding>) {
    let mut findings = Findings::about("hook", list);
    // An id like any client's, different every run.
    let call_id = super::tool_checks::call_id();
    let tool = sample_tool(plugin, hook);
    let arguments = sample_arguments(plugin, &tool);
    let sample = format!("{tool} {}", quote(&arguments.to_string()));
    let options = CallOptions::default();
    if hook.before {
        let decision = plugin
            .before_tool_call(&call_id, &tool, &arguments, &options)
            .await;
        let (outcome, detail) = match decision {
            Ok(BeforeDecision::Allow) => {
                (Outcome::Pass, format!("allowed the sample call {sample}"))
            }
            Ok(BeforeDecision::Block(reason)) if reason.trim().is_empty() => (
                Outcome::Warn,
                format!(
                    "blocked the sample call {sample} without a reason; say why, so the model can adjust"
                ),
            ),
            Ok(BeforeDecision::Block(reason)) => (
                Outcome::Pass,
                format!("blocked the sample call {sample}: {}", quote(&reason)),
            ),
            Ok(BeforeDecision::Ask(reason)) => (
                Outcome::Pass,
                format!(
                    "asks a person to approve the sample call {sample}: {}",
                    quote(&reason)
                ),
            ),
            Ok(BeforeDecision::Rewrite(text)) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(_)) => (
                    Outcome::Pass,
                    format!("rewrote the sample call {sample} to {}", quote(&text)),
                ),
                _ => (
                    Outcome::Fail,
                    format!(
                        "rewrote the sample call {sample} to arguments that are not a JSON object: {}",
                        quote(&text)
                    ),
                ),
            },
            Err(failure) => (
                Outcome::Fail,
                format!(
                    "{} on the sample call {sample}: {}",
                    failure.kind,
                    quote(&failure.message)
                ),
            ),
        };
        findings.add("before-tool-call", outcome, detail);
    }
    if hook.after {
        let success = ToolResult::success(
            &call_id,
            &tool,
            vec![Content::text(
                "sample result: 3 lines, contact alice@example.com",
            )],
            json!({}),
        );
        let (outcome, detail) =
            after_check(plugin, &call_id, &tool, &arguments, &success, "result").await;
        findings.add("after-tool-call", outcome, detail);
        // Hooks often assume success; a failed call reaches them too.
        let failure = ToolResult::error(
            &call_id,
            &tool,
            ErrorKind::ToolError,
            "sample failure: notes/sample.txt: no such file or directory",
            json!({}),
        );
        let (outcome, detail) = after_check(
            plugin,
            &call_id,
            &tool,
            &arguments,
            &failure,
            "error result",
        )
        .await;
        findings.add("after-tool-call (error result)", outcome, detail);
    }
}

/// The after-hook over one sample result (`what` names it in the report).
async fn after_check(
    plugin: &Plugin,
    call_id: &str,
    tool: &str,
    arguments: &Value,
    result: &ToolResult,
    what: &str,
) -> (Outcome, String) {
    let decision = plugin
        .after_tool_call(
            call_id,
            tool,
            arguments,
            result,
            None,
            &CallOptions::default(),
        )
        .await;
    match decision {
        Ok(AfterDecision::Keep) => (Outcome::Pass, format!("kept the sample {what}")),
        Ok(AfterDecision::Replace(replaced)) => (
            Outcome::Pass,
            format!(
                "replaced the sample {what} with: {}",
                quote(&replaced.text())
            ),
        ),
        Err(failure) => (
            Outcome::Fail,
            format!(
                "{} on the sample {what}: {}",
                failure.kind,
                quote(&failure.message)
            ),
        ),
    }
}

/// A tool name the hook watches: its first glob made concrete, or its plugin's first tool when it
/// watches every tool, or `write_file`.
fn sample_tool(plugin: &Plugin, hook: &HookInfo) -> String {
    match hook.tools.first() {
        Some(glob) => glob.replace('*', "sample").replace('?', "x"),
        None => plugin
            .tools
            .first()
            .map_or_else(|| "write_file".to_string(), |tool| tool.name.clone()),
    }
}

/// The first example of `tool` when the plugin provides it, else a small file-writing call.
fn sample_arguments(plugin: &Plugin, tool: &str) -> Value {
    plugin
        .tool(tool)
        .and_then(|info| info.schema.as_json().get("examples"))
        .and_then(|examples| examples.get(0))
        .filter(|example| example.is_object())
        .cloned()
        .unwrap_or_else(
            || json!({ "path": "notes/sample.txt", "content": "a sample call from cordon test" }),
        )
}
