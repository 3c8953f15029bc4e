//! What every tool call ends with: a [`ToolResult`], success or a classified error. This is the
//! shape `cordon call --json` prints and every later front end (batches, agent loop, MCP) returns.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why a call did not succeed. Machine-readable; the result's text explains it to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No loaded plugin provides a tool with that name.
    NotFound,
    /// The tool exists but is not in this session's active set.
    NotActive,
    /// The arguments are not JSON, not an object, or break the tool's JSON Schema.
    InvalidArguments,
    /// The tool ran and reported a failure.
    ToolError,
    /// The plugin crashed (a WebAssembly trap, such as a panic).
    Trap,
    /// The call ran past its wall-time limit.
    Timeout,
    /// The plugin tried to grow its memory past its limit.
    OutOfMemory,
    /// The plugin used up its fuel (CPU budget).
    OutOfFuel,
    /// The plugin tried to write or create more through its read-write grants in one call than
    /// its disk limits allow.
    OutOfDisk,
    /// The plugin needed a capability the operator did not grant.
    CapabilityDenied,
    /// A before-hook refused the call.
    Blocked,
    /// A hook crashed, timed out or answered garbage; the call was not run or its result withheld.
    HookFailed,
    /// The call was cancelled before it finished.
    Cancelled,
    /// The call needed a person's approval (a hook asked, or `[approval]` names it) and did not
    /// get it.
    NotApproved,
    /// The model's reply was cut off by its output token limit, so the agent loop did not run
    /// the (possibly incomplete) call.
    Truncated,
}

impl ErrorKind {
    /// The kind's name in results and logs (`not_found`, `tool_error`, ...), as it is serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::NotActive => "not_active",
            Self::InvalidArguments => "invalid_arguments",
            Self::ToolError => "tool_error",
            Self::Trap => "trap",
            Self::Timeout => "timeout",
            Self::OutOfMemory => "out_of_memory",
            Self::OutOfFuel => "out_of_fuel",
            Self::CapabilityDenied => "capability_denied",
            Self::Blocked => "blocked",
            Self::HookFailed => "hook_failed",
            Self::Cancelled => "cancelled",
            Self::NotApproved => "not_approved",
            Self::Truncated => "truncated",
            Self::OutOfDisk => "out_of_disk",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One block of content the model sees.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// A block of text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, its bytes decoded.
    Image {
        /// The image's MIME type (`image/png`, ...).
        #[serde(rename = "mimeType")]
        mime_type: String,
        /// Base64 in JSON.
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
    },
}

/// What each content block counts as against size limits besides its bytes.
pub(crate) const BLOCK_OVERHEAD_BYTES: usize = 16;

/// The most content blocks one result may have.
pub const MAX_CONTENT_BLOCKS: usize = 1_000;

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// Bytes this block counts as against size limits: its content and [`BLOCK_OVERHEAD_BYTES`], so
    /// a flood of empty blocks is not free.
    pub fn size(&self) -> usize {
        BLOCK_OVERHEAD_BYTES
            + match self {
                Self::Text { text } => text.len(),
                Self::Image { mime_type, data } => mime_type.len() + data.len(),
            }
    }
}

/// The outcome of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The id of the call, as its request gave it.
    pub tool_call_id: String,
    /// The tool called.
    pub tool_name: String,
    /// Whether the call failed; then `error_kind` says why.
    pub is_error: bool,
    /// Why the call failed; `None` when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error_kind: Option<ErrorKind>,
    /// The content blocks the model sees.
    pub content: Vec<Content>,
    /// The tool's structured output (a JSON object matching its output schema), if it gave one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub structured: Option<Value>,
    /// Structured data for UIs and logs; always a JSON object.
    pub details: Value,
}

impl ToolResult {
    /// A successful result with this content; `details` that is not an object is made one.
    pub fn success(call_id: &str, tool: &str, content: Vec<Content>, details: Value) -> Self {
        Self {
            tool_call_id: call_id.to_string(),
            tool_name: tool.to_string(),
            is_error: false,
            error_kind: None,
            content,
            structured: None,
            details: as_object(details),
        }
    }

    /// A failed result of this kind whose one text block explains it; `details` that is not an
    /// object is made one.
    pub fn error(
        call_id: &str,
        tool: &str,
        kind: ErrorKind,
        text: impl Into<String>,
        details: Value,
    ) -> Self {
        Self {
            tool_call_id: call_id.to_string(),
            tool_name: tool.to_string(),
            is_error: true,
            error_kind: Some(kind),
            content: vec![Content::text(text)],
            structured: None,
            details: as_object(details),
        }
    }

    /// All text blocks, joined with newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                Content::Text { text } => Some(text.as_str()),
                Content::Image { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Details are always an object: `null` becomes `{}`, any other non-object is wrapped.
pub fn as_object(value: Value) -> Value {
    match value {
        Value::Object(_) => value,
        Value::Null => Value::Object(Map::new()),
        other => serde_json::json!({ "value": other }),
    }
}

mod base64_bytes {
    use base64::Engine as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }
}
