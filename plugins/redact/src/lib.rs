//! The bundled `redact` hook (after): masks secrets in text results before the model sees them,
//! in the text and in every string of the structured output and the details (which clients see
//! too): secrets of a known shape (formats.rs), values assigned to a secret's name
//! (assignments.rs, when the value looks like a literal secret: literal.rs) and private keys read
//! in part (key_bodies.rs). What it masked is counted in the result's `details.redacted`.

mod assignments;
#[cfg(test)]
mod corpus_tests;
mod formats;
mod key_bodies;
mod literal;
mod secret_names;

use cordon_sdk::prelude::*;
use std::collections::BTreeMap;

/// `text` with every secret masked; `counts` gains one per masked secret, by kind.
pub fn mask(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
    let text = formats::mask(text, counts);
    let text = assignments::mask(&text, counts);
    key_bodies::mask(&text, counts)
}

struct Redact;

impl Hook for Redact {
    const BEFORE: bool = false;

    fn after_tool_call(
        &self,
        _call: &ToolCall,
        result: &CallResult,
        _cx: &Context,
    ) -> AfterDecision {
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        let content: Vec<Content> = result
            .content
            .iter()
            .map(|block| match block {
                Content::Text(text) => Content::Text(mask(text, &mut counts)),
                other => other.clone(),
            })
            .collect();
        let structured = result.structured.clone().map(|mut value| {
            mask_strings(&mut value, &mut counts);
            value
        });
        let mut details = result.details.clone().unwrap_or_else(|| json!({}));
        mask_strings(&mut details, &mut counts);
        if counts.is_empty() {
            return AfterDecision::Keep;
        }
        if let Some(object) = details.as_object_mut() {
            object.insert("redacted".into(), json!(counts));
        }
        AfterDecision::Replace(CallResult {
            content,
            structured,
            details: Some(details),
            is_error: result.is_error,
        })
    }
}

/// Masks secrets in every string (keys included) of a JSON value, and the string value of a member
/// named for a secret (`{"password": "…"}`) as an assignment would be.
fn mask_strings(value: &mut Value, counts: &mut BTreeMap<&'static str, usize>) {
    match value {
        Value::String(text) => *text = mask(text, counts),
        Value::Array(items) => items.iter_mut().for_each(|item| mask_strings(item, counts)),
        Value::Object(object) => {
            let entries = std::mem::take(object);
            for (key, mut item) in entries {
                mask_strings(&mut item, counts);
                // A member whose name is a secret's: its value is judged as if assigned to it.
                if let Value::String(text) = &mut item
                    && !text.contains("[REDACTED:")
                    && let Some(kind) = assignments::named_secret(&key, text)
                {
                    *text = format!("[REDACTED:{kind}]");
                    *counts.entry(kind).or_default() += 1;
                }
                object.insert(mask(&key, counts), item);
            }
        }
        _ => {}
    }
}

cordon_sdk::export_plugin!(hook: Redact);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structured_members_named_for_a_secret_are_masked() {
        let mut value = json!({
            "user": "alice",
            "password": "hunter22",
            "nested": [{"api_token": "xnP4WKwi1Vek_CgPq7Lz", "token_count": "12"}],
            "note": "password=xnP4WKwi1Vek_CgP",
            "key": "value",
        });
        let mut counts = BTreeMap::new();
        mask_strings(&mut value, &mut counts);
        assert_eq!(
            value,
            json!({
                "user": "alice",
                "password": "[REDACTED:password]",
                "nested": [{"api_token": "[REDACTED:token]", "token_count": "12"}],
                "note": "password=[REDACTED:password]",
                "key": "value",
            })
        );
        assert_eq!(counts.values().sum::<usize>(), 3);
    }
}
