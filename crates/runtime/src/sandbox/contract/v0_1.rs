//! Contract `cordon:plugin@0.1.0`: its generated bindings (exports called asynchronously, so many
//! sandboxes share a few threads), its host functions, and its types in host terms. A 0.1 tool
//! declares no title beyond its label, no annotations, output schema, guidelines or locks, and a
//! 0.1 hook cannot ask.

use super::content;
use super::host_terms::{
    BeforeDecision, Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, HookInfo,
    ToolAnnotations,
};
use crate::report::{Content, ErrorKind, LogLevel, ToolResult};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../../wit/plugin-0.1.0",
    world: "cordon-plugin",
    exports: { default: async },
});

use self::cordon::plugin::{host, types};

same_in_every_version!();

/// The name of the interface a 0.1 plugin exports.
pub const EXPORT: &str = "cordon:plugin/plugin@0.1.0";

pub async fn describe(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
) -> wasmtime::Result<Declared> {
    let info = plugin.cordon_plugin_plugin().call_describe(store).await?;
    Ok(Declared {
        tools: info.tools.into_iter().map(declared_tool).collect(),
        hook: info.hook.map(hook_info),
        offered: Default::default(),
    })
}

fn declared_tool(spec: types::ToolSpec) -> DeclaredTool {
    DeclaredTool {
        name: spec.name,
        title: spec.label,
        description: spec.description,
        parameters: spec.parameters,
        output_schema: None,
        execution_mode: match spec.execution_mode {
            types::ExecutionMode::Parallel => ExecutionMode::Parallel,
            types::ExecutionMode::Sequential => ExecutionMode::Sequential,
        },
        annotations: ToolAnnotations::default(),
        prompt_guidelines: Vec::new(),
        locks: Vec::new(),
    }
}

pub async fn execute(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    call: &GuestCall,
) -> wasmtime::Result<Result<GuestOutput, Failure>> {
    let outcome = plugin
        .cordon_plugin_plugin()
        .call_execute(store, &wit_call(call))
        .await?;
    Ok(match outcome {
        Ok(output) => Ok(GuestOutput {
            content: output.content.into_iter().map(content_from_wit).collect(),
            structured: None,
            details: output.details,
            is_error: false,
        }),
        Err(failure) => Err(failure_from_wit(failure)),
    })
}

pub async fn before_tool_call(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    call: &GuestCall,
) -> wasmtime::Result<BeforeDecision> {
    let decision = plugin
        .cordon_plugin_plugin()
        .call_before_tool_call(store, &wit_call(call))
        .await?;
    Ok(match decision {
        types::BeforeDecision::Allow => BeforeDecision::Allow,
        types::BeforeDecision::Block(reason) => BeforeDecision::Block(reason),
        types::BeforeDecision::Rewrite(arguments) => BeforeDecision::Rewrite(arguments),
    })
}

/// The hook's replacement, if it replaced the result. A 0.1 hook never sees structured output.
pub async fn after_tool_call(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    call: &GuestCall,
    result: &ToolResult,
) -> wasmtime::Result<Option<GuestOutput>> {
    let outcome = types::ToolResult {
        content: result.content.iter().map(content_to_wit).collect(),
        details: result.details.to_string(),
        is_error: result.is_error,
    };
    let decision = plugin
        .cordon_plugin_plugin()
        .call_after_tool_call(store, &wit_call(call), &outcome)
        .await?;
    Ok(match decision {
        types::AfterDecision::Keep => None,
        types::AfterDecision::Replace(replacement) => Some(GuestOutput {
            content: replacement
                .content
                .into_iter()
                .map(content_from_wit)
                .collect(),
            structured: None,
            details: replacement.details,
            is_error: replacement.is_error,
        }),
    })
}
