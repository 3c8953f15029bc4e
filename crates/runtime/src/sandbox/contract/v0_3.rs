//! Contract `cordon:plugin@0.3.0`: its generated bindings, its host functions, and its types in
//! host terms. Beside 0.2 it carries the session stages a hook declares and `session-hook`, called
//! at each of them.

use super::content;
use super::host_terms::{
    BeforeDecision, Declared, DeclaredTool, ExecutionMode, GuestCall, GuestOutput, HookInfo,
    SessionDecision, SessionStage, ToolAnnotations,
};
use crate::report::{Content, ErrorKind, LogLevel, ToolResult};
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use wasmtime::Store;

wasmtime::component::bindgen!({
    path: "../../wit/plugin-0.3.0",
    world: "cordon-plugin",
    exports: { default: async },
});

use self::cordon::plugin::{host, types};

same_in_every_version!(without_hook_info);

/// The name of the interface a 0.3 plugin exports.
pub const EXPORT: &str = "cordon:plugin/plugin@0.3.0";

fn hook_info(hook: types::HookSpec) -> HookInfo {
    let mut stages: Vec<SessionStage> = hook.stages.into_iter().map(stage_from_wit).collect();
    stages.sort();
    stages.dedup();
    HookInfo {
        tools: hook.tools,
        before: hook.before,
        after: hook.after,
        stages,
    }
}

fn stage_from_wit(stage: types::SessionStage) -> SessionStage {
    match stage {
        types::SessionStage::SessionStart => SessionStage::SessionStart,
        types::SessionStage::Prompt => SessionStage::Prompt,
        types::SessionStage::ModelRequest => SessionStage::ModelRequest,
        types::SessionStage::ModelResponse => SessionStage::ModelResponse,
        types::SessionStage::Compaction => SessionStage::Compaction,
        types::SessionStage::Stop => SessionStage::Stop,
        types::SessionStage::SessionEnd => SessionStage::SessionEnd,
    }
}

fn stage_to_wit(stage: SessionStage) -> types::SessionStage {
    match stage {
        SessionStage::SessionStart => types::SessionStage::SessionStart,
        SessionStage::Prompt => types::SessionStage::Prompt,
        SessionStage::ModelRequest => types::SessionStage::ModelRequest,
        SessionStage::ModelResponse => types::SessionStage::ModelResponse,
        SessionStage::Compaction => types::SessionStage::Compaction,
        SessionStage::Stop => types::SessionStage::Stop,
        SessionStage::SessionEnd => types::SessionStage::SessionEnd,
    }
}

/// The hook's decision at `stage`, given the stage's `payload` (JSON text).
pub async fn session_hook(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    stage: SessionStage,
    payload: &str,
) -> wasmtime::Result<SessionDecision> {
    let event = types::SessionEvent {
        stage: stage_to_wit(stage),
        payload: payload.to_string(),
    };
    let decision = plugin
        .cordon_plugin_plugin()
        .call_session_hook(store, &event)
        .await?;
    Ok(SessionDecision {
        block: decision.block,
        replace: decision.replace,
        add_context: decision.add_context,
        only_tools: decision.only_tools,
        drop_calls: decision.drop_calls,
    })
}

pub async fn describe(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
) -> wasmtime::Result<Declared> {
    let info = plugin.cordon_plugin_plugin().call_describe(store).await?;
    Ok(Declared {
        tools: info.tools.into_iter().map(declared_tool).collect(),
        hook: info.hook.map(hook_info),
    })
}

fn declared_tool(spec: types::ToolSpec) -> DeclaredTool {
    let hints = spec.annotations;
    DeclaredTool {
        name: spec.name,
        title: spec.title,
        description: spec.description,
        parameters: spec.parameters,
        output_schema: spec.output_schema,
        execution_mode: match spec.execution_mode {
            types::ExecutionMode::Parallel => ExecutionMode::Parallel,
            types::ExecutionMode::Sequential => ExecutionMode::Sequential,
        },
        annotations: ToolAnnotations {
            read_only: hints.read_only,
            destructive: hints.destructive,
            idempotent: hints.idempotent,
            open_world: hints.open_world,
        },
        prompt_guidelines: spec.prompt_guidelines,
        locks: spec.locks,
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
            structured: output.structured,
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
        types::BeforeDecision::Ask(reason) => BeforeDecision::Ask(reason),
    })
}

/// The hook's replacement, if it replaced the result.
pub async fn after_tool_call(
    plugin: &CordonPlugin,
    store: &mut Store<CallState>,
    call: &GuestCall,
    result: &ToolResult,
) -> wasmtime::Result<Option<GuestOutput>> {
    let outcome = types::ToolResult {
        content: result.content.iter().map(content_to_wit).collect(),
        structured: result.structured.as_ref().map(|value| value.to_string()),
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
            structured: replacement.structured,
            details: replacement.details,
            is_error: replacement.is_error,
        }),
    })
}
