//! What a plain component's function returned, written as JSON text in the forms
//! [`super::json_schema`] describes (the same forms its arguments take). A value JSON cannot carry
//! (a float that is not finite) or that does not have the declared shape is an error naming where
//! it was. The text is written straight from the lifted value, with no JSON tree in between, and
//! stops as soon as it passes its byte limit: a huge value is refused part-way, never built whole.

use super::shape::{Shape, json_name};
use base64::Engine;
use std::io::Write as _;
use wasmtime::component::Val;

/// Why a value could not be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unconvertible {
    /// The value does not fit its declared type, or JSON cannot carry it: a pointer and a reason.
    Shape(String),
    /// Its JSON text would be longer than the limit.
    TooLarge,
}

/// The JSON text of `val`, which the function declared as `shape`, at most `limit` bytes long.
pub fn val_to_json_text(shape: &Shape, val: &Val, limit: usize) -> Result<String, Unconvertible> {
    let mut writer = Writer {
        out: Vec::new(),
        limit,
        pointer: Vec::new(),
    };
    writer.value(shape, val)?;
    // serde_json and base64 write UTF-8 only.
    String::from_utf8(writer.out).map_err(|_| Unconvertible::Shape("not UTF-8".into()))
}

/// Where in the value the writer is, kept as parts and joined only for an error.
enum Step<'a> {
    Index(usize),
    Key(&'a str),
    /// A record field or variant case by its WIT name (its JSON key is [`json_name`]).
    Field(&'a str),
}

struct Writer<'a> {
    out: Vec<u8>,
    limit: usize,
    pointer: Vec<Step<'a>>,
}

impl<'a> Writer<'a> {
    fn push(&mut self, bytes: &[u8]) -> Result<(), Unconvertible> {
        self.out.extend_from_slice(bytes);
        self.check()
    }

    fn check(&self) -> Result<(), Unconvertible> {
        if self.out.len() > self.limit {
            Err(Unconvertible::TooLarge)
        } else {
            Ok(())
        }
    }

    /// A JSON string, escaped; its length is checked before it is written.
    fn string(&mut self, text: &str) -> Result<(), Unconvertible> {
        if self.out.len().saturating_add(text.len()) > self.limit {
            return Err(Unconvertible::TooLarge);
        }
        serde_json::to_writer(&mut self.out, text).map_err(|err| self.wrong_with(&err))?;
        self.check()
    }

    fn number(&mut self, number: impl std::fmt::Display) -> Result<(), Unconvertible> {
        write!(self.out, "{number}").map_err(|err| self.wrong_with(&err))?;
        self.check()
    }

    fn finite(&mut self, number: f64) -> Result<(), Unconvertible> {
        if !number.is_finite() {
            return Err(Unconvertible::Shape(format!(
                "{}: the component returned {number}, which JSON cannot carry",
                self.at()
            )));
        }
        serde_json::to_writer(&mut self.out, &number).map_err(|err| self.wrong_with(&err))?;
        self.check()
    }

    fn at(&self) -> String {
        if self.pointer.is_empty() {
            return "the result".into();
        }
        let mut pointer = String::new();
        for step in &self.pointer {
            pointer.push('/');
            match step {
                Step::Index(index) => pointer.push_str(&index.to_string()),
                Step::Key(key) => pointer.push_str(&escape(key)),
                Step::Field(name) => pointer.push_str(&escape(&json_name(name))),
            }
        }
        pointer
    }

    fn wrong(&self, shape: &Shape) -> Unconvertible {
        Unconvertible::Shape(format!(
            "{}: the component returned a value that is not a {}",
            self.at(),
            shape.wit()
        ))
    }

    fn wrong_with(&self, err: &dyn std::fmt::Display) -> Unconvertible {
        Unconvertible::Shape(format!("{}: {err}", self.at()))
    }

    /// `"key": ` followed by the value, as one member of an object.
    fn member(
        &mut self,
        key: &'a str,
        shape: &'a Shape,
        val: &'a Val,
    ) -> Result<(), Unconvertible> {
        self.string(key)?;
        self.push(b":")?;
        self.pointer.push(Step::Key(key));
        self.value(shape, val)?;
        self.pointer.pop();
        Ok(())
    }

    fn items(
        &mut self,
        shapes: impl Iterator<Item = &'a Shape>,
        vals: &'a [Val],
    ) -> Result<(), Unconvertible> {
        self.push(b"[")?;
        for (index, (shape, val)) in shapes.zip(vals).enumerate() {
            if index > 0 {
                self.push(b",")?;
            }
            self.pointer.push(Step::Index(index));
            self.value(shape, val)?;
            self.pointer.pop();
        }
        self.push(b"]")
    }

    fn value(&mut self, shape: &'a Shape, val: &'a Val) -> Result<(), Unconvertible> {
        match (shape, val) {
            (Shape::Bool, Val::Bool(flag)) => self.push(if *flag { b"true" } else { b"false" }),
            (Shape::Integer(_), Val::S8(n)) => self.number(n),
            (Shape::Integer(_), Val::U8(n)) => self.number(n),
            (Shape::Integer(_), Val::S16(n)) => self.number(n),
            (Shape::Integer(_), Val::U16(n)) => self.number(n),
            (Shape::Integer(_), Val::S32(n)) => self.number(n),
            (Shape::Integer(_), Val::U32(n)) => self.number(n),
            (Shape::Integer(_), Val::S64(n)) => self.number(n),
            (Shape::Integer(_), Val::U64(n)) => self.number(n),
            (Shape::Float { .. }, Val::Float32(f)) => self.finite(f64::from(*f)),
            (Shape::Float { .. }, Val::Float64(f)) => self.finite(*f),
            (Shape::Char, Val::Char(c)) => self.string(c.encode_utf8(&mut [0; 4])),
            (Shape::String, Val::String(text)) => self.string(text),
            (Shape::Bytes, Val::List(items)) => {
                if self.out.len().saturating_add(items.len().div_ceil(3) * 4) > self.limit {
                    return Err(Unconvertible::TooLarge);
                }
                let mut bytes = Vec::with_capacity(items.len());
                for item in items {
                    let Val::U8(byte) = item else {
                        return Err(self.wrong(shape));
                    };
                    bytes.push(*byte);
                }
                let text = base64::engine::general_purpose::STANDARD.encode(bytes);
                self.string(&text)
            }
            (Shape::List(item), Val::List(items))
            | (Shape::FixedList(item, _), Val::FixedLengthList(items)) => {
                self.items(std::iter::repeat(&**item), items)
            }
            (Shape::Map(key, value), Val::Map(entries)) => {
                self.push(b"[")?;
                for (index, (k, v)) in entries.iter().enumerate() {
                    if index > 0 {
                        self.push(b",")?;
                    }
                    self.pointer.push(Step::Index(index));
                    self.push(b"{")?;
                    self.member("key", key, k)?;
                    self.push(b",")?;
                    self.member("value", value, v)?;
                    self.push(b"}")?;
                    self.pointer.pop();
                }
                self.push(b"]")
            }
            (Shape::Record { fields, .. }, Val::Record(values)) => {
                if fields.len() != values.len() {
                    return Err(self.wrong(shape));
                }
                self.push(b"{")?;
                for (index, (field, (name, value))) in fields.iter().zip(values).enumerate() {
                    if field.name != *name {
                        return Err(self.wrong(shape));
                    }
                    if index > 0 {
                        self.push(b",")?;
                    }
                    let key = json_name(name);
                    self.string(&key)?;
                    self.push(b":")?;
                    self.pointer.push(Step::Field(name));
                    self.value(&field.shape, value)?;
                    self.pointer.pop();
                }
                self.push(b"}")
            }
            (Shape::Tuple(items), Val::Tuple(values)) if items.len() == values.len() => {
                self.items(items.iter(), values)
            }
            (Shape::Variant { cases, .. }, Val::Variant(name, payload)) => {
                let Some(case) = cases.iter().find(|case| case.name == *name) else {
                    return Err(self.wrong(shape));
                };
                let key = json_name(name);
                match (&case.shape, payload) {
                    (None, None) => self.string(&key),
                    (Some(inner), Some(payload)) => {
                        self.push(b"{")?;
                        self.string(&key)?;
                        self.push(b":")?;
                        self.pointer.push(Step::Field(name));
                        self.value(inner, payload)?;
                        self.pointer.pop();
                        self.push(b"}")
                    }
                    _ => Err(self.wrong(shape)),
                }
            }
            (Shape::Enum { cases, .. }, Val::Enum(name))
                if cases.iter().any(|c| c.name == *name) =>
            {
                self.string(&json_name(name))
            }
            (Shape::Flags { .. }, Val::Flags(names)) => {
                self.push(b"[")?;
                for (index, name) in names.iter().enumerate() {
                    if index > 0 {
                        self.push(b",")?;
                    }
                    self.string(&json_name(name))?;
                }
                self.push(b"]")
            }
            (Shape::Option(_), Val::Option(None)) => self.push(b"null"),
            (Shape::Option(inner), Val::Option(Some(value))) => {
                if inner.admits_null() {
                    self.push(b"{")?;
                    self.member("some", inner, value)?;
                    self.push(b"}")
                } else {
                    self.value(inner, value)
                }
            }
            (Shape::Result { ok, err }, Val::Result(outcome)) => {
                let (side, shape, payload) = match outcome {
                    Ok(payload) => ("ok", ok, payload),
                    Err(payload) => ("err", err, payload),
                };
                self.push(b"{")?;
                match (shape, payload) {
                    (Some(shape), Some(payload)) => self.member(side, shape, payload)?,
                    (None, None) => {
                        self.string(side)?;
                        self.push(b":null")?;
                    }
                    _ => return Err(self.wrong(shape.as_deref().unwrap_or(&Shape::Bool))),
                }
                self.push(b"}")
            }
            _ => Err(self.wrong(shape)),
        }
    }
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::super::shape::{IntKind, Part};
    use super::*;
    use serde_json::{Value, json};

    fn to_json(shape: &Shape, val: &Val) -> Result<Value, Unconvertible> {
        val_to_json_text(shape, val, usize::MAX).map(|text| serde_json::from_str(&text).unwrap())
    }

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
            Val::String("the \"quoted\"\n".into()),
            Val::U32(3),
        ])])))));
        assert_eq!(
            to_json(&shape, &ok).unwrap(),
            json!({ "ok": [["the \"quoted\"\n", 3]] })
        );
        let err = Val::Result(Err(Some(Box::new(Val::String("no".into())))));
        assert_eq!(to_json(&shape, &err).unwrap(), json!({ "err": "no" }));
        let record = Shape::Record {
            fields: vec![
                Part {
                    name: "word-count".into(),
                    shape: Shape::Integer(IntKind::S64),
                    docs: None,
                },
                Part {
                    name: "ratio".into(),
                    shape: Shape::Float { single: true },
                    docs: None,
                },
            ],
            docs: None,
        };
        let value = Val::Record(vec![
            ("word-count".into(), Val::S64(-4)),
            ("ratio".into(), Val::Float32(0.5)),
        ]);
        assert_eq!(
            to_json(&record, &value).unwrap(),
            json!({ "word_count": -4, "ratio": 0.5 })
        );
    }

    #[test]
    fn bytes_are_base64_and_nested_options_say_some() {
        assert_eq!(
            to_json(
                &Shape::Bytes,
                &Val::List(vec![Val::U8(b'h'), Val::U8(b'i')])
            )
            .unwrap(),
            json!("aGk=")
        );
        let nested = Shape::Option(Box::new(Shape::Option(Box::new(Shape::Bool))));
        let some_none = Val::Option(Some(Box::new(Val::Option(None))));
        assert_eq!(
            to_json(&nested, &some_none).unwrap(),
            json!({ "some": null })
        );
        let map = Shape::Map(Box::new(Shape::String), Box::new(Shape::Char));
        let entries = Val::Map(vec![(Val::String("a".into()), Val::Char('é'))]);
        assert_eq!(
            to_json(&map, &entries).unwrap(),
            json!([{ "key": "a", "value": "é" }])
        );
    }

    #[test]
    fn non_finite_floats_and_wrong_shapes_are_errors_naming_where() {
        let record = Shape::Record {
            fields: vec![Part {
                name: "area".into(),
                shape: Shape::List(Box::new(Shape::Float { single: false })),
                docs: None,
            }],
            docs: None,
        };
        let infinite = Val::Record(vec![(
            "area".into(),
            Val::List(vec![Val::Float64(1.0), Val::Float64(f64::INFINITY)]),
        )]);
        assert_eq!(
            to_json(&record, &infinite).unwrap_err(),
            Unconvertible::Shape(
                "/area/1: the component returned inf, which JSON cannot carry".into()
            )
        );
        assert!(to_json(&Shape::Bool, &Val::U8(1)).is_err());
    }

    #[test]
    fn a_value_past_the_limit_is_refused_part_way() {
        let shape = Shape::List(Box::new(Shape::String));
        let many = Val::List(vec![Val::String(String::new()); 100_000]);
        // `[` + 100,000 `""` + 99,999 commas + `]`.
        let exact = 2 + 100_000 * 2 + 99_999;
        assert_eq!(
            val_to_json_text(&shape, &many, exact - 1).unwrap_err(),
            Unconvertible::TooLarge
        );
        assert_eq!(val_to_json_text(&shape, &many, exact).unwrap().len(), exact);
        let long = Val::String("x".repeat(1_000));
        assert_eq!(
            val_to_json_text(&Shape::String, &long, 500).unwrap_err(),
            Unconvertible::TooLarge
        );
    }
}
