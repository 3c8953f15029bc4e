//! Reading a resource, filling in a prompt and completing an argument through the pipeline: the
//! catalog routes the request to the plugin that serves it, the plugin runs it in a sandbox with
//! its grants (and masks configured secrets in what it returns, `sandbox/plugin/offers.rs`), a
//! failure's message is masked too, a part naming a URI another plugin serves is refused, and the
//! audit log records each request.

use crate::pipeline::Pipeline;
use crate::report::ErrorKind;
use crate::sandbox::contract::offer_terms::{
    CompletionRequest, CompletionTarget, FilledPrompt, ResourceBody, ResourceContents,
};
use crate::sandbox::failure::Failure;
use crate::sandbox::plugin::CallOptions;
use crate::schema::uri_template::UriTemplate;
use crate::skills::SkillOrigin;
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

/// A resource read: its contents and the plugin that served them.
pub struct ResourceRead {
    /// The plugin serving it ("" for a file of the operator's own skills).
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
        if let Some(read) = self.read_skill_file(uri) {
            return Ok(read);
        }
        let Some((plugin, mime_type)) = self.offers().resource_owner(uri) else {
            return Err(OfferError::UnknownResource {
                uri: self.secrets().scrub(uri).into_owned(),
            });
        };
        let options = CallOptions {
            reports: None,
            cancel,
        };
        let outcome = plugin
            .read_resource(uri, mime_type, &options)
            .await
            .and_then(|parts| self.owned_parts(uri, &plugin.id, parts));
        let bytes: usize = outcome
            .as_ref()
            .map_or(0, |parts| parts.iter().map(|part| part.body.len()).sum());
        self.audit_offer(
            "resource_read",
            &plugin.id,
            json!({ "uri": uri, "bytes": bytes }),
            &outcome,
        );
        Ok(ResourceRead {
            plugin: plugin.id.to_string(),
            contents: outcome.map_err(|failure| self.failed(failure))?,
        })
    }

    /// A skill's file, if `uri` is one: served from what was read at load, secrets masked, audited
    /// as any read is.
    fn read_skill_file(&self, uri: &str) -> Option<ResourceRead> {
        let (skill, file) = self.offers().skill_file(uri)?;
        let body = if file.is_text() {
            ResourceBody::Text(String::from_utf8_lossy(&file.bytes).into_owned())
        } else {
            ResourceBody::Blob(file.bytes.to_vec())
        };
        let mut part = ResourceContents {
            uri: uri.to_string(),
            mime_type: file.mime_type().to_string(),
            body,
        };
        crate::sandbox::plugin::offers::mask_part(self.secrets(), &mut part);
        let served_by = match &skill.origin {
            SkillOrigin::Plugin(plugin) => plugin.to_string(),
            SkillOrigin::Folder(_) => String::new(),
        };
        let outcome: Result<(), Failure> = Ok(());
        self.audit_offer(
            "resource_read",
            &served_by,
            json!({ "uri": uri, "bytes": file.bytes.len(), "skill": skill.name() }),
            &outcome,
        );
        Some(ResourceRead {
            plugin: served_by,
            contents: vec![part],
        })
    }

    /// The parts, unless one names a URI (below the one read) that another plugin serves.
    fn owned_parts(
        &self,
        uri: &str,
        plugin: &str,
        parts: Vec<ResourceContents>,
    ) -> Result<Vec<ResourceContents>, Failure> {
        for part in &parts {
            if part.uri == uri {
                continue;
            }
            if let Some((owner, _)) = self.offers().resource_owner(&part.uri)
                && *owner.id != *plugin
            {
                return Err(Failure::new(
                    ErrorKind::ToolError,
                    format!(
                        "reading resource {uri} of plugin {plugin}: it returned a part for {:?}, which plugin {} serves. This is a bug in the plugin, not in the request.",
                        part.uri, owner.id
                    ),
                    Value::Null,
                ));
            }
        }
        Ok(parts)
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
        outcome.map_err(|failure| self.failed(failure))
    }

    /// Completions for an argument of a prompt or a variable of a resource template, from the
    /// plugin that serves it. An argument the prompt does not take (a variable the template does
    /// not have) is refused before the plugin is asked.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, OfferError> {
        let (plugin, names): (_, Vec<String>) = match &request.target {
            CompletionTarget::Prompt(name) => match self.offers().prompt(name) {
                Some(listed) => (
                    &listed.plugin,
                    listed
                        .item
                        .arguments
                        .iter()
                        .map(|a| a.name.clone())
                        .collect(),
                ),
                None => {
                    return Err(OfferError::UnknownPrompt {
                        name: self.secrets().scrub(name).into_owned(),
                    });
                }
            },
            CompletionTarget::ResourceTemplate(template) => {
                match self.offers().template(template) {
                    Some(listed) => (
                        &listed.plugin,
                        UriTemplate::parse(&listed.item.uri_template)
                            .map(|parsed| parsed.variables().map(String::from).collect())
                            .unwrap_or_default(),
                    ),
                    None => {
                        return Err(OfferError::UnknownTemplate {
                            uri_template: self.secrets().scrub(template).into_owned(),
                        });
                    }
                }
            }
        };
        if !names.contains(&request.argument) {
            return Err(OfferError::Failed {
                kind: ErrorKind::InvalidArguments,
                message: format!(
                    "there is no argument {:?} to complete; it has: {}",
                    self.secrets().scrub(&request.argument),
                    names.join(", ")
                ),
            });
        }
        let options = CallOptions {
            reports: None,
            cancel,
        };
        let outcome = plugin.complete(request, &options).await;
        self.audit_offer(
            "completion",
            &plugin.id,
            json!({ "argument": request.argument }),
            &outcome,
        );
        outcome.map_err(|failure| self.failed(failure))
    }

    /// A plugin's failure as an error, its message masked.
    fn failed(&self, failure: Failure) -> OfferError {
        OfferError::Failed {
            kind: failure.kind,
            message: self.secrets().scrub(&failure.message).into_owned(),
        }
    }

    /// One audit record of a read, a prompt or a completion: what, which plugin, how it ended.
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
        self.secrets().scrub_json(&mut record);
        self.record_in_audit_log(record);
    }
}
