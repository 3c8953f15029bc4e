//! The output contract of `cordon run --output-schema`: a `final_result` tool whose parameters are
//! the schema, which the model must call to finish. Its arguments are validated here (not by a
//! plugin); an invalid call goes back to the model as an error result, at most twice.

use crate::model::provider::ToolSpec;
use cordon_runtime::schema::{ArgumentSchema, Violation};
use serde_json::{Value, json};

/// The tool the model finishes with.
pub const FINAL_RESULT: &str = "final_result";

/// Invalid `final_result` calls answered with an error before the run fails.
pub const MAX_RETRIES: u32 = 2;

/// Where in a text answer a JSON object is looked for, at most (each `{` is a start).
const MAX_TEXT_STARTS: usize = 64;

/// A schema the final answer must match.
pub struct OutputContract {
    schema: ArgumentSchema,
    /// The user's schema is not an object schema: it is offered wrapped as `{"result": ...}`.
    wrapped: bool,
}

/// What a `final_result` call amounts to.
pub enum Verdict {
    /// The answer, unwrapped.
    Accepted(Value),
    /// What is wrong, for the model and, in the end, the user.
    Rejected(Vec<String>),
}

impl OutputContract {
    /// Compiles the schema; a schema that is not for an object is wrapped in one.
    pub fn new(schema: Value) -> Result<Self, String> {
        let wrapped = schema.get("type") != Some(&Value::String("object".into()));
        let parameters = if wrapped {
            json!({
                "type": "object",
                "properties": { "result": schema },
                "required": ["result"],
                "additionalProperties": false,
            })
        } else {
            schema
        };
        let schema = ArgumentSchema::compile(parameters)
            .map_err(|err| err.replace("parameters schema", "output schema"))?;
        Ok(Self { schema, wrapped })
    }

    pub fn tool_spec(&self) -> ToolSpec {
        ToolSpec {
            name: FINAL_RESULT.into(),
            description: "Give your final answer. Call this exactly once, when you are done; its \
                          arguments are the answer and must match its schema."
                .into(),
            parameters: self.schema.as_json().clone(),
        }
    }

    /// What the system prompt adds so the model knows how to finish.
    pub fn instructions(&self) -> &'static str {
        "You must finish by calling the `final_result` tool with your answer as its arguments, \
         matching its schema exactly. Do not answer in plain text."
    }

    /// The answer in a reply that gave it as text instead of calling `final_result`: the whole
    /// text, or else, for an object schema, the first top-level JSON object with at least one
    /// property in it (in a fence, after prose, inside doubled braces `{{...}}`) that matches
    /// the schema. A value nested in one that did not match is not looked at, nor is anything in
    /// the text of a schema that is not for an object (a `[1]` in prose is no answer). `None`
    /// when nothing in the text qualifies.
    pub fn accept_text(&self, text: &str) -> Option<Value> {
        let whole = text.trim();
        if let Ok(value) = serde_json::from_str::<Value>(whole) {
            return self.accept_value(value);
        }
        if self.wrapped {
            return None;
        }
        let mut start = 0;
        let mut tries = 0;
        while let Some(offset) = whole[start..].find('{') {
            tries += 1;
            if tries > MAX_TEXT_STARTS {
                break;
            }
            let at = start + offset;
            let mut values = serde_json::Deserializer::from_str(&whole[at..]).into_iter::<Value>();
            match values.next() {
                Some(Ok(value)) => {
                    let non_empty = value.as_object().is_some_and(|object| !object.is_empty());
                    if non_empty && let Some(answer) = self.accept_value(value) {
                        return Some(answer);
                    }
                    // Past the whole value: nothing inside it is a separate answer.
                    start = at + values.byte_offset();
                }
                // Not a value from here (`{{`, prose in braces): try the next brace.
                _ => start = at + 1,
            }
        }
        None
    }

    /// `value` as the answer (wrapped as `{"result": ...}` first when the schema is), if it
    /// matches the schema.
    fn accept_value(&self, value: Value) -> Option<Value> {
        let candidate = if self.wrapped && value.get("result").is_none() {
            json!({ "result": value })
        } else {
            value
        };
        match self.check(&candidate.to_string()) {
            Verdict::Accepted(answer) => Some(answer),
            Verdict::Rejected(_) => None,
        }
    }

    pub fn check(&self, arguments: &str) -> Verdict {
        let value: Value = match serde_json::from_str(arguments) {
            Ok(value) => value,
            Err(err) => {
                return Verdict::Rejected(vec![format!("the arguments are not JSON: {err}")]);
            }
        };
        let violations = self.schema.check(&value);
        if !violations.is_empty() {
            return Verdict::Rejected(violations.iter().map(Violation::to_string).collect());
        }
        Verdict::Accepted(if self.wrapped {
            value.get("result").cloned().unwrap_or(Value::Null)
        } else {
            value
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_answers_are_validated_as_they_are() {
        let contract = OutputContract::new(json!({
            "type": "object",
            "properties": { "count": { "type": "integer" } },
            "required": ["count"]
        }))
        .unwrap();
        assert!(
            matches!(contract.check(r#"{"count": 3}"#), Verdict::Accepted(v) if v == json!({"count": 3}))
        );
        let Verdict::Rejected(errors) = contract.check(r#"{"count": "three"}"#) else {
            panic!("a string count must be rejected");
        };
        assert!(errors[0].contains("/count"), "{errors:?}");
        assert!(matches!(contract.check("{"), Verdict::Rejected(_)));
    }

    #[test]
    fn other_schemas_are_wrapped_and_unwrapped() {
        let contract =
            OutputContract::new(json!({ "type": "array", "items": { "type": "string" } })).unwrap();
        assert_eq!(
            contract.tool_spec().parameters["required"],
            json!(["result"])
        );
        assert!(
            matches!(contract.check(r#"{"result": ["a"]}"#), Verdict::Accepted(v) if v == json!(["a"]))
        );
        assert!(OutputContract::new(json!({ "type": "no-such-type" })).is_err());
    }

    #[test]
    fn a_text_answer_is_taken_only_when_json_in_it_matches_the_schema() {
        let contract = OutputContract::new(json!({
            "type": "object",
            "properties": { "count": { "type": "integer" } },
            "required": ["count"],
            "additionalProperties": false
        }))
        .unwrap();
        let count = Some(json!({"count": 5}));
        assert_eq!(contract.accept_text(r#"{"count": 5}"#), count);
        // What a 1.5B model wrote: the object inside doubled braces.
        assert_eq!(contract.accept_text(r#"{{"count": 5}}"#), count);
        assert_eq!(
            contract.accept_text("There are five files.\n```json\n{\"count\": 5}\n```"),
            count
        );
        // The first value that matches, not the first value; but nothing inside one that did not.
        assert_eq!(
            contract.accept_text(r#"{"files": 5} so {"count": 5}"#),
            count
        );
        assert_eq!(
            contract.accept_text(r#"{"total": "five", "detail": {"count": 5}}"#),
            None
        );
        for text in [
            "There are 5 files.",
            r#"{"count": "5"}"#,
            r#"{"count": 5, "extra": true}"#,
            r#"{"count": 5"#,
            "",
        ] {
            assert_eq!(contract.accept_text(text), None, "{text:?}");
        }

        let wrapped =
            OutputContract::new(json!({ "type": "array", "items": { "type": "string" } })).unwrap();
        assert_eq!(
            wrapped.accept_text(r#"["a", "b"]"#),
            Some(json!(["a", "b"]))
        );
        assert_eq!(
            wrapped.accept_text(r#"{"result": ["a"]}"#),
            Some(json!(["a"]))
        );
        assert_eq!(wrapped.accept_text("a, b"), None);
        // In prose, only an object schema's answer is looked for.
        assert_eq!(wrapped.accept_text(r#"Reading step ["a"] first."#), None);
        let anything = OutputContract::new(json!({"type": "object"})).unwrap();
        assert_eq!(anything.accept_text("Let me look at {} first."), None);
        assert_eq!(
            anything.accept_text(r#"Done: {"n": 1}"#),
            Some(json!({"n": 1}))
        );
    }
}
