//! Tool calls that a (usually small, local) model wrote into its text instead of `tool_calls`,
//! in every shape seen in practice: `<tool_call>…</tool_call>` blocks, several calls as JSON
//! lines, JSON objects spread over several lines, a JSON array of calls, and any of these in
//! ```json fences, with prose around them. A call is `{"name": …, "arguments": {…} or "…"}`
//! (`parameters`, `args` or `input` for `arguments`; `{"function": {…}}` wrapped); a name that
//! is not offered still makes a call (it gets a `not_found` result listing the real tools) when
//! the object has arguments, and without arguments only when it names an offered tool. Used only
//! when `parse_text_tool_calls = true`; otherwise only to warn that the switch exists.

use serde_json::Value;

const OPEN: &str = "<tool_call>";
const CLOSE: &str = "</tool_call>";
const FENCE: &str = "```";

/// A call found in text: the tool's name and its arguments as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCall {
    pub name: String,
    pub arguments: String,
}

/// The calls found in `text` and the text left around them; `None` when there are none.
pub fn recover(text: &str, offered: &[&str]) -> Option<(String, Vec<TextCall>)> {
    let mut calls = Vec::new();
    let kept = if text.contains(OPEN) {
        tagged(text, offered, &mut calls)
    } else {
        let unfenced = fenced(text, offered, &mut calls);
        scan(&unfenced, offered, &mut calls)
    };
    if calls.is_empty() {
        return None;
    }
    Some((kept.trim().to_string(), calls))
}

/// `<tool_call>` blocks (a reply cut off after the last one may lack the closing tag).
fn tagged(text: &str, offered: &[&str], calls: &mut Vec<TextCall>) -> String {
    let mut rest = text;
    let mut kept = String::new();
    while let Some(start) = rest.find(OPEN) {
        kept.push_str(&rest[..start]);
        let after = &rest[start + OPEN.len()..];
        let (inside, next) = match after.find(CLOSE) {
            Some(end) => (&after[..end], &after[end + CLOSE.len()..]),
            None => (after, ""),
        };
        let body = strip_fence(inside);
        match all_calls(body, offered) {
            Some(found) => calls.extend(found),
            None => kept.push_str(&rest[start..rest.len() - next.len()]),
        }
        rest = next;
    }
    kept.push_str(rest);
    kept
}

/// Replaces every fenced block that holds nothing but calls with nothing, collecting its calls.
fn fenced(text: &str, offered: &[&str], calls: &mut Vec<TextCall>) -> String {
    let mut kept = String::new();
    let mut rest = text;
    while let Some(start) = rest.find(FENCE) {
        let after = &rest[start + FENCE.len()..];
        let Some(end) = after.find(FENCE) else { break };
        let block = &after[..end];
        // The language tag, if any, is the rest of the opening line.
        let body = match block.split_once('\n') {
            Some((tag, body)) if !tag.trim_start().starts_with(['{', '[']) => body,
            _ => block,
        };
        kept.push_str(&rest[..start]);
        match all_calls(body, offered) {
            Some(found) => calls.extend(found),
            None => kept.push_str(&rest[start..start + FENCE.len() * 2 + end]),
        }
        rest = &after[end + FENCE.len()..];
    }
    kept.push_str(rest);
    kept
}

/// Finds calls at line starts in prose: each JSON object or array beginning a line is tried.
fn scan(text: &str, offered: &[&str], calls: &mut Vec<TextCall>) -> String {
    let mut kept = String::new();
    let mut position = 0;
    while position < text.len() {
        let line_end = text[position..]
            .find('\n')
            .map_or(text.len(), |n| position + n + 1);
        let line = &text[position..line_end];
        let indent = line.len() - line.trim_start().len();
        let start = position + indent;
        if line.trim_start().starts_with(['{', '['])
            && let Some((found, length)) = first_value_calls(&text[start..], offered)
        {
            calls.extend(found);
            // The rest of the call's last line goes with it when it is blank.
            let after = &text[start + length..];
            let blank = after.len() - after.trim_start_matches([' ', '\t', '\r']).len();
            position = start + length + blank;
            if text[position..].starts_with('\n') {
                position += 1;
            }
            continue;
        }
        kept.push_str(line);
        position = line_end;
    }
    kept
}

/// The JSON value at the start of `text`, when it is a call or an array of calls, and its length.
fn first_value_calls(text: &str, offered: &[&str]) -> Option<(Vec<TextCall>, usize)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let value = values.next()?.ok()?;
    let length = values.byte_offset();
    Some((calls_in(&value, offered)?, length))
}

/// `Some` when `text` is nothing but one or more calls (objects or arrays, whitespace between).
fn all_calls(text: &str, offered: &[&str]) -> Option<Vec<TextCall>> {
    let mut found = Vec::new();
    for value in serde_json::Deserializer::from_str(text.trim()).into_iter::<Value>() {
        found.extend(calls_in(&value.ok()?, offered)?);
    }
    (!found.is_empty()).then_some(found)
}

fn calls_in(value: &Value, offered: &[&str]) -> Option<Vec<TextCall>> {
    match value {
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|item| call_from(item, offered)).collect()
        }
        Value::Object(_) => Some(vec![call_from(value, offered)?]),
        _ => None,
    }
}

fn call_from(value: &Value, offered: &[&str]) -> Option<TextCall> {
    let object = value.as_object()?;
    if let Some(inner @ Value::Object(_)) = object.get("function") {
        return call_from(inner, offered);
    }
    let name = object.get("name")?.as_str()?.trim();
    if name.is_empty() || name.len() > 128 || name.contains(char::is_whitespace) {
        return None;
    }
    let arguments = ["arguments", "parameters", "args", "input"]
        .iter()
        .find_map(|key| object.get(*key));
    let arguments = match arguments {
        Some(Value::Object(_)) => arguments.map(Value::to_string),
        Some(Value::String(text)) => Some(text.clone()),
        None | Some(Value::Null) if offered.contains(&name) => Some("{}".to_string()),
        _ => None,
    }?;
    Some(TextCall {
        name: name.to_string(),
        arguments,
    })
}

/// The text inside a ```json … ``` (or ``` … ```) fence, or the text itself, trimmed.
fn strip_fence(text: &str) -> &str {
    let text = text.trim();
    let Some(inner) = text.strip_prefix(FENCE) else {
        return text;
    };
    let inner = inner.strip_suffix(FENCE).unwrap_or(inner);
    let inner = inner.strip_prefix("json").unwrap_or(inner);
    inner.trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OFFERED: [&str; 2] = ["read_file", "list_dir"];

    fn found(text: &str) -> (String, Vec<(String, String)>) {
        let (kept, calls) =
            recover(text, &OFFERED).unwrap_or_else(|| panic!("no calls in {text:?}"));
        (
            kept,
            calls.into_iter().map(|c| (c.name, c.arguments)).collect(),
        )
    }

    fn pair(name: &str, arguments: &str) -> (String, String) {
        (name.to_string(), arguments.to_string())
    }

    #[test]
    fn tagged_calls_are_recovered_with_the_text_around_them() {
        let (text, calls) = found(
            "Checking.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n<tool_call>{\"name\": \"list_dir\", \"parameters\": {}}",
        );
        assert_eq!(text, "Checking.");
        assert_eq!(
            calls,
            [pair("read_file", r#"{"path":"a"}"#), pair("list_dir", "{}")]
        );
    }

    #[test]
    fn json_lines_arrays_pretty_objects_and_several_fences() {
        let lines = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n";
        assert_eq!(found(lines).1.len(), 2);
        let array = "[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}, {\"name\": \"list_dir\"}]";
        assert_eq!(
            found(array).1,
            [pair("read_file", r#"{"path":"a"}"#), pair("list_dir", "{}")]
        );
        let pretty = "I will read it.\n{\n  \"name\": \"read_file\",\n  \"arguments\": {\n    \"path\": \"a\"\n  }\n}\nThen answer.";
        let (kept, calls) = found(pretty);
        assert_eq!(calls.len(), 1);
        assert_eq!(kept, "I will read it.\nThen answer.");
        let fences = "First:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```\nSecond:\n```\n{\"name\": \"list_dir\", \"arguments\": {}}\n```";
        let (kept, calls) = found(fences);
        assert_eq!(calls.len(), 2);
        assert_eq!(kept, "First:\n\nSecond:");
        let wrapped = "{\"type\": \"function\", \"function\": {\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"b\\\"}\"}}";
        assert_eq!(found(wrapped).1, [pair("read_file", r#"{"path": "b"}"#)]);
    }

    #[test]
    fn unknown_names_are_calls_when_they_carry_arguments() {
        assert_eq!(
            found("{\"name\": \"list_files\", \"arguments\": {\"path\": \"/data\"}}").1,
            [pair("list_files", r#"{"path":"/data"}"#)]
        );
        assert!(recover(r#"{"name": "Alice", "arguments": 3}"#, &OFFERED).is_none());
        assert!(recover(r#"{"name": "Alice", "age": 3}"#, &OFFERED).is_none());
        assert!(recover("The answer is 42.", &OFFERED).is_none());
        assert!(recover("<tool_call>not json</tool_call>", &OFFERED).is_none());
        assert!(recover("```json\n{\"total\": 3}\n```", &OFFERED).is_none());
    }
}
