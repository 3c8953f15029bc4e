//! `finish_line`'s output contract, from its settings: `must_contain` (texts the answer must
//! include), `must_not_contain` (texts it must not, e.g. "TODO"), `json_keys` (the answer must be
//! a JSON object, optionally in a ```json fence, with these keys), `min_chars`, and `message`
//! (what the continuation starts with).

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    #[serde(default)]
    must_contain: Vec<String>,
    #[serde(default)]
    must_not_contain: Vec<String>,
    json_keys: Option<Vec<String>>,
    #[serde(default)]
    min_chars: usize,
    message: Option<String>,
}

impl Contract {
    /// The contract in the plugin's settings (none: no rules, every answer stands).
    pub fn from_settings(settings: Value) -> Result<Self, String> {
        if settings.is_null() {
            return Ok(Self::default());
        }
        serde_json::from_value(settings).map_err(|err| {
            format!("finish_line's settings are not an output contract ({err}); fix [plugins.ID.settings] in cordon.toml")
        })
    }

    /// Each rule the answer breaks, as a phrase for the model.
    pub fn broken_by(&self, answer: &str) -> Vec<String> {
        let mut broken = Vec::new();
        for text in &self.must_contain {
            if !answer.contains(text.as_str()) {
                broken.push(format!("it must contain {text:?}"));
            }
        }
        for text in &self.must_not_contain {
            if answer.contains(text.as_str()) {
                broken.push(format!("it must not contain {text:?}"));
            }
        }
        if answer.chars().count() < self.min_chars {
            broken.push(format!(
                "it must be at least {} characters long",
                self.min_chars
            ));
        }
        if let Some(keys) = &self.json_keys {
            match json_object(answer) {
                None => broken.push(format!(
                    "it must be one JSON object with the keys {}",
                    keys.join(", ")
                )),
                Some(object) => {
                    let missing: Vec<&str> = keys
                        .iter()
                        .filter(|key| !object.contains_key(key.as_str()))
                        .map(String::as_str)
                        .collect();
                    if !missing.is_empty() {
                        broken.push(format!(
                            "its JSON object lacks the keys {}",
                            missing.join(", ")
                        ));
                    }
                }
            }
        }
        broken
    }

    /// The continuation: the operator's opening (or the default) and the broken rules.
    pub fn message(&self, broken: &[String]) -> String {
        let opening = self
            .message
            .as_deref()
            .unwrap_or("Your final answer does not meet the required format");
        format!(
            "{opening}: {}. Give the whole answer again, fixed.",
            broken.join("; ")
        )
    }
}

/// The answer as a JSON object: the whole text, or the body of one ```json (or ```) fence.
fn json_object(answer: &str) -> Option<serde_json::Map<String, Value>> {
    let text = answer.trim();
    let body = text
        .strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .and_then(|rest| rest.trim_end().strip_suffix("```"))
        .unwrap_or(text);
    match serde_json::from_str(body.trim()) {
        Ok(Value::Object(object)) => Some(object),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(settings: Value) -> Contract {
        serde_json::from_value(settings).unwrap()
    }

    #[test]
    fn names_every_rule_an_answer_breaks() {
        let c = contract(serde_json::json!({
            "must_contain": ["Tests:"], "must_not_contain": ["TODO"], "min_chars": 10
        }));
        assert!(c.broken_by("Done. Tests: 12 passed.").is_empty());
        let broken = c.broken_by("TODO");
        assert_eq!(broken.len(), 3, "{broken:?}");
        let message = c.message(&broken);
        assert!(
            message.contains("\"Tests:\"") && message.contains("\"TODO\""),
            "{message}"
        );
    }

    #[test]
    fn a_json_answer_needs_its_keys_fenced_or_not() {
        let c = contract(serde_json::json!({ "json_keys": ["summary", "files"] }));
        assert!(
            c.broken_by("{\"summary\": \"x\", \"files\": []}")
                .is_empty()
        );
        assert!(
            c.broken_by("```json\n{\"summary\": \"x\", \"files\": []}\n```")
                .is_empty()
        );
        assert_eq!(
            c.broken_by("{\"summary\": \"x\"}"),
            ["its JSON object lacks the keys files"]
        );
        assert_eq!(c.broken_by("not json").len(), 1);
    }

    #[test]
    fn an_unknown_rule_is_refused() {
        assert!(
            serde_json::from_value::<Contract>(serde_json::json!({ "must_contian": [] })).is_err()
        );
    }
}
