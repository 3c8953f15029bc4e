//! The one `bindgen!` of the host: Rust types and typed calls generated from `wit/plugin-0.1.0`.
//! Exports are called asynchronously so many sandboxes can share a few threads.

wasmtime::component::bindgen!({
    path: "../../wit/plugin-0.1.0",
    world: "cordon-plugin",
    exports: { default: async },
});

pub use self::cordon::plugin::types::{
    AfterDecision, BeforeDecision, Content, ExecutionMode, FailureKind, Image, PluginInfo,
    ToolCall, ToolFailure, ToolOutput, ToolResult, ToolSpec,
};
