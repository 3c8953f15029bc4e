//! `cordon serve --hooks-as-tools`: every granted hook offered as one MCP tool, `hook_ID`, so
//! another agent's hook system (Claude Code's `mcp_tool` hooks, or any client that asks a tool
//! before it acts) gets a decision from a sandboxed cordon hook. A call names the stage and gives
//! what the hook would see there; the hook alone runs, exactly as in `cordon run`
//! (`cordon_runtime::pipeline::hook_questions`), and its answer comes back as
//! `structuredContent`, with its text in cordon's form or in Claude Code's
//! (`hook_answer_formats.rs`). A question the hook cannot be asked (a stage it does not declare,
//! malformed input) is an `isError` result saying what to send instead.

use super::hook_answer_formats::{self, AnswerFormat};
use super::hook_tool_question::{self, CallArguments, GivenResult, HookToolQuestion};
use cordon_runtime::Pipeline;
use cordon_runtime::Plugin;
use cordon_runtime::SessionStage;
use cordon_runtime::capabilities::grant::Access;
use cordon_runtime::pipeline::HookAnswer;
use cordon_runtime::pipeline::hook_questions::{HookQuestion, stages_of};
use cordon_runtime::report::{Content, ToolResult, terminal_text};
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};
use std::sync::{Arc, LazyLock};
use tokio_util::sync::CancellationToken;

/// What a hook tool's name starts with.
const PREFIX: &str = "hook_";

/// The largest question a hook tool takes, as JSON text: what a session stage sends a hook is
/// bounded (docs/session-hooks.md), and so is what a client may.
pub const MAX_QUESTION_BYTES: usize = 1 << 20;

/// The longest tool name model APIs and MCP clients take.
const MAX_TOOL_NAME: usize = 64;

/// One hook as a tool.
#[derive(Clone, PartialEq)]
pub struct HookTool {
    pub tool: Tool,
    /// The plugin whose hook it asks.
    pub hook: String,
    /// That plugin's file, so a reload that swaps it is a change clients are told of.
    pub sha256: [u8; 32],
}

/// The hook tools of `pipeline`'s granted hooks, by hook order. A hook tool keeps its name over a
/// loaded tool of the same name (which is then not served, [`crate::server::served_set`]): a tool
/// plugin cannot take a hook's place. Of hooks whose ids make the same name (`g.uard` and
/// `g_uard`), the one whose id is the name as written keeps it; when none is, none is offered. A
/// name over 64 characters is not offered either (clients drop such tools). Each is a warning.
pub fn tools(pipeline: &Pipeline) -> Vec<HookTool> {
    let mut by_name: Vec<(String, Vec<_>)> = Vec::new();
    for plugin in pipeline.hooks() {
        let name = tool_name(&plugin.id);
        match by_name.iter_mut().find(|(taken, _)| *taken == name) {
            Some((_, plugins)) => plugins.push(plugin),
            None => by_name.push((name, vec![plugin])),
        }
    }
    let mut tools = Vec::new();
    for (name, plugins) in by_name {
        let plugin = match plugins.as_slice() {
            [one] => *one,
            _ => {
                let ids: Vec<&str> = plugins.iter().map(|plugin| &*plugin.id).collect();
                let Some(clean) = plugins
                    .iter()
                    .find(|plugin| tool_name(&plugin.id) == format!("{PREFIX}{}", plugin.id))
                else {
                    tracing::warn!(
                        "no hook is offered as the tool `{name}`: the hooks {} all make that name; rename all but one plugin",
                        ids.join(", ")
                    );
                    continue;
                };
                tracing::warn!(
                    hook = %clean.id,
                    "the hooks {} all make the tool name `{name}`; it asks `{}`, whose id it is, and the others are not offered: rename them",
                    ids.join(", "),
                    clean.id
                );
                *clean
            }
        };
        if name.len() > MAX_TOOL_NAME {
            tracing::warn!(
                hook = %plugin.id,
                "the hook is not offered as a tool: `{name}` is over {MAX_TOOL_NAME} characters, which clients refuse; give the plugin a shorter file name"
            );
            continue;
        }
        tools.push(HookTool {
            tool: definition(&name, plugin),
            hook: plugin.id.to_string(),
            sha256: plugin.sha256,
        });
    }
    tools
}

/// `hook_` and the plugin id, with anything MCP names do not take made `_`.
fn tool_name(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{PREFIX}{safe}")
}

/// The tool as listed: its stages in the schema, the answer's shape as its output schema, and
/// hints that follow the hook's grants (asking a hook that may write or reach the network is not
/// read-only).
fn definition(name: &str, plugin: &Plugin) -> Tool {
    let hook = &*plugin.id;
    let stages = stages_of(plugin);
    let schema = hook_tool_question::input_schema(&stages);
    let mut tool = Tool::new(
        name.to_string(),
        format!(
            "Asks cordon's sandboxed hook `{hook}` what it decides at one stage ({}), without running any tool or model: the decision (allow, ask, block, rewrite, keep, replace, proceed, narrow, add_context, drop_calls, or failed, which means stop) with its reason and what it changes.",
            stages.join(", ")
        ),
        Arc::new(schema),
    );
    tool.title = Some(format!("Hook {hook}"));
    let writes = plugin
        .grant
        .dirs
        .iter()
        .any(|dir| dir.access == Access::ReadWrite);
    let reaches = !plugin.grant.http.is_empty();
    tool.annotations = Some(ToolAnnotations::from_raw(
        Some(format!("Hook {hook}")),
        Some(!writes && !reaches),
        Some(false),
        None,
        Some(reaches),
    ));
    if let Value::Object(output) = hook_answer_formats::answer_schema() {
        tool.output_schema = Some(Arc::new(output));
    }
    tool
}

/// The answer to a call of `hook`'s tool with `arguments`.
pub async fn answer(
    pipeline: &Pipeline,
    hook: &str,
    call_id: &str,
    arguments: Option<Map<String, Value>>,
    cancel: &CancellationToken,
) -> CallToolResult {
    let arguments = arguments.unwrap_or_default();
    // A question that cannot be asked fails closed in Claude Code's form, whatever was wrong
    // with it: an error there would let the call through.
    let claude_code = arguments
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| format.eq_ignore_ascii_case("claude-code"));
    let stage = arguments.get("stage").and_then(Value::as_str);
    let refuse = |message: String| refused(hook, message, claude_code.then_some(stage));
    let size = question_bytes(&arguments);
    if size > MAX_QUESTION_BYTES {
        return refuse(format!(
            "the question is {size} bytes of JSON, over the {} MiB a hook tool takes; send less (the agent loop cuts a prompt at 64 KiB and a message at 4 KiB)",
            MAX_QUESTION_BYTES >> 20
        ));
    }
    let (question, format) = match read_question(&arguments) {
        Ok(read) => read,
        Err(message) => return refuse(message),
    };
    let sandbox_id = format!("hook-{call_id}");
    let answer = match pipeline
        .ask_hook(hook, &sandbox_id, question, None, cancel)
        .await
    {
        Ok(answer) => shown(answer),
        Err(refusal) => return refuse(refusal.to_string()),
    };
    let structured = serde_json::to_value(&answer).unwrap_or(Value::Null);
    let text = match format {
        AnswerFormat::Cordon => structured.to_string(),
        AnswerFormat::ClaudeCode => hook_answer_formats::claude_code(&answer).to_string(),
    };
    // What is left unsafe inside the JSON values (a rewrite's arguments, a replaced result, which
    // the client passes on as they are) is escaped in the text, the value unchanged.
    let text = terminal_text::json_text(&text).into_owned();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

/// The answer with every text of the hook's shown as the terminal shows it: a reason, a name or
/// an id on one line, a replacement or context with its own line breaks, and in each every
/// control, bidirectional and invisible character escaped, so a hook cannot drive the client's
/// terminal or reorder what a person reads there.
fn shown(mut answer: HookAnswer) -> HookAnswer {
    let one_line = |text: &mut String| *text = terminal_text::one_line(text).into_owned();
    let lines = |text: &mut String| *text = terminal_text::lines(text).into_owned();
    one_line(&mut answer.hook);
    answer.reason.iter_mut().for_each(one_line);
    answer.replace.iter_mut().for_each(lines);
    answer.add_context.iter_mut().for_each(lines);
    answer.only_tools.iter_mut().flatten().for_each(one_line);
    answer.drop_calls.iter_mut().for_each(one_line);
    answer
}

/// A question `hook` could not be asked: an error that says what to send, or, asked for Claude
/// Code's form (`claude_code`: the stage asked, if any), that form's refusal for the stage, with
/// `failed` as cordon's answer.
fn refused(hook: &str, message: String, claude_code: Option<Option<&str>>) -> CallToolResult {
    let text = format!(
        "The hook was not asked: {}.",
        terminal_text::one_line(&message)
    );
    match claude_code {
        None => CallToolResult::error(vec![ContentBlock::text(text)]),
        Some(stage) => {
            let output =
                hook_answer_formats::claude_code_refusal(stage, &terminal_text::one_line(&message));
            let mut result = CallToolResult::success(vec![ContentBlock::text(output.to_string())]);
            // cordon's form of the same: the hook did not decide, so it counts as failed.
            result.structured_content = Some(json!({
                "hook": hook,
                "stage": stage.unwrap_or_default(),
                "decision": "failed",
                "reason": text,
                "watched": false,
                "duration_ms": 0,
            }));
            result
        }
    }
}

/// How big a question is: its JSON, with a string-valued argument counted as its own text (the
/// JSON text a template sends as `arguments` is not counted a second time for its escapes).
fn question_bytes(arguments: &Map<String, Value>) -> usize {
    arguments
        .iter()
        .map(|(key, value)| {
            key.len()
                + match value {
                    Value::String(text) => text.len(),
                    other => other.to_string().len(),
                }
        })
        .sum()
}

/// The question and the answer's format a call's arguments give.
fn read_question(arguments: &Map<String, Value>) -> Result<(HookQuestion, AnswerFormat), String> {
    static NAMES: LazyLock<Vec<String>> = LazyLock::new(hook_tool_question::argument_names);
    if let Some(unknown) = arguments.keys().find(|key| !NAMES.contains(key)) {
        return Err(format!(
            "`{unknown}` is not an argument of a hook tool (it takes {})",
            NAMES.join(", ")
        ));
    }
    if !arguments.contains_key("stage") {
        return Err("`stage` is required: before-tool-call, after-tool-call, or a session stage such as prompt".to_string());
    }
    let asked: HookToolQuestion =
        serde_json::from_value(Value::Object(arguments.clone())).map_err(|err| err.to_string())?;
    let format = match asked.format.as_deref() {
        None | Some("cordon") => AnswerFormat::Cordon,
        // In any case: a client that means Claude Code's form gets it, refusals included.
        Some(format) if format.eq_ignore_ascii_case("claude-code") => AnswerFormat::ClaudeCode,
        Some(_) => return Err("`format` is \"cordon\" or \"claude-code\"".to_string()),
    };
    let question = match asked.stage.as_str() {
        "before-tool-call" => HookQuestion::BeforeToolCall {
            tool: tool_of(&asked)?,
            arguments: arguments_of(asked.arguments)?,
        },
        "after-tool-call" => {
            let tool = tool_of(&asked)?;
            let result = result_of(asked.result, &tool)?;
            HookQuestion::AfterToolCall {
                arguments: arguments_of(asked.arguments)?,
                tool,
                result,
            }
        }
        other => {
            let Some(stage) = SessionStage::ALL.into_iter().find(|s| s.as_str() == other) else {
                return Err(format!(
                    "`{other}` is not a stage (before-tool-call, after-tool-call, {})",
                    SessionStage::ALL.map(SessionStage::as_str).join(", ")
                ));
            };
            HookQuestion::Session {
                stage,
                payload: session_payload(stage, asked.payload.unwrap_or_default())?,
            }
        }
    };
    Ok((question, format))
}

/// The `tool` a tool-call stage needs.
fn tool_of(asked: &HookToolQuestion) -> Result<String, String> {
    match &asked.tool {
        Some(tool) if !tool.is_empty() => Ok(tool.clone()),
        _ => {
            Err("`tool` is required at a tool-call stage: the name of the tool called".to_string())
        }
    }
}

/// The call's arguments: an object, or the JSON text of one; none is `{}`.
fn arguments_of(arguments: Option<CallArguments>) -> Result<Value, String> {
    match arguments {
        None => Ok(json!({})),
        Some(CallArguments::Object(object)) => Ok(Value::Object(object)),
        Some(CallArguments::Text(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(object @ Value::Object(_)) => Ok(object),
            _ => Err("`arguments` is a JSON object, or the JSON text of one".to_string()),
        },
    }
}

/// The result an after-tool-call question shows the hook.
fn result_of(result: Option<GivenResult>, tool: &str) -> Result<Box<ToolResult>, String> {
    let (text, is_error) = match result {
        Some(GivenResult::Text(text)) => (text, false),
        Some(GivenResult::Full { text, is_error }) => (text, is_error),
        None => {
            return Err(
                "`result` is required at after-tool-call: the result's text, or {\"text\": ..., \"is_error\": ...}"
                    .to_string(),
            );
        }
    };
    Ok(Box::new(if is_error {
        ToolResult::error(
            "hook-question",
            tool,
            cordon_runtime::report::ErrorKind::ToolError,
            text,
            json!({}),
        )
    } else {
        ToolResult::success("hook-question", tool, vec![Content::text(text)], json!({}))
    }))
}

/// A session stage's payload: the client's fields over the stage's empty values, with the one
/// field a stage is about (a prompt's `prompt`, a stop's `answer`) required.
fn session_payload(stage: SessionStage, mut given: Map<String, Value>) -> Result<Value, String> {
    let (required, defaults) = match stage {
        SessionStage::SessionStart => (None, json!({"resumed": false, "messages": 0, "tools": []})),
        SessionStage::Prompt => (Some("prompt"), json!({"resumed": false})),
        SessionStage::ModelRequest => (
            None,
            json!({"step": 1, "purpose": "turn", "messages": [], "tools": []}),
        ),
        SessionStage::ModelResponse => (None, json!({"step": 1, "text": "", "calls": []})),
        SessionStage::Compaction => (
            None,
            json!({"phase": "before", "previous_summary": null, "folded": 0, "messages": []}),
        ),
        SessionStage::Stop => (Some("answer"), json!({"continuations": 0})),
        SessionStage::SessionEnd => (None, json!({"outcome": "answered", "messages": 0})),
    };
    if let Some(field) = required
        && !given.get(field).is_some_and(Value::is_string)
    {
        return Err(format!(
            "`payload.{field}` is required at the {stage} stage, as text"
        ));
    }
    if let Value::Object(defaults) = defaults {
        for (key, value) in defaults {
            given.entry(key).or_insert(value);
        }
    }
    Ok(Value::Object(given))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(arguments: Value) -> Result<HookQuestion, String> {
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        read_question(&arguments).map(|(question, _)| question)
    }

    #[test]
    fn the_schema_lists_the_stages_asked_and_every_argument_with_its_shape() {
        let schema = Value::Object(hook_tool_question::input_schema(&[
            "before-tool-call",
            "prompt",
        ]));
        assert_eq!(
            schema["properties"]["stage"]["enum"],
            json!(["before-tool-call", "prompt"])
        );
        assert_eq!(schema["required"], json!(["stage"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["properties"]["format"]["default"], "cordon");
        assert!(
            schema["properties"]["result"]["description"]
                .as_str()
                .unwrap()
                .starts_with("after-tool-call")
        );
        // Every argument named in the schema is read, and each has its shape there.
        let names = hook_tool_question::argument_names();
        assert_eq!(
            names,
            ["stage", "tool", "arguments", "result", "payload", "format"]
        );
        assert!(!schema.to_string().contains("$ref"), "{schema}");
    }

    #[test]
    fn a_value_of_the_wrong_shape_says_what_to_send() {
        let stage = read(json!({"stage": 5})).unwrap_err();
        assert!(stage.contains("`stage` is text"), "{stage}");
        let result =
            read(json!({"stage": "after-tool-call", "tool": "t", "result": {"is_error": true}}))
                .unwrap_err();
        assert!(result.contains("`result` is the result's text"), "{result}");
        let format =
            read(json!({"stage": "prompt", "payload": {"prompt": "hi"}, "format": "yaml"}))
                .unwrap_err();
        assert!(format.contains("\"claude-code\""), "{format}");
        // null is the same as leaving a field out.
        assert!(
            read(
                json!({"stage": "before-tool-call", "tool": "t", "arguments": null, "format": null})
            )
            .is_ok()
        );
    }

    #[test]
    fn names_are_mcp_safe() {
        assert_eq!(tool_name("guard"), "hook_guard");
        assert_eq!(tool_name("my.hook v2"), "hook_my_hook_v2");
    }

    #[test]
    fn a_call_argument_may_be_json_text() {
        let question = read(json!({"stage": "before-tool-call", "tool": "write_file", "arguments": "{\"path\": \"a\"}"})).unwrap();
        let HookQuestion::BeforeToolCall { arguments, .. } = question else {
            panic!("{question:?}")
        };
        assert_eq!(arguments, json!({"path": "a"}));
    }

    #[test]
    fn mistakes_say_what_to_send() {
        let missing = read(json!({"stage": "prompt", "payload": {}})).unwrap_err();
        assert!(missing.contains("payload.prompt"), "{missing}");
        let unknown = read(json!({"stage": "prompt", "prompt": "hi"})).unwrap_err();
        assert!(unknown.contains("`prompt` is not an argument"), "{unknown}");
        let stage = read(json!({"stage": "PreToolUse"})).unwrap_err();
        assert!(stage.contains("before-tool-call"), "{stage}");
        let result = read(json!({"stage": "after-tool-call", "tool": "t"})).unwrap_err();
        assert!(result.contains("`result` is required"), "{result}");
    }

    #[test]
    fn left_out_fields_take_empty_values() {
        let question = read(json!({"stage": "prompt", "payload": {"prompt": "hi"}})).unwrap();
        let HookQuestion::Session { payload, .. } = question else {
            panic!("{question:?}")
        };
        assert_eq!(payload, json!({"prompt": "hi", "resumed": false}));
    }
}
