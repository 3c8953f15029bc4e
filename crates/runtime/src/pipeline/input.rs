//! The calls of a batch as they arrive: cordon's own form `{"id", "name", "arguments": {...}}` or
//! OpenAI's `tool_calls` form `{"id", "type": "function", "function": {"name", "arguments": "..."}}`.
//! Arguments stay raw text until the pipeline parses them, so malformed argument JSON becomes that
//! call's `invalid_arguments` result instead of failing the batch.

use serde_json::Value;

/// A call as a model (or a user) made it: the arguments are raw JSON text, not yet trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRequest {
    /// The call's id; every call of a batch needs its own.
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// The arguments as JSON text, parsed and checked only when the call is prepared.
    pub arguments: String,
}

impl CallRequest {
    /// A call of tool `name` with its arguments as JSON text (as a model or a client sends them);
    /// text that is not a JSON object comes back as an `invalid_arguments` result.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }

    /// A call of tool `name` with its arguments as a JSON value, for a program that has them as
    /// one: `CallRequest::with_value("1", "read_file", json!({"path": "/repo/README.md"}))`.
    pub fn with_value(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: &serde_json::Value,
    ) -> Self {
        Self::new(id, name, arguments.to_string())
    }
}

/// A batch document that is not an array of calls.
#[derive(Debug, thiserror::Error)]
pub enum BatchInputError {
    /// The document is not JSON.
    #[error("the batch is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    /// The document is neither an array nor an object with a `tool_calls` array.
    #[error(
        "the batch must be a JSON array of tool calls (or an object with a \"tool_calls\" array)"
    )]
    NotAnArray,
    /// A call is not an object with a name and arguments.
    #[error("call #{index} is not a tool call: {reason}")]
    BadCall {
        /// The call's position in the batch, counting from 1.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// Two calls have the same id.
    #[error(
        "calls #{first} and #{second} have the same id {id:?}; every call of a batch needs its own id"
    )]
    DuplicateId {
        /// The id they share.
        id: String,
        /// The earlier call's position, counting from 1.
        first: usize,
        /// The later call's position, counting from 1.
        second: usize,
    },
}

/// Parses a batch: an array of calls, or an object holding them under `tool_calls` (as an OpenAI
/// assistant message does). Calls without an id get `call-N` (N counting from 1).
pub fn parse_batch(text: &str) -> Result<Vec<CallRequest>, BatchInputError> {
    let document: Value = serde_json::from_str(text)?;
    let calls = match &document {
        Value::Array(calls) => calls,
        Value::Object(object) => match object.get("tool_calls") {
            Some(Value::Array(calls)) => calls,
            _ => return Err(BatchInputError::NotAnArray),
        },
        _ => return Err(BatchInputError::NotAnArray),
    };
    let calls: Vec<CallRequest> = calls
        .iter()
        .enumerate()
        .map(|(index, call)| parse_call(index, call))
        .collect::<Result<_, _>>()?;
    if let Some((first, second)) = first_duplicate_id(&calls) {
        return Err(BatchInputError::DuplicateId {
            id: calls[second].id.clone(),
            first: first + 1,
            second: second + 1,
        });
    }
    Ok(calls)
}

/// The positions of the first call whose id an earlier call already has, and of that earlier one.
pub(crate) fn first_duplicate_id(calls: &[CallRequest]) -> Option<(usize, usize)> {
    let mut seen = std::collections::HashMap::new();
    for (index, call) in calls.iter().enumerate() {
        if let Some(first) = seen.insert(call.id.as_str(), index) {
            return Some((first, index));
        }
    }
    None
}

fn parse_call(index: usize, call: &Value) -> Result<CallRequest, BatchInputError> {
    let bad = |reason: &str| BatchInputError::BadCall {
        index: index + 1,
        reason: reason.to_string(),
    };
    let object = call.as_object().ok_or_else(|| bad("expected an object"))?;
    let id = match object.get("id") {
        Some(Value::String(id)) => id.clone(),
        Some(Value::Number(id)) => id.to_string(),
        None | Some(Value::Null) => format!("call-{}", index + 1),
        Some(_) => return Err(bad("\"id\" must be a string")),
    };
    let (name, arguments) = match object.get("function") {
        Some(function) => (function.get("name"), function.get("arguments")),
        None => (object.get("name"), object.get("arguments")),
    };
    let name = name
        .and_then(Value::as_str)
        .ok_or_else(|| bad("missing \"name\" (or \"function.name\")"))?;
    let arguments = match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Ok(CallRequest {
        id,
        name: name.to_string(),
        arguments,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_are_accepted() {
        let calls = parse_batch(
            r#"[
                {"id": "a", "name": "echo", "arguments": {"text": "hi"}},
                {"id": "b", "type": "function", "function": {"name": "echo", "arguments": "{\"text\": \"yo\"}"}},
                {"name": "counter"}
            ]"#,
        )
        .unwrap();
        assert_eq!(
            calls,
            [
                CallRequest::new("a", "echo", r#"{"text":"hi"}"#),
                CallRequest::new("b", "echo", r#"{"text": "yo"}"#),
                CallRequest::new("call-3", "counter", ""),
            ]
        );
    }

    #[test]
    fn malformed_arguments_are_kept_for_the_pipeline_to_report() {
        let calls = parse_batch(r#"{"tool_calls": [{"id": "x", "type": "function", "function": {"name": "echo", "arguments": "{\"text\": "}}]}"#).unwrap();
        assert_eq!(calls[0].arguments, "{\"text\": ");
    }

    #[test]
    fn documents_that_are_not_batches_are_refused() {
        for (text, expected) in [
            ("{", "not JSON"),
            ("{\"calls\": []}", "JSON array"),
            ("[1]", "call #1"),
            ("[{\"id\": \"a\"}]", "missing \"name\""),
            ("[{\"name\": \"x\", \"id\": []}]", "\"id\" must be a string"),
        ] {
            let err = parse_batch(text).expect_err(text).to_string();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
