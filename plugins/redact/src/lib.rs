//! The bundled `redact` hook (after): masks secrets in text results before the model sees them:
//! private key blocks, AWS access keys, GitHub and Slack tokens, bearer tokens and
//! `password=`-style pairs. What it masked is counted in the result's `details.redacted`.

mod patterns;

use cordon_sdk::prelude::*;
use std::collections::BTreeMap;

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
                Content::Text(text) => Content::Text(patterns::mask(text, &mut counts)),
                other => other.clone(),
            })
            .collect();
        if counts.is_empty() {
            return AfterDecision::Keep;
        }
        let mut details = result.details.clone().unwrap_or_else(|| json!({}));
        if let Some(object) = details.as_object_mut() {
            object.insert("redacted".into(), json!(counts));
        }
        AfterDecision::Replace(CallResult {
            content,
            details: Some(details),
            is_error: result.is_error,
        })
    }
}

cordon_sdk::export_plugin!(hook: Redact);
