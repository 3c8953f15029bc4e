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

use super::check_graph::{Builder, Child, Graph, Node, pointer_or_root};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// The deepest nesting of arguments a call may have.
pub const MAX_ARGUMENT_DEPTH: usize = 64;
/// The most subschemas one value of the arguments may be checked against.
pub const MAX_EVALUATIONS_PER_VALUE: f64 = 2_000.0;

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
