//! Resources, resource templates and prompts (contract 0.4): a trait for each, implemented by a
//! type the plugin lists in [`crate::export_plugin!`], and the type-erased entries that answer the
//! host's `read-resource`, `get-prompt` and `complete`.
//!
//! ```ignore
//! struct Guide;
//! impl Resource for Guide {
//!     const URI: &'static str = "docs://guide";
//!     const NAME: &'static str = "guide";
//!     const MIME_TYPE: &'static str = "text/markdown";
//!     fn read(&self, _cx: &Context) -> ResourceResult {
//!         Ok(ResourceData::text("# The guide"))
//!     }
//! }
//! cordon_sdk::export_plugin!(resources: [Guide]);
//! ```

use crate::uri_vars::{UriVars, match_template};
use crate::{Content, Context, ToolError};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a resource read returns: text, or bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceData {
    Text(String),
    Blob(Vec<u8>),
}

impl ResourceData {
    /// A text resource.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    /// A binary resource (sent to clients base64-encoded).
    pub fn blob(bytes: impl Into<Vec<u8>>) -> Self {
        Self::Blob(bytes.into())
    }
}

/// A resource read's outcome.
pub type ResourceResult = Result<ResourceData, ToolError>;

/// A resource whose URI is known when the plugin loads.
pub trait Resource: 'static {
    /// An absolute URI (`docs://guide`), unique in the plugin.
    const URI: &'static str;
    /// A short name.
    const NAME: &'static str;
    /// A human-readable title; "" uses the name.
    const TITLE: &'static str = "";
    /// What it holds and when to read it.
    const DESCRIPTION: &'static str = "";
    /// Its MIME type (`text/markdown`); "" when unknown.
    const MIME_TYPE: &'static str = "";
    /// Reads it, in a sandbox with the plugin's grants.
    fn read(&self, cx: &Context) -> ResourceResult;
}

/// Resources named by an RFC 6570 URI template (`notes://{name}`, `file:///data/{+path}`).
pub trait ResourceTemplate: 'static {
    /// `{name}` holds no `/`, `?` or `#`; `{+name}` holds anything.
    const URI_TEMPLATE: &'static str;
    const NAME: &'static str;
    const TITLE: &'static str = "";
    const DESCRIPTION: &'static str = "";
    const MIME_TYPE: &'static str = "";
    /// Reads the resource at `uri`, whose variables are `vars`.
    fn read(&self, uri: &str, vars: &UriVars, cx: &Context) -> ResourceResult;
    /// Suggests values for `variable` beginning with what was typed (`value`); none by default.
    fn complete(&self, variable: &str, value: &str, cx: &Context) -> Vec<String> {
        let _ = (variable, value, cx);
        Vec::new()
    }
}

/// A filled-in prompt: messages, and optionally a description of this filling.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PromptReply {
    pub description: String,
    pub messages: Vec<(Role, Content)>,
}

/// Who says a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

impl PromptReply {
    /// A reply of one user message.
    pub fn user(text: impl Into<String>) -> Self {
        Self::default().then_user(text)
    }

    /// Appends a user message.
    pub fn then_user(mut self, text: impl Into<String>) -> Self {
        self.messages.push((Role::User, Content::Text(text.into())));
        self
    }

    /// Appends an assistant message.
    pub fn then_assistant(mut self, text: impl Into<String>) -> Self {
        self.messages
            .push((Role::Assistant, Content::Text(text.into())));
        self
    }

    /// Sets the description of this filling.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
}

/// A prompt: messages a person picks, filled in with string arguments. Its arguments are a struct
/// deriving `Deserialize` and `JsonSchema` whose fields are strings (`Option<String>` for those
/// not required); each field's doc comment is the argument's description.
pub trait Prompt: 'static {
    type Args: DeserializeOwned + JsonSchema;
    /// `^[a-zA-Z0-9_-]{1,64}$`, unique in the plugin.
    const NAME: &'static str;
    const TITLE: &'static str = "";
    const DESCRIPTION: &'static str = "";
    /// Fills the prompt in.
    fn get(&self, args: Self::Args, cx: &Context) -> Result<PromptReply, ToolError>;
    /// Suggests values for `argument` beginning with what was typed (`value`); none by default.
    fn complete(&self, argument: &str, value: &str, cx: &Context) -> Vec<String> {
        let _ = (argument, value, cx);
        Vec::new()
    }
}

/// The declaration of a resource, template or prompt, in the SDK's terms.
pub(crate) enum Declaration {
    Resource {
        uri: &'static str,
        name: &'static str,
        title: &'static str,
        description: &'static str,
        mime_type: &'static str,
    },
    Template {
        uri_template: &'static str,
        name: &'static str,
        title: &'static str,
        description: &'static str,
        mime_type: &'static str,
    },
    Prompt {
        name: &'static str,
        title: &'static str,
        description: &'static str,
        /// (name, description, required) of each argument.
        arguments: Vec<(String, String, bool)>,
    },
}

type ReadFn = Box<dyn Fn(&str, &UriVars, &Context) -> ResourceResult>;
type GetFn = Box<dyn Fn(Value, &Context) -> Result<PromptReply, ToolError>>;
type CompleteFn = Box<dyn Fn(&str, &str, &Context) -> Vec<String>>;

/// A resource or a template, its type erased.
pub struct ResourceEntry {
    /// The URI, or the URI template.
    key: &'static str,
    is_template: bool,
    declare: fn() -> Declaration,
    read: ReadFn,
    complete: CompleteFn,
}

impl ResourceEntry {
    /// A resource with a fixed URI.
    pub fn fixed<R: Resource>(resource: R) -> Self {
        Self {
            key: R::URI,
            is_template: false,
            declare: || Declaration::Resource {
                uri: R::URI,
                name: R::NAME,
                title: R::TITLE,
                description: R::DESCRIPTION,
                mime_type: R::MIME_TYPE,
            },
            read: Box::new(move |_, _, cx| resource.read(cx)),
            complete: Box::new(|_, _, _| Vec::new()),
        }
    }

    /// A resource template.
    pub fn template<T: ResourceTemplate>(template: T) -> Self {
        let template = std::rc::Rc::new(template);
        let completing = template.clone();
        Self {
            key: T::URI_TEMPLATE,
            is_template: true,
            declare: || Declaration::Template {
                uri_template: T::URI_TEMPLATE,
                name: T::NAME,
                title: T::TITLE,
                description: T::DESCRIPTION,
                mime_type: T::MIME_TYPE,
            },
            read: Box::new(move |uri, vars, cx| template.read(uri, vars, cx)),
            complete: Box::new(move |variable, value, cx| completing.complete(variable, value, cx)),
        }
    }

    pub(crate) fn declaration(&self) -> Declaration {
        (self.declare)()
    }

    /// Whether this is a template.
    pub(crate) fn is_template(&self) -> bool {
        self.is_template
    }

    /// Its URI template (or URI).
    pub(crate) fn key(&self) -> &'static str {
        self.key
    }

    /// Reads `uri` if this entry serves it.
    pub(crate) fn read_if_served(&self, uri: &str, cx: &Context) -> Option<ResourceResult> {
        if !self.is_template {
            return (uri == self.key).then(|| (self.read)(uri, &UriVars::default(), cx));
        }
        let vars = match_template(self.key, uri)?;
        Some((self.read)(uri, &vars, cx))
    }

    pub(crate) fn complete(&self, variable: &str, value: &str, cx: &Context) -> Vec<String> {
        (self.complete)(variable, value, cx)
    }
}

/// A prompt, its arguments type erased.
pub struct PromptEntry {
    name: &'static str,
    declare: fn() -> Declaration,
    get: GetFn,
    complete: CompleteFn,
}

impl PromptEntry {
    pub fn new<P: Prompt>(prompt: P) -> Self {
        let prompt = std::rc::Rc::new(prompt);
        let completing = prompt.clone();
        Self {
            name: P::NAME,
            declare: || Declaration::Prompt {
                name: P::NAME,
                title: P::TITLE,
                description: P::DESCRIPTION,
                arguments: arguments_of::<P::Args>(),
            },
            get: Box::new(move |arguments, cx| {
                let args: P::Args = serde_json::from_value(arguments).map_err(|err| {
                    ToolError::new(format!(
                        "the arguments do not fit prompt {}: {err}",
                        P::NAME
                    ))
                })?;
                prompt.get(args, cx)
            }),
            complete: Box::new(move |argument, value, cx| completing.complete(argument, value, cx)),
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    pub(crate) fn declaration(&self) -> Declaration {
        (self.declare)()
    }

    pub(crate) fn get(&self, arguments: Value, cx: &Context) -> Result<PromptReply, ToolError> {
        (self.get)(arguments, cx)
    }

    pub(crate) fn complete(&self, argument: &str, value: &str, cx: &Context) -> Vec<String> {
        (self.complete)(argument, value, cx)
    }
}

/// A prompt's arguments from its arguments struct's schema: each property, its description, and
/// whether the schema requires it.
fn arguments_of<A: JsonSchema>() -> Vec<(String, String, bool)> {
    let schema = crate::schema_of::<A>();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema["properties"]
        .as_object()
        .map(|properties| {
            properties
                .iter()
                .map(|(name, property)| {
                    let description = property["description"].as_str().unwrap_or("").to_string();
                    (name.clone(), description, required.contains(&name.as_str()))
                })
                .collect()
        })
        .unwrap_or_default()
}
