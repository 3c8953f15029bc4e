//! The Rust SDK for cordon plugins.
//!
//! A tool is a type implementing [`Tool`], whose arguments are a struct deriving `Deserialize` and
//! `JsonSchema` (the schema the host validates against is generated from it, so the two cannot
//! drift). A hook is a type implementing [`Hook`] (tool calls, and the session's stages). One [`export_plugin!`] line turns them into the
//! component exports the host calls:
//!
//! ```ignore
//! use cordon_sdk::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Args { /// Who to greet.
//!     name: String }
//!
//! struct Greet;
//! impl Tool for Greet {
//!     type Args = Args;
//!     const NAME: &'static str = "greet";
//!     const DESCRIPTION: &'static str = "Greets someone by name.";
//!     fn run(&self, args: Args, _cx: &Context) -> ToolResult {
//!         Ok(Output::text(format!("Hello, {}!", args.name)))
//!     }
//! }
//! cordon_sdk::export_plugin!(tools: [Greet]);
//! ```

mod block_on;
mod context;
mod hook;
pub mod http;
mod offer_runtime;
mod offers;
mod output;
mod runtime;
mod session;
mod tool;
mod uri_vars;

#[doc(hidden)]
#[allow(unsafe_code, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/plugin-0.4.0",
        world: "cordon-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_cordon_plugin",
        default_bindings_module: "cordon_sdk::bindings",
    });
}

pub use block_on::{block_on, ready, sleep};
pub use context::{Context, LogLevel};
pub use hook::{AfterDecision, BeforeDecision, CallResult, Hook, NoHook, ToolCall};
pub use offers::{
    Prompt, PromptReply, Resource, ResourceData, ResourceResult, ResourceTemplate, Role,
};
#[doc(hidden)]
pub use offers::{PromptEntry, ResourceEntry};
pub use output::{Content, Output, ToolError, ToolResult};
#[doc(hidden)]
pub use runtime::{PluginRuntime, ToolEntry};
pub use session::{SessionDecision, SessionEvent, SessionStage};
pub use tool::{Annotations, ExecutionMode, Tool, schema_of};
pub use uri_vars::UriVars;

/// Everything a plugin usually needs, including serde's and schemars' derives.
pub mod prelude {
    pub use crate::{
        AfterDecision, Annotations, BeforeDecision, CallResult, Content, Context, ExecutionMode,
        Hook, LogLevel, Output, Prompt, PromptReply, Resource, ResourceData, ResourceResult,
        ResourceTemplate, SessionDecision, SessionEvent, SessionStage, Tool, ToolCall, ToolError,
        ToolResult, UriVars,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::{Value, json};
}

#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde_json;
}

/// Exports a plugin made of tools, resources, resource templates, prompts and, optionally, one
/// hook. Each part may be left out; those given come in this order.
///
/// `export_plugin!(tools: [ReadFile, WriteFile]);`
/// `export_plugin!(tools: [Greet], hook: AuditHook);`
/// `export_plugin!(hook: AuditHook);`
/// `export_plugin!(tools: [Search], resources: [Guide], templates: [Note], prompts: [Review]);`
#[macro_export]
macro_rules! export_plugin {
    (@parse [$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] [$($h:tt)*]
        tools: [$($x:expr),* $(,)?] $(, $($rest:tt)*)?) => {
        $crate::export_plugin!(@parse [$($x),*] [$($r)*] [$($m)*] [$($p)*] [$($h)*] $($($rest)*)?);
    };
    (@parse [$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] [$($h:tt)*]
        resources: [$($x:expr),* $(,)?] $(, $($rest:tt)*)?) => {
        $crate::export_plugin!(@parse [$($t)*] [$($x),*] [$($m)*] [$($p)*] [$($h)*] $($($rest)*)?);
    };
    (@parse [$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] [$($h:tt)*]
        templates: [$($x:expr),* $(,)?] $(, $($rest:tt)*)?) => {
        $crate::export_plugin!(@parse [$($t)*] [$($r)*] [$($x),*] [$($p)*] [$($h)*] $($($rest)*)?);
    };
    (@parse [$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] [$($h:tt)*]
        prompts: [$($x:expr),* $(,)?] $(, $($rest:tt)*)?) => {
        $crate::export_plugin!(@parse [$($t)*] [$($r)*] [$($m)*] [$($x),*] [$($h)*] $($($rest)*)?);
    };
    (@parse [$($t:tt)*] [$($r:tt)*] [$($m:tt)*] [$($p:tt)*] [$($h:tt)*]
        hook: $hook:expr $(, $($rest:tt)*)?) => {
        $crate::export_plugin!(@parse [$($t)*] [$($r)*] [$($m)*] [$($p)*] [$hook] $($($rest)*)?);
    };
    (@parse [$($tool:expr),*] [$($resource:expr),*] [$($template:expr),*] [$($prompt:expr),*] []) => {
        $crate::export_plugin!(@emit [$($tool),*] [$($resource),*] [$($template),*] [$($prompt),*] $crate::NoHook);
    };
    (@parse [$($tool:expr),*] [$($resource:expr),*] [$($template:expr),*] [$($prompt:expr),*] [$hook:expr]) => {
        $crate::export_plugin!(@emit [$($tool),*] [$($resource),*] [$($template),*] [$($prompt),*] $hook);
    };
    (@emit [$($tool:expr),*] [$($resource:expr),*] [$($template:expr),*] [$($prompt:expr),*] $hook:expr) => {
        struct __CordonPlugin;

        impl __CordonPlugin {
            fn runtime() -> $crate::PluginRuntime<impl $crate::Hook> {
                $crate::PluginRuntime::new(vec![$($crate::ToolEntry::new($tool)),*], $hook)
                    .with_offers(
                        vec![
                            $($crate::ResourceEntry::fixed($resource),)*
                            $($crate::ResourceEntry::template($template),)*
                        ],
                        vec![$($crate::PromptEntry::new($prompt)),*],
                    )
            }
        }

        impl $crate::bindings::exports::cordon::plugin::plugin::Guest for __CordonPlugin {
            fn describe() -> $crate::bindings::cordon::plugin::types::PluginInfo {
                Self::runtime().describe()
            }
            fn execute(
                call: $crate::bindings::cordon::plugin::types::ToolCall,
            ) -> Result<
                $crate::bindings::cordon::plugin::types::ToolOutput,
                $crate::bindings::cordon::plugin::types::ToolFailure,
            > {
                Self::runtime().execute(call)
            }
            fn before_tool_call(
                call: $crate::bindings::cordon::plugin::types::ToolCall,
            ) -> $crate::bindings::cordon::plugin::types::BeforeDecision {
                Self::runtime().before_tool_call(call)
            }
            fn after_tool_call(
                call: $crate::bindings::cordon::plugin::types::ToolCall,
                outcome: $crate::bindings::cordon::plugin::types::ToolResult,
            ) -> $crate::bindings::cordon::plugin::types::AfterDecision {
                Self::runtime().after_tool_call(call, outcome)
            }
            fn session_hook(
                event: $crate::bindings::cordon::plugin::types::SessionEvent,
            ) -> $crate::bindings::cordon::plugin::types::SessionDecision {
                Self::runtime().session_hook(event)
            }
            fn read_resource(
                uri: String,
            ) -> Result<
                Vec<$crate::bindings::cordon::plugin::types::ResourceContents>,
                $crate::bindings::cordon::plugin::types::ToolFailure,
            > {
                Self::runtime().read_resource(uri)
            }
            fn get_prompt(
                name: String,
                arguments: String,
            ) -> Result<
                $crate::bindings::cordon::plugin::types::PromptResult,
                $crate::bindings::cordon::plugin::types::ToolFailure,
            > {
                Self::runtime().get_prompt(name, arguments)
            }
            fn complete(
                request: $crate::bindings::cordon::plugin::types::CompletionRequest,
            ) -> Vec<String> {
                Self::runtime().complete(request)
            }
        }

        $crate::bindings::__export_cordon_plugin!(__CordonPlugin with_types_in $crate::bindings);
    };
    ($($rest:tt)+) => {
        $crate::export_plugin!(@parse [] [] [] [] [] $($rest)+);
    };
}
