//! What a tool returns: [`Output`] on success, [`ToolError`] on failure.

use serde_json::Value;

/// One piece of content the model sees.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    Text(String),
    Image { mime_type: String, data: Vec<u8> },
}

/// A tool's successful output: content for the model, structured output for clients that read
/// it (matching the tool's output schema), details for UIs and logs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    pub content: Vec<Content>,
    pub structured: Option<Value>,
    pub details: Option<Value>,
}

impl Output {
    /// Output made of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text(text.into())],
            ..Self::default()
        }
    }

    /// Structured output (it must serialize to a JSON object matching the tool's output schema),
    /// with its JSON as the text the model reads, since not every client reads structured output.
    pub fn structured<T: serde::Serialize>(value: &T) -> Result<Self, ToolError> {
        let value = serde_json::to_value(value)?;
        let text = serde_json::to_string_pretty(&value)?;
        Ok(Self {
            content: vec![Content::Text(text)],
            structured: Some(value),
            details: None,
        })
    }

    /// Sets the structured output, keeping the content as it is.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Output made of one image.
    pub fn image(mime_type: impl Into<String>, data: Vec<u8>) -> Self {
        Self::default().with_image(mime_type, data)
    }

    /// Appends a text block.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.content.push(Content::Text(text.into()));
        self
    }

    /// Appends an image.
    pub fn with_image(mut self, mime_type: impl Into<String>, data: Vec<u8>) -> Self {
        self.content.push(Content::Image {
            mime_type: mime_type.into(),
            data,
        });
        self
    }

    /// Attaches structured details (a JSON object) for UIs and logs; the model does not see them.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

/// Why a tool failed. The message goes to the model: say what went wrong and what to do instead.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub message: String,
    /// True when the failure is a capability the operator did not grant.
    pub capability_denied: bool,
    pub details: Option<Value>,
}

impl ToolError {
    /// An ordinary failure (`tool_error`).
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            capability_denied: false,
            details: None,
        }
    }

    /// A failure caused by a missing grant (`capability_denied`).
    pub fn denied(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            capability_denied: true,
            details: None,
        }
    }

    /// Attaches structured details (a JSON object).
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        Self::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        Self::new(message)
    }
}

/// An I/O error refused by the sandbox (no grant, or a read-only grant) is `capability_denied`.
impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> Self {
        use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
        match err.kind() {
            PermissionDenied | ReadOnlyFilesystem => Self::denied(err.to_string()),
            _ => Self::new(err.to_string()),
        }
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(err: serde_json::Error) -> Self {
        Self::new(err.to_string())
    }
}

/// What [`crate::Tool::run`] returns.
pub type ToolResult = Result<Output, ToolError>;
