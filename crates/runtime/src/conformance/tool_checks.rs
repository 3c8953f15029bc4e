//! The checks of one tool: it has a description, what a model is sent of it (name, description,
//! schema without `examples`) stays within [`MAX_SPEC_BYTES`], its parameters schema has a
//! strict-mode form, and
//! every entry of its schema's `examples` runs through the whole pipeline (validation, the sandbox
//! with the grants the operator gave, output limits and the output schema) without breaking the
//! contract.

use super::{Findings, Outcome};
use crate::pipeline::{BatchOptions, CallRequest, Pipeline};
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::contract::ContractVersion;
use crate::sandbox::plugin::{Plugin, ToolInfo};
use crate::schema::strict_form::strict_form;
use serde_json::Value;
use std::time::Instant;

/// The most bytes of a tool's spec as a model gets it (name, description, parameters schema
/// without its `examples`) before `cordon test` warns: every request of an agent pays for it.
pub const MAX_SPEC_BYTES: usize = 2048;

/// At most this many examples of one tool are called.
pub const MAX_EXAMPLES_CALLED: usize = 10;
/// Strict-mode problems listed per tool.
const LISTED_PROBLEMS: usize = 5;
/// How much of an answer a finding quotes.
const QUOTED_CHARS: usize = 100;

/// What to do about a tool with no examples: its author adds them to its schema; a component not
/// built for cordon (a plain component or a command) cannot carry them, so the operator names them
/// in cordon.toml.
fn no_examples_advice(plugin: &Plugin, tool: &ToolInfo) -> String {
    match plugin.contract {
        ContractVersion::Plain | ContractVersion::Command => {
            // The section is named for the derived name, which a rename there changed.
            let section = plugin
                .grant
                .tools
                .iter()
                .find(|(_, operator)| operator.name.as_deref() == Some(&*tool.name))
                .map_or(&*tool.name, |(derived, _)| derived);
            format!(
                "it gives no examples, so it was not called; a component not built for cordon cannot carry them, so add a few argument objects in cordon.toml: `examples = [{{ ... }}]` under `[plugins.{}.tools.{section}]`",
                plugin.id
            )
        }
        _ => "its parameters schema gives no \"examples\", so it was not called; add a few argument objects under \"examples\" so this test (and models) can see it work".to_string(),
    }
}

/// Checks one tool; its examples are called only until `deadline` (then the rest fail as not
/// called), and none once an example of the plugin timed out (`timed_out` says so: the plugin
/// has failed, and a plugin of many sleeping tools could otherwise hold the run for hours).
pub(super) async fn check_tool(
    pipeline: &Pipeline,
    plugin: &Plugin,
    tool: &ToolInfo,
    deadline: Instant,
    timed_out: &mut bool,
    list: &mut Vec<super::Finding>,
) {
    let mut findings = Findings::about(&tool.name, list);
    if tool.description.trim().is_empty() {
        findings.add(
            "description",
            Outcome::Warn,
            "it has no description; models choose a tool by its description, so say what it does and when to use it",
        );
    }
    let size = spec_bytes(tool);
    if size > MAX_SPEC_BYTES {
        findings.add(
            "prompt size",
            Outcome::Warn,
            format!(
                "what a model is sent of it (name, description, schema) is {size} bytes, over the {MAX_SPEC_BYTES} every tool should stay within: every request pays for it, so shorten the description and the schema's descriptions"
            ),
        );
    } else {
        findings.add(
            "prompt size",
            Outcome::Pass,
            format!("what a model is sent of it is {size} bytes (at most {MAX_SPEC_BYTES})"),
        );
    }
    match strict_form(tool.schema.as_json()) {
        Ok(_) => findings.add(
            "strict mode",
            Outcome::Pass,
            "its parameters schema converts to the form strict clients require",
        ),
        Err(problems) => {
            let listed: Vec<String> = problems
                .iter()
                .take(LISTED_PROBLEMS)
                .map(ToString::to_string)
                .collect();
            let more = problems.len().saturating_sub(LISTED_PROBLEMS);
            let more = if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            };
            findings.add(
                "strict mode",
                Outcome::Warn,
                format!(
                    "strict clients (OpenAI's strict function calling, agent SDKs that make MCP tools strict) cannot use its parameters schema: {}{more}",
                    listed.join("; ")
                ),
            );
        }
    }
    let examples = match tool.schema.as_json().get("examples") {
        Some(Value::Array(examples)) if !examples.is_empty() => examples.clone(),
        Some(_) => {
            findings.add(
                "examples",
                Outcome::Fail,
                "\"examples\" in its parameters schema must be a non-empty array of argument objects",
            );
            return;
        }
        None => {
            findings.add("examples", Outcome::Warn, no_examples_advice(plugin, tool));
            return;
        }
    };
    if examples.len() > MAX_EXAMPLES_CALLED {
        findings.add(
            "examples",
            Outcome::Warn,
            format!(
                "it gives {} examples; the first {MAX_EXAMPLES_CALLED} were called",
                examples.len()
            ),
        );
    }
    for (index, example) in examples.iter().take(MAX_EXAMPLES_CALLED).enumerate() {
        let check = format!("example {}", index + 1);
        if *timed_out {
            findings.add(
                &check,
                Outcome::Warn,
                "not called: an earlier example of this plugin timed out",
            );
            break;
        }
        if Instant::now() >= deadline {
            findings.add(
                &check,
                Outcome::Fail,
                "not called: the run's time budget ran out (--time-budget)",
            );
            continue;
        }
        if !example.is_object() {
            findings.add(
                &check,
                Outcome::Fail,
                format!(
                    "{} is not a JSON object of arguments",
                    quote(&example.to_string())
                ),
            );
            continue;
        }
        // An id like any client's, different every run: a plugin cannot tell these calls apart.
        let request = CallRequest::new(call_id(), tool.name.clone(), example.to_string());
        let started = Instant::now();
        let result = pipeline.call(request, &BatchOptions::default()).await;
        let millis = started.elapsed().as_secs_f64() * 1000.0;
        let (outcome, detail) = judge(&result, &format!("{millis:.1} ms"));
        findings.add(&check, outcome, detail);
        if result.error_kind == Some(ErrorKind::Timeout) {
            *timed_out = true;
            let left = examples.len().min(MAX_EXAMPLES_CALLED) - index - 1;
            if left > 0 {
                findings.add(
                    "examples",
                    Outcome::Warn,
                    format!("its other {left} example(s) were not called after it timed out"),
                );
            }
            break;
        }
    }
}

/// A call id shaped like a client's (`call_` and 24 hex digits), random for every call.
pub(super) fn call_id() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    let random = || {
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    };
    format!("call_{:016x}{:08x}", random(), random() as u32)
}

/// Whether a call's result breaks the contract or a limit (fail), is an answer a model would
/// have to deal with (warn), or is a plain success.
fn judge(result: &ToolResult, took: &str) -> (Outcome, String) {
    let text = quote(&result.text());
    let Some(kind) = result.error_kind.filter(|_| result.is_error) else {
        let structured = if result.structured.is_some() {
            " (its structured output matches its output schema)"
        } else {
            ""
        };
        return (
            Outcome::Pass,
            format!("answered in {took}{structured}: {text}"),
        );
    };
    let broke_output_rules = ["structuredOutput", "limitBytes", "blocks"]
        .iter()
        .any(|key| result.details.get(*key).is_some());
    match kind {
        ErrorKind::InvalidArguments => (
            Outcome::Fail,
            format!("its own schema refuses this example: {text}"),
        ),
        ErrorKind::ToolError if broke_output_rules => (Outcome::Fail, text),
        ErrorKind::ToolError => (
            Outcome::Warn,
            format!("answered with an error in {took}: {text}"),
        ),
        ErrorKind::CapabilityDenied => (
            Outcome::Warn,
            format!(
                "needs a capability it was not granted: {text} (grant it under [plugins.NAME] in a config and pass --config to see it run)"
            ),
        ),
        ErrorKind::Blocked | ErrorKind::NotApproved => {
            (Outcome::Warn, format!("not run ({kind}): {text}"))
        }
        ErrorKind::Trap
        | ErrorKind::Timeout
        | ErrorKind::OutOfMemory
        | ErrorKind::OutOfFuel
        | ErrorKind::OutOfDisk
        | ErrorKind::HookFailed
        | ErrorKind::Cancelled
        | ErrorKind::NotFound
        | ErrorKind::NotActive
        | ErrorKind::Truncated => (Outcome::Fail, format!("{kind} after {took}: {text}")),
    }
}

/// `text` on one line, cut to [`QUOTED_CHARS`] characters.
pub(super) fn quote(text: &str) -> String {
    let line =
        crate::report::budget::one_line(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    if line.chars().count() <= QUOTED_CHARS {
        return line;
    }
    let cut: String = line.chars().take(QUOTED_CHARS).collect();
    format!("{cut}…")
}

/// Bytes of the tool as a model is sent it: its name, description and parameters schema without
/// the `examples` that are only for tests and docs.
pub fn spec_bytes(tool: &ToolInfo) -> usize {
    let schema = crate::schema::without_examples(tool.schema.as_json());
    tool.name.len() + tool.description.len() + schema.to_string().len()
}
