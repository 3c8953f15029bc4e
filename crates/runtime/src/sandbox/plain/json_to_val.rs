//! A call's JSON arguments turned into the WIT values a plain component's function takes, in the
//! forms [`super::json_schema`] describes. The arguments were checked against that schema first;
//! this still checks every value itself (the schema is not trusted to be complete), never panics,
//! and names the JSON pointer of what does not fit, e.g. `/shape/radius: expected a number`.

use super::json_schema::BASE64_PATTERN;
use super::shape::{IntKind, Shape, json_name};
use base64::Engine;
use serde_json::{Map, Value};
use wasmtime::component::Val;

/// Why an argument does not fit its WIT type: where (a JSON pointer) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentMismatch {
    pub pointer: String,
    pub message: String,
}

impl std::fmt::Display for ArgumentMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "the arguments"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// The function's parameters in order, read from the arguments object.
pub fn arguments_to_vals(
    params: &[(String, Shape)],
    arguments: &Value,
) -> Result<Vec<Val>, ArgumentMismatch> {
    let Some(object) = arguments.as_object() else {
        return Err(mismatch("", "expected an object of named arguments"));
    };
    if let Some(unknown) = object
        .keys()
        .find(|key| !params.iter().any(|(name, _)| json_name(name) == **key))
    {
        let names: Vec<String> = params.iter().map(|(name, _)| json_name(name)).collect();
        return Err(mismatch(
            &child("", unknown),
            &format!(
                "is not a parameter of this function (it takes: {})",
                if names.is_empty() {
                    "nothing".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    }
    params
        .iter()
        .map(|(name, shape)| {
            let key = json_name(name);
            let pointer = child("", &key);
            match object.get(&key) {
                Some(value) => to_val(shape, value, &pointer),
                None if matches!(shape, Shape::Option(_)) => Ok(Val::Option(None)),
                None => Err(mismatch(
                    &pointer,
                    &format!("is missing (a {})", shape.wit()),
                )),
            }
        })
        .collect()
}

fn to_val(shape: &Shape, value: &Value, pointer: &str) -> Result<Val, ArgumentMismatch> {
    let expected = |what: &str| Err(mismatch(pointer, &format!("expected {what}")));
    match shape {
        Shape::Bool => match value {
            Value::Bool(flag) => Ok(Val::Bool(*flag)),
            _ => expected("true or false"),
        },
        Shape::Integer(kind) => integer(*kind, value, pointer),
        Shape::Float { single } => {
            let Some(number) = value.as_f64() else {
                return expected("a number");
            };
            if *single {
                let narrow = number as f32;
                if !narrow.is_finite() {
                    return expected("a number within the range of f32");
                }
                Ok(Val::Float32(narrow))
            } else {
                Ok(Val::Float64(number))
            }
        }
        Shape::Char => {
            let Some(text) = value.as_str() else {
                return expected("a string of one character");
            };
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok(Val::Char(c)),
                _ => expected("a string of exactly one character"),
            }
        }
        Shape::String => match value {
            Value::String(text) => Ok(Val::String(text.clone())),
            _ => expected("a string"),
        },
        Shape::Bytes => {
            let Some(text) = value.as_str() else {
                return expected("a string of base64");
            };
            base64_bytes(text)
                .map(|bytes| Val::List(bytes.into_iter().map(Val::U8).collect()))
                .ok_or_else(|| mismatch(pointer, &format!("expected base64 ({BASE64_PATTERN})")))
        }
        Shape::List(item) => {
            let Some(items) = value.as_array() else {
                return expected("an array");
            };
            list(item, items, pointer).map(Val::List)
        }
        Shape::FixedList(item, len) => {
            let Some(items) = value.as_array() else {
                return expected(&format!("an array of {len} items"));
            };
            if items.len() != *len as usize {
                return expected(&format!(
                    "an array of exactly {len} items, not {}",
                    items.len()
                ));
            }
            list(item, items, pointer).map(Val::FixedLengthList)
        }
        Shape::Map(key, entry) => {
            let Some(entries) = value.as_array() else {
                return expected("an array of {\"key\": …, \"value\": …} objects");
            };
            entries
                .iter()
                .enumerate()
                .map(|(index, pair)| {
                    let at = child(pointer, &index.to_string());
                    let object = closed(pair, &["key", "value"], &at)?;
                    Ok((
                        to_val(key, required(object, "key", &at)?, &child(&at, "key"))?,
                        to_val(entry, required(object, "value", &at)?, &child(&at, "value"))?,
                    ))
                })
                .collect::<Result<_, _>>()
                .map(Val::Map)
        }
        Shape::Record { fields, .. } => {
            let keys: Vec<String> = fields.iter().map(|field| json_name(&field.name)).collect();
            let names: Vec<&str> = keys.iter().map(String::as_str).collect();
            let object = closed(value, &names, pointer)?;
            fields
                .iter()
                .zip(&keys)
                .map(|(field, key)| {
                    let at = child(pointer, key);
                    let value = match object.get(key) {
                        Some(value) => to_val(&field.shape, value, &at)?,
                        None if matches!(field.shape, Shape::Option(_)) => Val::Option(None),
                        None => {
                            return Err(mismatch(
                                &at,
                                &format!("is missing (a {})", field.shape.wit()),
                            ));
                        }
                    };
                    Ok((field.name.clone(), value))
                })
                .collect::<Result<_, _>>()
                .map(Val::Record)
        }
        Shape::Tuple(items) => {
            let Some(values) = value
                .as_array()
                .filter(|values| values.len() == items.len())
            else {
                return expected(&format!("an array of exactly {} items", items.len()));
            };
            items
                .iter()
                .zip(values)
                .enumerate()
                .map(|(index, (item, value))| {
                    to_val(item, value, &child(pointer, &index.to_string()))
                })
                .collect::<Result<_, _>>()
                .map(Val::Tuple)
        }
        Shape::Variant { cases, .. } => {
            let names = || {
                cases
                    .iter()
                    .map(|case| match case.shape {
                        Some(_) => format!("{{\"{}\": …}}", json_name(&case.name)),
                        None => format!("\"{}\"", json_name(&case.name)),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let (name, payload) = match value {
                Value::String(name) => (name.as_str(), None),
                Value::Object(object) if object.len() == 1 => {
                    let (name, payload) = object.iter().next().expect("one entry");
                    (name.as_str(), Some(payload))
                }
                _ => return expected(&format!("one of {}", names())),
            };
            let Some(case) = cases.iter().find(|case| json_name(&case.name) == name) else {
                return Err(mismatch(
                    pointer,
                    &format!("{name:?} is not a case; expected one of {}", names()),
                ));
            };
            match (&case.shape, payload) {
                (None, None) => Ok(Val::Variant(case.name.clone(), None)),
                (Some(shape), Some(payload)) => Ok(Val::Variant(
                    case.name.clone(),
                    Some(Box::new(to_val(shape, payload, &child(pointer, name))?)),
                )),
                (None, Some(_)) => Err(mismatch(
                    pointer,
                    &format!("case {name:?} carries no value; write it as \"{name}\""),
                )),
                (Some(shape), None) => Err(mismatch(
                    pointer,
                    &format!(
                        "case {name:?} carries a {}; write it as {{\"{name}\": …}}",
                        shape.wit()
                    ),
                )),
            }
        }
        Shape::Enum { cases, .. } => {
            let Some(name) = value.as_str() else {
                return expected("a string");
            };
            match cases.iter().find(|case| json_name(&case.name) == name) {
                Some(case) => Ok(Val::Enum(case.name.clone())),
                None => {
                    let names: Vec<String> =
                        cases.iter().map(|case| json_name(&case.name)).collect();
                    expected(&format!("one of {}", names.join(", ")))
                }
            }
        }
        Shape::Flags { flags, .. } => {
            let Some(items) = value.as_array() else {
                return expected("an array of flag names");
            };
            let mut set: Vec<String> = Vec::with_capacity(items.len());
            for (index, item) in items.iter().enumerate() {
                let at = child(pointer, &index.to_string());
                let Some(flag) = item
                    .as_str()
                    .and_then(|name| flags.iter().find(|f| json_name(&f.name) == name))
                else {
                    let names: Vec<String> =
                        flags.iter().map(|flag| json_name(&flag.name)).collect();
                    return Err(mismatch(
                        &at,
                        &format!("expected one of {}", names.join(", ")),
                    ));
                };
                if set.contains(&flag.name) {
                    return Err(mismatch(
                        &at,
                        &format!("{:?} is given twice", json_name(&flag.name)),
                    ));
                }
                set.push(flag.name.clone());
            }
            Ok(Val::Flags(set))
        }
        Shape::Option(inner) => {
            if value.is_null() {
                return Ok(Val::Option(None));
            }
            let payload = if inner.admits_null() {
                let object = closed(value, &["some"], pointer)?;
                let at = child(pointer, "some");
                return to_val(inner, required(object, "some", pointer)?, &at)
                    .map(|val| Val::Option(Some(Box::new(val))));
            } else {
                to_val(inner, value, pointer)?
            };
            Ok(Val::Option(Some(Box::new(payload))))
        }
        Shape::Result { ok, err } => {
            let object = match value.as_object() {
                Some(object) if object.len() == 1 => object,
                _ => return expected("{\"ok\": …} or {\"err\": …}"),
            };
            let (side, payload) = object.iter().next().expect("one entry");
            let at = child(pointer, side);
            let carried = |shape: &Option<Box<Shape>>| match shape {
                Some(shape) => to_val(shape, payload, &at).map(|val| Some(Box::new(val))),
                None if payload.is_null() => Ok(None),
                None => Err(mismatch(&at, "expected null (this side carries no value)")),
            };
            match side.as_str() {
                "ok" => Ok(Val::Result(Ok(carried(ok)?))),
                "err" => Ok(Val::Result(Err(carried(err)?))),
                _ => expected("{\"ok\": …} or {\"err\": …}"),
            }
        }
    }
}

/// Past every WIT integer's range (2^100), yet exactly convertible to `i128` below it.
const WHOLE_FLOAT_LIMIT: f64 = (1u128 << 100) as f64;

fn integer(kind: IntKind, value: &Value, pointer: &str) -> Result<Val, ArgumentMismatch> {
    let (min, max) = kind.range();
    let out_of_range = || {
        mismatch(
            pointer,
            &format!(
                "expected an integer from {min} to {max} (a {})",
                kind.wit_name()
            ),
        )
    };
    let number: i128 = match value {
        Value::Number(number) => {
            if let Some(n) = number.as_i64() {
                n.into()
            } else if let Some(n) = number.as_u64() {
                n.into()
            } else {
                // A float: accepted when it is a whole number, as JSON Schema's `integer` is. A
                // whole f64 is an exact integer, and below 2^100 it converts to i128 exactly, so
                // the range check below is the one the schema's bounds make (1.8e19 is a u64).
                match number.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < WHOLE_FLOAT_LIMIT => f as i128,
                    _ => return Err(out_of_range()),
                }
            }
        }
        _ => return Err(out_of_range()),
    };
    if number < min || number > max {
        return Err(out_of_range());
    }
    // In range by the check above, so every conversion below succeeds.
    let val = match kind {
        IntKind::S8 => i8::try_from(number).map(Val::S8).ok(),
        IntKind::U8 => u8::try_from(number).map(Val::U8).ok(),
        IntKind::S16 => i16::try_from(number).map(Val::S16).ok(),
        IntKind::U16 => u16::try_from(number).map(Val::U16).ok(),
        IntKind::S32 => i32::try_from(number).map(Val::S32).ok(),
        IntKind::U32 => u32::try_from(number).map(Val::U32).ok(),
        IntKind::S64 => i64::try_from(number).map(Val::S64).ok(),
        IntKind::U64 => u64::try_from(number).map(Val::U64).ok(),
    };
    val.ok_or_else(out_of_range)
}

fn list(item: &Shape, values: &[Value], pointer: &str) -> Result<Vec<Val>, ArgumentMismatch> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| to_val(item, value, &child(pointer, &index.to_string())))
        .collect()
}

/// `value` as an object with no keys but `allowed`.
fn closed<'a>(
    value: &'a Value,
    allowed: &[&str],
    pointer: &str,
) -> Result<&'a Map<String, Value>, ArgumentMismatch> {
    let Some(object) = value.as_object() else {
        return Err(mismatch(
            pointer,
            &format!("expected an object with {}", allowed.join(", ")),
        ));
    };
    if let Some(unknown) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(mismatch(
            &child(pointer, unknown),
            &format!("is not expected here (expected: {})", allowed.join(", ")),
        ));
    }
    Ok(object)
}

fn required<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    pointer: &str,
) -> Result<&'a Value, ArgumentMismatch> {
    object
        .get(key)
        .ok_or_else(|| mismatch(&child(pointer, key), "is missing"))
}

/// Standard base64, padded or not; `None` for anything else.
fn base64_bytes(text: &str) -> Option<Vec<u8>> {
    let engine = base64::engine::general_purpose::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(text).ok()
}

fn child(pointer: &str, token: &str) -> String {
    format!("{pointer}/{}", token.replace('~', "~0").replace('/', "~1"))
}

fn mismatch(pointer: &str, message: &str) -> ArgumentMismatch {
    ArgumentMismatch {
        pointer: pointer.to_string(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::Part;
    use super::*;
    use serde_json::json;

    fn shape_params() -> Vec<(String, Shape)> {
        let circle = Shape::Record {
            fields: vec![Part {
                name: "radius".into(),
                shape: Shape::Float { single: false },
                docs: None,
            }],
            docs: None,
        };
        vec![
            (
                "shape".into(),
                Shape::Variant {
                    cases: vec![
                        Part {
                            name: "empty".into(),
                            shape: None,
                            docs: None,
                        },
                        Part {
                            name: "circle".into(),
                            shape: Some(circle),
                            docs: None,
                        },
                    ],
                    docs: None,
                },
            ),
            ("count".into(), Shape::Integer(IntKind::U8)),
            ("note".into(), Shape::Option(Box::new(Shape::String))),
        ]
    }

    #[test]
    fn good_arguments_become_values_in_parameter_order() {
        let vals = arguments_to_vals(
            &shape_params(),
            &json!({ "count": 3, "shape": { "circle": { "radius": 2.5 } } }),
        )
        .unwrap();
        assert_eq!(
            vals,
            vec![
                Val::Variant(
                    "circle".into(),
                    Some(Box::new(Val::Record(vec![(
                        "radius".into(),
                        Val::Float64(2.5)
                    )])))
                ),
                Val::U8(3),
                Val::Option(None),
            ]
        );
    }

    #[test]
    fn a_whole_float_is_a_u64_exactly_when_the_schema_says_so() {
        // 1.8e19 (an exact integer, below u64::MAX) passed the schema and was refused here.
        let shape = Shape::Integer(IntKind::U64);
        let schema = super::super::json_schema::schema_of(&shape);
        let validator = jsonschema::validator_for(&schema).unwrap();
        let params = vec![("n".to_string(), shape)];
        for text in [
            "1.8e19",
            "18000000000000000000.0",
            "1.8446744073709550e19",
            "18446744073709551615",
            "18446744073709551615.0",
            "1.8446744073709552e19",
            "1e20",
            "-1.0",
            "0.0",
            "1.5",
        ] {
            let value: serde_json::Value = serde_json::from_str(text).unwrap();
            let converted = arguments_to_vals(&params, &json!({ "n": value }));
            assert_eq!(
                validator.is_valid(&value),
                converted.is_ok(),
                "{text}: schema and converter disagree ({converted:?})"
            );
        }
        assert_eq!(
            arguments_to_vals(&params, &json!({ "n": 1.8e19 })).unwrap(),
            vec![Val::U64(18_000_000_000_000_000_000)]
        );
    }

    #[test]
    fn mismatches_name_the_pointer() {
        let cases = [
            (
                json!({ "count": 3, "shape": { "circle": { "radius": "big" } } }),
                "/shape/circle/radius: expected a number",
            ),
            (
                json!({ "count": 300, "shape": "empty" }),
                "/count: expected an integer from 0 to 255 (a u8)",
            ),
            (
                json!({ "count": 1, "shape": "square" }),
                "/shape: \"square\" is not a case",
            ),
            (
                json!({ "count": 1, "shape": "circle" }),
                "/shape: case \"circle\" carries a record",
            ),
            (
                json!({ "count": 1, "shape": "empty", "colour": "red" }),
                "/colour: is not a parameter",
            ),
            (json!({ "shape": "empty" }), "/count: is missing (a u8)"),
            (json!([1, 2]), "the arguments: expected an object"),
        ];
        for (arguments, expected) in cases {
            let error = arguments_to_vals(&shape_params(), &arguments)
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(expected), "{error:?} for {arguments}");
        }
    }

    #[test]
    fn bytes_chars_flags_tuples_and_maps() {
        let params = vec![
            ("data".to_string(), Shape::Bytes),
            ("letter".to_string(), Shape::Char),
            (
                "pair".to_string(),
                Shape::Tuple(vec![Shape::String, Shape::Bool]),
            ),
            (
                "table".to_string(),
                Shape::Map(
                    Box::new(Shape::String),
                    Box::new(Shape::Integer(IntKind::S8)),
                ),
            ),
        ];
        let vals = arguments_to_vals(
            &params,
            &json!({
                "data": "aGk",
                "letter": "é",
                "pair": ["a", true],
                "table": [{ "key": "k", "value": -1 }],
            }),
        )
        .unwrap();
        assert_eq!(vals[0], Val::List(vec![Val::U8(b'h'), Val::U8(b'i')]));
        assert_eq!(vals[1], Val::Char('é'));
        assert_eq!(
            vals[3],
            Val::Map(vec![(Val::String("k".into()), Val::S8(-1))])
        );
        let error = arguments_to_vals(
            &params,
            &json!({ "data": "%%", "letter": "ab", "pair": [], "table": [] }),
        )
        .unwrap_err();
        assert_eq!(error.pointer, "/data");
    }
}
