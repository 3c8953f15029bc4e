//! Resources, resource templates and prompts over MCP: `resources/list`,
//! `resources/templates/list`, `resources/read`, `prompts/list`, `prompts/get` and
//! `completion/complete`, answered from the pipeline's catalog of what its plugins serve
//! (contract 0.4). Reads and prompts run in the serving plugin's sandbox through the pipeline;
//! a failure is a JSON-RPC error whose message says what happened and whose data names the kind.

use super::tool_pages;
use base64::Engine as _;
use cordon_runtime::offer_terms::{
    CompletionRequest, CompletionTarget, FilledPrompt, PromptRole, ResourceBody,
};
use cordon_runtime::pipeline::{OfferError, Pipeline};
use cordon_runtime::{Content, ErrorKind};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, ErrorCode,
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, Prompt, PromptArgument, PromptMessage, ReadResourceResult, Reference,
    Resource, ResourceContents, ResourceTemplate, Role,
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// One page of the resources with URIs known at load, and each skill's `SKILL.md`, by URI.
pub fn list_resources(
    pipeline: &Pipeline,
    cursor: Option<&str>,
    size: usize,
) -> Result<ListResourcesResult, McpError> {
    let mut all: Vec<Resource> = pipeline
        .offers()
        .resources()
        .iter()
        .map(|listed| {
            let declared = &listed.item;
            let mut resource = Resource::new(&declared.uri, &declared.name);
            resource.title = non_empty(&declared.title);
            resource.description = non_empty(&declared.description);
            resource.mime_type = non_empty(&declared.mime_type);
            resource.size = declared.size;
            resource
        })
        .chain(super::skills::skill_resources(pipeline))
        .collect();
    all.sort_by(|a, b| a.uri.cmp(&b.uri));
    let (page, next) = tool_pages::page_by(&all, |resource| &resource.uri, cursor, size)
        .map_err(|err| McpError::invalid_params(err.to_string(), None))?;
    let mut result = ListResourcesResult::with_all_items(page);
    result.next_cursor = next;
    Ok(result)
}

/// One page of the resource templates, by template.
pub fn list_templates(
    pipeline: &Pipeline,
    cursor: Option<&str>,
    size: usize,
) -> Result<ListResourceTemplatesResult, McpError> {
    let mut all: Vec<ResourceTemplate> = pipeline
        .offers()
        .templates()
        .map(|listed| {
            let declared = &listed.item;
            let mut template = ResourceTemplate::new(&declared.uri_template, &declared.name);
            template.title = non_empty(&declared.title);
            template.description = non_empty(&declared.description);
            template.mime_type = non_empty(&declared.mime_type);
            template
        })
        .collect();
    all.sort_by(|a, b| a.uri_template.cmp(&b.uri_template));
    let (page, next) = tool_pages::page_by(&all, |template| &template.uri_template, cursor, size)
        .map_err(|err| McpError::invalid_params(err.to_string(), None))?;
    let mut result = ListResourceTemplatesResult::with_all_items(page);
    result.next_cursor = next;
    Ok(result)
}

/// `resources/read`: the contents, text as text and bytes base64-encoded.
pub async fn read(
    pipeline: &Pipeline,
    uri: &str,
    cancel: CancellationToken,
) -> Result<ReadResourceResult, McpError> {
    let read = pipeline
        .read_resource(uri, cancel)
        .await
        .map_err(offer_error)?;
    let contents = read
        .contents
        .into_iter()
        .map(|part| {
            let contents = match part.body {
                ResourceBody::Text(text) => ResourceContents::text(text, part.uri),
                ResourceBody::Blob(bytes) => ResourceContents::blob(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                    part.uri,
                ),
            };
            match non_empty(&part.mime_type) {
                Some(mime_type) => contents.with_mime_type(mime_type),
                None => contents,
            }
        })
        .collect();
    Ok(ReadResourceResult::new(contents))
}

/// One page of the prompts, by name.
pub fn list_prompts(
    pipeline: &Pipeline,
    cursor: Option<&str>,
    size: usize,
) -> Result<ListPromptsResult, McpError> {
    let mut all: Vec<Prompt> = pipeline
        .offers()
        .prompts()
        .iter()
        .map(|listed| {
            let declared = &listed.item;
            let arguments = declared
                .arguments
                .iter()
                .map(|argument| {
                    let mut described =
                        PromptArgument::new(&argument.name).with_required(argument.required);
                    described.description = non_empty(&argument.description);
                    described
                })
                .collect();
            let mut prompt = Prompt::new(
                &declared.name,
                non_empty(&declared.description),
                Some(arguments),
            );
            prompt.title = non_empty(&declared.title);
            prompt
        })
        .collect();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let (page, next) = tool_pages::page_by(&all, |prompt| &prompt.name, cursor, size)
        .map_err(|err| McpError::invalid_params(err.to_string(), None))?;
    let mut result = ListPromptsResult::with_all_items(page);
    result.next_cursor = next;
    Ok(result)
}

/// `prompts/get`: the prompt filled in by its plugin.
pub async fn get_prompt(
    pipeline: &Pipeline,
    request: GetPromptRequestParams,
    cancel: CancellationToken,
) -> Result<GetPromptResult, McpError> {
    let arguments = request.arguments.unwrap_or_default();
    let filled = pipeline
        .get_prompt(&request.name, &arguments, cancel)
        .await
        .map_err(offer_error)?;
    Ok(prompt_result(filled))
}

fn prompt_result(filled: FilledPrompt) -> GetPromptResult {
    let messages = filled
        .messages
        .into_iter()
        .map(|message| {
            let role = match message.role {
                PromptRole::User => Role::User,
                PromptRole::Assistant => Role::Assistant,
            };
            match message.content {
                Content::Text { text } => PromptMessage::new_text(role, text),
                Content::Image { mime_type, data } => PromptMessage::new(
                    role,
                    ContentBlock::image(
                        base64::engine::general_purpose::STANDARD.encode(data),
                        mime_type,
                    ),
                ),
            }
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description = non_empty(&filled.description);
    result
}

/// `completion/complete` for a prompt's argument or a template's variable.
pub async fn complete(
    pipeline: &Pipeline,
    request: CompleteRequestParams,
    cancel: CancellationToken,
) -> Result<CompleteResult, McpError> {
    let target = match &request.r#ref {
        Reference::Prompt(prompt) => CompletionTarget::Prompt(prompt.name.clone()),
        Reference::Resource(template) => CompletionTarget::ResourceTemplate(template.uri.clone()),
        other => {
            return Err(McpError::invalid_params(
                format!(
                    "cordon completes prompt arguments (ref/prompt) and resource template variables (ref/resource), not {}",
                    other.reference_type()
                ),
                None,
            ));
        }
    };
    let context = request
        .context
        .and_then(|context| context.arguments)
        .unwrap_or_default();
    let request = CompletionRequest {
        target,
        argument: request.argument.name,
        value: request.argument.value,
        context: json!(context).to_string(),
    };
    let values = pipeline
        .complete(&request, cancel)
        .await
        .map_err(offer_error)?;
    let completion = CompletionInfo::with_all_values(values)
        .map_err(|err| McpError::internal_error(err, None))?;
    Ok(CompleteResult::new(completion))
}

/// A failure as a JSON-RPC error: unknown names and wrong arguments are the client's
/// (`-32002`, which rmcp sends as `-32602` from 2026-07-28 on, and `-32602`); what happened in the plugin is `-32603`, its kind in `data.errorKind`.
fn offer_error(err: OfferError) -> McpError {
    let message = err.to_string();
    match err {
        OfferError::UnknownResource { uri } => McpError::new(
            ErrorCode::RESOURCE_NOT_FOUND,
            message,
            Some(json!({ "uri": uri })),
        ),
        OfferError::UnknownPrompt { .. } | OfferError::UnknownTemplate { .. } => {
            McpError::invalid_params(message, None)
        }
        OfferError::Failed {
            kind: ErrorKind::InvalidArguments,
            ..
        } => McpError::invalid_params(message, Some(json!({ "errorKind": "invalid_arguments" }))),
        OfferError::Failed { kind, .. } => {
            McpError::internal_error(message, Some(json!({ "errorKind": kind.as_str() })))
        }
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_string())
}
