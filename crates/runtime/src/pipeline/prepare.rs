//! Step 1 of a batch, call by call in call order: look the tool up, check the active set, parse and
//! validate the arguments, run the before-hooks until they agree (`before.rs`), and validate
//! rewritten arguments again. A call either comes out ready to run or already has its result.

use super::approval::{ApprovalRequest, AskedBy, policy_asks};
use super::before::BeforeOutcome;
use super::events::Emitter;
use super::{BatchOptions, CallRequest, Pipeline};
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::plugin::{ExecutionMode, Plugin, ToolInfo};
use crate::schema::{CheckRefused, Violation};
use serde_json::{Value, json};
use std::sync::Arc;

/// A call that passed every check and every before-hook.
pub(crate) struct ReadyCall {
    pub id: String,
    pub name: String,
    pub plugin: Arc<Plugin>,
    pub arguments: Value,
    pub sequential: bool,
    /// What this call touches, as comparable keys (distinct; see lock_keys.rs).
    pub locks: Vec<String>,
}

pub(crate) enum Prepared {
    Ready(ReadyCall),
    Done(ToolResult),
}

impl Pipeline {
    pub(crate) async fn prepare(
        &self,
        request: &CallRequest,
        options: &BatchOptions,
        emitter: &Emitter,
    ) -> Prepared {
        let cancel = &options.cancel;
        let (id, name) = (request.id.as_str(), request.name.as_str());
        let registry = &self.inner.registry;
        let Some((plugin, tool)) = registry.tool(name) else {
            let available = self.active_tool_names();
            let refused = RefusedFiles::of(registry.rejected());
            return Prepared::Done(ToolResult::error(
                id,
                name,
                ErrorKind::NotFound,
                unknown_tool_message(name, &available, &refused),
                json!({
                    "available": available,
                    "refused": refused.named.iter().map(|(file, reason)| json!({
                        "file": file,
                        "reason": reason,
                    })).collect::<Vec<_>>(),
                    "refused_count": refused.count,
                }),
            ));
        };
        if !self.is_active(name) {
            let available = self.active_tool_names();
            return Prepared::Done(ToolResult::error(
                id,
                name,
                ErrorKind::NotActive,
                format!(
                    "The tool {name:?} is not active in this session. Active tools: {}.",
                    available.join(", ")
                ),
                json!({ "active": available }),
            ));
        }
        let arguments = match parse_arguments(&request.arguments) {
            Ok(arguments) => arguments,
            Err(message) => {
                return Prepared::Done(ToolResult::error(
                    id,
                    name,
                    ErrorKind::InvalidArguments,
                    message,
                    json!({ "arguments": crate::report::budget::cut(&request.arguments, 4_096) }),
                ));
            }
        };
        let size = request.arguments.len();
        if let Some(result) = check_schema(id, tool, &arguments, size, None).await {
            return Prepared::Done(result);
        }
        let (arguments, mut asked_by) = match self
            .before_hooks(id, name, arguments, cancel, emitter)
            .await
        {
            BeforeOutcome::Done(result) => return Prepared::Done(result),
            BeforeOutcome::Allowed {
                arguments,
                rewritten_by: None,
                asks,
            } => (arguments, asks),
            BeforeOutcome::Allowed {
                arguments,
                rewritten_by: Some(hook),
                asks,
            } => {
                let size = arguments.to_string().len();
                if let Some(result) = check_schema(id, tool, &arguments, size, Some(&hook)).await {
                    return Prepared::Done(result);
                }
                (arguments, asks)
            }
        };
        if let Some(reason) = policy_asks(&self.inner.settings.approval, tool) {
            asked_by.insert(
                0,
                AskedBy {
                    who: "cordon.toml".into(),
                    reason,
                },
            );
        }
        let base = plugin.grant.dirs.first().map(|dir| dir.guest.as_str());
        let touched = super::lock_keys::touched(&arguments, &tool.locks, base);
        let approval = ApprovalRequest {
            tool_call_id: id.to_string(),
            tool_name: name.to_string(),
            plugin: plugin.id.to_string(),
            arguments,
            touched,
            asked_by,
        };
        let refused = self
            .approve(&approval, options.approver.as_deref(), emitter)
            .await;
        if let Some(result) = refused {
            return Prepared::Done(result);
        }
        let on_host = super::lock_keys::on_host(approval.touched.clone(), &plugin.grant.dirs);
        let locks = super::lock_keys::keys(&on_host);
        let arguments = approval.arguments;
        Prepared::Ready(ReadyCall {
            id: id.to_string(),
            name: name.to_string(),
            plugin: plugin.clone(),
            arguments,
            sequential: tool.execution_mode == ExecutionMode::Sequential,
            locks,
        })
    }
}

/// `invalid_arguments` when the arguments break the schema (naming the hook that rewrote them),
/// `timeout` when checking them took too long.
async fn check_schema(
    id: &str,
    tool: &ToolInfo,
    arguments: &Value,
    size: usize,
    rewritten_by: Option<&str>,
) -> Option<ToolResult> {
    let violations = match tool.schema.check_bounded(arguments, size).await {
        Ok(violations) => violations,
        Err(timed_out @ CheckRefused::TimedOut) => {
            let limit_ms = crate::schema::VALIDATION_TIMEOUT.as_millis() as u64;
            return Some(ToolResult::error(
                id,
                &tool.name,
                ErrorKind::Timeout,
                format!(
                    "The call was not run: {timed_out} against {}'s parameters schema. Send smaller arguments.",
                    tool.name
                ),
                json!({ "limitMs": limit_ms, "stage": "validation" }),
            ));
        }
        Err(too_large @ CheckRefused::TooLarge { bytes, most }) => {
            return Some(ToolResult::error(
                id,
                &tool.name,
                ErrorKind::InvalidArguments,
                format!(
                    "The call was not run: {too_large}. Send at most {most} bytes of arguments to {}.",
                    tool.name
                ),
                json!({ "argumentBytes": bytes, "maxArgumentBytes": most }),
            ));
        }
    };
    if violations.is_empty() {
        return None;
    }
    let name = &tool.name;
    let list: Vec<String> = violations
        .iter()
        .map(|v: &Violation| format!("- {v}"))
        .collect();
    let heading = match rewritten_by {
        Some(hook) => format!("The arguments for {name} as rewritten by hook `{hook}` are invalid"),
        None => format!("Invalid arguments for {name}"),
    };
    Some(ToolResult::error(
        id,
        name,
        ErrorKind::InvalidArguments,
        format!(
            "{heading}:\n{}\nArguments received: {arguments}\nFix these and call {name} again; its parameters schema says what is expected.",
            list.join("\n")
        ),
        {
            let mut details = json!({ "violations": violations, "arguments": arguments });
            if let Some(hook) = rewritten_by {
                details["rewrittenBy"] = json!(hook);
            }
            details
        },
    ))
}

/// Arguments must be a JSON object; an empty string means `{}`.
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!(
            "The arguments must be a JSON object, got: {other}. Send the arguments as an object of named parameters."
        )),
        Err(err) => Err(format!(
            "The arguments are not valid JSON ({err}). Received: {text}. Send a JSON object."
        )),
    }
}

/// The most bytes of one refused file's reason an unknown-tool result quotes.
const MAX_REFUSAL_BYTES: usize = 512;
/// The most refused files an unknown-tool result names.
const MAX_REFUSALS_NAMED: usize = 5;

/// The refused plugin files an unknown-tool result names: at most [`MAX_REFUSALS_NAMED`], each by
/// its file name with its reason cut to [`MAX_REFUSAL_BYTES`], and how many there are in all.
struct RefusedFiles {
    named: Vec<(String, String)>,
    count: usize,
}

impl RefusedFiles {
    fn of(rejected: &[crate::registry::Rejected]) -> Self {
        let named = rejected
            .iter()
            .take(MAX_REFUSALS_NAMED)
            .map(|rejected| {
                let file = match rejected.file.file_name() {
                    Some(file) => file.to_string_lossy().into_owned(),
                    None => rejected.file.display().to_string(),
                };
                let reason = crate::report::budget::cut(&rejected.reason, MAX_REFUSAL_BYTES);
                (file, reason)
            })
            .collect();
        Self {
            named,
            count: rejected.len(),
        }
    }
}

/// What a call of a tool no loaded plugin provides is told: the tools there are, and the plugin
/// files that were refused (the tool may be in one), each with why.
fn unknown_tool_message(name: &str, available: &[String], refused: &RefusedFiles) -> String {
    let mut message = if available.is_empty() {
        format!("Unknown tool {name:?}: no tool is available.")
    } else {
        format!(
            "Unknown tool {name:?}. Available tools: {}.",
            available.join(", ")
        )
    };
    if refused.count > 0 {
        let named: Vec<String> = refused
            .named
            .iter()
            .map(|(file, reason)| format!("{file} ({reason})"))
            .collect();
        let more = refused.count - refused.named.len();
        message.push_str(&format!(
            " {} plugin file{} refused, so {} tools are not offered: {}{}.",
            refused.count,
            if refused.count == 1 { " was" } else { "s were" },
            if refused.count == 1 { "its" } else { "their" },
            named.join("; "),
            if more > 0 {
                format!("; and {more} more (`cordon list` shows all)")
            } else {
                String::new()
            }
        ));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_a_json_object() {
        assert_eq!(parse_arguments(""), Ok(json!({})));
        assert_eq!(parse_arguments(" {\"a\": 1} "), Ok(json!({ "a": 1 })));
        for bad in ["[1]", "3", "\"x\"", "{", "{'a': 1}", "null"] {
            let err = parse_arguments(bad).expect_err(bad);
            assert!(err.contains("JSON object"), "{err}");
        }
    }
}
