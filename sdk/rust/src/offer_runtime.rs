//! Glue between contract 0.4's exports for resources and prompts and the SDK's entries: their
//! declarations for `describe`, and `read-resource`, `get-prompt` and `complete` routed to the
//! entry that serves the URI, prompt or template.

use crate::bindings::cordon::plugin::types as wit;
use crate::offers::{Declaration, Role};
use crate::runtime::{PluginRuntime, to_wit_content, to_wit_failure};
use crate::{Context, Hook, ToolError};
use serde_json::Value;

type Specs = (
    Vec<wit::ResourceSpec>,
    Vec<wit::ResourceTemplate>,
    Vec<wit::PromptSpec>,
);

impl<H: Hook> PluginRuntime<H> {
    /// The declarations of the plugin's resources, templates and prompts.
    pub(crate) fn offered_specs(&self) -> Specs {
        let (mut resources, mut templates, mut prompts) = (Vec::new(), Vec::new(), Vec::new());
        let declarations = self
            .resources
            .iter()
            .map(|entry| entry.declaration())
            .chain(self.prompts.iter().map(|entry| entry.declaration()));
        for declaration in declarations {
            match declaration {
                Declaration::Resource {
                    uri,
                    name,
                    title,
                    description,
                    mime_type,
                } => resources.push(wit::ResourceSpec {
                    uri: uri.into(),
                    name: name.into(),
                    title: title.into(),
                    description: description.into(),
                    mime_type: mime_type.into(),
                    size: None,
                }),
                Declaration::Template {
                    uri_template,
                    name,
                    title,
                    description,
                    mime_type,
                } => templates.push(wit::ResourceTemplate {
                    uri_template: uri_template.into(),
                    name: name.into(),
                    title: title.into(),
                    description: description.into(),
                    mime_type: mime_type.into(),
                }),
                Declaration::Prompt {
                    name,
                    title,
                    description,
                    arguments,
                } => prompts.push(wit::PromptSpec {
                    name: name.into(),
                    title: title.into(),
                    description: description.into(),
                    arguments: arguments
                        .into_iter()
                        .map(|(name, description, required)| wit::PromptArgument {
                            name,
                            description,
                            required,
                        })
                        .collect(),
                }),
            }
        }
        (resources, templates, prompts)
    }

    /// Reads `uri`: a fixed resource of that URI first, then the first template matching it.
    pub fn read_resource(
        self,
        uri: String,
    ) -> Result<Vec<wit::ResourceContents>, wit::ToolFailure> {
        let cx = Context::new(String::new());
        let mut entries: Vec<_> = self.resources.iter().collect();
        entries.sort_by_key(|entry| entry.is_template());
        let read = entries
            .into_iter()
            .find_map(|entry| entry.read_if_served(&uri, &cx))
            .unwrap_or_else(|| {
                Err(ToolError::new(format!(
                    "this plugin serves no resource {uri:?}"
                )))
            });
        let data = read.map_err(to_wit_failure)?;
        Ok(vec![wit::ResourceContents {
            uri,
            mime_type: String::new(),
            body: match data {
                crate::ResourceData::Text(text) => wit::ResourceBody::Text(text),
                crate::ResourceData::Blob(bytes) => wit::ResourceBody::Blob(bytes),
            },
        }])
    }

    /// Fills in prompt `name` with `arguments` (a JSON object's text).
    pub fn get_prompt(
        self,
        name: String,
        arguments: String,
    ) -> Result<wit::PromptResult, wit::ToolFailure> {
        let Some(entry) = self.prompts.iter().find(|entry| entry.name() == name) else {
            return Err(to_wit_failure(ToolError::new(format!(
                "this plugin has no prompt named {name:?}"
            ))));
        };
        let arguments: Value = serde_json::from_str(&arguments).map_err(|err| {
            to_wit_failure(ToolError::new(format!("arguments are not JSON: {err}")))
        })?;
        let cx = Context::new(String::new());
        let reply = entry.get(arguments, &cx).map_err(to_wit_failure)?;
        Ok(wit::PromptResult {
            description: reply.description,
            messages: reply
                .messages
                .into_iter()
                .map(|(role, content)| wit::PromptMessage {
                    role: match role {
                        Role::User => wit::PromptRole::User,
                        Role::Assistant => wit::PromptRole::Assistant,
                    },
                    content: to_wit_content(content),
                })
                .collect(),
        })
    }

    /// Completions from the prompt or template the request names.
    pub fn complete(self, request: wit::CompletionRequest) -> Vec<String> {
        let cx = Context::new(String::new());
        match request.target {
            wit::CompletionTarget::Prompt(name) => self
                .prompts
                .iter()
                .find(|entry| entry.name() == name)
                .map(|entry| entry.complete(&request.argument, &request.value, &cx)),
            wit::CompletionTarget::ResourceTemplate(template) => self
                .resources
                .iter()
                .find(|entry| entry.is_template() && entry.key() == template)
                .map(|entry| entry.complete(&request.argument, &request.value, &cx)),
        }
        .unwrap_or_default()
    }
}
