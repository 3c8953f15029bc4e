//! `cordon serve --tool-search`: for MCP clients that have no tool search of their own,
//! `tools/list` offers one tool, `search_tools`, whose result names the active tools that match a
//! query (the same lexical search the agent loop uses, or a group of `[agent.groups]`) with their
//! input schemas; the client's model then calls them by name (every active tool stays callable).

use cordon_runtime::Pipeline;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};
use std::sync::Arc;

pub const SEARCH_TOOL: &str = "search_tools";
const DEFAULT_RESULTS: usize = 5;
const MAX_RESULTS: usize = 10;
const MAX_QUERY_BYTES: usize = 512;

/// The `search_tools` tool as listed.
pub fn tool(pipeline: &Pipeline) -> Tool {
    let groups: Vec<&str> = pipeline.groups().keys().map(String::as_str).collect();
    let mut query =
        String::from("What the tool should do, in a few words (e.g. \"resize an image\")");
    if !groups.is_empty() {
        query.push_str(&format!(", or a group's name: {}", groups.join(", ")));
    }
    let schema = json!({
        "type": "object",
        "properties": {
            "query": { "type": "string", "description": query },
            "limit": { "type": "integer", "minimum": 1, "maximum": MAX_RESULTS },
        },
        "required": ["query"],
        "additionalProperties": false,
    });
    let Value::Object(schema) = schema else {
        unreachable!("an object literal")
    };
    let mut tool = Tool::new(
        SEARCH_TOOL,
        "Finds this server's tools for a task: their names, descriptions and input schemas. Call the tools it names directly.",
        Arc::new(schema),
    );
    tool.title = Some("Search tools".into());
    tool
}

/// The answer to a `search_tools` call with `arguments`.
pub fn answer(pipeline: &Pipeline, tools: &[Tool], arguments: Option<&Value>) -> CallToolResult {
    let query = arguments
        .and_then(|a| a.get("query"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim();
    if query.is_empty() || query.len() > MAX_QUERY_BYTES {
        return CallToolResult::error(vec![ContentBlock::text(format!(
            "give \"query\": a few words (at most {MAX_QUERY_BYTES} bytes) saying what the tool should do"
        ))]);
    }
    let limit = arguments
        .and_then(|a| a.get("limit"))
        .and_then(Value::as_u64)
        .map_or(DEFAULT_RESULTS, |n| (n as usize).clamp(1, MAX_RESULTS));
    let found: Vec<&Tool> = pipeline
        .search_tools(query, limit)
        .iter()
        .filter_map(|name| tools.iter().find(|tool| tool.name == *name))
        .collect();
    let text = if found.is_empty() {
        format!(
            "No tool matches {query:?}. Try other words: what the tool acts on and what it does."
        )
    } else {
        let lines: Vec<String> = found
            .iter()
            .map(|tool| {
                let description = tool.description.as_deref().unwrap_or("");
                format!(
                    "- {}: {}",
                    tool.name,
                    description.lines().next().unwrap_or("")
                )
            })
            .collect();
        format!(
            "Found {} tool(s); call them by name:\n{}",
            found.len(),
            lines.join("\n")
        )
    };
    let structured = json!({
        "tools": found.iter().map(|tool| json!({
            "name": tool.name,
            "description": tool.description,
            "inputSchema": tool.input_schema.as_ref(),
        })).collect::<Vec<_>>(),
    });
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}
