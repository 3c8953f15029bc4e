//! How much work checking one call's arguments against a tool's schema may take, known before the
//! check runs. A validator cannot be stopped part-way (a thread that runs on after a time limit
//! still burns the host's CPU), so cordon bounds the work up front instead: cost.rs gives
//! the most subschemas one value of the arguments is checked against, and each `pattern` (and
//! `patternProperties` key) is sized by the automaton it compiles to, because a pattern the lazy
//! DFA gives up on costs one step per automaton state per byte it reads. A call's work is at most
//! its argument bytes times [`SchemaWork::per_byte`]. Work up to [`INLINE_WORK`] is checked where
//! the call is prepared; more is checked on a blocking thread, at most [`CONCURRENT_CHECKS`] at a
//! time across the process; arguments whose work could pass [`MAX_WORK`] are refused unchecked,
//! with the most bytes that tool's schema accepts.

use regex_automata::nfa::thompson::{Config, NFA};
use serde_json::Value;

/// Work (steps) checked inline: well under a millisecond for ordinary schemas.
pub const INLINE_WORK: u64 = 4 << 20;
/// The most work one call's check may take (about a second at the slowest pattern matching).
pub const MAX_WORK: u64 = 1 << 30;
/// Checks off the async workers that run at once; more wait for a slot.
pub const CONCURRENT_CHECKS: usize = 2;
/// Steps one subschema's evaluation on one value takes besides its pattern.
const STEPS_PER_EVALUATION: u64 = 64;
/// The largest automaton one `pattern` may compile to, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1 << 20;
/// Every violation of invalid arguments is listed only when the most there could be (argument
/// bytes times [`SchemaWork::violations_per_byte`]) is at most this; otherwise only the first,
/// which the validator finds without building the others (each is an allocation, and a 3-byte `{}`
/// can break a `required` list of thousands of names).
const MAX_LISTED_VIOLATIONS_WORK: u64 = 1 << 16;

/// The bound on the work of checking arguments against one schema.
#[derive(Clone, Copy, Debug)]
pub struct SchemaWork {
    per_byte: u64,
    violations_per_byte: u64,
}

impl SchemaWork {
    /// The bound for `schema`, whose values are each checked against at most `evaluations`
    /// subschemas; an error names a pattern too large to compile. A keyword with a list
    /// (`required`, `enum`, `dependentRequired`) costs a step per entry.
    pub fn of(schema: &Value, evaluations: f64) -> Result<Self, String> {
        let states = largest_pattern(schema)?;
        let list = longest_list(schema);
        let evaluations = (evaluations.ceil() as u64).max(1);
        Ok(Self {
            per_byte: evaluations.saturating_mul(STEPS_PER_EVALUATION + states + list),
            violations_per_byte: evaluations.saturating_add(list),
        })
    }

    /// Whether every violation of `bytes` of invalid arguments may be listed, or only the first.
    pub fn lists_every_violation(&self, bytes: usize) -> bool {
        (bytes as u64).saturating_mul(self.violations_per_byte) <= MAX_LISTED_VIOLATIONS_WORK
    }

    /// Steps one byte of arguments may cost.
    pub fn per_byte(&self) -> u64 {
        self.per_byte
    }

    /// The most work checking `bytes` of arguments may take.
    pub fn of_arguments(&self, bytes: usize) -> u64 {
        (bytes as u64).saturating_mul(self.per_byte)
    }

    /// The most argument bytes a call may send.
    pub fn max_argument_bytes(&self) -> u64 {
        MAX_WORK / self.per_byte.max(1)
    }
}

/// The most automaton states of any pattern in the schema (0 when it has none).
fn largest_pattern(value: &Value) -> Result<u64, String> {
    let mut largest = 0;
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("pattern", Value::String(pattern)) => {
                        largest = largest.max(automaton_states(pattern)?);
                    }
                    ("patternProperties", Value::Object(patterns)) => {
                        for pattern in patterns.keys() {
                            largest = largest.max(automaton_states(pattern)?);
                        }
                    }
                    _ => {}
                }
                largest = largest.max(largest_pattern(child)?);
            }
        }
        Value::Array(items) => {
            for item in items {
                largest = largest.max(largest_pattern(item)?);
            }
        }
        _ => {}
    }
    Ok(largest)
}

/// The most entries of the lists one subschema checks a value against: its `required` names, its
/// `enum` values and its `dependentRequired` (or array `dependencies`) names together.
fn longest_list(value: &Value) -> u64 {
    let length = |value: Option<&Value>| value.and_then(Value::as_array).map_or(0, Vec::len) as u64;
    match value {
        Value::Object(map) => {
            let dependent = ["dependentRequired", "dependencies"]
                .iter()
                .filter_map(|key| map.get(*key).and_then(Value::as_object))
                .flat_map(|names| names.values())
                .map(|names| length(Some(names)))
                .sum::<u64>();
            let own = length(map.get("required")) + length(map.get("enum")) + dependent;
            map.values().map(longest_list).fold(own, u64::max)
        }
        Value::Array(items) => items.iter().map(longest_list).max().unwrap_or(0),
        _ => 0,
    }
}

/// States of the automaton `pattern` compiles to, as jsonschema translates it. A pattern that is
/// not a valid regular expression counts as none here; compiling the schema reports it.
fn automaton_states(pattern: &str) -> Result<u64, String> {
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return Ok(0);
    };
    let config = Config::new().nfa_size_limit(Some(MAX_PATTERN_BYTES));
    match NFA::compiler().configure(config).build(&translated) {
        Ok(nfa) => Ok(nfa.states().len() as u64),
        Err(err) if err.size_limit().is_some() => Err(format!(
            "the pattern {} compiles to an automaton over {MAX_PATTERN_BYTES} bytes; use a simpler pattern (fewer counted repetitions of large classes)",
            crate::report::budget::cut(pattern, 120)
        )),
        Err(_) => Ok(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ordinary_schemas_accept_megabytes_and_check_kilobytes_inline() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "pattern": "^[a-z0-9/._-]+$" },
                "content": { "type": "string" }
            }
        });
        let work = SchemaWork::of(&schema, 2.0).unwrap();
        assert!(work.max_argument_bytes() > 4 << 20, "{work:?}");
        assert!(work.of_arguments(16 << 10) <= INLINE_WORK, "{work:?}");
    }

    #[test]
    fn a_large_pattern_lowers_the_accepted_size() {
        let schema = json!({
            "type": "object",
            "properties": { "s": { "type": "string", "pattern": "a[ab]{12000}[^ab]" } }
        });
        let work = SchemaWork::of(&schema, 1.0).unwrap();
        assert!(work.per_byte() > 12_000, "{work:?}");
        assert!(work.max_argument_bytes() < 100_000, "{work:?}");
        assert!(
            work.of_arguments(16 << 10) > INLINE_WORK,
            "checked off the workers"
        );
    }

    #[test]
    fn pattern_property_keys_count_and_a_huge_pattern_is_refused() {
        let keyed = json!({ "type": "object", "patternProperties": { "^x[ab]{5000}$": {} } });
        assert!(SchemaWork::of(&keyed, 1.0).unwrap().per_byte() > 5_000);
        let huge =
            json!({ "type": "object", "properties": { "s": { "pattern": "([ab]{400}){400}" } } });
        let err = SchemaWork::of(&huge, 1.0).unwrap_err();
        assert!(err.contains("compiles to an automaton over"), "{err}");
    }

    #[test]
    fn a_property_named_pattern_is_not_a_pattern() {
        let schema = json!({
            "type": "object",
            "properties": { "pattern": { "type": "string" } }
        });
        assert_eq!(
            SchemaWork::of(&schema, 1.0).unwrap().per_byte(),
            STEPS_PER_EVALUATION
        );
    }
}
