//! `cordon serve --tool-search`: for MCP clients that have no tool search of their own,
//! `tools/list` offers one tool, `search_tools`, whose result names the active tools that match a
//! query (the same search the agent loop uses, or a group of `[agent.groups]`) with their input
//! schemas; the client's model then calls them by name (every active tool stays callable). The
//! tool's contract is the runtime's (`cordon_runtime::tool_search`); this is its MCP
//! adapter.

use cordon_runtime::Pipeline;
use cordon_runtime::tool_search as search;
pub use cordon_runtime::tool_search::SEARCH_TOOL;
use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};
use std::sync::Arc;

/// The `search_tools` tool as listed.
pub fn tool(pipeline: &Pipeline) -> Tool {
    let Value::Object(schema) = search::input_schema(pipeline) else {
        unreachable!("the schema is an object")
    };
    let mut tool = Tool::new(
        SEARCH_TOOL,
        "Finds this server's tools for a task: their names, arguments, descriptions and input schemas. Call the tools it names directly.",
        Arc::new(schema),
    );
    tool.title = Some("Search tools".into());
    tool
}

/// The answer to a `search_tools` call with `arguments`.
pub fn answer(pipeline: &Pipeline, tools: &[Tool], arguments: Option<&Value>) -> CallToolResult {
    let request = match search::read_request(arguments.unwrap_or(&Value::Null)) {
        Ok(request) => request,
        Err(message) => return CallToolResult::error(vec![ContentBlock::text(message)]),
    };
    let found: Vec<String> = search::find(pipeline, &request.query, request.limit)
        .into_iter()
        .filter(|name| tools.iter().any(|tool| tool.name == *name))
        .collect();
    let text = if found.is_empty() {
        search::no_match(&request.query)
    } else {
        format!(
            "Found {} tool(s); call them by name:{}",
            found.len(),
            search::listing(pipeline, &found)
        )
    };
    let structured = json!({
        "tools": found
            .iter()
            .filter_map(|name| tools.iter().find(|tool| tool.name == *name))
            .map(|tool| json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema.as_ref(),
            }))
            .collect::<Vec<_>>(),
    });
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}
