//! Glue between the WIT exports and the SDK's traits: type-erased tool entries, JSON at the edge,
//! and conversions between SDK types and generated binding types.

use crate::bindings::cordon::plugin::types as wit;
use crate::{
    AfterDecision, Annotations, BeforeDecision, CallResult, Content, Context, ExecutionMode, Hook,
    Output, SessionDecision, SessionEvent, SessionStage, Tool, ToolCall, ToolError,
};
use serde_json::Value;

type RunFn = Box<dyn Fn(Value, &Context) -> crate::ToolResult>;

/// One tool with its arguments type erased. Every call instantiates the plugin afresh, so this is
/// built on every call: the spec (with its generated schema) is only made when `describe` asks.
pub struct ToolEntry {
    name: &'static str,
    spec: fn() -> wit::ToolSpec,
    run: RunFn,
}

fn spec_of<T: Tool>() -> wit::ToolSpec {
    let strings = |lines: &[&str]| lines.iter().map(|line| line.to_string()).collect();
    let Annotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = T::ANNOTATIONS;
    wit::ToolSpec {
        name: T::NAME.to_string(),
        title: T::TITLE.to_string(),
        description: T::DESCRIPTION.to_string(),
        parameters: crate::schema_of::<T::Args>().to_string(),
        output_schema: T::output_schema().map(|schema| schema.to_string()),
        execution_mode: match T::EXECUTION_MODE {
            ExecutionMode::Parallel => wit::ExecutionMode::Parallel,
            ExecutionMode::Sequential => wit::ExecutionMode::Sequential,
        },
        annotations: wit::ToolAnnotations {
            read_only,
            destructive,
            idempotent,
            open_world,
        },
        prompt_guidelines: strings(T::PROMPT_GUIDELINES),
        locks: strings(T::LOCKS),
    }
}

impl ToolEntry {
    pub fn new<T: Tool>(tool: T) -> Self {
        let run: RunFn = Box::new(move |arguments, cx| {
            let args: T::Args = serde_json::from_value(arguments).map_err(|err| {
                ToolError::new(format!("the arguments do not fit {}: {err}", T::NAME))
            })?;
            tool.run(args, cx)
        });
        Self {
            name: T::NAME,
            spec: spec_of::<T>,
            run,
        }
    }
}

/// A plugin's tools, hook, resources and prompts, answering the exported functions (those of
/// resources and prompts are in `offer_runtime.rs`).
pub struct PluginRuntime<H: Hook> {
    tools: Vec<ToolEntry>,
    hook: H,
    pub(crate) resources: Vec<crate::ResourceEntry>,
    pub(crate) prompts: Vec<crate::PromptEntry>,
}

impl<H: Hook> PluginRuntime<H> {
    pub fn new(tools: Vec<ToolEntry>, hook: H) -> Self {
        Self {
            tools,
            hook,
            resources: Vec::new(),
            prompts: Vec::new(),
        }
    }

    /// Serves these resources (fixed ones and templates) and prompts too.
    pub fn with_offers(
        mut self,
        resources: Vec<crate::ResourceEntry>,
        prompts: Vec<crate::PromptEntry>,
    ) -> Self {
        self.resources = resources;
        self.prompts = prompts;
        self
    }

    pub fn describe(self) -> wit::PluginInfo {
        let hook = (H::BEFORE || H::AFTER || !H::STAGES.is_empty()).then(|| wit::HookSpec {
            tools: H::TOOLS.iter().map(|t| t.to_string()).collect(),
            before: H::BEFORE,
            after: H::AFTER,
            stages: H::STAGES.iter().map(|stage| to_wit_stage(*stage)).collect(),
        });
        let (resources, resource_templates, prompts) = self.offered_specs();
        wit::PluginInfo {
            tools: self.tools.iter().map(|t| (t.spec)()).collect(),
            hook,
            resources,
            resource_templates,
            prompts,
        }
    }

    pub fn execute(self, call: wit::ToolCall) -> Result<wit::ToolOutput, wit::ToolFailure> {
        let Some(entry) = self.tools.iter().find(|t| t.name == call.name) else {
            return Err(to_wit_failure(ToolError::new(format!(
                "this plugin has no tool named {:?}",
                call.name
            ))));
        };
        let arguments = parse_json(&call.arguments).map_err(to_wit_failure)?;
        let cx = Context::new(call.id);
        (entry.run)(arguments, &cx)
            .map(to_wit_output)
            .map_err(to_wit_failure)
    }

    pub fn before_tool_call(self, call: wit::ToolCall) -> wit::BeforeDecision {
        let call = match from_wit_call(call) {
            Ok(call) => call,
            Err(err) => return wit::BeforeDecision::Block(err.message),
        };
        let cx = Context::new(call.id.clone());
        match self.hook.before_tool_call(&call, &cx) {
            BeforeDecision::Allow => wit::BeforeDecision::Allow,
            BeforeDecision::Block(reason) => wit::BeforeDecision::Block(reason),
            BeforeDecision::Rewrite(arguments) => {
                wit::BeforeDecision::Rewrite(arguments.to_string())
            }
            BeforeDecision::Ask(reason) => wit::BeforeDecision::Ask(reason),
        }
    }

    pub fn after_tool_call(
        self,
        call: wit::ToolCall,
        outcome: wit::ToolResult,
    ) -> wit::AfterDecision {
        let call = match from_wit_call(call) {
            Ok(call) => call,
            Err(_) => return wit::AfterDecision::Keep,
        };
        let result = CallResult {
            content: outcome.content.into_iter().map(from_wit_content).collect(),
            structured: outcome
                .structured
                .and_then(|text| serde_json::from_str(&text).ok()),
            details: parse_details(&outcome.details),
            is_error: outcome.is_error,
        };
        let cx = Context::new(call.id.clone());
        match self.hook.after_tool_call(&call, &result, &cx) {
            AfterDecision::Keep => wit::AfterDecision::Keep,
            AfterDecision::Replace(result) => wit::AfterDecision::Replace(wit::ToolResult {
                content: result.content.into_iter().map(to_wit_content).collect(),
                structured: result.structured.map(|value| value.to_string()),
                details: details_json(result.details),
                is_error: result.is_error,
            }),
        }
    }

    /// A payload that is not JSON (the host always sends an object) reaches the hook as `null`
    /// rather than being decided for it.
    pub fn session_hook(self, event: wit::SessionEvent) -> wit::SessionDecision {
        let event = SessionEvent {
            stage: from_wit_stage(event.stage),
            payload: serde_json::from_str(&event.payload).unwrap_or(Value::Null),
        };
        let cx = Context::new(String::new());
        let SessionDecision {
            block,
            replace,
            add_context,
            only_tools,
            drop_calls,
        } = self.hook.session_hook(&event, &cx);
        wit::SessionDecision {
            block,
            replace,
            add_context,
            only_tools,
            drop_calls,
        }
    }
}

fn to_wit_stage(stage: SessionStage) -> wit::SessionStage {
    match stage {
        SessionStage::SessionStart => wit::SessionStage::SessionStart,
        SessionStage::Prompt => wit::SessionStage::Prompt,
        SessionStage::ModelRequest => wit::SessionStage::ModelRequest,
        SessionStage::ModelResponse => wit::SessionStage::ModelResponse,
        SessionStage::Compaction => wit::SessionStage::Compaction,
        SessionStage::Stop => wit::SessionStage::Stop,
        SessionStage::SessionEnd => wit::SessionStage::SessionEnd,
    }
}

fn from_wit_stage(stage: wit::SessionStage) -> SessionStage {
    match stage {
        wit::SessionStage::SessionStart => SessionStage::SessionStart,
        wit::SessionStage::Prompt => SessionStage::Prompt,
        wit::SessionStage::ModelRequest => SessionStage::ModelRequest,
        wit::SessionStage::ModelResponse => SessionStage::ModelResponse,
        wit::SessionStage::Compaction => SessionStage::Compaction,
        wit::SessionStage::Stop => SessionStage::Stop,
        wit::SessionStage::SessionEnd => SessionStage::SessionEnd,
    }
}

fn parse_json(text: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text)
        .map_err(|err| ToolError::new(format!("arguments are not valid JSON: {err}")))
}

fn parse_details(text: &str) -> Option<Value> {
    if text.is_empty() {
        None
    } else {
        serde_json::from_str(text).ok()
    }
}

fn details_json(details: Option<Value>) -> String {
    details.map(|d| d.to_string()).unwrap_or_default()
}

fn from_wit_call(call: wit::ToolCall) -> Result<ToolCall, ToolError> {
    Ok(ToolCall {
        arguments: parse_json(&call.arguments)?,
        id: call.id,
        name: call.name,
    })
}

pub(crate) fn to_wit_content(content: Content) -> wit::Content {
    match content {
        Content::Text(text) => wit::Content::Text(text),
        Content::Image { mime_type, data } => wit::Content::Image(wit::Image { mime_type, data }),
    }
}

fn from_wit_content(content: wit::Content) -> Content {
    match content {
        wit::Content::Text(text) => Content::Text(text),
        wit::Content::Image(image) => Content::Image {
            mime_type: image.mime_type,
            data: image.data,
        },
    }
}

pub(crate) fn to_wit_output(output: Output) -> wit::ToolOutput {
    wit::ToolOutput {
        content: output.content.into_iter().map(to_wit_content).collect(),
        structured: output.structured.map(|value| value.to_string()),
        details: details_json(output.details),
    }
}

pub(crate) fn to_wit_failure(error: ToolError) -> wit::ToolFailure {
    wit::ToolFailure {
        kind: if error.capability_denied {
            wit::FailureKind::CapabilityDenied
        } else {
            wit::FailureKind::ToolError
        },
        message: error.message,
        details: details_json(error.details),
    }
}
