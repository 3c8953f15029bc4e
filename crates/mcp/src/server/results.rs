//! Cordon's tools and results in MCP's shapes. A result's text is what the model reads; the error
//! kind and the tool's details go in `_meta` (and the details in `structuredContent`).

use base64::Engine as _;
use cordon_runtime::ToolInfo;
use cordon_runtime::report::{Content, ToolResult};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool};
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
    tool.title = Some(info.label.clone());
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
    call_result = call_result.with_meta(Some(meta));
    call_result
}
