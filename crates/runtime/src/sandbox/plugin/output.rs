//! A guest's output checked before it becomes a result: at most [`MAX_CONTENT_BLOCKS`] blocks,
//! within what is left of the plugin's output limit, and structured output that is a JSON object
//! matching the tool's output schema (a tool that declares one must return it on success).

use super::Plugin;
use crate::report::{Content, ErrorKind, MAX_CONTENT_BLOCKS, ToolResult};
use crate::sandbox::contract::content;
use crate::sandbox::contract::host_terms::GuestOutput;
use crate::sandbox::failure::Failure;
use crate::schema::ArgumentSchema;
use serde_json::{Value, json};

/// The most violations of an output schema a failure lists.
const LISTED_VIOLATIONS: usize = 5;

/// Output that passed every check.
pub(super) struct CheckedOutput {
    content: Vec<Content>,
    structured: Option<Value>,
    details: Value,
}

impl CheckedOutput {
    pub fn into_tool_result(self, id: &str, name: &str) -> ToolResult {
        let mut result = ToolResult::success(id, name, self.content, self.details);
        result.structured = self.structured;
        result
    }
}

impl Plugin {
    /// Checks `output` (a `part`: "result" or "replacement result"), produced by `what` with
    /// `left` bytes of output limit to spare, against the limits and the output schema of the
    /// tool it is the result of.
    pub(super) async fn checked_output(
        &self,
        what: &str,
        part: &str,
        output: GuestOutput,
        left: u64,
        output_schema: Option<&ArgumentSchema>,
    ) -> Result<CheckedOutput, Failure> {
        if output.content.len() > MAX_CONTENT_BLOCKS {
            return Err(Failure::new(
                ErrorKind::ToolError,
                too_many_blocks(what, output.content.len()),
                json!({ "blocks": output.content.len(), "limitBlocks": MAX_CONTENT_BLOCKS }),
            ));
        }
        let size = output.size();
        if size > left {
            return Err(Failure::new(
                ErrorKind::ToolError,
                self.over_output_limit(what, part, size, left),
                json!({
                    "outputBytes": size,
                    "limitBytes": self.grant.limits.output_bytes,
                    "spentBeforeBytes": self.grant.limits.output_bytes.saturating_sub(left),
                }),
            ));
        }
        let structured = structured_output(
            what,
            output.structured.as_deref(),
            output.is_error,
            output_schema,
        )
        .await?;
        Ok(CheckedOutput {
            content: output.content,
            structured,
            details: content::details(&output.details),
        })
    }
}

/// The structured output as a JSON object, checked against the output schema. An error result
/// need not carry it; a success of a tool with an output schema must.
async fn structured_output(
    what: &str,
    text: Option<&str>,
    is_error: bool,
    schema: Option<&ArgumentSchema>,
) -> Result<Option<Value>, Failure> {
    let broken = |message: String, details: Value| {
        Err(Failure::new(
            ErrorKind::ToolError,
            format!("{what} {message} This is a bug in the tool, not in your request."),
            details,
        ))
    };
    let Some(text) = text else {
        return match schema {
            Some(_) if !is_error => broken(
                "returned no structured output, but the tool declares an output schema.".into(),
                json!({ "structuredOutput": "missing" }),
            ),
            _ => Ok(None),
        };
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => {
            return broken(
                "returned structured output that is not a JSON object.".into(),
                json!({ "structuredOutput": "not an object" }),
            );
        }
        Err(err) => {
            return broken(
                format!("returned structured output that is not JSON ({err})."),
                json!({ "structuredOutput": "not JSON" }),
            );
        }
    };
    let Some(schema) = schema.filter(|_| !is_error) else {
        return Ok(Some(value));
    };
    let violations = match schema.check_bounded(&value, text.len()).await {
        Ok(violations) => violations,
        Err(refused) => {
            return broken(
                format!("returned structured output that could not be checked: {refused}."),
                json!({ "structuredOutput": "unchecked" }),
            );
        }
    };
    if violations.is_empty() {
        return Ok(Some(value));
    }
    let listed: Vec<String> = violations
        .iter()
        .take(LISTED_VIOLATIONS)
        .map(ToString::to_string)
        .collect();
    broken(
        format!(
            "returned structured output that does not match its output schema: {}.",
            listed.join("; ")
        ),
        json!({ "structuredOutput": "mismatch", "violations": violations }),
    )
}

pub(super) fn too_many_blocks(what: &str, blocks: usize) -> String {
    format!(
        "{what} returned {blocks} content blocks, more than the {MAX_CONTENT_BLOCKS} a result may have; return fewer, larger blocks"
    )
}
