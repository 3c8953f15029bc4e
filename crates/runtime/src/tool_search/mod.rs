//! Tool search, a layer over the pipeline: the `search_tools` tool's contract, one for the agent
//! loop and for `cordon serve --tool-search` (its name, its input schema, how a query is read, what
//! a search finds, and the listing of what it found), over a lexical index of the active tools
//! (`index.rs`). Each side keeps only its adapter: the agent loads what a search found into the
//! session, the MCP server answers a `tools/call` with it.

mod index;

use crate::pipeline::Pipeline;
use serde_json::{Value, json};

/// The tool a model searches with.
pub const SEARCH_TOOL: &str = "search_tools";
/// Tools one search finds unless the caller asks for fewer (or names a whole group).
pub const DEFAULT_RESULTS: usize = 5;
/// The most tools one search finds.
pub const MAX_RESULTS: usize = 10;
/// The longest query read.
pub const MAX_QUERY_BYTES: usize = 512;

/// `search_tools`' input schema: a query (a few words, or a group's name, naming the groups
/// there are) and an optional limit.
pub fn input_schema(pipeline: &Pipeline) -> Value {
    let groups: Vec<&str> = pipeline.groups().keys().map(String::as_str).collect();
    let mut query =
        String::from("What the tool should do, in a few words (e.g. \"resize an image\")");
    if !groups.is_empty() {
        query.push_str(&format!(", or a group's name: {}", groups.join(", ")));
    }
    query.push('.');
    json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "description": query },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_RESULTS,
                "description": format!("How many tools at most (default {DEFAULT_RESULTS})."),
            },
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

/// One search, as its caller asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The query, trimmed.
    pub query: String,
    /// How many tools at most, within `1..=MAX_RESULTS`.
    pub limit: usize,
}

/// Reads a search's arguments; the error is the text its caller reads.
pub fn read_request(arguments: &Value) -> Result<SearchRequest, String> {
    let Value::Object(arguments) = arguments else {
        return Err(format!(
            "{SEARCH_TOOL} takes a JSON object: {{\"query\": \"what the tool should do\"}}"
        ));
    };
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim();
    if query.is_empty() || query.len() > MAX_QUERY_BYTES {
        return Err(format!(
            "give \"query\": a few words (at most {MAX_QUERY_BYTES} bytes) saying what the tool should do, or a group's name"
        ));
    }
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_RESULTS, |n| {
            usize::try_from(n)
                .unwrap_or(MAX_RESULTS)
                .clamp(1, MAX_RESULTS)
        });
    Ok(SearchRequest {
        query: query.to_string(),
        limit,
    })
}

/// The active tools a search finds, best first (a group's tools, when the query names one):
/// never `search_tools` itself, which is the searcher's own while it searches.
pub fn find(pipeline: &Pipeline, query: &str, limit: usize) -> Vec<String> {
    search_active_tools(pipeline, query, limit)
        .into_iter()
        .filter(|tool| tool != SEARCH_TOOL)
        .collect()
}

/// The active tools that best match `query` (their names, titles, descriptions and parameter
/// names; BM25), best first, at most `limit`; or, when `query` is a group's name, the group's
/// active tools.
fn search_active_tools(pipeline: &Pipeline, query: &str, limit: usize) -> Vec<String> {
    if let Some(group) = pipeline.group_tools(query.trim()) {
        return group;
    }
    let index = index::ToolIndex::new(pipeline.active_tools().map(|(_, tool)| {
        index::Entry {
            name: &tool.name,
            title: &tool.title,
            description: &tool.description,
            parameters: tool
                .schema
                .as_json()
                .get("properties")
                .and_then(Value::as_object)
                .map(|properties| properties.keys().map(String::as_str).collect())
                .unwrap_or_default(),
        }
    }));
    index
        .search(query, limit)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// What the caller reads when a search finds nothing.
pub fn no_match(query: &str) -> String {
    format!("No tool matches {query:?}. Try other words: what the tool acts on and what it does.")
}

/// A line per tool of `names`: its name, its arguments (optional ones marked `?`) and the first
/// line of its description, as `\n- name(a, b?): summary`.
pub fn listing(pipeline: &Pipeline, names: &[String]) -> String {
    let mut text = String::new();
    for name in names {
        let Some((_, tool)) = pipeline.registry().tool(name) else {
            continue;
        };
        let summary = tool.description.lines().next().unwrap_or("").trim();
        let schema = tool.schema.as_json();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let arguments: Vec<String> = schema["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(name, _)| {
                if required.contains(&name.as_str()) {
                    name.clone()
                } else {
                    format!("{name}?")
                }
            })
            .collect();
        text.push_str(&format!("\n- {name}({}): {summary}", arguments.join(", ")));
    }
    text
}
