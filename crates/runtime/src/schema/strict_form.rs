//! A tool's parameters schema in the form strict structured-output clients require (OpenAI's
//! `strict: true` function calling, and the agent SDKs that turn every MCP tool strict): every
//! object closed (`additionalProperties: false`) with all its properties required, an optional
//! property made nullable instead, and only the keywords those clients accept. The host still
//! checks arguments against the original schema, so a validation keyword strict mode lacks can be
//! dropped; what cannot be converted is a schema whose meaning strict mode cannot express (an
//! open map, a value of any type, a root that is not an object), and that is what this reports.

use serde_json::{Map, Value};

/// How deep strict clients let objects nest, how many properties and enum values they take.
pub const MAX_STRICT_DEPTH: usize = 10;
/// The most properties a schema may declare in strict mode, all its objects together.
pub const MAX_STRICT_PROPERTIES: usize = 5_000;
/// The most values one `enum` may list in strict mode.
pub const MAX_STRICT_ENUM_VALUES: usize = 1_000;

/// Keywords strict mode accepts (everything else is dropped, or reported when dropping it would
/// change what the model may send).
const KEPT: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Keywords that widen what a value may be (open maps, any of several shapes merged): strict mode
/// cannot say the same thing, so a schema using them cannot be converted.
const WIDENING: &[(&str, &str)] = &[
    (
        "patternProperties",
        "takes properties by pattern (an open map), which strict mode cannot express; declare the properties by name",
    ),
    (
        "allOf",
        "combines schemas with allOf, which strict mode does not accept; merge them into one schema",
    ),
    (
        "if",
        "uses if/then/else, which strict mode does not accept; use anyOf of the cases",
    ),
    (
        "dependentSchemas",
        "uses dependentSchemas, which strict mode does not accept",
    ),
];

/// Why a schema has no strict form: where (a JSON pointer into the schema) and what to change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StrictProblem {
    /// JSON pointer into the schema ("" is the root).
    pub pointer: String,
    /// What strict mode cannot express there, and what to change.
    pub message: String,
}

impl std::fmt::Display for StrictProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at {}: {}",
            super::pointer_or_root(&self.pointer),
            self.message
        )
    }
}

/// The strict form of a parameters schema, or every reason it has none.
pub fn strict_form(schema: &Value) -> Result<Value, Vec<StrictProblem>> {
    let mut conversion = Conversion::default();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        conversion.problem(
            "",
            "the root must be an object schema (\"type\": \"object\")",
        );
    }
    let converted = conversion.convert(schema, "", 0);
    if conversion.properties > MAX_STRICT_PROPERTIES {
        conversion.problem(
            "",
            &format!(
                "it declares {} properties in all; strict mode takes at most {MAX_STRICT_PROPERTIES}",
                conversion.properties
            ),
        );
    }
    if conversion.problems.is_empty() {
        Ok(converted)
    } else if conversion.problems.len() > 1 {
        let mut problems = conversion.problems;
        problems.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        Err(problems)
    } else {
        Err(conversion.problems)
    }
}

#[derive(Default)]
struct Conversion {
    problems: Vec<StrictProblem>,
    properties: usize,
}

impl Conversion {
    fn problem(&mut self, pointer: &str, message: &str) {
        self.problems.push(StrictProblem {
            pointer: pointer.to_string(),
            message: message.to_string(),
        });
    }

    /// Converts one schema; `depth` counts the objects it is nested in.
    fn convert(&mut self, schema: &Value, pointer: &str, depth: usize) -> Value {
        let Some(map) = schema.as_object() else {
            // `true` / `false` schemas: any value, or none.
            self.problem(
                pointer,
                "a boolean schema allows any value (or none); strict mode needs a type",
            );
            return schema.clone();
        };
        for (keyword, why) in WIDENING {
            if map.contains_key(*keyword) {
                self.problem(pointer, why);
            }
        }
        let mut out = Map::new();
        for (key, value) in map {
            match key.as_str() {
                "oneOf" => {
                    // Exactly one of several shapes: anyOf says at least one, and the host checks
                    // the rest against the original schema.
                    out.insert(
                        "anyOf".into(),
                        self.convert_list(value, pointer, key, depth),
                    );
                }
                "anyOf" => {
                    out.insert(key.clone(), self.convert_list(value, pointer, key, depth));
                }
                "items" if map.contains_key("prefixItems") => {
                    // A tuple's `items` (false, or the schema of the items past the prefix) is
                    // folded into the items below.
                }
                "prefixItems" => {
                    // A tuple: strict mode has no per-position items, so each item may be any of
                    // the positions' schemas (and any schema past the prefix); the length stays
                    // (minItems, maxItems) and the host checks each position against the original.
                    let mut parts = self.convert_list(value, pointer, key, depth);
                    if let Some(rest @ Value::Object(_)) = map.get("items") {
                        let at = format!("{pointer}/items");
                        if let Value::Array(list) = &mut parts {
                            list.push(self.convert(rest, &at, depth));
                        }
                    }
                    let mut distinct: Vec<Value> = Vec::new();
                    for part in parts.as_array().into_iter().flatten() {
                        if !distinct.contains(part) {
                            distinct.push(part.clone());
                        }
                    }
                    let items = match <[Value; 1]>::try_from(distinct) {
                        Ok([only]) => only,
                        Err(many) => serde_json::json!({ "anyOf": many }),
                    };
                    out.insert("items".into(), items);
                }
                "items" => {
                    let at = format!("{pointer}/items");
                    out.insert(key.clone(), self.convert(value, &at, depth));
                }
                "$defs" | "definitions" => {
                    let mut defs = Map::new();
                    for (name, def) in value.as_object().into_iter().flatten() {
                        let at = format!("{pointer}/{key}/{}", escape(name));
                        defs.insert(name.clone(), self.convert(def, &at, depth));
                    }
                    out.insert(key.clone(), Value::Object(defs));
                }
                "$ref" => {
                    let local = value.as_str().is_some_and(|r| {
                        r.starts_with("#/$defs/") || r.starts_with("#/definitions/") || r == "#"
                    });
                    if !local {
                        self.problem(
                            pointer,
                            &format!("refers to {value}; strict mode follows only references into this schema's $defs"),
                        );
                    }
                    out.insert(key.clone(), value.clone());
                }
                "enum" => {
                    let count = value.as_array().map_or(0, Vec::len);
                    if count > MAX_STRICT_ENUM_VALUES {
                        self.problem(
                            pointer,
                            &format!("its enum has {count} values; strict mode takes at most {MAX_STRICT_ENUM_VALUES}"),
                        );
                    }
                    out.insert(key.clone(), value.clone());
                }
                "properties" | "required" | "additionalProperties" => {}
                _ if KEPT.contains(&key.as_str()) => {
                    out.insert(key.clone(), value.clone());
                }
                // Everything else is an annotation (default, examples, $schema, …) or a check the
                // host keeps making against the original schema.
                _ => {}
            }
        }
        if is_object_schema(map) {
            self.convert_object(map, &mut out, pointer, depth + 1);
        } else if !has_shape(map) {
            self.problem(
                pointer,
                "has no type (it allows any value); strict mode needs \"type\", \"enum\", \"const\", \"anyOf\" or \"$ref\"",
            );
        }
        Value::Object(out)
    }

    fn convert_list(&mut self, list: &Value, pointer: &str, key: &str, depth: usize) -> Value {
        let converted = list
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, part)| self.convert(part, &format!("{pointer}/{key}/{index}"), depth))
            .collect();
        Value::Array(converted)
    }

    /// Closes an object and makes every property required, the optional ones nullable.
    fn convert_object(
        &mut self,
        map: &Map<String, Value>,
        out: &mut Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) {
        if depth > MAX_STRICT_DEPTH {
            self.problem(
                pointer,
                &format!(
                    "objects nest deeper than the {MAX_STRICT_DEPTH} levels strict mode takes"
                ),
            );
        }
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => self.problem(
                pointer,
                "takes properties not named in it (additionalProperties), which strict mode cannot express; declare the properties by name",
            ),
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut properties = Map::new();
        for (name, property) in map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            self.properties += 1;
            let at = format!("{pointer}/properties/{}", escape(name));
            let converted = self.convert(property, &at, depth);
            let converted = if required.contains(&name.as_str()) {
                converted
            } else {
                nullable(converted)
            };
            properties.insert(name.clone(), converted);
        }
        let names: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
        out.entry("type")
            .or_insert_with(|| Value::String("object".into()));
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(names));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
}

fn is_object_schema(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => map.contains_key("properties"),
    }
}

/// Whether a schema says what shape its value has.
fn has_shape(map: &Map<String, Value>) -> bool {
    ["type", "enum", "const", "anyOf", "oneOf", "$ref", "allOf"]
        .iter()
        .any(|keyword| map.contains_key(*keyword))
}

/// An optional property in strict form: its schema, or null (which the SDKs read as "left out").
fn nullable(mut schema: Value) -> Value {
    let Some(map) = schema.as_object_mut() else {
        return schema;
    };
    if let Some(kind) = map.get_mut("type") {
        let widened = match kind {
            Value::String(name) if name.as_str() != "null" => Some(Value::Array(vec![
                Value::String(name.clone()),
                Value::String("null".into()),
            ])),
            Value::Array(kinds) => {
                if !kinds.iter().any(|k| k == "null") {
                    kinds.push(Value::String("null".into()));
                }
                None
            }
            _ => None,
        };
        if let Some(widened) = widened {
            *kind = widened;
        }
        if let Some(Value::Array(values)) = map.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        return schema;
    }
    if let Some(Value::Array(parts)) = map.get_mut("anyOf") {
        if !parts
            .iter()
            .any(|part| part.get("type") == Some(&Value::String("null".into())))
        {
            parts.push(serde_json::json!({ "type": "null" }));
        }
        return schema;
    }
    serde_json::json!({ "anyOf": [schema, { "type": "null" }] })
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_properties_become_nullable_and_objects_closed() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "where" },
                "limit": { "type": "integer", "minimum": 1, "default": 10 },
                "mode": { "enum": ["a", "b"], "type": "string" },
                "inner": { "type": "object", "properties": { "x": { "type": "number" } } }
            },
            "required": ["path"],
            "examples": [{ "path": "x" }]
        });
        let strict = strict_form(&schema).unwrap();
        assert_eq!(strict["additionalProperties"], false);
        assert_eq!(
            strict["required"],
            json!(["path", "limit", "mode", "inner"])
        );
        assert_eq!(strict["properties"]["path"]["type"], "string");
        assert_eq!(
            strict["properties"]["limit"]["type"],
            json!(["integer", "null"])
        );
        assert!(strict["properties"]["limit"].get("default").is_none());
        assert_eq!(
            strict["properties"]["mode"]["enum"],
            json!(["a", "b", null])
        );
        assert_eq!(
            strict["properties"]["inner"]["type"],
            json!(["object", "null"])
        );
        assert_eq!(strict["properties"]["inner"]["additionalProperties"], false);
        assert_eq!(
            strict["properties"]["inner"]["properties"]["x"]["type"],
            json!(["number", "null"])
        );
        assert!(strict.get("examples").is_none());
    }

    #[test]
    fn open_maps_untyped_values_and_outside_references_are_reported() {
        let schema = json!({
            "type": "object",
            "properties": {
                "headers": { "type": "object", "additionalProperties": { "type": "string" } },
                "anything": { "description": "any value" },
                "remote": { "$ref": "https://example.com/schema.json" },
                "merged": { "allOf": [{ "type": "string" }, { "minLength": 2 }] }
            }
        });
        let problems = strict_form(&schema).unwrap_err();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/properties/anything",
                "/properties/headers",
                "/properties/merged",
                "/properties/remote"
            ]
        );
        assert!(
            problems[1].message.contains("additionalProperties"),
            "{problems:?}"
        );
    }

    #[test]
    fn tuples_keep_their_length_and_take_any_position_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pair": {
                    "type": "array",
                    "prefixItems": [{ "type": "string" }, { "type": "integer" }, { "type": "string" }],
                    "items": false,
                    "minItems": 3,
                    "maxItems": 3
                }
            },
            "required": ["pair"]
        });
        let strict = strict_form(&schema).unwrap();
        let pair = &strict["properties"]["pair"];
        assert!(pair.get("prefixItems").is_none(), "{pair}");
        assert_eq!(
            pair["items"],
            json!({ "anyOf": [{ "type": "string" }, { "type": "integer" }] })
        );
        assert_eq!(
            (pair["minItems"].clone(), pair["maxItems"].clone()),
            (json!(3), json!(3))
        );
    }

    #[test]
    fn a_root_that_is_not_an_object_and_deep_nesting_are_reported() {
        assert!(strict_form(&json!({ "type": "string" })).is_err());
        let mut deep = json!({ "type": "object", "properties": {} });
        for _ in 0..MAX_STRICT_DEPTH {
            deep = json!({ "type": "object", "properties": { "next": deep } });
        }
        let problems = strict_form(&deep).unwrap_err();
        assert!(problems[0].message.contains("nest deeper"), "{problems:?}");
    }
}
