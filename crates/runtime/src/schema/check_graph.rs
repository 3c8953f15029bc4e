//! A schema read as a graph for the cost analysis (cost.rs): every subschema is a node; an edge
//! says that checking a value against one subschema also checks the same value, or one of its
//! children, against another. Local references (`#`, `#/json/pointer`, `#anchor`) become edges;
//! any other kind of reference is refused, naming it.

use serde_json::Value;
use std::collections::HashMap;

/// A subschema, by its index in the [`Graph`]'s lists.
pub(super) type Node = usize;

/// Which children of a value an applicator looks at: a named property (by its index among every
/// property name of the schema), properties matching a pattern (any, as far as this analysis
/// knows), the properties `properties` does not name (`additionalProperties`,
/// `unevaluatedProperties`), an array position of a `prefixItems` list, the items after that list
/// (`items`, `additionalItems`), every item (`contains`, `unevaluatedItems`), object keys, or
/// decoded content. As a label of a child, `AdditionalProperty` stands for a property no
/// `properties` names and `RestItem` for a position past every list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Child {
    Property(usize),
    PatternProperty,
    AdditionalProperty,
    Position(usize),
    RestItem,
    AnyItem,
    Key,
    Content,
}

#[derive(Default)]
pub(super) struct Graph {
    /// The JSON pointer of each subschema, for messages.
    pub(super) pointers: Vec<String>,
    /// Subschemas evaluated on the same value, with multiplicity.
    pub(super) same: Vec<Vec<Node>>,
    /// Subschemas evaluated on a child of the value.
    pub(super) children: Vec<Vec<(Child, Node)>>,
}

/// Reads a schema into a [`Graph`]: every subschema gets a node, then references are resolved.
pub(super) struct Builder<'a> {
    root: &'a Value,
    graph: Graph,
    /// Node of each subschema object, by its pointer.
    by_pointer: HashMap<String, Node>,
    /// `$anchor` names.
    anchors: HashMap<String, String>,
    /// References to resolve once every node exists: (from, reference text).
    references: Vec<(Node, String)>,
    /// Property names, numbered.
    properties: HashMap<String, usize>,
}

impl<'a> Builder<'a> {
    pub(super) fn new(root: &'a Value) -> Self {
        Self {
            root,
            graph: Graph::default(),
            by_pointer: HashMap::new(),
            anchors: HashMap::new(),
            references: Vec::new(),
            properties: HashMap::new(),
        }
    }

    fn node(&mut self, pointer: &str) -> Node {
        if let Some(node) = self.by_pointer.get(pointer) {
            return *node;
        }
        let node = self.graph.same.len();
        self.graph.pointers.push(pointer.to_string());
        self.graph.same.push(Vec::new());
        self.graph.children.push(Vec::new());
        self.by_pointer.insert(pointer.to_string(), node);
        node
    }

    /// Adds the subschema `value` at `pointer` and everything under it; returns its node.
    pub(super) fn add(
        &mut self,
        value: &Value,
        pointer: String,
        is_root: bool,
    ) -> Result<Node, String> {
        let node = self.node(&pointer);
        let Value::Object(schema) = value else {
            return Ok(node); // `true` / `false`
        };
        if !is_root && schema.contains_key("$id") {
            return Err(format!(
                "the subschema at {pointer} has its own $id; cordon follows only references within one schema document"
            ));
        }
        for keyword in ["$dynamicRef", "$recursiveRef"] {
            if schema.contains_key(keyword) {
                return Err(format!(
                    "the subschema at {} uses {keyword}; cordon follows only local $ref references",
                    pointer_or_root(&pointer)
                ));
            }
        }
        if let Some(Value::String(anchor)) = schema.get("$anchor") {
            self.anchors.insert(anchor.clone(), pointer.clone());
        }
        if let Some(Value::String(reference)) = schema.get("$ref") {
            self.references.push((node, reference.clone()));
        }
        for (keyword, sub) in schema {
            let here = format!("{pointer}/{}", escape(keyword));
            match (keyword.as_str(), sub) {
                ("allOf" | "anyOf" | "oneOf", Value::Array(list)) => {
                    for (i, item) in list.iter().enumerate() {
                        let child = self.add(item, format!("{here}/{i}"), false)?;
                        self.graph.same[node].push(child);
                    }
                }
                ("not" | "if" | "then" | "else", _) => {
                    let child = self.add(sub, here, false)?;
                    self.graph.same[node].push(child);
                }
                ("dependentSchemas" | "dependencies", Value::Object(map)) => {
                    for (name, item) in map {
                        if item.is_object() || item.is_boolean() {
                            let child =
                                self.add(item, format!("{here}/{}", escape(name)), false)?;
                            self.graph.same[node].push(child);
                        }
                    }
                }
                ("properties", Value::Object(map)) => {
                    for (name, item) in map {
                        let next = self.properties.len();
                        let index = *self.properties.entry(name.clone()).or_insert(next);
                        let child = self.add(item, format!("{here}/{}", escape(name)), false)?;
                        self.graph.children[node].push((Child::Property(index), child));
                    }
                }
                ("patternProperties", Value::Object(map)) => {
                    for (name, item) in map {
                        let child = self.add(item, format!("{here}/{}", escape(name)), false)?;
                        self.graph.children[node].push((Child::PatternProperty, child));
                    }
                }
                ("additionalProperties" | "unevaluatedProperties", _) => {
                    let child = self.add(sub, here, false)?;
                    self.graph.children[node].push((Child::AdditionalProperty, child));
                }
                ("propertyNames", _) => {
                    let child = self.add(sub, here, false)?;
                    self.graph.children[node].push((Child::Key, child));
                }
                ("contentSchema", _) => {
                    let child = self.add(sub, here, false)?;
                    self.graph.children[node].push((Child::Content, child));
                }
                ("prefixItems" | "items", Value::Array(list)) => {
                    for (i, item) in list.iter().enumerate() {
                        let child = self.add(item, format!("{here}/{i}"), false)?;
                        self.graph.children[node].push((Child::Position(i), child));
                    }
                }
                ("items" | "additionalItems", _) => {
                    let child = self.add(sub, here, false)?;
                    self.graph.children[node].push((Child::RestItem, child));
                }
                ("unevaluatedItems" | "contains", _) => {
                    let child = self.add(sub, here, false)?;
                    self.graph.children[node].push((Child::AnyItem, child));
                }
                ("$defs" | "definitions", Value::Object(map)) => {
                    for (name, item) in map {
                        self.add(item, format!("{here}/{}", escape(name)), false)?;
                    }
                }
                _ => {}
            }
        }
        Ok(node)
    }

    /// Resolves the references: each becomes a same-value edge.
    pub(super) fn finish(mut self) -> Result<Graph, String> {
        for (from, reference) in std::mem::take(&mut self.references) {
            let target = self.resolve(&reference).ok_or_else(|| {
                format!(
                    "the reference {reference:?} (at {}) does not name a subschema of this schema; cordon follows only local references (\"#\", \"#/$defs/name\", \"#anchor\")",
                    pointer_or_root(&self.graph.pointers[from])
                )
            })?;
            self.graph.same[from].push(target);
        }
        Ok(self.graph)
    }

    fn resolve(&mut self, reference: &str) -> Option<Node> {
        let fragment = reference.strip_prefix('#')?;
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            percent_decode(fragment)?
        } else {
            self.anchors.get(fragment)?.clone()
        };
        // The pointer must name an object or boolean of the schema that was read as a subschema,
        // or one that can be read as one now (a reference into, say, `properties/x/items`).
        if let Some(node) = self.by_pointer.get(&pointer) {
            return Some(*node);
        }
        let value = self.root.pointer(&pointer)?;
        if !(value.is_object() || value.is_boolean()) {
            return None;
        }
        self.add(value, pointer.clone(), false).ok()
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A subschema's pointer for messages ("the root" for the schema itself).
pub(super) fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}
