//! The bundled `redact` hook (after): masks secrets in text results before the model sees them,
//! in the text and in every string of the structured output and the details (which clients see
//! too): secrets of a known shape (formats.rs), values assigned to a secret's name
//! (assignments.rs) and private keys read in part (key_bodies.rs). What it masked is counted in
//! the result's `details.redacted`.

mod assignments;
#[cfg(test)]
mod corpus_tests;
mod formats;
mod key_bodies;

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

/// Masks secrets in every string (keys included) of a JSON value.
fn mask_strings(value: &mut Value, counts: &mut BTreeMap<&'static str, usize>) {
    match value {
        Value::String(text) => *text = mask(text, counts),
        Value::Array(items) => items.iter_mut().for_each(|item| mask_strings(item, counts)),
        Value::Object(object) => {
            let entries = std::mem::take(object);
            for (key, mut item) in entries {
                mask_strings(&mut item, counts);
                object.insert(mask(&key, counts), item);
            }
        }
        _ => {}
    }
}

cordon_sdk::export_plugin!(hook: Redact);
