//! The doc comments of a plain component's functions, records, fields, variants, enums, flags and
//! their cases, laid over the shapes the host reads from wasmtime's types. They come from the WIT
//! the operator points to (`[plugins.ID] wit = "…"`: the WIT directory, file or package the
//! component was built from), or else from the component itself (decoded with wit-parser, which
//! reads a `package-docs` section when a toolchain embeds one; today's wit-bindgen,
//! componentize-py and componentize-js builds carry none). Without docs, a tool is described by
//! its signature.

use super::shape::{Part, Shape};
use super::tool_names::FunctionPath;
use std::collections::HashMap;
use std::path::Path;
use wit_parser::{Resolve, Type, TypeDefKind, WorldId, WorldItem};

/// The WIT behind a component's exports, when it could be decoded.
#[derive(Default)]
pub struct ComponentDocs {
    resolve: Option<Resolve>,
    /// Exported functions by [`FunctionPath::display`].
    functions: HashMap<String, wit_parser::Function>,
}

impl ComponentDocs {
    /// No docs at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// Decodes the WIT of the component in `bytes`; no docs when it cannot be decoded.
    pub fn read(bytes: &[u8]) -> Self {
        let decoded = std::panic::catch_unwind(|| wit_parser::decoding::decode(bytes));
        let Ok(Ok(wit_parser::decoding::DecodedWasm::Component(resolve, world))) = decoded else {
            return Self::none();
        };
        Self::from_worlds(resolve, &[world])
    }

    /// Reads the WIT at `path` (a directory with its `deps/`, a `.wit` file, or a WIT package
    /// encoded as `.wasm`): the functions every world in it exports.
    pub fn from_wit(path: &Path) -> Result<Self, String> {
        let mut resolve = Resolve::default();
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            resolve.push_path(path).map(|_| ())
        }));
        match parsed {
            Ok(Ok(())) => {}
            Ok(Err(err)) => return Err(format!("{err:#}")),
            Err(_) => return Err("the WIT parser failed on it".into()),
        }
        let worlds: Vec<WorldId> = resolve.worlds.iter().map(|(id, _)| id).collect();
        Ok(Self::from_worlds(resolve, &worlds))
    }

    /// The functions `worlds` export, by how a component names them; the first world to export a
    /// name wins.
    fn from_worlds(resolve: Resolve, worlds: &[WorldId]) -> Self {
        let mut functions = HashMap::new();
        for world in worlds {
            for (key, item) in &resolve.worlds[*world].exports {
                match item {
                    WorldItem::Function(function) => {
                        functions
                            .entry(function.name.clone())
                            .or_insert_with(|| function.clone());
                    }
                    WorldItem::Interface { id, .. } => {
                        let interface = resolve.name_world_key(key);
                        for (name, function) in &resolve.interfaces[*id].functions {
                            functions
                                .entry(format!("{interface}#{name}"))
                                .or_insert_with(|| function.clone());
                        }
                    }
                    WorldItem::Type { .. } => {}
                }
            }
        }
        Self {
            resolve: Some(resolve),
            functions,
        }
    }

    /// The function's own doc comment.
    pub fn function(&self, path: &FunctionPath) -> Option<&str> {
        let docs = self
            .functions
            .get(&path.display())?
            .docs
            .contents
            .as_deref()?;
        let docs = docs.trim();
        (!docs.is_empty()).then_some(docs)
    }

    /// Fills in the docs of the function's parameter and result shapes.
    pub fn lay_over(
        &self,
        path: &FunctionPath,
        params: &mut [(String, Shape)],
        result: Option<&mut Shape>,
    ) {
        let (Some(resolve), Some(function)) = (&self.resolve, self.functions.get(&path.display()))
        else {
            return;
        };
        for ((name, shape), param) in params.iter_mut().zip(&function.params) {
            if *name == param.name {
                overlay(resolve, shape, &param.ty, 0);
            }
        }
        if let (Some(shape), Some(ty)) = (result, &function.result) {
            overlay(resolve, shape, ty, 0);
        }
    }
}

fn overlay(resolve: &Resolve, shape: &mut Shape, ty: &Type, depth: usize) {
    let Type::Id(id) = ty else {
        return;
    };
    if depth > super::MAX_SHAPE_DEPTH {
        return;
    }
    let Some(def) = resolve.types.get(*id) else {
        return;
    };
    let type_docs = def
        .docs
        .contents
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let next = depth + 1;
    match (&def.kind, shape) {
        (TypeDefKind::Type(inner), shape) => overlay(resolve, shape, inner, next),
        (TypeDefKind::Record(record), Shape::Record { fields, docs }) => {
            set(docs, type_docs);
            for (part, field) in fields.iter_mut().zip(&record.fields) {
                if part.name == field.name {
                    set(&mut part.docs, field.docs.contents.as_deref());
                    overlay(resolve, &mut part.shape, &field.ty, next);
                }
            }
        }
        (TypeDefKind::Variant(variant), Shape::Variant { cases, docs }) => {
            set(docs, type_docs);
            for (part, case) in cases.iter_mut().zip(&variant.cases) {
                if part.name == case.name {
                    set(&mut part.docs, case.docs.contents.as_deref());
                    if let (Some(shape), Some(ty)) = (&mut part.shape, &case.ty) {
                        overlay(resolve, shape, ty, next);
                    }
                }
            }
        }
        (TypeDefKind::Enum(cases_of), Shape::Enum { cases, docs }) => {
            set(docs, type_docs);
            label_docs(cases, cases_of.cases.iter().map(|c| (&c.name, &c.docs)));
        }
        (TypeDefKind::Flags(flags_of), Shape::Flags { flags, docs }) => {
            set(docs, type_docs);
            label_docs(flags, flags_of.flags.iter().map(|f| (&f.name, &f.docs)));
        }
        (TypeDefKind::List(item_ty), Shape::List(item))
        | (TypeDefKind::FixedLengthList(item_ty, _), Shape::FixedList(item, _))
        | (TypeDefKind::Option(item_ty), Shape::Option(item)) => {
            overlay(resolve, item, item_ty, next)
        }
        (TypeDefKind::Map(key_ty, value_ty), Shape::Map(key, value)) => {
            overlay(resolve, key, key_ty, next);
            overlay(resolve, value, value_ty, next);
        }
        (TypeDefKind::Tuple(tuple), Shape::Tuple(items)) => {
            for (item, item_ty) in items.iter_mut().zip(&tuple.types) {
                overlay(resolve, item, item_ty, next);
            }
        }
        (TypeDefKind::Result(result), Shape::Result { ok, err }) => {
            if let (Some(shape), Some(ty)) = (ok, &result.ok) {
                overlay(resolve, shape, ty, next);
            }
            if let (Some(shape), Some(ty)) = (err, &result.err) {
                overlay(resolve, shape, ty, next);
            }
        }
        _ => {}
    }
}

fn label_docs<'a>(
    parts: &mut [Part<()>],
    docs: impl Iterator<Item = (&'a String, &'a wit_parser::Docs)>,
) {
    for (part, (name, doc)) in parts.iter_mut().zip(docs) {
        if part.name == *name {
            set(&mut part.docs, doc.contents.as_deref());
        }
    }
}

/// Sets a doc comment that is not set yet (an alias's own docs stay).
fn set(slot: &mut Option<String>, docs: Option<&str>) {
    if slot.is_none()
        && let Some(docs) = docs.map(str::trim).filter(|docs| !docs.is_empty())
    {
        *slot = Some(docs.to_string());
    }
}
