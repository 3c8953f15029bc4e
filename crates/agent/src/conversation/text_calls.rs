//! Tool calls that a (usually small, local) model wrote into its text instead of `tool_calls`:
//! `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks, or a reply that is nothing
//! but `{"name": ..., "arguments": ...}` (or an array of them, optionally in a ```json fence)
//! naming an offered tool. Used only when `parse_text_tool_calls = true`.

use crate::conversation::message::ToolCall;
use serde_json::Value;

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";

/// The calls found in `text` and the text left around them; `None` when there are none.
pub fn recover(text: &str, offered: &[&str]) -> Option<(String, Vec<ToolCall>)> {
    if text.contains(OPEN) {
        return tagged(text);
    }
    bare(text, offered).map(|calls| (String::new(), calls))
}

fn tagged(text: &str) -> Option<(String, Vec<ToolCall>)> {
    let mut rest = text;
    let mut kept = String::new();
    let mut calls = Vec::new();
    while let Some(start) = rest.find(OPEN) {
        kept.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len()..];
        // A reply cut off after the last call may lack the closing tag.
        let (inside, next) = match after.find(CLOSE) {
            Some(end) => (&after[..end], &after[end + CLOSE.len()..]),
            None => (after, ""),
        };
        let value: Value = serde_json::from_str(strip_fence(inside)).ok()?;
        calls.push(call_from(&value, calls.len())?);
        rest = next;
    }
    kept.push_str(rest);
    Some((kept.trim().to_string(), calls))
}

fn bare(text: &str, offered: &[&str]) -> Option<Vec<ToolCall>> {
    let value: Value = serde_json::from_str(strip_fence(text)).ok()?;
    let items = match &value {
        Value::Array(items) if !items.is_empty() => items.iter().collect(),
        Value::Object(_) => vec![&value],
        _ => return None,
    };
    let mut calls = Vec::new();
    for item in items {
        let call = call_from(item, calls.len())?;
        if !offered.contains(&call.name.as_str()) {
            return None;
        }
        calls.push(call);
    }
    Some(calls)
}

/// `{"name": ..., "arguments": {...} or "..."}`; some models say `parameters` instead.
fn call_from(value: &Value, index: usize) -> Option<ToolCall> {
    let object = value.as_object()?;
    let name = object.get("name")?.as_str()?;
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        None | Some(Value::Null) => "{}".to_string(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Some(ToolCall {
        id: format!("text_call_{}", index + 1),
        name: name.to_string(),
        arguments,
    })
}

/// The text inside a ```json … ``` (or ``` … ```) fence, or the text itself, trimmed.
fn strip_fence(text: &str) -> &str {
    let text = text.trim();
    let Some(inner) = text.strip_prefix("```") else {
        return text;
    };
    let inner = inner.strip_suffix("```").unwrap_or(inner);
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(calls: &[ToolCall]) -> Vec<(&str, &str)> {
        calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.as_str()))
            .collect()
    }

    #[test]
    fn tagged_calls_are_recovered_with_the_text_around_them() {
        let (text, calls) = recover(
            "Checking.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>{\"name\": \"list_dir\", \"parameters\": {}}",
            &["read_file"],
        )
        .unwrap();
        assert_eq!(text, "Checking.");
        assert_eq!(
            names(&calls),
            [("read_file", r#"{"path":"a"}"#), ("list_dir", "{}")]
        );
        assert_eq!(calls[1].id, "text_call_2");
    }

    #[test]
    fn a_bare_call_must_name_an_offered_tool() {
        let offered = ["read_file"];
        let calls = recover(
            "```json\n{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"b\\\"}\"}\n```",
            &offered,
        )
        .unwrap()
        .1;
        assert_eq!(names(&calls), [("read_file", r#"{"path": "b"}"#)]);
        assert!(recover(r#"{"name": "Alice", "arguments": 3}"#, &offered).is_none());
        assert!(recover(r#"{"name": "read_file"} and more"#, &offered).is_none());
        assert!(recover("The answer is 42.", &offered).is_none());
        assert!(recover("<tool_call>not json</tool_call>", &offered).is_none());
    }
}
