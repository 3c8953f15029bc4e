//! Arguments a tool does not declare. JSON Schema lets an object carry properties its schema does
//! not name unless the schema says `"additionalProperties": false`, and most generated schemas do
//! not say it; a misspelt optional argument (`{"offest": 10}`) would then be dropped without a
//! word. When a tool's schema names its arguments in top-level `properties` and says nothing about
//! others, any other top-level argument is reported. A schema that sets `additionalProperties`
//! (`true` accepts anything: that is how a tool opts out), `patternProperties` or
//! `unevaluatedProperties`, or combines schemas at its top level, keeps its own rules.

use serde_json::Value;
use std::collections::BTreeSet;

/// Top-level keywords after which the set of accepted names is not just `properties`.
const OWN_RULES: [&str; 11] = [
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "$ref",
    "$dynamicRef",
    "dependentSchemas",
];

/// The argument names a schema declares, when it accepts only those.
#[derive(Clone, Debug)]
pub struct DeclaredArguments {
    names: BTreeSet<String>,
}

impl DeclaredArguments {
    pub fn of(schema: &Value) -> Option<Self> {
        let object = schema.as_object()?;
        if OWN_RULES
            .iter()
            .any(|keyword| object.contains_key(*keyword))
        {
            return None;
        }
        let properties = object.get("properties")?.as_object()?;
        Some(Self {
            names: properties.keys().cloned().collect(),
        })
    }

    /// The top-level argument names the schema does not declare, in order.
    pub fn unknown<'a>(&self, arguments: &'a Value) -> Vec<&'a str> {
        let Some(object) = arguments.as_object() else {
            return Vec::new();
        };
        object
            .keys()
            .map(String::as_str)
            .filter(|name| !self.names.contains(*name))
            .collect()
    }

    /// The declared names, comma-separated.
    pub fn listed(&self) -> String {
        self.names.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_outside_properties_are_unknown_unless_the_schema_has_its_own_rules() {
        let plain = json!({"type": "object", "properties": {"path": {}, "limit": {}}});
        let declared = DeclaredArguments::of(&plain).unwrap();
        assert_eq!(
            declared.unknown(&json!({"path": "a", "offest": 1, "bogus": 2})),
            ["offest", "bogus"]
        );
        assert!(declared.unknown(&json!({"path": "a"})).is_empty());
        assert_eq!(declared.listed(), "limit, path");
        for own in [
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({"type": "object", "properties": {}, "anyOf": []}),
            json!({"type": "object"}),
        ] {
            assert!(DeclaredArguments::of(&own).is_none(), "{own}");
        }
    }
}
