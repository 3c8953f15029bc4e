//! JSON Schema for tool arguments: checking a plugin's declared schema at load, and validating each
//! call's arguments against it, reporting every violation with its JSON pointer.
//!
//! The schema is the plugin's, so it is untrusted: it is at most [`MAX_SCHEMA_BYTES`], `pattern`
//! and `patternProperties` use a linear-time regex engine (a pattern that needs backtracking, such
//! as a look-ahead or a back-reference, is refused at load with the reason), references are never
//! fetched, and a schema whose checks could multiply with the arguments' nesting is refused at load
//! (see cost.rs), so checking is linear in the arguments' size. How much work one call's
//! check may take is bounded before it runs (work.rs): small checks run where the call is
//! prepared, larger ones on a blocking thread, and arguments too large for the schema are refused
//! unchecked, so a costly check never stalls the async workers that serve other calls.
//! `strict_form.rs` converts a schema to the form strict structured-output clients require.

mod check_graph;
pub mod cost;
mod declared_arguments;
mod model_form;
pub mod strict_form;
pub mod uri_template;
pub use model_form::without_examples;
pub mod work;

use crate::report::text_cut::{self, CutMark};
use crate::schema::work::{
    CONCURRENT_CHECKS, INLINE_WORK, MAX_PATTERN_BYTES, MAX_WORK, SchemaWork,
};
use declared_arguments::DeclaredArguments;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The largest parameters schema a tool may declare (its JSON text).
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
/// The longest a check off the async workers may take, waiting for its slot included, before the
/// call fails.
pub const VALIDATION_TIMEOUT: Duration = Duration::from_secs(2);

/// Slots for checks off the async workers, shared by every pipeline in the process.
static CHECK_SLOTS: Semaphore = Semaphore::const_new(CONCURRENT_CHECKS);

/// A tool's compiled argument schema. Cheap to clone.
#[derive(Clone)]
pub struct ArgumentSchema {
    schema: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
    work: SchemaWork,
    /// The argument names, when the schema accepts only those (see declared_arguments.rs).
    declared: Option<Arc<DeclaredArguments>>,
}

/// Why arguments were not checked.
#[derive(Debug, thiserror::Error)]
pub enum CheckRefused {
    /// The check did not finish within `VALIDATION_TIMEOUT` (2 s).
    #[error("validating the arguments took longer than {} ms", VALIDATION_TIMEOUT.as_millis())]
    TimedOut,
    /// The arguments are larger than the schema can be checked against within bounded work.
    #[error(
        "the arguments are {bytes} bytes, more than this tool's parameters schema can be checked against in bounded time (at most {most} bytes; its patterns and nesting set that size)"
    )]
    TooLarge {
        /// The arguments' JSON text, in bytes.
        bytes: usize,
        /// The most bytes this schema can check.
        most: u64,
    },
}

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Violation {
    /// JSON pointer into the arguments ("" is the whole object).
    pub pointer: String,
    /// What is wrong there, as the validator says it.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at {}: {}", pointer_or_root(&self.pointer), self.message)
    }
}

impl ArgumentSchema {
    /// Checks and compiles a parameters schema. It must be a valid JSON Schema for an object.
    /// References to other documents are never fetched.
    pub fn compile(schema: Value) -> Result<Self, String> {
        Self::compile_as(schema, "parameters schema")
    }

    /// [`ArgumentSchema::compile`] of a schema that error messages call `what` ("output schema").
    pub fn compile_as(schema: Value, what: &str) -> Result<Self, String> {
        let size = schema.to_string().len();
        if size > MAX_SCHEMA_BYTES {
            return Err(format!(
                "the {what} is {size} bytes, over the {MAX_SCHEMA_BYTES}-byte limit; a schema that large would not fit a model's context either"
            ));
        }
        if schema.get("type") != Some(&Value::String("object".into())) {
            return Err(format!(
                "the {what} must have \"type\": \"object\" at the top, got {}",
                shorten(&schema.to_string())
            ));
        }
        let evaluations = crate::schema::cost::check(&schema)
            .map_err(|reason| format!("the {what} is too costly to check: {reason}"))?;
        let work = SchemaWork::of(&schema, evaluations)
            .map_err(|reason| format!("the {what} is too costly to check: {reason}"))?;
        if let Err(err) = jsonschema::meta::validate(&schema) {
            return Err(format!(
                "the {what} is not a valid JSON Schema: {err} (at {})",
                pointer_or_root(err.instance_path().as_str())
            ));
        }
        let patterns = jsonschema::PatternOptions::regex()
            .size_limit(MAX_PATTERN_BYTES)
            .dfa_size_limit(MAX_PATTERN_BYTES);
        // `format` is an annotation, as JSON Schema 2019-09 and later have it, for every draft: its
        // checks cost what no bound here counts (checking `"format": "regex"` is quadratic in the
        // string), and the SDKs emit formats no validator knows.
        let validator = jsonschema::options()
            .should_validate_formats(false)
            .with_pattern_options(patterns)
            .build(&schema)
            .map_err(|err| {
                format!(
                    "the {what} cannot be compiled: {err} (patterns are checked with a linear-time regex engine, which has no look-around or back-references)"
                )
            })?;
        Ok(Self {
            declared: DeclaredArguments::of(&schema).map(Arc::new),
            schema: Arc::new(schema),
            validator: Arc::new(validator),
            work,
        })
    }

    /// The schema as JSON, as it was given to `compile`.
    pub fn as_json(&self) -> &Value {
        &self.schema
    }

    /// The most argument bytes a call to this tool may send.
    pub fn max_argument_bytes(&self) -> u64 {
        self.work.max_argument_bytes()
    }

    /// [`ArgumentSchema::check`] within bounded work (see work.rs): inline when the
    /// arguments (their JSON text is `size` bytes) are cheap to check, else on a blocking thread
    /// within [`VALIDATION_TIMEOUT`]; refused when they could cost more than the bound.
    pub async fn check_bounded(
        &self,
        arguments: &Value,
        size: usize,
    ) -> Result<Vec<Violation>, CheckRefused> {
        let work = self.work.of_arguments(size);
        if work > MAX_WORK {
            return Err(CheckRefused::TooLarge {
                bytes: size,
                most: self.work.max_argument_bytes(),
            });
        }
        if work <= INLINE_WORK {
            return Ok(self.check_sized(arguments, size));
        }
        let deadline = tokio::time::Instant::now() + VALIDATION_TIMEOUT;
        let slot = tokio::time::timeout_at(deadline, CHECK_SLOTS.acquire())
            .await
            .map_err(|_| CheckRefused::TimedOut)?
            .map_err(|_| CheckRefused::TimedOut)?;
        let (schema, arguments) = (self.clone(), arguments.clone());
        let check = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            schema.check_sized(&arguments, size)
        });
        match tokio::time::timeout_at(deadline, check).await {
            Ok(Ok(violations)) => Ok(violations),
            Ok(Err(_)) | Err(_) => Err(CheckRefused::TimedOut),
        }
    }

    /// The violations of the schema by `arguments` (the first [`MAX_VIOLATIONS`], each message cut
    /// to a length); empty when they are valid.
    pub fn check(&self, arguments: &Value) -> Vec<Violation> {
        let size = serde_json::to_string(arguments).map_or(usize::MAX, |text| text.len());
        self.check_sized(arguments, size)
    }

    /// [`ArgumentSchema::check`] of arguments whose JSON text is `size` bytes: the schema's
    /// violations, then the arguments it does not declare.
    fn check_sized(&self, arguments: &Value, size: usize) -> Vec<Violation> {
        let mut violations = self.schema_violations(arguments, size);
        if let Some(declared) = &self.declared {
            let unknown = declared.unknown(arguments);
            let shown = unknown.len().min(MAX_UNKNOWN_LISTED);
            for name in &unknown[..shown] {
                violations.push(Violation {
                    pointer: format!("/{}", name.replace('~', "~0").replace('/', "~1")),
                    message: format!(
                        "{:?} is not an argument of this tool; its arguments are: {}",
                        crate::report::budget::cut(name, 128),
                        crate::report::budget::cut(&declared.listed(), 1_024)
                    ),
                });
            }
            if unknown.len() > shown {
                violations.push(Violation {
                    pointer: String::new(),
                    message: format!("and {} more unknown arguments", unknown.len() - shown),
                });
            }
        }
        violations
    }

    fn schema_violations(&self, arguments: &Value, size: usize) -> Vec<Violation> {
        let depth = crate::schema::cost::depth(arguments);
        if depth > crate::schema::cost::MAX_ARGUMENT_DEPTH {
            return vec![Violation {
                pointer: String::new(),
                message: format!(
                    "the arguments nest {depth} levels deep; at most {} are accepted",
                    crate::schema::cost::MAX_ARGUMENT_DEPTH
                ),
            }];
        }
        if !self.work.lists_every_violation(size) {
            let first = match self.validator.validate(arguments) {
                Ok(()) => return Vec::new(),
                Err(err) => violation(&err),
            };
            return vec![
                first,
                Violation {
                    pointer: String::new(),
                    message: "further violations are not listed for arguments this large against this schema; fix this one and call again".to_string(),
                },
            ];
        }
        let mut violations: Vec<Violation> = Vec::new();
        let mut more = 0usize;
        for err in self.validator.iter_errors(arguments) {
            if violations.len() == MAX_VIOLATIONS {
                more += 1;
                continue;
            }
            violations.push(violation(&err));
        }
        if more > 0 {
            violations.push(Violation {
                pointer: String::new(),
                message: format!("and {more} more violations"),
            });
        }
        violations
    }
}

/// Violations reported per call.
const MAX_VIOLATIONS: usize = 50;
/// Unknown argument names listed per call.
const MAX_UNKNOWN_LISTED: usize = 10;

fn violation(err: &jsonschema::ValidationError<'_>) -> Violation {
    Violation {
        pointer: crate::report::budget::cut(err.instance_path().as_str(), 256),
        message: crate::report::budget::cut(&err.to_string(), 512),
    }
}

/// A JSON pointer as messages show it: "(root)" for the empty one.
pub(crate) fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

fn shorten(text: &str) -> String {
    text_cut::cut(text, 120, CutMark::Ellipsis).into_owned()
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

    /// Checking `"format": "regex"` is quadratic in the string (a red-team finding: 3.8 MB took
    /// minutes of CPU); formats are annotations for every draft.
    #[test]
    fn formats_are_annotations_for_every_draft() {
        let schema = ArgumentSchema::compile(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "r": { "type": "string", "format": "regex" },
                "e": { "type": "string", "format": "email" },
                "n": { "type": "integer", "format": "uint" }
            }
        }))
        .unwrap();
        assert!(
            schema
                .check(&json!({ "r": "(", "e": "not an address", "n": 1 }))
                .is_empty()
        );
        assert!(
            !schema.check(&json!({ "r": 1 })).is_empty(),
            "types still count"
        );
    }

    #[test]
    fn linear_patterns_still_validate() {
        let schema = ArgumentSchema::compile(json!({
            "type": "object",
            "properties": { "x": { "type": "string", "pattern": "^(a|aa)*$" } }
        }))
        .unwrap();
        assert!(schema.check(&json!({ "x": "a".repeat(10_000) })).is_empty());
        let started = std::time::Instant::now();
        let violations = schema.check(&json!({ "x": format!("{}b", "a".repeat(100_000)) }));
        assert_eq!(violations[0].pointer, "/x", "{violations:?}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn bad_schemas_are_refused() {
        let cases = [
            json!({ "type": "string" }),
            json!({ "properties": {} }),
            json!({ "type": "object", "properties": { "x": { "type": "no-such-type" } } }),
            json!({ "type": "object", "required": "x" }),
            json!({ "type": "object", "properties": { "x": { "type": "string", "pattern": "^(?:a|(?=a)a)*$" } } }),
            json!({ "type": "object", "properties": { "x": { "type": "string", "pattern": "(a)\\1" } } }),
            json!({ "type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES) }),
        ];
        for schema in cases {
            assert!(
                ArgumentSchema::compile(schema.clone()).is_err(),
                "{schema} should be refused"
            );
        }
    }
}
