//! Reading a resource, filling in a prompt and completing an argument through the pipeline: the
//! catalog routes the request to the plugin that serves it, the plugin runs it in a sandbox with
//! its grants, configured secrets are masked in what comes back, and the audit log records it.

use crate::pipeline::Pipeline;
use crate::report::Content;
use crate::report::ErrorKind;
use crate::sandbox::contract::offer_terms::{
    CompletionRequest, CompletionTarget, FilledPrompt, ResourceBody, ResourceContents,
};
use crate::sandbox::failure::Failure;
use crate::sandbox::plugin::CallOptions;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// Why a resource, prompt or completion was not served.
#[derive(Debug, thiserror::Error)]
pub enum OfferError {
    /// No plugin declares the URI or has a template matching it.
    #[error(
        "no plugin serves resource {uri:?}; resources/list and resources/templates/list say which URIs are served"
    )]
    UnknownResource {
        /// The URI asked for, secrets masked.
        uri: String,
    },
    /// No plugin declares a prompt of this name.
    #[error("no prompt is named {name:?}; prompts/list says which are served")]
    UnknownPrompt {
        /// The name asked for.
        name: String,
    },
    /// A completion for a resource template no plugin declares.
    #[error(
        "no resource template is {uri_template:?}; resources/templates/list says which are served"
    )]
    UnknownTemplate {
        /// The template asked for.
        uri_template: String,
    },
    /// The plugin ran and failed, or was stopped, or the request's arguments were wrong.
    #[error("{message}")]
    Failed {
        /// How it failed: `invalid_arguments`, `tool_error`, `capability_denied`, `trap`, ...
        kind: ErrorKind,
        /// What happened, for a person or a model.
        message: String,
    },
}

impl From<Failure> for OfferError {
    fn from(failure: Failure) -> Self {
        Self::Failed {
            kind: failure.kind,
            message: failure.message,
        }
    }
}

/// A resource read: its contents and the plugin that served them.
pub struct ResourceRead {
    /// The plugin serving it.
    pub plugin: String,
    /// The parts read, secrets masked.
    pub contents: Vec<ResourceContents>,
}

impl Pipeline {
    /// Reads resource `uri` from the plugin that serves it.
    pub async fn read_resource(
        &self,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<ResourceRead, OfferError> {
        let Some((plugin, mime_type)) = self.offers().resource_owner(uri) else {
            return Err(OfferError::UnknownResource {
                uri: self.secrets().scrub(uri).into_owned(),
            });
        };
        let options = CallOptions {
            reports: None,
            cancel,
        };
        let outcome = plugin.read_resource(uri, mime_type, &options).await;
        let bytes: usize = outcome
            .as_ref()
            .map_or(0, |parts| parts.iter().map(|part| part.body.len()).sum());
        self.audit_offer(
            "resource_read",
            &plugin.id,
            json!({ "uri": uri, "bytes": bytes }),
            &outcome,
        );
        let mut contents = outcome?;
        for part in &mut contents {
            self.mask(part);
        }
        Ok(ResourceRead {
            plugin: plugin.id.to_string(),
            contents,
        })
    }

    /// Prompt `name` filled in with `arguments` by the plugin that serves it.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        cancel: CancellationToken,
    ) -> Result<FilledPrompt, OfferError> {
        let Some(listed) = self.offers().prompt(name) else {
            return Err(OfferError::UnknownPrompt {
                name: self.secrets().scrub(name).into_owned(),
            });
        };
        let options = CallOptions {
            reports: None,
            cancel,
        };
        let outcome = listed
            .plugin
            .get_prompt(&listed.item, arguments, &options)
            .await;
        self.audit_offer(
            "prompt_get",
            &listed.plugin.id,
            json!({ "prompt": name }),
            &outcome,
        );
        let mut filled = outcome?;
        filled.description = self.secrets().scrub(&filled.description).into_owned();
        for message in &mut filled.messages {
            if let Content::Text { text } = &mut message.content {
                *text = self.secrets().scrub(text).into_owned();
            }
        }
        Ok(filled)
    }

    /// Completions for an argument of a prompt or a resource template, from the plugin that
    /// serves it.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, OfferError> {
        let plugin = match &request.target {
            CompletionTarget::Prompt(name) => match self.offers().prompt(name) {
                Some(listed) => &listed.plugin,
                None => return Err(OfferError::UnknownPrompt { name: name.clone() }),
            },
            CompletionTarget::ResourceTemplate(template) => {
                match self.offers().template(template) {
                    Some(listed) => &listed.plugin,
                    None => {
                        return Err(OfferError::UnknownTemplate {
                            uri_template: template.clone(),
                        });
                    }
                }
            }
        };
        let options = CallOptions {
            reports: None,
            cancel,
        };
        let values = plugin.complete(request, &options).await?;
        Ok(values
            .into_iter()
            .map(|value| self.secrets().scrub(&value).into_owned())
            .collect())
    }

    /// Masks configured secrets in one part of a resource read.
    fn mask(&self, part: &mut ResourceContents) {
        part.uri = self.secrets().scrub(&part.uri).into_owned();
        match &mut part.body {
            ResourceBody::Text(text) => *text = self.secrets().scrub(text).into_owned(),
            ResourceBody::Blob(bytes) => *bytes = self.secrets().scrub_bytes(bytes).into_owned(),
        }
    }

    /// One audit record of a read or a prompt: what, which plugin, and how it ended.
    fn audit_offer<T>(
        &self,
        event: &str,
        plugin: &str,
        mut record: Value,
        outcome: &Result<T, Failure>,
    ) {
        record["event"] = event.into();
        record["plugin"] = plugin.into();
        record["outcome"] = match outcome {
            Ok(_) => "ok".into(),
            Err(failure) => failure.kind.as_str().into(),
        };
        let mut record = record;
        self.secrets().scrub_json(&mut record);
        self.record_in_audit_log(record);
    }
}
