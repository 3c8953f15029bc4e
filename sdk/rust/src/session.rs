//! Session stages as a hook sees them: [`SessionStage`], the [`SessionEvent`] at each, and the
//! [`SessionDecision`] a hook returns (contract 0.3; docs/session-hooks.md says what each stage
//! sends and which decisions it takes).

use serde_json::Value;

/// A point of an agent session a hook can watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionStage {
    /// A session begins (or resumes): add context to its first request.
    SessionStart,
    /// The user's prompt, before anything else: block, rewrite, add context, or route the turn.
    Prompt,
    /// A request about to go to the model: add context, offer fewer tools, or block.
    ModelRequest,
    /// The model's reply: replace its text or drop some of its tool calls.
    ModelResponse,
    /// Older turns about to be folded (`phase` `before`): supply the summary; and after (`after`).
    Compaction,
    /// A turn's final answer: accept it, or continue the turn with a message.
    Stop,
    /// A session ended (observe only).
    SessionEnd,
}

impl SessionStage {
    /// Every stage, in the order a session meets them.
    pub const ALL: &'static [SessionStage] = &[
        SessionStage::SessionStart,
        SessionStage::Prompt,
        SessionStage::ModelRequest,
        SessionStage::ModelResponse,
        SessionStage::Compaction,
        SessionStage::Stop,
        SessionStage::SessionEnd,
    ];

    /// The stage's name in the contract and the docs (`model-request`).
    pub fn name(self) -> &'static str {
        match self {
            SessionStage::SessionStart => "session-start",
            SessionStage::Prompt => "prompt",
            SessionStage::ModelRequest => "model-request",
            SessionStage::ModelResponse => "model-response",
            SessionStage::Compaction => "compaction",
            SessionStage::Stop => "stop",
            SessionStage::SessionEnd => "session-end",
        }
    }
}

/// One stage of a session: its payload is a JSON object whose fields depend on the stage (texts
/// already cut to the documented bounds, configured secrets masked).
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEvent {
    pub stage: SessionStage,
    pub payload: Value,
}

impl SessionEvent {
    /// A text field of the payload (`prompt`, `answer`, `text`, `summary`), if it is there.
    pub fn text(&self, field: &str) -> Option<&str> {
        self.payload.get(field).and_then(Value::as_str)
    }
}

/// What a session hook decides; the default leaves everything alone. A field the stage does not
/// take makes the decision malformed, and the host fails closed (the turn stops).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionDecision {
    /// Stop here with a reason the user sees (prompt, model-request).
    pub block: Option<String>,
    /// The new prompt (prompt), the reply's text (model-response), the summary of the folded
    /// turns (compaction), or the message to continue the turn with (stop).
    pub replace: Option<String>,
    /// Context for the next model request (session-start, prompt, model-request).
    pub add_context: Option<String>,
    /// Offer only these tools or groups (prompt, model-request); it can only narrow, and an empty
    /// list offers none.
    pub only_tools: Option<Vec<String>>,
    /// Ids of the reply's calls to drop (model-response).
    pub drop_calls: Vec<String>,
}

impl SessionDecision {
    /// Leave the stage as it is.
    pub fn proceed() -> Self {
        Self::default()
    }

    /// Stop the turn with this reason.
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            block: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Replace the stage's text (see [`SessionDecision::replace`]); at `stop`, continue the turn
    /// with this message.
    pub fn replace(text: impl Into<String>) -> Self {
        Self {
            replace: Some(text.into()),
            ..Self::default()
        }
    }

    /// Add context to the next model request.
    pub fn add_context(text: impl Into<String>) -> Self {
        Self {
            add_context: Some(text.into()),
            ..Self::default()
        }
    }

    /// Offer only these tools or groups (`[]`: none).
    pub fn only_tools<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            only_tools: Some(names.into_iter().map(Into::into).collect()),
            ..Self::default()
        }
    }

    /// Drop the reply's calls with these ids.
    pub fn drop_calls<I, S>(ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            drop_calls: ids.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
}
