//! One tool call from request to result: look the tool up, parse and validate the arguments
//! against its schema, run it in its sandbox, and turn whatever happened into a [`ToolResult`].

use crate::bindings;
use crate::failure::human_bytes;
use crate::plugin::CallOptions;
use crate::registry::Registry;
use crate::result::{Content, ErrorKind, ToolResult};
use serde_json::{Value, json};

/// A call as a model (or a user) made it: the arguments are raw JSON text, not yet trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRequest {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl Registry {
    /// Runs one call. Every failure comes back as an error result; this never panics or errors.
    pub async fn call(&self, request: &CallRequest, options: &CallOptions) -> ToolResult {
        let (id, name) = (request.id.as_str(), request.name.as_str());
        let Some((plugin, tool)) = self.tool(name) else {
            let available = self.tool_names().join(", ");
            return ToolResult::error(
                id,
                name,
                ErrorKind::NotFound,
                format!("Unknown tool {name:?}. Available tools: {available}."),
                json!({ "available": self.tool_names() }),
            );
        };
        let arguments = match parse_arguments(&request.arguments) {
            Ok(arguments) => arguments,
            Err(message) => {
                return ToolResult::error(
                    id,
                    name,
                    ErrorKind::InvalidArguments,
                    message,
                    json!({ "arguments": request.arguments }),
                );
            }
        };
        let violations = tool.schema.check(&arguments);
        if !violations.is_empty() {
            let list: Vec<String> = violations.iter().map(|v| format!("- {v}")).collect();
            return ToolResult::error(
                id,
                name,
                ErrorKind::InvalidArguments,
                format!(
                    "Invalid arguments for {name}:\n{}\nArguments received: {arguments}\nFix these and call {name} again; its parameters schema says what is expected.",
                    list.join("\n")
                ),
                json!({ "violations": violations, "arguments": arguments }),
            );
        }

        let call = bindings::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
        };
        match plugin.execute(&call, options).await {
            Ok((output, budget)) => {
                let content: Vec<Content> = output
                    .content
                    .into_iter()
                    .map(crate::convert::content_from_wit)
                    .collect();
                let size = content.iter().map(Content::size).sum::<usize>() as u64
                    + output.details.len() as u64;
                if size > budget {
                    let limit = plugin.grant.limits.output_bytes;
                    return ToolResult::error(
                        id,
                        name,
                        ErrorKind::ToolError,
                        format!(
                            "{name} produced {size} bytes of output, over its plugin's output limit of {}. Ask for less at a time (use offsets, limits or filters).",
                            human_bytes(limit)
                        ),
                        json!({ "outputBytes": size, "limitBytes": limit }),
                    );
                }
                ToolResult::success(
                    id,
                    name,
                    content,
                    crate::convert::details_from_wit(&output.details),
                )
            }
            Err(failure) => {
                ToolResult::error(id, name, failure.kind, failure.message, failure.details)
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_a_json_object() {
        assert_eq!(parse_arguments(""), Ok(json!({})));
        assert_eq!(parse_arguments(" {\"a\": 1} "), Ok(json!({ "a": 1 })));
        for bad in ["[1]", "3", "\"x\"", "{", "{'a': 1}", "null"] {
            let err = parse_arguments(bad).expect_err(bad);
            assert!(
                err.contains(bad.trim_end_matches('}')) || err.contains("object"),
                "{err}"
            );
        }
    }
}
