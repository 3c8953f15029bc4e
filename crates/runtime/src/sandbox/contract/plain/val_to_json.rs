//! What a plain component's function returned, as JSON in the forms [`super::json_schema`]
//! describes (the same forms its arguments take). A value JSON cannot carry (a float that is not
//! finite) or that does not have the declared shape is an error naming where it was.

use super::shape::{Shape, json_name};
use base64::Engine;
use serde_json::{Map, Value, json};
use wasmtime::component::Val;

/// The JSON form of `val`, which the function declared as `shape`; the error is a pointer and a
/// reason.
pub fn val_to_json(shape: &Shape, val: &Val) -> Result<Value, String> {
    to_json(shape, val, "")
}

fn to_json(shape: &Shape, val: &Val, pointer: &str) -> Result<Value, String> {
    let wrong = || {
        Err(format!(
            "{}: the component returned a value that is not a {}",
            at(pointer),
            shape.wit()
        ))
    };
    Ok(match (shape, val) {
        (Shape::Bool, Val::Bool(flag)) => Value::Bool(*flag),
        (Shape::Integer(_), Val::S8(n)) => json!(n),
        (Shape::Integer(_), Val::U8(n)) => json!(n),
        (Shape::Integer(_), Val::S16(n)) => json!(n),
        (Shape::Integer(_), Val::U16(n)) => json!(n),
        (Shape::Integer(_), Val::S32(n)) => json!(n),
        (Shape::Integer(_), Val::U32(n)) => json!(n),
        (Shape::Integer(_), Val::S64(n)) => json!(n),
        (Shape::Integer(_), Val::U64(n)) => json!(n),
        (Shape::Float { .. }, Val::Float32(f)) => finite(f64::from(*f), pointer)?,
        (Shape::Float { .. }, Val::Float64(f)) => finite(*f, pointer)?,
        (Shape::Char, Val::Char(c)) => Value::String(c.to_string()),
        (Shape::String, Val::String(text)) => Value::String(text.clone()),
        (Shape::Bytes, Val::List(items)) => {
            let mut bytes = Vec::with_capacity(items.len());
            for item in items {
                let Val::U8(byte) = item else {
                    return wrong();
                };
                bytes.push(*byte);
            }
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        (Shape::List(item), Val::List(items))
        | (Shape::FixedList(item, _), Val::FixedLengthList(items)) => list(item, items, pointer)?,
        (Shape::Map(key, value), Val::Map(entries)) => {
            let mut pairs = Vec::with_capacity(entries.len());
            for (index, (k, v)) in entries.iter().enumerate() {
                let here = format!("{pointer}/{index}");
                pairs.push(json!({
                    "key": to_json(key, k, &format!("{here}/key"))?,
                    "value": to_json(value, v, &format!("{here}/value"))?,
                }));
            }
            Value::Array(pairs)
        }
        (Shape::Record { fields, .. }, Val::Record(values)) => {
            if fields.len() != values.len() {
                return wrong();
            }
            let mut object = Map::new();
            for (field, (name, value)) in fields.iter().zip(values) {
                if field.name != *name {
                    return wrong();
                }
                let key = json_name(name);
                let here = format!("{pointer}/{}", escape(&key));
                let converted = to_json(&field.shape, value, &here)?;
                object.insert(key, converted);
            }
            Value::Object(object)
        }
        (Shape::Tuple(items), Val::Tuple(values)) if items.len() == values.len() => Value::Array(
            items
                .iter()
                .zip(values)
                .enumerate()
                .map(|(index, (item, value))| to_json(item, value, &format!("{pointer}/{index}")))
                .collect::<Result<_, _>>()?,
        ),
        (Shape::Variant { cases, .. }, Val::Variant(name, payload)) => {
            let Some(case) = cases.iter().find(|case| case.name == *name) else {
                return wrong();
            };
            let key = json_name(name);
            match (&case.shape, payload) {
                (None, None) => Value::String(key),
                (Some(shape), Some(payload)) => {
                    let here = format!("{pointer}/{}", escape(&key));
                    one_entry(&key, to_json(shape, payload, &here)?)
                }
                _ => return wrong(),
            }
        }
        (Shape::Enum { cases, .. }, Val::Enum(name)) if cases.iter().any(|c| c.name == *name) => {
            Value::String(json_name(name))
        }
        (Shape::Flags { .. }, Val::Flags(names)) => Value::Array(
            names
                .iter()
                .map(|name| Value::String(json_name(name)))
                .collect(),
        ),
        (Shape::Option(_), Val::Option(None)) => Value::Null,
        (Shape::Option(inner), Val::Option(Some(value))) => {
            let inner_json = to_json(inner, value, pointer)?;
            if inner.admits_null() {
                one_entry("some", inner_json)
            } else {
                inner_json
            }
        }
        (Shape::Result { ok, err }, Val::Result(outcome)) => {
            let (side, shape, payload) = match outcome {
                Ok(payload) => ("ok", ok, payload),
                Err(payload) => ("err", err, payload),
            };
            let here = format!("{pointer}/{side}");
            let inner = match (shape, payload) {
                (Some(shape), Some(payload)) => to_json(shape, payload, &here)?,
                (None, None) => Value::Null,
                _ => return wrong(),
            };
            one_entry(side, inner)
        }
        _ => return wrong(),
    })
}

fn list(item: &Shape, values: &[Val], pointer: &str) -> Result<Value, String> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| to_json(item, value, &format!("{pointer}/{index}")))
        .collect::<Result<_, _>>()
        .map(Value::Array)
}

fn finite(number: f64, pointer: &str) -> Result<Value, String> {
    serde_json::Number::from_f64(number)
        .map(Value::Number)
        .ok_or_else(|| {
            format!(
                "{}: the component returned {number}, which JSON cannot carry",
                at(pointer)
            )
        })
}

fn one_entry(key: &str, value: Value) -> Value {
    let mut object = Map::new();
    object.insert(key.to_string(), value);
    Value::Object(object)
}

fn at(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the result"
    } else {
        pointer
    }
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::super::shape::{IntKind, Part};
    use super::*;

    #[test]
    fn values_come_back_in_the_argument_forms() {
        let shape = Shape::Result {
            ok: Some(Box::new(Shape::List(Box::new(Shape::Tuple(vec![
                Shape::String,
                Shape::Integer(IntKind::U32),
            ]))))),
            err: Some(Box::new(Shape::String)),
        };
        let ok = Val::Result(Ok(Some(Box::new(Val::List(vec![Val::Tuple(vec![
            Val::String("the".into()),
            Val::U32(3),
        ])])))));
        assert_eq!(
            val_to_json(&shape, &ok).unwrap(),
            json!({ "ok": [["the", 3]] })
        );
        let err = Val::Result(Err(Some(Box::new(Val::String("no".into())))));
        assert_eq!(val_to_json(&shape, &err).unwrap(), json!({ "err": "no" }));
    }

    #[test]
    fn bytes_are_base64_and_nested_options_say_some() {
        assert_eq!(
            val_to_json(
                &Shape::Bytes,
                &Val::List(vec![Val::U8(b'h'), Val::U8(b'i')])
            )
            .unwrap(),
            json!("aGk=")
        );
        let nested = Shape::Option(Box::new(Shape::Option(Box::new(Shape::Bool))));
        let some_none = Val::Option(Some(Box::new(Val::Option(None))));
        assert_eq!(
            val_to_json(&nested, &some_none).unwrap(),
            json!({ "some": null })
        );
    }

    #[test]
    fn non_finite_floats_and_wrong_shapes_are_errors() {
        let record = Shape::Record {
            fields: vec![Part {
                name: "area".into(),
                shape: Shape::Float { single: false },
                docs: None,
            }],
            docs: None,
        };
        let infinite = Val::Record(vec![("area".into(), Val::Float64(f64::INFINITY))]);
        assert_eq!(
            val_to_json(&record, &infinite).unwrap_err(),
            "/area: the component returned inf, which JSON cannot carry"
        );
        assert!(val_to_json(&Shape::Bool, &Val::U8(1)).is_err());
    }
}
