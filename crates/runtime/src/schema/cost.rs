//! How much work checking arguments against a plugin's schema can take, decided from the schema
//! alone before it is used. A schema is the plugin's, so it is untrusted: `allOf: [{$ref: n},
//! {$ref: n}]` inside `items` of `n` checks a value nested `d` deep 2^d times, and a chain of
//! definitions each applying the next one twice does the same without any recursion. Validators
//! evaluate such schemas faithfully (and cannot be interrupted), so cordon refuses them at load.
//!
//! The schema is read as a graph of subschemas. Some applicators evaluate their subschemas on the
//! same value (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`, `$ref`);
//! the others on a child of it (`properties`, `patternProperties`, `additionalProperties`, `items`,
//! `prefixItems`, `contains`, `unevaluated*`, `propertyNames`, `contentSchema`). From the root, the
//! analysis counts how many subschemas are evaluated on one value at each nesting depth up to
//! [`MAX_ARGUMENT_DEPTH`], assuming the worst child each time (every pattern property matching, a
//! property present in every `properties`), and refuses the schema when that count passes
//! [`MAX_EVALUATIONS_PER_VALUE`]. Arguments nested deeper than [`MAX_ARGUMENT_DEPTH`] are refused
//! when a call is checked, so the bound holds for every call: the work of a check is at most the
//! number of values in the arguments times that count.
//!
//! Only local references are followed (`#`, `#/json/pointer`, `#anchor`); a schema with another
//! kind (`$dynamicRef`, a remote document, a nested `$id`) is refused, naming it.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// The deepest nesting of arguments a call may have.
pub const MAX_ARGUMENT_DEPTH: usize = 64;
/// The most subschemas one value of the arguments may be checked against.
pub const MAX_EVALUATIONS_PER_VALUE: f64 = 2_000.0;

/// A subschema, by its index in [`Graph::nodes`].
type Node = usize;

/// Which children of a value an applicator looks at: a named property (by its index among every
/// property name of the schema), properties matching a pattern (any, as far as this analysis
/// knows), the properties `properties` does not name (`additionalProperties`,
/// `unevaluatedProperties`), an array position of a `prefixItems` list, the items after that list
/// (`items`, `additionalItems`), every item (`contains`, `unevaluatedItems`), object keys, or
/// decoded content. As a label of a child, `AdditionalProperty` stands for a property no
/// `properties` names and `RestItem` for a position past every list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Child {
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
struct Graph {
    /// The JSON pointer of each subschema, for messages.
    pointers: Vec<String>,
    /// Subschemas evaluated on the same value, with multiplicity.
    same: Vec<Vec<Node>>,
    /// Subschemas evaluated on a child of the value.
    children: Vec<Vec<(Child, Node)>>,
}

/// The subschemas applied to one value, with how many times each (sorted by node).
type State = Vec<(Node, u64)>;

/// Distinct sets of subschemas the analysis follows before it gives up on a schema as too
/// intricate to bound.
const MAX_STATES: usize = 20_000;

/// The most subschemas one value of any call's arguments is checked against (at least 1), or why
/// the schema is refused.
pub fn check(schema: &Value) -> Result<f64, String> {
    let mut builder = Builder::new(schema);
    builder.add(schema, String::new(), true)?;
    let graph = builder.finish()?;
    let cost = same_value_cost(&graph)?;
    let labels = child_labels(&graph);
    let closures: Vec<Vec<(Node, u64)>> = (0..graph.same.len())
        .map(|node| closure(&graph, node))
        .collect();
    let mut frontier: Vec<State> = vec![vec![(0, 1)]];
    let mut seen: std::collections::HashSet<State> = frontier.iter().cloned().collect();
    let mut most = 1.0f64;
    for depth in 0..=MAX_ARGUMENT_DEPTH {
        for state in &frontier {
            let evaluations: f64 = state
                .iter()
                .map(|(node, count)| *count as f64 * cost[*node])
                .sum();
            most = most.max(evaluations);
            if evaluations > MAX_EVALUATIONS_PER_VALUE {
                let worst = state
                    .iter()
                    .max_by(|a, b| (a.1 as f64 * cost[a.0]).total_cmp(&(b.1 as f64 * cost[b.0])))
                    .map(|(node, _)| graph.pointers[*node].as_str())
                    .unwrap_or_default();
                return Err(format!(
                    "checking a value nested {depth} levels deep would evaluate {} subschemas (the most is {MAX_EVALUATIONS_PER_VALUE}); the subschema at {} is applied to one value many times over, through allOf/anyOf/oneOf or references; restructure the schema so each value is checked against each subschema once",
                    format_count(evaluations),
                    pointer_or_root(worst)
                ));
            }
        }
        let mut next = Vec::new();
        for state in &frontier {
            for label in &labels {
                let child = step(&graph, &closures, state, *label);
                if !child.is_empty() && seen.insert(child.clone()) {
                    next.push(child);
                }
            }
        }
        if seen.len() > MAX_STATES {
            return Err(format!(
                "its subschemas combine in more than {MAX_STATES} ways over nested values; simplify it"
            ));
        }
        if next.is_empty() {
            return Ok(most);
        }
        frontier = next;
    }
    Ok(most)
}

/// The subschemas applied to the child `label` of a value that `state` applies to.
fn step(graph: &Graph, closures: &[Vec<(Node, u64)>], state: &State, label: Child) -> State {
    let mut counts: std::collections::BTreeMap<Node, u64> = std::collections::BTreeMap::new();
    for (node, count) in state {
        for (reached, times) in &closures[*node] {
            let (reached, times) = (*reached, *times);
            for target in targets(graph, reached, label) {
                let entry = counts.entry(target).or_default();
                *entry = entry.saturating_add(count.saturating_mul(times));
            }
        }
    }
    counts.into_iter().collect()
}

/// How deep `value` nests (a scalar is 0).
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, level)) = stack.pop() {
        deepest = deepest.max(level);
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, level + 1))),
            Value::Object(fields) => stack.extend(fields.values().map(|item| (item, level + 1))),
            _ => {}
        }
    }
    deepest
}

fn format_count(count: f64) -> String {
    if count > 1e12 {
        format!("{count:.1e}")
    } else {
        format!("{count:.0}")
    }
}

/// The subschemas `node` applies to the child `label` of a value, at worst.
fn targets(graph: &Graph, node: Node, label: Child) -> Vec<Node> {
    let edges = &graph.children[node];
    let has = |wanted: Child| edges.iter().any(|(child, _)| *child == wanted);
    edges
        .iter()
        .filter(|(child, _)| match (label, *child) {
            (Child::Property(a), Child::Property(b)) => a == b,
            (Child::Property(_) | Child::AdditionalProperty, Child::PatternProperty) => true,
            (Child::Property(_), Child::AdditionalProperty) => !has(label),
            (Child::AdditionalProperty, Child::AdditionalProperty) => true,
            (Child::Position(a), Child::Position(b)) => a == b,
            (Child::Position(_), Child::RestItem) => !has(label),
            (Child::Position(_) | Child::RestItem, Child::AnyItem) => true,
            (Child::RestItem, Child::RestItem) => true,
            (a, b) => a == b && matches!(a, Child::Key | Child::Content),
        })
        .map(|(_, target)| *target)
        .collect()
}

/// Every child label the schema distinguishes.
fn child_labels(graph: &Graph) -> Vec<Child> {
    let mut labels: BTreeSet<Child> = graph
        .children
        .iter()
        .flatten()
        .map(|(child, _)| *child)
        .filter(|child| !matches!(child, Child::PatternProperty | Child::AnyItem))
        .collect();
    labels.extend([Child::AdditionalProperty, Child::RestItem]);
    labels.into_iter().collect()
}

/// Subschemas evaluated on one value when `start` is, with how many times each.
fn closure(graph: &Graph, start: Node) -> Vec<(Node, u64)> {
    let mut counts: HashMap<Node, u64> = HashMap::new();
    let mut stack = vec![(start, 1u64)];
    while let Some((node, times)) = stack.pop() {
        let entry = counts.entry(node).or_default();
        *entry = entry.saturating_add(times);
        if counts.len() > 100_000 {
            break;
        }
        stack.extend(graph.same[node].iter().map(|next| (*next, times)));
    }
    counts.into_iter().collect()
}

/// For each subschema, how many subschemas one value is checked against when it is (itself
/// included); refuses a loop of same-value applicators and a count past the maximum.
fn same_value_cost(graph: &Graph) -> Result<Vec<f64>, String> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let n = graph.same.len();
    let mut cost = vec![0.0; n];
    let mut mark = vec![Mark::New; n];
    for root in 0..n {
        if mark[root] != Mark::New {
            continue;
        }
        // Iterative depth-first search, children before parents.
        let mut stack = vec![(root, 0usize)];
        mark[root] = Mark::Open;
        while let Some((node, next)) = stack.pop() {
            if next < graph.same[node].len() {
                stack.push((node, next + 1));
                let child = graph.same[node][next];
                match mark[child] {
                    Mark::Open => {
                        return Err(format!(
                            "the subschema at {} applies itself to the same value again (through references or allOf/anyOf/oneOf), a loop that never ends",
                            pointer_or_root(&graph.pointers[child])
                        ));
                    }
                    Mark::New => {
                        mark[child] = Mark::Open;
                        stack.push((child, 0));
                    }
                    Mark::Done => {}
                }
            } else {
                cost[node] = 1.0 + graph.same[node].iter().map(|c| cost[*c]).sum::<f64>();
                if cost[node] > MAX_EVALUATIONS_PER_VALUE {
                    return Err(format!(
                        "checking one value against the subschema at {} evaluates {} subschemas (the most is {MAX_EVALUATIONS_PER_VALUE}) through allOf/anyOf/oneOf and references",
                        pointer_or_root(&graph.pointers[node]),
                        format_count(cost[node])
                    ));
                }
                mark[node] = Mark::Done;
            }
        }
    }
    Ok(cost)
}

fn pointer_or_root(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the root"
    } else {
        pointer
    }
}

/// Reads a schema into a [`Graph`]: every subschema gets a node, then references are resolved.
struct Builder<'a> {
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
    fn new(root: &'a Value) -> Self {
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
    fn add(&mut self, value: &Value, pointer: String, is_root: bool) -> Result<Node, String> {
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
    fn finish(mut self) -> Result<Graph, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ordinary_and_recursive_tree_schemas_pass() {
        let ordinary = json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "limit": { "type": "integer", "minimum": 1 },
                "mode": { "anyOf": [{ "const": "a" }, { "const": "b" }] },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["path"],
            "additionalProperties": false
        });
        assert_eq!(check(&ordinary).map(|_| ()), Ok(()));
        let open_tree = json!({
            "type": "object",
            "properties": { "a": { "$ref": "#" } },
            "additionalProperties": { "$ref": "#" }
        });
        assert_eq!(
            check(&open_tree).map(|_| ()),
            Ok(()),
            "additionalProperties skips named properties"
        );
        let tree = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/node" } },
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "left": { "$ref": "#/$defs/node" },
                        "right": { "$ref": "#/$defs/node" },
                        "children": { "type": "array", "items": { "$ref": "#/$defs/node" } }
                    }
                }
            }
        });
        assert_eq!(
            check(&tree).map(|_| ()),
            Ok(()),
            "a binary tree checks each value once"
        );
    }

    #[test]
    fn exponential_schemas_are_refused() {
        let doubling_by_depth = json!({
            "type": "object",
            "properties": { "x": { "$ref": "#/$defs/n" } },
            "$defs": { "n": { "items": { "allOf": [{ "$ref": "#/$defs/n" }, { "$ref": "#/$defs/n" }] } } }
        });
        let err = check(&doubling_by_depth).unwrap_err();
        assert!(err.contains("nested"), "{err}");
        let mut defs = serde_json::Map::new();
        for i in 0..20 {
            defs.insert(
                format!("d{i}"),
                json!({ "allOf": [{ "$ref": format!("#/$defs/d{}", i + 1) }, { "$ref": format!("#/$defs/d{}", i + 1) }] }),
            );
        }
        defs.insert("d20".into(), json!({ "type": "string" }));
        let doubling_chain = json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/d0" } }, "$defs": defs });
        let err = check(&doubling_chain).unwrap_err();
        assert!(err.contains("evaluates"), "{err}");
        let looping = json!({ "type": "object", "$defs": { "a": { "allOf": [{ "$ref": "#/$defs/a" }] } }, "properties": { "x": { "$ref": "#/$defs/a" } } });
        assert!(check(&looping).unwrap_err().contains("loop"));
    }

    #[test]
    fn only_local_references_are_followed() {
        for (schema, words) in [
            (
                json!({ "type": "object", "properties": { "x": { "$ref": "https://example.com/s.json" } } }),
                "local references",
            ),
            (
                json!({ "type": "object", "properties": { "x": { "$ref": "#/$defs/missing" } } }),
                "does not name",
            ),
            (
                json!({ "type": "object", "properties": { "x": { "$dynamicRef": "#meta" } } }),
                "$dynamicRef",
            ),
            (
                json!({ "type": "object", "properties": { "x": { "$id": "other", "type": "string" } } }),
                "$id",
            ),
        ] {
            let err = check(&schema).unwrap_err();
            assert!(err.contains(words), "{schema}: {err}");
        }
        let anchored = json!({ "type": "object", "properties": { "x": { "$ref": "#thing" } }, "$defs": { "t": { "$anchor": "thing", "type": "string" } } });
        assert_eq!(check(&anchored).map(|_| ()), Ok(()));
    }

    #[test]
    fn depth_counts_nesting() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!({ "a": [1, [2]] })), 3);
    }
}
