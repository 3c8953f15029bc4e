//! The shape of a WIT value as the host carries it to and from JSON, read once at load from the
//! component's own types (wasmtime's view of its exports). What JSON cannot carry (resources and
//! their handles, streams, futures, error contexts) is refused here, naming where it was found.

use wasmtime::component::types::Type;

/// How deep WIT types may nest before a component is refused (real interfaces stay far below).
pub const MAX_SHAPE_DEPTH: usize = 32;

/// A WIT integer type and the range its values take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntKind {
    S8,
    U8,
    S16,
    U16,
    S32,
    U32,
    S64,
    U64,
}

impl IntKind {
    pub fn range(self) -> (i128, i128) {
        match self {
            Self::S8 => (i8::MIN.into(), i8::MAX.into()),
            Self::U8 => (0, u8::MAX.into()),
            Self::S16 => (i16::MIN.into(), i16::MAX.into()),
            Self::U16 => (0, u16::MAX.into()),
            Self::S32 => (i32::MIN.into(), i32::MAX.into()),
            Self::U32 => (0, u32::MAX.into()),
            Self::S64 => (i64::MIN.into(), i64::MAX.into()),
            Self::U64 => (0, u64::MAX.into()),
        }
    }

    pub fn wit_name(self) -> &'static str {
        match self {
            Self::S8 => "s8",
            Self::U8 => "u8",
            Self::S16 => "s16",
            Self::U16 => "u16",
            Self::S32 => "s32",
            Self::U32 => "u32",
            Self::S64 => "s64",
            Self::U64 => "u64",
        }
    }
}

/// A named part of a type (a record field, a variant case, an enum case, a flag), with the doc
/// comment the component carries for it, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Part<T> {
    pub name: String,
    pub shape: T,
    pub docs: Option<String>,
}

/// A WIT value's shape. Records, variants, enums and flags carry their type's doc comment.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Bool,
    Integer(IntKind),
    /// `f32` (true) or `f64`.
    Float {
        single: bool,
    },
    Char,
    String,
    /// `list<u8>`, carried as base64 text.
    Bytes,
    List(Box<Shape>),
    FixedList(Box<Shape>, u32),
    /// `map<K, V>`, carried as a list of `{key, value}` objects.
    Map(Box<Shape>, Box<Shape>),
    Record {
        fields: Vec<Part<Shape>>,
        docs: Option<String>,
    },
    Tuple(Vec<Shape>),
    Variant {
        cases: Vec<Part<Option<Shape>>>,
        docs: Option<String>,
    },
    Enum {
        cases: Vec<Part<()>>,
        docs: Option<String>,
    },
    Flags {
        flags: Vec<Part<()>>,
        docs: Option<String>,
    },
    Option(Box<Shape>),
    Result {
        ok: Option<Box<Shape>>,
        err: Option<Box<Shape>>,
    },
}

impl Shape {
    /// Whether `null` is one of this shape's JSON values (so an `option` of it needs another form).
    pub fn admits_null(&self) -> bool {
        matches!(self, Self::Option(_))
    }

    /// The type as WIT writes it, for signatures in descriptions and errors.
    pub fn wit(&self) -> String {
        match self {
            Self::Bool => "bool".into(),
            Self::Integer(kind) => kind.wit_name().into(),
            Self::Float { single: true } => "f32".into(),
            Self::Float { single: false } => "f64".into(),
            Self::Char => "char".into(),
            Self::String => "string".into(),
            Self::Bytes => "list<u8>".into(),
            Self::List(item) => format!("list<{}>", item.wit()),
            Self::FixedList(item, len) => format!("list<{}, {len}>", item.wit()),
            Self::Map(key, value) => format!("map<{}, {}>", key.wit(), value.wit()),
            Self::Record { fields, .. } => {
                let fields: Vec<String> = fields
                    .iter()
                    .map(|field| format!("{}: {}", field.name, field.shape.wit()))
                    .collect();
                format!("record {{ {} }}", fields.join(", "))
            }
            Self::Tuple(items) => {
                let items: Vec<String> = items.iter().map(Shape::wit).collect();
                format!("tuple<{}>", items.join(", "))
            }
            Self::Variant { cases, .. } => {
                let cases: Vec<String> = cases
                    .iter()
                    .map(|case| match &case.shape {
                        Some(payload) => format!("{}({})", case.name, payload.wit()),
                        None => case.name.clone(),
                    })
                    .collect();
                format!("variant {{ {} }}", cases.join(", "))
            }
            Self::Enum { cases, .. } => format!("enum {{ {} }}", names(cases)),
            Self::Flags { flags, .. } => format!("flags {{ {} }}", names(flags)),
            Self::Option(inner) => format!("option<{}>", inner.wit()),
            Self::Result { ok, err } => {
                let side = |part: &Option<Box<Shape>>| {
                    part.as_ref()
                        .map_or_else(|| "_".to_string(), |shape| shape.wit())
                };
                match (ok, err) {
                    (None, None) => "result".into(),
                    (ok, err) => format!("result<{}, {}>", side(ok), side(err)),
                }
            }
        }
    }
}

/// How a WIT name (kebab case: `max-words`) is written in JSON: in snake case (`max_words`), as
/// JSON APIs and models expect. WIT names never hold `_`, so this is one to one.
pub fn json_name(wit: &str) -> String {
    wit.replace('-', "_")
}

fn names(parts: &[Part<()>]) -> String {
    parts
        .iter()
        .map(|part| part.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What [`Unsupported::what`] says when the types ran past their [`ShapeBudget`].
pub const TOO_LARGE: &str =
    "types too large to describe (their JSON Schemas would pass what one plugin may declare)";

/// Why a type cannot be carried as JSON: where in the function's signature, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// Where the type sits, e.g. `parameter "file"` or `result, ok`.
    pub at: String,
    pub what: String,
}

/// How much of its types a component's functions may have read, in all: an estimate of the bytes
/// their JSON Schemas will take, charged as each part is read. WIT types are a DAG (a type may
/// use another many times), so a small component can name a type whose tree is enormous: the
/// budget stops the reading part-way, before the tree (and the schema made from it) is built.
#[derive(Debug)]
pub struct ShapeBudget {
    left: usize,
}

/// What one node of a type is charged (its place in a schema: `{"type":...}` and a comma).
const NODE_WEIGHT: usize = 24;
/// What a named part is charged besides its name.
const PART_WEIGHT: usize = 16;

impl ShapeBudget {
    pub fn new(bytes: usize) -> Self {
        Self { left: bytes }
    }

    pub fn is_spent(&self) -> bool {
        self.left == 0
    }

    fn charge(&mut self, weight: usize) -> bool {
        match self.left.checked_sub(weight) {
            Some(left) => {
                self.left = left;
                true
            }
            None => {
                self.left = 0;
                false
            }
        }
    }
}

/// Reads the shape of `ty`, which sits `at` in a signature (for errors), within `budget`.
pub fn shape_of(ty: &Type, at: &str, budget: &mut ShapeBudget) -> Result<Shape, Unsupported> {
    read(ty, at, 0, budget)
}

fn read(ty: &Type, at: &str, depth: usize, budget: &mut ShapeBudget) -> Result<Shape, Unsupported> {
    let unsupported = |what: &str| {
        Err(Unsupported {
            at: at.to_string(),
            what: what.to_string(),
        })
    };
    if depth > MAX_SHAPE_DEPTH {
        return unsupported(&format!(
            "a type nested more than {MAX_SHAPE_DEPTH} levels deep"
        ));
    }
    let names: usize = match ty {
        Type::Record(record) => record.fields().map(|f| f.name.len() + PART_WEIGHT).sum(),
        Type::Variant(variant) => variant.cases().map(|c| c.name.len() + PART_WEIGHT).sum(),
        Type::Enum(cases) => cases.names().map(|name| name.len() + PART_WEIGHT).sum(),
        Type::Flags(flags) => flags.names().map(|name| name.len() + PART_WEIGHT).sum(),
        _ => 0,
    };
    if !budget.charge(NODE_WEIGHT + names) {
        return unsupported(TOO_LARGE);
    }
    let mut nested =
        |ty: &Type, part: &str| read(ty, &format!("{at}, {part}"), depth + 1, &mut *budget);
    Ok(match ty {
        Type::Bool => Shape::Bool,
        Type::S8 => Shape::Integer(IntKind::S8),
        Type::U8 => Shape::Integer(IntKind::U8),
        Type::S16 => Shape::Integer(IntKind::S16),
        Type::U16 => Shape::Integer(IntKind::U16),
        Type::S32 => Shape::Integer(IntKind::S32),
        Type::U32 => Shape::Integer(IntKind::U32),
        Type::S64 => Shape::Integer(IntKind::S64),
        Type::U64 => Shape::Integer(IntKind::U64),
        Type::Float32 => Shape::Float { single: true },
        Type::Float64 => Shape::Float { single: false },
        Type::Char => Shape::Char,
        Type::String => Shape::String,
        Type::List(list) => match list.ty() {
            Type::U8 => Shape::Bytes,
            item => Shape::List(Box::new(nested(&item, "list item")?)),
        },
        Type::FixedLengthList(list) => {
            Shape::FixedList(Box::new(nested(&list.ty(), "list item")?), list.len())
        }
        Type::Map(map) => Shape::Map(
            Box::new(nested(&map.key(), "map key")?),
            Box::new(nested(&map.value(), "map value")?),
        ),
        Type::Record(record) => Shape::Record {
            fields: record
                .fields()
                .map(|field| {
                    Ok(Part {
                        name: field.name.to_string(),
                        shape: nested(&field.ty, &format!("field {:?}", field.name))?,
                        docs: None,
                    })
                })
                .collect::<Result<_, _>>()?,
            docs: None,
        },
        Type::Tuple(tuple) => Shape::Tuple(
            tuple
                .types()
                .enumerate()
                .map(|(index, item)| nested(&item, &format!("tuple item {index}")))
                .collect::<Result<_, _>>()?,
        ),
        Type::Variant(variant) => Shape::Variant {
            cases: variant
                .cases()
                .map(|case| {
                    Ok(Part {
                        name: case.name.to_string(),
                        shape: match &case.ty {
                            Some(payload) => {
                                Some(nested(payload, &format!("case {:?}", case.name))?)
                            }
                            None => None,
                        },
                        docs: None,
                    })
                })
                .collect::<Result<_, _>>()?,
            docs: None,
        },
        Type::Enum(cases) => Shape::Enum {
            cases: labels(cases.names()),
            docs: None,
        },
        Type::Flags(flags) => Shape::Flags {
            flags: labels(flags.names()),
            docs: None,
        },
        Type::Option(option) => Shape::Option(Box::new(nested(&option.ty(), "option")?)),
        Type::Result(result) => Shape::Result {
            ok: match result.ok() {
                Some(ok) => Some(Box::new(nested(&ok, "ok")?)),
                None => None,
            },
            err: match result.err() {
                Some(err) => Some(Box::new(nested(&err, "err")?)),
                None => None,
            },
        },
        Type::Own(_) => return unsupported("an owned resource handle (own<…>)"),
        Type::Borrow(_) => return unsupported("a borrowed resource handle (borrow<…>)"),
        Type::Future(_) => return unsupported("a future"),
        Type::Stream(_) => return unsupported("a stream"),
        Type::ErrorContext => return unsupported("an error-context"),
    })
}

fn labels<'a>(names: impl Iterator<Item = &'a str>) -> Vec<Part<()>> {
    names
        .map(|name| Part {
            name: name.to_string(),
            shape: (),
            docs: None,
        })
        .collect()
}
