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
mod output;
mod runtime;
mod session;
mod tool;

#[doc(hidden)]
#[allow(unsafe_code, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/plugin-0.3.0",
        world: "cordon-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_cordon_plugin",
        default_bindings_module: "cordon_sdk::bindings",
    });
}

pub use block_on::{block_on, ready, sleep};
pub use context::{Context, LogLevel};
pub use hook::{AfterDecision, BeforeDecision, CallResult, Hook, NoHook, ToolCall};
pub use output::{Content, Output, ToolError, ToolResult};
#[doc(hidden)]
pub use runtime::{PluginRuntime, ToolEntry};
pub use session::{SessionDecision, SessionEvent, SessionStage};
pub use tool::{Annotations, ExecutionMode, Tool, schema_of};

/// Everything a plugin usually needs, including serde's and schemars' derives.
pub mod prelude {
    pub use crate::{
        AfterDecision, Annotations, BeforeDecision, CallResult, Content, Context, ExecutionMode,
        Hook, LogLevel, Output, SessionDecision, SessionEvent, SessionStage, Tool, ToolCall,
        ToolError, ToolResult,
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

/// Exports a plugin made of tools and, optionally, one hook.
///
/// `export_plugin!(tools: [ReadFile, WriteFile]);`
/// `export_plugin!(tools: [Greet], hook: AuditHook);`
/// `export_plugin!(hook: AuditHook);`
#[macro_export]
macro_rules! export_plugin {
    (tools: [$($tool:expr),* $(,)?] $(,)?) => {
        $crate::export_plugin!(@emit [$($tool),*] $crate::NoHook);
    };
    (tools: [$($tool:expr),* $(,)?], hook: $hook:expr $(,)?) => {
        $crate::export_plugin!(@emit [$($tool),*] $hook);
    };
    (hook: $hook:expr $(,)?) => {
        $crate::export_plugin!(@emit [] $hook);
    };
    (@emit [$($tool:expr),*] $hook:expr) => {
        struct __CordonPlugin;

        impl __CordonPlugin {
            fn runtime() -> $crate::PluginRuntime<impl $crate::Hook> {
                $crate::PluginRuntime::new(vec![$($crate::ToolEntry::new($tool)),*], $hook)
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
        }

        $crate::bindings::__export_cordon_plugin!(__CordonPlugin with_types_in $crate::bindings);
    };
}
