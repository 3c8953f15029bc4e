//! The fourth contract: a `wasi:cli` command (a program compiled for `wasm32-wasip2`, exporting
//! `wasi:cli/run`) as one tool. Its arguments are `args` (the program's arguments after its name)
//! and `stdin`; its result is what it wrote to stdout, with stdout, stderr and the exit code as
//! structured output, and a non-zero exit is an error result. Its files and environment are its
//! grants, as for every plugin; its output is held to the plugin's output limit.

use super::host_terms::{
    Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, ToolAnnotations,
};
use crate::capabilities::grant_notice::{description_sentence, failure_note};
use crate::report::{Content, ErrorKind};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use serde_json::{Value, json};
use wasmtime::component::{Component, ComponentExportIndex, InstancePre, Val};
use wasmtime::{Engine, Store};

/// The most arguments a call may pass, and the most bytes of stdin.
pub const MAX_ARGS: usize = 1024;
pub const MAX_STDIN_BYTES: usize = 4 << 20;

/// What one call of a command is given, besides its grants.
#[derive(Debug, Clone, Default)]
pub struct CommandInput {
    /// The program's name (argv\[0\]) and its arguments.
    pub argv: Vec<String>,
    pub stdin: Vec<u8>,
}

/// A command, linked, ready to instantiate.
pub(crate) struct CommandPre {
    pub instance_pre: InstancePre<CallState>,
    terms: RunTerms,
    declared: DeclaredTool,
}

/// How each run of a command is made and read: its `run` function, the tool's name, and which exit
/// statuses are success.
#[derive(Clone)]
pub(crate) struct RunTerms {
    run: ComponentExportIndex,
    tool: String,
    /// Sorted; `[0]` unless the operator says otherwise (`ok_exit_codes`).
    ok_exit_codes: Vec<i32>,
    /// What a failed run's message says about the plugin's directories.
    grants: String,
}

/// Why a command cannot be offered.
#[derive(Debug, thiserror::Error)]
pub enum CommandRefusal {
    #[error("its `wasi:cli/run` export has no `run` function")]
    NoRun,
    #[error(
        "cordon.toml names tools it does not have in [plugins.{plugin}.tools]: {unknown}; a command is one tool, {tool}"
    )]
    UnknownOverride {
        plugin: String,
        unknown: String,
        tool: String,
    },
    #[error("`skip = true` would leave out the only tool of this command")]
    Skipped,
}

impl CommandPre {
    pub fn new(
        engine: &Engine,
        component: &Component,
        instance_pre: InstancePre<CallState>,
        setup: &crate::sandbox::plain::PlainSetup<'_>,
    ) -> Result<Self, CommandRefusal> {
        let (plugin, overrides) = (setup.plugin, setup.overrides);
        let run = component
            .component_type()
            .exports(engine)
            .find_map(|(name, _)| name.starts_with("wasi:cli/run@").then(|| name.to_string()))
            .and_then(|interface| {
                let instance = component.get_export_index(None, interface.as_str())?;
                component.get_export_index(Some(&instance), "run")
            })
            .ok_or(CommandRefusal::NoRun)?;
        let derived = default_name(plugin);
        if let Some(unknown) = overrides.keys().find(|name| **name != derived) {
            return Err(CommandRefusal::UnknownOverride {
                plugin: plugin.to_string(),
                unknown: unknown.clone(),
                tool: derived,
            });
        }
        let operator = overrides.get(&derived).cloned().unwrap_or_default();
        if operator.skip {
            return Err(CommandRefusal::Skipped);
        }
        let mut parameters = json!({
            "type": "object",
            "properties": {
                "args": {
                    "type": "array",
                    "items": { "type": "string" },
                    "maxItems": MAX_ARGS,
                    "description": "The program's arguments (after its name), one string each; none when left out.",
                },
                "stdin": {
                    "type": ["string", "null"],
                    "maxLength": MAX_STDIN_BYTES,
                    "description": "Text the program reads on its standard input; empty when left out.",
                },
            },
            "additionalProperties": false,
        });
        if !operator.examples.is_empty() {
            parameters["examples"] = Value::Array(operator.examples.clone());
        }
        let name = operator.name.clone().unwrap_or(derived);
        let success = match operator.ok_exit_codes.as_deref() {
            None | Some([0]) => "an exit status other than 0 is an error".to_string(),
            Some(codes) => {
                let codes: Vec<String> = codes.iter().map(i32::to_string).collect();
                format!(
                    "exit statuses {} are success (the status is in the result) and any other is an error",
                    codes.join(", ")
                )
            }
        };
        let declared = DeclaredTool {
            description: operator.description.clone().unwrap_or_else(|| {
                format!(
                    "Runs the command-line program `{plugin}` with `args` and `stdin`; its standard output is the result, and {success}. {}",
                    description_sentence(setup.grant, setup.grant.working_dir())
                )
            }),
            title: operator.title.clone().unwrap_or_default(),
            parameters: parameters.to_string(),
            output_schema: Some(output_schema().to_string()),
            execution_mode: if operator.sequential == Some(true) {
                ExecutionMode::Sequential
            } else {
                ExecutionMode::Parallel
            },
            annotations: ToolAnnotations {
                read_only: operator.read_only,
                destructive: operator.destructive,
                idempotent: operator.idempotent,
                open_world: operator.open_world,
            },
            prompt_guidelines: Vec::new(),
            locks: Vec::new(),
            name,
        };
        Ok(Self {
            instance_pre,
            terms: RunTerms {
                run,
                tool: declared.name.clone(),
                ok_exit_codes: operator.ok_exit_codes.clone().unwrap_or_else(|| vec![0]),
                grants: failure_note(setup.grant),
            },
            declared,
        })
    }

    pub fn declared(&self) -> Declared {
        Declared {
            tools: vec![self.declared.clone()],
            hook: None,
            offered: Default::default(),
        }
    }

    pub fn terms(&self) -> &RunTerms {
        &self.terms
    }

    /// What the call's arguments give the program (they were checked against the schema).
    pub fn input(&self, call: &GuestCall) -> Result<CommandInput, Failure> {
        let invalid =
            |message: String| Failure::new(ErrorKind::InvalidArguments, message, json!({}));
        let arguments: Value = serde_json::from_str(&call.arguments)
            .map_err(|err| invalid(format!("the arguments are not JSON: {err}")))?;
        let mut argv = vec![self.declared.name.clone()];
        match arguments.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.len() <= MAX_ARGS => {
                for (index, item) in items.iter().enumerate() {
                    let Some(text) = item.as_str() else {
                        return Err(invalid(format!("/args/{index}: expected a string")));
                    };
                    argv.push(text.to_string());
                }
            }
            Some(_) => {
                return Err(invalid(format!(
                    "/args: expected an array of at most {MAX_ARGS} strings"
                )));
            }
        }
        let stdin = match arguments.get("stdin") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(text)) if text.len() <= MAX_STDIN_BYTES => text.clone().into_bytes(),
            Some(_) => {
                return Err(invalid(format!(
                    "/stdin: expected a string of at most {MAX_STDIN_BYTES} bytes"
                )));
            }
        };
        Ok(CommandInput { argv, stdin })
    }
}

/// A command's tool name: its plugin id in the characters tool names take.
pub fn default_name(plugin: &str) -> String {
    let mut name: String = plugin
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        name.push_str("command");
    }
    name
}

fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "exit_code": { "type": "integer", "description": "0 for success" },
            "stdout": { "type": "string" },
            "stderr": { "type": "string" },
        },
        "required": ["exit_code", "stdout", "stderr"],
        "additionalProperties": false,
    })
}

/// Runs the program to its end: it returned, or it exited (`wasi:cli/exit`).
pub async fn run(
    instance: &wasmtime::component::Instance,
    terms: &RunTerms,
    store: &mut Store<CallState>,
) -> wasmtime::Result<Result<GuestOutput, Failure>> {
    let tool = terms.tool.as_str();
    let Some(func) = instance.get_func(&mut *store, terms.run) else {
        return Ok(Err(Failure::trap("the command has no `run` function", "")));
    };
    let mut results = [Val::Bool(false)];
    let exit_code = match func.call_async(&mut *store, &[], &mut results).await {
        Ok(()) => match &results[0] {
            Val::Result(Ok(_)) => 0,
            _ => 1,
        },
        Err(err) => match err.downcast_ref::<wasmtime_wasi::I32Exit>() {
            Some(exit) => exit.0,
            None => return Err(err),
        },
    };
    let state = store.data();
    let (stdout, stdout_dropped) = state.stdout.contents();
    let (stderr, stderr_dropped) = state.stderr.contents();
    let cut_note = |dropped: u64, stream: &str| {
        (dropped > 0).then(|| {
            format!(
                "[{dropped} more bytes of {stream} were dropped: over the plugin's output limit]"
            )
        })
    };
    let notes: Vec<String> = [
        cut_note(stdout_dropped, "stdout"),
        cut_note(stderr_dropped, "stderr"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if terms.ok_exit_codes.contains(&exit_code) {
        let structured = json!({ "exit_code": exit_code, "stdout": stdout, "stderr": stderr });
        let mut content = vec![Content::Text { text: stdout }];
        if exit_code != 0 {
            content.push(Content::Text {
                text: format!(
                    "[`{tool}` exited with status {exit_code}, a success for this tool (ok_exit_codes)]"
                ),
            });
        }
        content.extend(notes.into_iter().map(|text| Content::Text { text }));
        return Ok(Ok(GuestOutput {
            content,
            structured: Some(structured.to_string()),
            details: String::new(),
            is_error: false,
        }));
    }
    let mut message = format!("`{tool}` exited with status {exit_code}.");
    for (stream, text) in [("stderr", &stderr), ("stdout", &stdout)] {
        if !text.trim().is_empty() {
            message.push_str(&format!(
                "\nIts {stream}:\n{}",
                last_bytes(text.trim_end(), ERROR_TAIL_BYTES)
            ));
        }
    }
    for note in notes {
        message.push('\n');
        message.push_str(&note);
    }
    message.push('\n');
    message.push_str(&terms.grants);
    let details = json!({
        "exit_code": exit_code,
        "stdout": last_bytes(&stdout, ERROR_DETAIL_BYTES),
        "stderr": last_bytes(&stderr, ERROR_DETAIL_BYTES),
    });
    // A program that failed after the host refused it something failed for want of a grant.
    let kind = match state.refusal_behind(&message) {
        Some(refusal) => {
            message.push_str(&format!(
                "\nThe host refused it {refusal}; that is outside what this plugin was granted."
            ));
            ErrorKind::CapabilityDenied
        }
        None => ErrorKind::ToolError,
    };
    Ok(Err(Failure::new(kind, message, details)))
}

/// How much of each stream a failed command's message quotes, and its details keep (the end,
/// where programs say what went wrong).
const ERROR_TAIL_BYTES: usize = 4 << 10;
const ERROR_DETAIL_BYTES: usize = 64 << 10;

/// The last `limit` bytes of `text` (cut at a character boundary), marked when cut.
fn last_bytes(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {start} bytes before]{}", &text[start..])
}
