//! What a plugin serves besides tools (contract 0.4), in the host's terms: the resources,
//! resource templates and prompts it declares, a resource read's contents, a filled-in prompt and
//! a completion request. Plugins of older contracts offer none of these.

use crate::report::Content;
use serde::Serialize;

/// Everything a plugin offers besides tools and a hook.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Offered {
    /// The resources with URIs known at load.
    pub resources: Vec<DeclaredResource>,
    /// The resource templates.
    #[serde(rename = "resourceTemplates")]
    pub templates: Vec<DeclaredTemplate>,
    /// The prompts.
    pub prompts: Vec<DeclaredPrompt>,
}

impl Offered {
    /// Whether it offers nothing.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty() && self.prompts.is_empty()
    }
}

/// A resource with a URI known at load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclaredResource {
    /// The resource's URI.
    pub uri: String,
    /// Its short name.
    pub name: String,
    /// Its human-readable title; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// What it is for; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its MIME type; "" when unknown.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mime_type: String,
    /// Its size in bytes, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A family of resources named by an RFC 6570 URI template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeclaredTemplate {
    /// The RFC 6570 template (levels 1-2).
    pub uri_template: String,
    /// Its short name.
    pub name: String,
    /// Its human-readable title; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// What it is for; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its MIME type; "" when unknown.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mime_type: String,
}

/// One argument of a prompt (its value is always a string).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptArgument {
    /// Its short name.
    pub name: String,
    /// What it is for; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Whether a value must be given.
    pub required: bool,
}

/// A prompt as declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeclaredPrompt {
    /// Its short name.
    pub name: String,
    /// Its human-readable title; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub title: String,
    /// What it is for; "" for none.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its arguments, in order.
    pub arguments: Vec<PromptArgument>,
}

/// A resource's body: text, or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl ResourceBody {
    /// Its size in bytes.
    pub fn len(&self) -> usize {
        match self {
            Self::Text(text) => text.len(),
            Self::Blob(bytes) => bytes.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One part of a resource read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// "" when neither the read nor the declaration gave one.
    pub mime_type: String,
    /// The contents.
    pub body: ResourceBody,
}

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptRole {
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// One message of a filled-in prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: PromptRole,
    /// What is said.
    pub content: Content,
}

/// A prompt filled in with its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct FilledPrompt {
    /// "" when the plugin gave none.
    pub description: String,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
}

/// What an argument being completed belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by its URI template.
    ResourceTemplate(String),
}

/// A request for completions of one argument's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    /// What the argument belongs to.
    pub target: CompletionTarget,
    /// The argument being typed.
    pub argument: String,
    /// What has been typed so far.
    pub value: String,
    /// The other arguments' values, as a JSON object's text.
    pub context: String,
}
