//! Contract `cordon:plugin@0.4.0`: its generated bindings, its host functions, and its types in
//! host terms. Beside 0.3 it carries the resources, resource templates and prompts a plugin
//! declares, and `read-resource`, `get-prompt` and `complete`.

use super::content;
use super::host_terms::{
    BeforeDecision, Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, HookInfo,
    SessionDecision, SessionStage, ToolAnnotations,
};
use super::offer_terms::{
    CompletionRequest, CompletionTarget, DeclaredPrompt, DeclaredResource, DeclaredTemplate,
    FilledPrompt, Offered, PromptArgument, PromptMessage, PromptRole, ResourceBody,
    ResourceContents,
};
use crate::report::{Content, ErrorKind, LogLevel, ToolResult};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../../wit/plugin-0.4.0",
    world: "cordon-plugin",
    exports: { default: async },
});

use self::cordon::plugin::{host, types};

same_in_every_version!(without_hook_info);
same_since_0_3!();
same_since_0_2!();

/// The name of the interface a 0.4 plugin exports.
pub const EXPORT: &str = "cordon:plugin/plugin@0.4.0";

/// The resources, templates and prompts `describe` declared, taken out of `info`.
fn offered(info: &mut types::PluginInfo) -> Offered {
    Offered {
        resources: std::mem::take(&mut info.resources)
            .into_iter()
            .map(|spec| DeclaredResource {
                uri: spec.uri,
                name: spec.name,
                title: spec.title,
                description: spec.description,
                mime_type: spec.mime_type,
                size: spec.size,
            })
            .collect(),
        templates: std::mem::take(&mut info.resource_templates)
            .into_iter()
            .map(|spec| DeclaredTemplate {
                uri_template: spec.uri_template,
                name: spec.name,
                title: spec.title,
                description: spec.description,
                mime_type: spec.mime_type,
            })
            .collect(),
        prompts: std::mem::take(&mut info.prompts)
            .into_iter()
            .map(|spec| DeclaredPrompt {
                name: spec.name,
                title: spec.title,
                description: spec.description,
                arguments: spec
                    .arguments
                    .into_iter()
                    .map(|argument| PromptArgument {
                        name: argument.name,
                        description: argument.description,
                        required: argument.required,
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The contents of resource `uri`, or the failure the plugin reported.
pub async fn read_resource(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    uri: &str,
) -> wasmtime::Result<Result<Vec<ResourceContents>, Failure>> {
    let outcome = plugin
        .cordon_plugin_plugin()
        .call_read_resource(store, uri)
        .await?;
    Ok(outcome
        .map(|parts| {
            parts
                .into_iter()
                .map(|part| ResourceContents {
                    uri: part.uri,
                    mime_type: part.mime_type,
                    body: match part.body {
                        types::ResourceBody::Text(text) => ResourceBody::Text(text),
                        types::ResourceBody::Blob(bytes) => ResourceBody::Blob(bytes),
                    },
                })
                .collect()
        })
        .map_err(failure_from_wit))
}

/// Prompt `name` filled in with `arguments` (a JSON object's text), or the failure the plugin
/// reported.
pub async fn get_prompt(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    name: &str,
    arguments: &str,
) -> wasmtime::Result<Result<FilledPrompt, Failure>> {
    let outcome = plugin
        .cordon_plugin_plugin()
        .call_get_prompt(store, name, &arguments.to_string())
        .await?;
    Ok(outcome
        .map(|filled| FilledPrompt {
            description: filled.description,
            messages: filled
                .messages
                .into_iter()
                .map(|message| PromptMessage {
                    role: match message.role {
                        types::PromptRole::User => PromptRole::User,
                        types::PromptRole::Assistant => PromptRole::Assistant,
                    },
                    content: content_from_wit(message.content),
                })
                .collect(),
        })
        .map_err(failure_from_wit))
}

/// The plugin's suggestions for an argument being typed.
pub async fn complete(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    request: &CompletionRequest,
) -> wasmtime::Result<Vec<String>> {
    let request = types::CompletionRequest {
        target: match &request.target {
            CompletionTarget::Prompt(name) => types::CompletionTarget::Prompt(name.clone()),
            CompletionTarget::ResourceTemplate(template) => {
                types::CompletionTarget::ResourceTemplate(template.clone())
            }
        },
        argument: request.argument.clone(),
        value: request.value.clone(),
        context: request.context.clone(),
    };
    plugin
        .cordon_plugin_plugin()
        .call_complete(store, &request)
        .await
}
