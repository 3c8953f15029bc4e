//! The one bound on what a session stage's event carries, wherever the event comes from (the agent
//! loop, or an MCP client asking a hook tool): every text cut at a character boundary with a marker
//! that says how long it was, every name and call id cut, the messages cut to the newest, the tools
//! listed cut to the first. The calls of a `model-response` event are never cut (a hook must see
//! every call that may run): more than [`MAX_CALLS`] is refused. So a hook is shown the same
//! view of the same event in `cordon run` and over MCP, and what it is shown is stated
//! (docs/session-hooks.md).

use crate::report::text_cut::{self, CutMark};
use serde_json::Value;
use std::borrow::Cow;

/// The longest prompt, reply text, answer or summary an event carries, in bytes.
pub const MAX_TEXT_BYTES: usize = 64 << 10;
/// The longest text of one message, and of one call's arguments.
pub const MAX_MESSAGE_BYTES: usize = 4 << 10;
/// The longest role, tool name, call id or outcome.
pub const MAX_NAME_BYTES: usize = 256;
/// The newest messages a `model-request` event carries.
pub const MAX_MESSAGES: usize = 20;
/// The newest folded messages a `compaction` event carries.
pub const MAX_COMPACTION_MESSAGES: usize = 200;
/// The most tool names a `tools` list carries.
pub const MAX_TOOLS: usize = 1024;
/// The most calls a `model-response` event may carry; more is refused, never cut.
pub const MAX_CALLS: usize = 1024;

/// Fields whose text is a whole prompt, reply, answer or summary.
const TEXTS: [&str; 5] = ["prompt", "text", "answer", "summary", "previous_summary"];

/// `text` in at most `limit` bytes: whole when it fits, else cut at a character boundary and
/// ended with `[cut: N bytes in all]`, the whole still within `limit`. Cutting a cut text again
/// leaves it as it is.
pub fn cut(text: &str, limit: usize) -> Cow<'_, str> {
    text_cut::cut_within(text, limit, CutMark::BytesInAll)
}

/// A call id or a name as events show it (and as a hook names it back): cut to
/// [`MAX_NAME_BYTES`].
pub fn shown_name(name: &str) -> Cow<'_, str> {
    cut(name, MAX_NAME_BYTES)
}

/// Bounds `payload` in place as the stage's event is bounded; `Ok` with the fields it cut (for
/// the asker to be told), or `Err` when it cannot be bounded without hiding what the hook must
/// see (too many calls).
pub fn bound(payload: &mut Value) -> Result<Vec<String>, String> {
    let mut cuts = Vec::new();
    let Value::Object(fields) = payload else {
        return Ok(cuts);
    };
    let compaction = fields.get("phase").is_some();
    for (key, value) in fields.iter_mut() {
        match (key.as_str(), value) {
            (key, Value::String(text)) if TEXTS.contains(&key) => {
                cut_in_place(text, MAX_TEXT_BYTES, key, &mut cuts);
            }
            ("outcome" | "purpose" | "method" | "phase", Value::String(text)) => {
                cut_in_place(text, MAX_NAME_BYTES, key, &mut cuts);
            }
            ("messages", Value::Array(messages)) => {
                let keep = if compaction {
                    MAX_COMPACTION_MESSAGES
                } else {
                    MAX_MESSAGES
                };
                if messages.len() > keep {
                    messages.drain(..messages.len() - keep);
                    cuts.push(format!("messages (the newest {keep} kept)"));
                }
                for message in messages.iter_mut() {
                    if let Some(Value::String(text)) = message.get_mut("text") {
                        cut_in_place(text, MAX_MESSAGE_BYTES, "messages[].text", &mut cuts);
                    }
                    if let Some(Value::String(role)) = message.get_mut("role") {
                        cut_in_place(role, MAX_NAME_BYTES, "messages[].role", &mut cuts);
                    }
                }
            }
            ("tools", Value::Array(tools)) => {
                if tools.len() > MAX_TOOLS {
                    tools.truncate(MAX_TOOLS);
                    cuts.push(format!("tools (the first {MAX_TOOLS} kept)"));
                }
                for tool in tools.iter_mut() {
                    if let Value::String(name) = tool {
                        cut_in_place(name, MAX_NAME_BYTES, "tools[]", &mut cuts);
                    }
                }
            }
            ("calls", Value::Array(calls)) => {
                if calls.len() > MAX_CALLS {
                    return Err(format!(
                        "the reply makes {} calls, over the {MAX_CALLS} a model-response event may carry (a hook must see every call that may run); lower [agent] max_calls_per_reply",
                        calls.len()
                    ));
                }
                for call in calls.iter_mut() {
                    for (field, limit) in [
                        ("id", MAX_NAME_BYTES),
                        ("name", MAX_NAME_BYTES),
                        ("arguments", MAX_MESSAGE_BYTES),
                    ] {
                        if let Some(Value::String(text)) = call.get_mut(field) {
                            cut_in_place(text, limit, &format!("calls[].{field}"), &mut cuts);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    cuts.dedup();
    Ok(cuts)
}

/// Cuts `text` to `limit`, noting `field` in `cuts` when it did.
fn cut_in_place(text: &mut String, limit: usize, field: &str, cuts: &mut Vec<String>) {
    if let Cow::Owned(shorter) = cut(text, limit) {
        *text = shorter;
        cuts.push(field.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cut_text_fits_its_limit_says_how_long_it_was_and_stays_cut() {
        let text = "é".repeat(40_000);
        let once = cut(&text, MAX_TEXT_BYTES).into_owned();
        assert!(once.len() <= MAX_TEXT_BYTES);
        assert!(
            once.ends_with("[cut: 80000 bytes in all]"),
            "{}",
            &once[once.len() - 40..]
        );
        assert_eq!(cut(&once, MAX_TEXT_BYTES), once);
        assert_eq!(cut("short", 10), "short");
    }

    #[test]
    fn every_text_name_and_list_of_an_event_is_bounded() {
        let long_id = "i".repeat(3 << 20);
        let mut payload = json!({
            "step": 1,
            "text": "t".repeat(70 << 10),
            "calls": [{"id": long_id, "name": "n".repeat(2000), "arguments": "a".repeat(9000)}],
        });
        let mut cuts = bound(&mut payload).unwrap();
        cuts.sort();
        assert_eq!(
            cuts,
            ["calls[].arguments", "calls[].id", "calls[].name", "text"]
        );
        assert!(payload.to_string().len() < MAX_TEXT_BYTES + MAX_MESSAGE_BYTES + 1024);
        assert_eq!(payload["calls"][0]["id"], *shown_name(&"i".repeat(3 << 20)));

        let messages: Vec<Value> = (0..30)
            .map(|i| json!({"role": "user", "text": format!("m{i}")}))
            .collect();
        let mut payload = json!({"step": 2, "messages": messages, "tools": vec!["t"; 2000]});
        bound(&mut payload).unwrap();
        assert_eq!(payload["messages"].as_array().unwrap().len(), MAX_MESSAGES);
        assert_eq!(payload["messages"][0]["text"], "m10");
        assert_eq!(payload["tools"].as_array().unwrap().len(), MAX_TOOLS);
    }

    #[test]
    fn too_many_calls_are_refused_not_hidden() {
        let calls: Vec<Value> = (0..MAX_CALLS + 1)
            .map(|i| json!({"id": format!("c{i}"), "name": "echo", "arguments": "{}"}))
            .collect();
        let mut payload = json!({"step": 1, "text": "", "calls": calls});
        assert!(
            bound(&mut payload)
                .unwrap_err()
                .contains("max_calls_per_reply")
        );
    }
}
