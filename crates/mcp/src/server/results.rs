//! Cordon's tools and results in MCP's shapes: a tool's title, annotations and output schema as
//! declared (contract 0.2); a result's text is what the model reads, its structured output goes in
//! `structuredContent`, and the error kind and the tool's details go in `_meta`.

use base64::Engine as _;
use cordon_runtime::ToolInfo;
use cordon_runtime::report::{Content, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;
use std::sync::Arc;

/// `_meta` key carrying the error kind (`not_found`, `trap`, ...) of a failed call.
pub const META_ERROR_KIND: &str = "cordon/errorKind";
/// `_meta` key carrying the tool's details object.
pub const META_DETAILS: &str = "cordon/details";

pub fn tool(info: &ToolInfo) -> Tool {
    let schema: JsonObject = match info.schema.as_json() {
        Value::Object(object) => object.clone(),
        _ => JsonObject::new(),
    };
    let mut tool = Tool::new(
        info.name.clone(),
        info.description.clone(),
        Arc::new(schema),
    );
    tool.title = Some(info.title.clone());
    let hints = info.annotations;
    // The title goes in the annotations too: clients of revisions before 2025-06-18 read it there.
    tool.annotations = Some(ToolAnnotations::from_raw(
        Some(info.title.clone()),
        hints.read_only,
        hints.destructive,
        hints.idempotent,
        hints.open_world,
    ));
    if let Some(Value::Object(output)) = info.output_schema.as_ref().map(|s| s.as_json()) {
        tool.output_schema = Some(Arc::new(output.clone()));
    }
    tool
}

pub fn call_tool_result(result: ToolResult) -> CallToolResult {
    let content: Vec<ContentBlock> = result
        .content
        .iter()
        .map(|block| match block {
            Content::Text { text } => ContentBlock::text(text.clone()),
            Content::Image { mime_type, data } => ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(data),
                mime_type.clone(),
            ),
        })
        .collect();
    let mut meta = MetaObject::new();
    if let Some(kind) = result.error_kind {
        meta.insert(META_ERROR_KIND.into(), Value::String(kind.as_str().into()));
    }
    meta.insert(META_DETAILS.into(), result.details.clone());
    let mut call_result = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    call_result.structured_content = result.structured;
    call_result = call_result.with_meta(Some(meta));
    call_result
}
