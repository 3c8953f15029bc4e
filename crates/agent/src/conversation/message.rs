//! The conversation as cordon keeps it, independent of any provider: system, user, assistant and
//! tool messages. Transcripts store exactly these, one JSON object per line; each provider module
//! translates them to its own wire format. Five kinds of line are the session's own record and
//! never reach a model as they are: the start of a turn with its prompt, a compaction (the summary
//! that stands in for older turns), the end of a turn with its token usage, the tools a search
//! loaded, and a change of the tools while the session ran (a live reload). A user message's text
//! is a [`UserText`]: what a hook or a summary wrote gets into one only through its gate.

use super::user_text::UserText;
use cordon_runtime::report::{ErrorKind, ToolResult};
use serde::{Deserialize, Serialize};

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: UserText,
    },
    Assistant {
        #[serde(default)]
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        #[serde(default)]
        stop: StopReason,
        /// The tokens the request and this reply took, as the API reported them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// The result of one tool call; a step's results follow its assistant message in call order.
    Tool(ToolOutcome),
    /// A turn began with this prompt, as the user gave it (and, when a `prompt` hook rewrote it,
    /// the rewrite): the user message after it carries it to the model. A resume of an unfinished
    /// turn gives the prompt hooks and routing this prompt again, whatever came after it.
    TurnStart {
        prompt: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rewritten: Option<String>,
    },
    /// Older turns compacted to fit the context window: from here on, the messages after the first
    /// user message and before message number `through` (counting every line of the transcript
    /// from 0) reach the model as `summary`.
    Compaction {
        summary: String,
        through: usize,
        /// `model` (the model wrote the summary) or `digest` (cordon did).
        method: String,
        /// The estimated tokens of the history before and after.
        tokens_before: u64,
        tokens_after: u64,
    },
    /// A turn ended; the tokens all its model requests took.
    TurnEnd {
        model_requests: u32,
        usage: Usage,
    },
    /// `search_tools` loaded these tools (after its result): they are offered from here on.
    ToolsLoaded {
        tools: Vec<String>,
    },
    /// The tools changed while the session ran (plugins or the config reloaded): later requests
    /// offer the new set.
    ToolsChanged {
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        added: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        removed: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        changed: Vec<String>,
    },
}

impl Message {
    /// Whether this line is part of the conversation a model sees (not a session record).
    pub fn is_conversation(&self) -> bool {
        !self.is_record()
    }

    /// Whether this line is the session's own record (never sent to a model as it is).
    pub fn is_record(&self) -> bool {
        matches!(
            self,
            Self::Compaction { .. }
                | Self::TurnStart { .. }
                | Self::TurnEnd { .. }
                | Self::ToolsLoaded { .. }
                | Self::ToolsChanged { .. }
        )
    }
}

/// Tokens as a model API counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    /// Adds `other`; a server may report any number, so the sums saturate.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
    }
}

/// A tool call as the model made it. The arguments stay raw text: they may not even be JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Why the model stopped writing its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    #[default]
    End,
    /// It wants its tool calls run.
    ToolCalls,
    /// It ran into the output token limit: its reply, and any tool call in it, is cut off.
    Length,
    /// Something else (a content filter, a stop sequence, a reason cordon does not know).
    Other,
}

/// A tool result as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub tool_call_id: String,
    pub tool_name: String,
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    pub content: String,
}

impl ToolOutcome {
    /// The text of a pipeline result; images are named, not inlined.
    pub fn from_result(result: &ToolResult) -> Self {
        let content = result
            .content
            .iter()
            .map(|block| match block {
                cordon_runtime::report::Content::Text { text } => text.clone(),
                cordon_runtime::report::Content::Image { mime_type, data } => {
                    format!("[image: {mime_type}, {} bytes]", data.len())
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        Self {
            tool_call_id: result.tool_call_id.clone(),
            tool_name: result.tool_name.clone(),
            is_error: result.is_error,
            error_kind: result.error_kind,
            content,
        }
    }

    /// An error result made by the loop itself (the call never reached the pipeline).
    pub fn error(call: &ToolCall, kind: ErrorKind, text: impl Into<String>) -> Self {
        Self {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            is_error: true,
            error_kind: Some(kind),
            content: text.into(),
        }
    }

    /// The content with the error spelled out, for providers without an error flag (OpenAI).
    pub fn content_with_error_prefix(&self) -> String {
        match (self.is_error, self.error_kind) {
            (false, _) => self.content.clone(),
            (true, Some(kind)) => format!("Error ({kind}): {}", self.content),
            (true, None) => format!("Error: {}", self.content),
        }
    }
}

/// The model's reply to one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub stop: StopReason,
    /// The API's token count for this request and reply, when it sent one.
    pub usage: Option<Usage>,
    /// Streaming stopped early because the text already held everything needed (a call written
    /// twice); the rest of the reply was never read, and the server never counted its usage.
    pub cut_short: bool,
}

impl StopReason {
    /// The reason as the GenAI conventions' `gen_ai.response.finish_reasons` spells it.
    pub fn convention_name(self) -> &'static str {
        match self {
            Self::End => "stop",
            Self::ToolCalls => "tool_calls",
            Self::Length => "length",
            Self::Other => "other",
        }
    }
}

impl Reply {
    pub fn into_message(self) -> Message {
        Message::Assistant {
            content: self.text,
            tool_calls: self.tool_calls,
            stop: self.stop,
            usage: self.usage,
        }
    }
}
