//! JSON Schema for tool arguments: checking a plugin's declared schema at load, and validating each
//! call's arguments against it, reporting every violation with its JSON pointer.

use serde_json::Value;

/// A tool's compiled argument schema.
pub struct ArgumentSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// JSON pointer into the arguments ("" is the whole object).
    pub pointer: String,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "at {at}: {}", self.message)
    }
}

impl ArgumentSchema {
    /// Checks and compiles a schema. It must be a valid JSON Schema for an object. References to
    /// other documents are never fetched.
    pub fn compile(schema: Value) -> Result<Self, String> {
        if schema.get("type") != Some(&Value::String("object".into())) {
            return Err(format!(
                "the parameters schema must have \"type\": \"object\" at the top, got {}",
                shorten(&schema.to_string())
            ));
        }
        if let Err(err) = jsonschema::meta::validate(&schema) {
            return Err(format!(
                "the parameters schema is not a valid JSON Schema: {err} (at {})",
                pointer_or_root(err.instance_path().as_str())
            ));
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|err| format!("the parameters schema cannot be compiled: {err}"))?;
        Ok(Self { schema, validator })
    }

    pub fn as_json(&self) -> &Value {
        &self.schema
    }

    /// Every violation of the schema by `arguments`; empty when they are valid.
    pub fn check(&self, arguments: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(arguments)
            .map(|err| Violation {
                pointer: err.instance_path().as_str().to_string(),
                message: err.to_string(),
            })
            .collect()
    }
}

fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

fn shorten(text: &str) -> String {
    if text.len() <= 120 {
        text.to_string()
    } else {
        format!("{}…", &text[..text.floor_char_boundary(120)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ArgumentSchema {
        ArgumentSchema::compile(json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "limit": { "type": "integer", "minimum": 1 }
            },
            "required": ["path"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn valid_arguments_have_no_violations() {
        assert!(
            schema()
                .check(&json!({ "path": "a", "limit": 3 }))
                .is_empty()
        );
    }

    #[test]
    fn every_violation_is_reported_with_its_pointer() {
        let violations = schema().check(&json!({ "limit": 0, "extra": true }));
        let pointers: Vec<&str> = violations.iter().map(|v| v.pointer.as_str()).collect();
        assert_eq!(violations.len(), 3, "{violations:?}");
        assert!(pointers.contains(&"/limit"), "{pointers:?}");
        assert!(pointers.contains(&""), "{pointers:?}");
    }

    #[test]
    fn bad_schemas_are_refused() {
        let cases = [
            json!({ "type": "string" }),
            json!({ "properties": {} }),
            json!({ "type": "object", "properties": { "x": { "type": "no-such-type" } } }),
            json!({ "type": "object", "required": "x" }),
        ];
        for schema in cases {
            assert!(
                ArgumentSchema::compile(schema.clone()).is_err(),
                "{schema} should be refused"
            );
        }
    }
}
