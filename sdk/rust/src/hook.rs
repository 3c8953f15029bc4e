//! The [`Hook`] trait: inspect, block, rewrite or ask a person about calls before they run, inspect
//! or replace their results afterwards, and decide at the stages of a session (the prompt, model
//! requests and replies, compaction, the final answer). Every method has a pass-through default.

use crate::{Content, Context, SessionDecision, SessionEvent, SessionStage};
use serde_json::Value;

/// A call as a hook sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments object (as rewritten by earlier hooks).
    pub arguments: Value,
}

/// A call's result as an after-hook sees it (error results too).
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    pub content: Vec<Content>,
    /// The tool's structured output, if it returned one.
    pub structured: Option<Value>,
    pub details: Option<Value>,
    pub is_error: bool,
}

impl CallResult {
    /// All text blocks, joined with newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text(text) => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A before-hook's verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeDecision {
    Allow,
    /// Do not run the call; the reason goes back to the model.
    Block(String),
    /// Run the call with these arguments instead (they are validated again).
    Rewrite(Value),
    /// Run the call only if a person approves it; the reason is shown to them. Where nobody can
    /// be asked, the operator's default decides (deny, unless they said otherwise).
    Ask(String),
}

/// An after-hook's verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterDecision {
    Keep,
    Replace(CallResult),
}

/// A hook. Implement the methods you need; set `BEFORE`/`AFTER` to false for the ones you don't,
/// so the host does not start a sandbox just to be told "allow", and list in `STAGES` the session
/// stages [`Hook::session_hook`] should be called at.
pub trait Hook: 'static {
    /// Tool-name globs (`*`, `?`) this hook watches; empty means every tool.
    const TOOLS: &'static [&'static str] = &[];
    /// Whether the host should call [`Hook::before_tool_call`].
    const BEFORE: bool = true;
    /// Whether the host should call [`Hook::after_tool_call`].
    const AFTER: bool = true;
    /// The session stages the host calls [`Hook::session_hook`] at; empty for none.
    const STAGES: &'static [SessionStage] = &[];

    /// Decides about a call before it runs. `cx` gives settings and logging.
    fn before_tool_call(&self, call: &ToolCall, cx: &Context) -> BeforeDecision {
        let _ = (call, cx);
        BeforeDecision::Allow
    }

    /// Decides about a call's result before it goes back to the model.
    fn after_tool_call(&self, call: &ToolCall, result: &CallResult, cx: &Context) -> AfterDecision {
        let _ = (call, result, cx);
        AfterDecision::Keep
    }

    /// Decides at one of the declared [`Hook::STAGES`].
    fn session_hook(&self, event: &SessionEvent, cx: &Context) -> SessionDecision {
        let _ = (event, cx);
        SessionDecision::proceed()
    }
}

/// The "no hook" of a plugin that only provides tools.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHook;

impl Hook for NoHook {
    const BEFORE: bool = false;
    const AFTER: bool = false;
}
