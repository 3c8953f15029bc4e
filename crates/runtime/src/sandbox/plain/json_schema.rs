//! The JSON Schemas of a plain component's function, derived from its WIT types as tightly as WIT
//! allows: integers with their type's bounds, `char` one character, records closed with every field
//! required, `option` nullable, tuples of a fixed length, enums and variants as the names a model
//! writes. The same forms are what [`super::json_to_val`] reads and [`super::val_to_json`] writes.
//!
//! The forms, for a model and for the docs (docs/plain-components.md):
//! - `list<u8>`: base64 text; `map<K, V>`: a list of `{"key": K, "value": V}`;
//! - `option<T>`: `null` or the value (`{"some": value}` when the value itself may be `null`);
//! - `variant`: a case without payload as its name, one with a payload as `{"case": payload}`;
//! - `result<T, E>` as an argument: `{"ok": value}` or `{"err": value}`;
//! - `flags`: a list of the names that are set.

use super::shape::{Part, Shape, json_name};
use serde_json::{Map, Value, json};

/// What base64 text may look like (the standard alphabet, padded or not).
pub const BASE64_PATTERN: &str = "^[A-Za-z0-9+/]*={0,2}$";

/// The largest finite `f32`, as the bounds of its schema.
const F32_MAX: f64 = f32::MAX as f64;

/// The schema of the arguments object: one property per parameter, each required but an
/// `option` (left out, it is `none`; strict clients send `null` instead).
pub fn parameters_schema(params: &[(String, Shape)]) -> Value {
    let properties: Map<String, Value> = params
        .iter()
        .map(|(name, shape)| (json_name(name), schema_of(shape)))
        .collect();
    let mut schema = closed_object(properties, None);
    let required: Vec<Value> = params
        .iter()
        .filter(|(_, shape)| !matches!(shape, Shape::Option(_)))
        .map(|(name, _)| Value::String(json_name(name)))
        .collect();
    schema["required"] = Value::Array(required);
    schema
}

/// The schema of the structured output of a successful call returning `shape`: the record itself,
/// or any other value as `{"result": value}` (structured output is always a JSON object).
pub fn output_schema(shape: &Shape) -> Value {
    match shape {
        Shape::Record { .. } => schema_of(shape),
        other => {
            let mut properties = Map::new();
            properties.insert("result".into(), schema_of(other));
            closed_object(properties, None)
        }
    }
}

/// The schema of one value of `shape`.
pub fn schema_of(shape: &Shape) -> Value {
    match shape {
        Shape::Bool => json!({ "type": "boolean" }),
        Shape::Integer(kind) => {
            let (min, max) = kind.range();
            json!({ "type": "integer", "minimum": number(min), "maximum": number(max) })
        }
        Shape::Float { single: true } => {
            json!({ "type": "number", "minimum": -F32_MAX, "maximum": F32_MAX })
        }
        Shape::Float { single: false } => json!({ "type": "number" }),
        Shape::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
        Shape::String => json!({ "type": "string" }),
        Shape::Bytes => json!({
            "type": "string",
            "contentEncoding": "base64",
            "pattern": BASE64_PATTERN,
            "description": "bytes, as base64",
        }),
        Shape::List(item) => json!({ "type": "array", "items": schema_of(item) }),
        Shape::FixedList(item, len) => json!({
            "type": "array",
            "items": schema_of(item),
            "minItems": len,
            "maxItems": len,
        }),
        Shape::Map(key, value) => {
            let mut entry = Map::new();
            entry.insert("key".into(), schema_of(key));
            entry.insert("value".into(), schema_of(value));
            json!({ "type": "array", "items": closed_object(entry, None) })
        }
        Shape::Record { fields, docs } => {
            let properties = fields
                .iter()
                .map(|field| {
                    let schema = described(schema_of(&field.shape), field.docs.as_deref());
                    (json_name(&field.name), schema)
                })
                .collect();
            closed_object(properties, docs.as_deref())
        }
        Shape::Tuple(items) => json!({
            "type": "array",
            "prefixItems": items.iter().map(schema_of).collect::<Vec<_>>(),
            "items": false,
            "minItems": items.len(),
            "maxItems": items.len(),
        }),
        Shape::Variant { cases, docs } => described(variant_schema(cases), docs.as_deref()),
        Shape::Enum { cases, docs } => {
            let names: Vec<String> = cases.iter().map(|case| json_name(&case.name)).collect();
            let schema = json!({ "type": "string", "enum": names });
            described(schema, case_docs(docs.as_deref(), cases).as_deref())
        }
        Shape::Flags { flags, docs } => {
            let names: Vec<String> = flags.iter().map(|flag| json_name(&flag.name)).collect();
            let schema = json!({
                "type": "array",
                "items": { "type": "string", "enum": names },
                "uniqueItems": true,
            });
            let docs = case_docs(docs.as_deref(), flags)
                .map(|text| format!("The flags that are set. {text}"))
                .unwrap_or_else(|| "The flags that are set.".into());
            described(schema, Some(&docs))
        }
        Shape::Option(inner) if inner.admits_null() => json!({
            "anyOf": [
                { "type": "null" },
                single_property("some", schema_of(inner)),
            ]
        }),
        Shape::Option(inner) => nullable(schema_of(inner)),
        Shape::Result { ok, err } => {
            let side = |part: &Option<Box<Shape>>| {
                part.as_deref()
                    .map_or_else(|| json!({ "type": "null" }), schema_of)
            };
            json!({ "oneOf": [single_property("ok", side(ok)), single_property("err", side(err))] })
        }
    }
}

/// A variant: each case without payload as a string constant, each with one as a one-property
/// object named by the case.
fn variant_schema(cases: &[Part<Option<Shape>>]) -> Value {
    let choices: Vec<Value> = cases
        .iter()
        .map(|case| {
            let schema = match &case.shape {
                None => json!({ "type": "string", "const": json_name(&case.name) }),
                Some(payload) => single_property(&json_name(&case.name), schema_of(payload)),
            };
            described(schema, case.docs.as_deref())
        })
        .collect();
    json!({ "oneOf": choices })
}

fn single_property(name: &str, schema: Value) -> Value {
    let mut properties = Map::new();
    properties.insert(name.to_string(), schema);
    closed_object(properties, None)
}

/// An object with exactly these properties, all required.
fn closed_object(properties: Map<String, Value>, docs: Option<&str>) -> Value {
    let required: Vec<Value> = properties.keys().cloned().map(Value::String).collect();
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    if let Some(docs) = docs {
        schema["description"] = Value::String(docs.to_string());
    }
    schema
}

/// `schema` or `null`: a type list where the schema has one plain type, `anyOf` otherwise.
fn nullable(mut schema: Value) -> Value {
    let plain_type = schema
        .get("type")
        .and_then(Value::as_str)
        .map(str::to_string);
    match plain_type {
        Some(kind) if schema.get("enum").is_none() && schema.get("const").is_none() => {
            schema["type"] = json!([kind, "null"]);
            schema
        }
        _ => json!({ "anyOf": [schema, { "type": "null" }] }),
    }
}

/// Adds a description, after any the schema already has.
fn described(mut schema: Value, docs: Option<&str>) -> Value {
    let Some(docs) = docs.map(str::trim).filter(|docs| !docs.is_empty()) else {
        return schema;
    };
    let text = match schema.get("description").and_then(Value::as_str) {
        Some(existing) => format!("{docs} ({existing})"),
        None => docs.to_string(),
    };
    schema["description"] = Value::String(text);
    schema
}

/// A type's doc comment followed by its cases' (`name: doc`), for enums and flags, whose names
/// cannot carry a description of their own in JSON Schema.
fn case_docs(docs: Option<&str>, cases: &[Part<()>]) -> Option<String> {
    let documented: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let doc = case.docs.as_deref()?.trim();
            (!doc.is_empty()).then(|| format!("{}: {doc}", json_name(&case.name)))
        })
        .collect();
    let parts: Vec<String> = docs
        .map(|d| d.trim().to_string())
        .into_iter()
        .chain((!documented.is_empty()).then(|| documented.join("; ")))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// An integer bound as a JSON number (every WIT integer type's bounds fit `i64` or `u64`).
fn number(value: i128) -> Value {
    if let Ok(small) = i64::try_from(value) {
        Value::from(small)
    } else {
        Value::from(u64::try_from(value).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::IntKind;
    use super::*;

    fn part<T>(name: &str, shape: T, docs: Option<&str>) -> Part<T> {
        Part {
            name: name.into(),
            shape,
            docs: docs.map(Into::into),
        }
    }

    #[test]
    fn integers_carry_their_bounds_and_records_are_closed() {
        let point = Shape::Record {
            fields: vec![
                part("x", Shape::Integer(IntKind::U8), Some("Across.")),
                part("y", Shape::Integer(IntKind::S64), None),
            ],
            docs: Some("A point.".into()),
        };
        let schema = schema_of(&point);
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["required"], json!(["x", "y"]));
        assert_eq!(schema["description"], "A point.");
        assert_eq!(schema["properties"]["x"]["maximum"], 255);
        assert_eq!(schema["properties"]["x"]["description"], "Across.");
        assert_eq!(schema["properties"]["y"]["minimum"], i64::MIN);
        assert_eq!(
            schema_of(&Shape::Integer(IntKind::U64))["maximum"],
            json!(u64::MAX)
        );
    }

    #[test]
    fn options_are_nullable_and_nested_options_say_some() {
        assert_eq!(
            schema_of(&Shape::Option(Box::new(Shape::String))),
            json!({ "type": ["string", "null"] })
        );
        let nested = Shape::Option(Box::new(Shape::Option(Box::new(Shape::Bool))));
        let schema = schema_of(&nested);
        assert_eq!(schema["anyOf"][0], json!({ "type": "null" }));
        assert_eq!(schema["anyOf"][1]["required"], json!(["some"]));
    }

    #[test]
    fn variants_are_names_or_one_property_objects() {
        let shape = Shape::Variant {
            cases: vec![
                part("none", None, Some("Nothing.")),
                part("circle", Some(Shape::Float { single: false }), None),
            ],
            docs: None,
        };
        let schema = schema_of(&shape);
        assert_eq!(
            schema["oneOf"][0],
            json!({ "type": "string", "const": "none", "description": "Nothing." })
        );
        assert_eq!(schema["oneOf"][1]["required"], json!(["circle"]));
        assert_eq!(schema["oneOf"][1]["properties"]["circle"]["type"], "number");
    }

    #[test]
    fn every_derived_schema_has_a_strict_form() {
        let everything = vec![
            ("flag".to_string(), Shape::Bool),
            ("letter".to_string(), Shape::Char),
            ("data".to_string(), Shape::Bytes),
            (
                "pair".to_string(),
                Shape::Tuple(vec![Shape::String, Shape::Integer(IntKind::U32)]),
            ),
            (
                "style".to_string(),
                Shape::Flags {
                    flags: vec![part("bold", (), None)],
                    docs: None,
                },
            ),
            (
                "table".to_string(),
                Shape::Map(Box::new(Shape::String), Box::new(Shape::Bool)),
            ),
            (
                "outcome".to_string(),
                Shape::Result {
                    ok: Some(Box::new(Shape::String)),
                    err: None,
                },
            ),
            (
                "maybe".to_string(),
                Shape::Option(Box::new(Shape::Option(Box::new(Shape::Bool)))),
            ),
        ];
        let schema = parameters_schema(&everything);
        crate::schema::strict_form::strict_form(&schema).expect("a strict form");
        crate::schema::ArgumentSchema::compile(schema).expect("a valid schema");
    }
}
