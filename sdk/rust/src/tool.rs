//! The [`Tool`] trait: one tool, its typed arguments and its metadata.

use crate::{Context, ToolResult};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

/// Whether a tool may run beside other tools of the same batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    /// May run concurrently with the other calls of its batch (the default).
    #[default]
    Parallel,
    /// Makes its whole batch run one call at a time, in call order.
    Sequential,
}

/// One tool. Its JSON Schema is generated from [`Tool::Args`].
pub trait Tool: 'static {
    /// The arguments object. Doc comments on its fields become schema descriptions the model reads.
    type Args: DeserializeOwned + JsonSchema;
    /// Unique tool name: letters, digits, `_` and `-`, at most 64 characters.
    const NAME: &'static str;
    /// Short human-readable title; defaults to the name.
    const LABEL: &'static str = Self::NAME;
    /// What the tool does, when a model should use it, and where its limits are.
    const DESCRIPTION: &'static str;
    /// See [`ExecutionMode`].
    const EXECUTION_MODE: ExecutionMode = ExecutionMode::Parallel;

    /// Runs one call. `Err` becomes a `tool_error` (or `capability_denied`) result with its message.
    fn run(&self, args: Self::Args, cx: &Context) -> ToolResult;
}
