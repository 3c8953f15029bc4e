//! Reading a plugin's resources, filling in its prompts and completing their arguments, each in a
//! fresh sandbox with the plugin's grants and limits, as a tool call runs: what comes back has
//! configured secrets masked, is then bounded by the plugin's output limit (URIs and MIME types
//! counted), and is checked against what the plugin declared.

use super::offer_checks::cut;
use super::run::Grants;
use super::{CallOptions, Plugin};
use crate::report::ErrorKind;
use crate::report::secrets::MASK;
use crate::sandbox::contract::content;
use crate::sandbox::contract::offer_terms::{
    CompletionRequest, DeclaredPrompt, FilledPrompt, ResourceBody, ResourceContents,
};
use crate::sandbox::failure::{Failure, human_bytes};
use serde_json::{Map, Value, json};

/// The most parts one resource read may return, and the most messages one prompt.
const MAX_PARTS: usize = 64;
/// The most completions used of one answer (MCP's limit per response).
pub const MAX_COMPLETIONS: usize = 100;

impl Plugin {
    /// Reads resource `uri` (one this plugin declares or whose template it matches; the caller
    /// routed it here). `mime_type` is the declared type, used for parts that give none.
    pub async fn read_resource(
        &self,
        uri: &str,
        mime_type: &str,
        options: &CallOptions,
    ) -> Result<Vec<ResourceContents>, Failure> {
        let what = format!("reading resource {uri} of plugin {}", self.id);
        let owned_uri = uri.to_string();
        let (outcome, left) = self
            .in_sandbox(
                "resource",
                &what,
                Grants::granted(),
                options,
                move |store, plugin| {
                    Box::pin(async move { plugin.read_resource(store, &owned_uri).await })
                },
            )
            .await?;
        let mut parts = outcome?;
        let broken = |message: String| {
            Err(Failure::new(
                ErrorKind::ToolError,
                format!("{what}: {message}. This is a bug in the plugin, not in the request."),
                Value::Null,
            ))
        };
        if parts.is_empty() {
            return broken("it returned no contents".into());
        }
        if parts.len() > MAX_PARTS {
            return broken(format!(
                "it returned {} parts, more than {MAX_PARTS}",
                parts.len()
            ));
        }
        for part in &mut parts {
            mask_part(&self.secrets, part);
            if part.uri.is_empty() {
                part.uri = uri.to_string();
            } else if !is_at_or_below(uri, &part.uri) {
                return broken(format!(
                    "it returned a part for {:?}, which is neither the URI read nor below it",
                    cut(&part.uri)
                ));
            }
            if part.mime_type.is_empty() {
                part.mime_type = mime_type.to_string();
            } else if !content::is_media_type_with_parameters(&part.mime_type) {
                return broken(format!(
                    "it returned a part whose MIME type {:?} is not a media type",
                    cut(&part.mime_type)
                ));
            }
        }
        let size: u64 = parts
            .iter()
            .map(|part| (part.body.len() + part.uri.len() + part.mime_type.len()) as u64)
            .sum();
        if size > left {
            return Err(self.too_large(&what, size, left));
        }
        Ok(parts)
    }

    /// Fills in `prompt` (one this plugin declares) with `arguments`, after checking they are the
    /// prompt's own, strings, with every required one given.
    pub async fn get_prompt(
        &self,
        prompt: &DeclaredPrompt,
        arguments: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<FilledPrompt, Failure> {
        check_prompt_arguments(prompt, arguments)?;
        let what = format!("prompt {} of plugin {}", prompt.name, self.id);
        let name = prompt.name.clone();
        let arguments = Value::Object(arguments.clone()).to_string();
        let (outcome, left) = self
            .in_sandbox(
                "prompt",
                &what,
                Grants::granted(),
                options,
                move |store, plugin| {
                    Box::pin(async move { plugin.get_prompt(store, &name, &arguments).await })
                },
            )
            .await?;
        let mut filled = outcome?;
        self.mask_prompt(&mut filled);
        if filled.messages.len() > MAX_PARTS {
            return Err(Failure::new(
                ErrorKind::ToolError,
                format!(
                    "{what} returned {} messages, more than {MAX_PARTS}. This is a bug in the plugin.",
                    filled.messages.len()
                ),
                Value::Null,
            ));
        }
        let size: u64 = (filled.description.len()
            + filled
                .messages
                .iter()
                .map(|message| message.content.size())
                .sum::<usize>()) as u64;
        if size > left {
            return Err(self.too_large(&what, size, left));
        }
        if filled.description.is_empty() {
            filled.description = prompt.description.clone();
        }
        Ok(filled)
    }

    /// The plugin's completions for `request`, at most [`MAX_COMPLETIONS`], each at most 1 KiB.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        options: &CallOptions,
    ) -> Result<Vec<String>, Failure> {
        let what = format!("completing {} for plugin {}", request.argument, self.id);
        let owned = request.clone();
        let (mut values, _) = self
            .in_sandbox(
                "complete",
                &what,
                Grants::granted(),
                options,
                move |store, plugin| Box::pin(async move { plugin.complete(store, &owned).await }),
            )
            .await?;
        values.retain(|value| value.len() <= 1024);
        values.truncate(MAX_COMPLETIONS);
        for value in &mut values {
            *value = self.secrets.scrub(value).into_owned();
        }
        Ok(values)
    }

    /// Masks configured secrets in a filled-in prompt: its description and texts; an image whose
    /// bytes hold one becomes a note, as in a tool's result.
    fn mask_prompt(&self, filled: &mut FilledPrompt) {
        filled.description = self.secrets.scrub(&filled.description).into_owned();
        for message in &mut filled.messages {
            self.secrets.scrub_content(&mut message.content);
        }
    }

    fn too_large(&self, what: &str, size: u64, left: u64) -> Failure {
        Failure::new(
            ErrorKind::ToolError,
            format!(
                "{what} produced {}, over what is left of its plugin's output limit ({} of {} per call). Read less at a time.",
                human_bytes(size),
                human_bytes(left),
                human_bytes(self.grant.limits.output_bytes)
            ),
            json!({ "outputBytes": size, "limitBytes": self.grant.limits.output_bytes }),
        )
    }
}

/// Refuses arguments a prompt does not take, values that are not strings, and missing required
/// ones, naming each and what the prompt takes.
fn check_prompt_arguments(
    prompt: &DeclaredPrompt,
    arguments: &Map<String, Value>,
) -> Result<(), Failure> {
    let takes = || {
        let names: Vec<String> = prompt
            .arguments
            .iter()
            .map(|argument| {
                let required = if argument.required { " (required)" } else { "" };
                format!("{}{required}", argument.name)
            })
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    let refuse = |problem: String| {
        Err(Failure::new(
            ErrorKind::InvalidArguments,
            format!("prompt {:?} {problem}; it takes: {}", prompt.name, takes()),
            Value::Null,
        ))
    };
    for (name, value) in arguments {
        if !prompt
            .arguments
            .iter()
            .any(|argument| &argument.name == name)
        {
            return refuse(format!("takes no argument {name:?}"));
        }
        if !value.is_string() {
            return refuse(format!("was given {name:?} as {value}, not a string"));
        }
    }
    if let Some(missing) = prompt
        .arguments
        .iter()
        .find(|argument| argument.required && !arguments.contains_key(&argument.name))
    {
        return refuse(format!("needs argument {:?}", missing.name));
    }
    Ok(())
}

/// Whether `part` is the URI `read` or below it: `read` itself, or `read` and a `/` (unless it
/// ends in one) and a path with no dot segments, so no part can name a URI beside or above it.
fn is_at_or_below(read: &str, part: &str) -> bool {
    if part == read {
        return true;
    }
    let prefix = if read.ends_with('/') {
        read.to_string()
    } else {
        format!("{read}/")
    };
    let Some(rest) = part.strip_prefix(&prefix) else {
        return false;
    };
    !rest.is_empty()
        && rest.split(['/', '?', '#']).all(|segment| {
            let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
            decoded != "." && decoded != ".."
        })
}

/// Masks configured secrets in a part read: its URI, its MIME type and its text. Bytes that hold a
/// secret are replaced whole by a note (masking inside would corrupt them).
pub(crate) fn mask_part(secrets: &crate::report::secrets::Secrets, part: &mut ResourceContents) {
    part.uri = secrets.scrub(&part.uri).into_owned();
    part.mime_type = secrets.scrub(&part.mime_type).into_owned();
    match &mut part.body {
        ResourceBody::Text(text) => *text = secrets.scrub(text).into_owned(),
        ResourceBody::Blob(bytes) => {
            if secrets.found_in_bytes(bytes) {
                part.body = ResourceBody::Text(format!(
                    "[the resource's {} bytes were removed: they hold a configured secret] {MASK}",
                    bytes.len()
                ));
                part.mime_type = "text/plain".into();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_at_or_below;

    #[test]
    fn a_part_is_the_uri_read_or_below_it_and_nothing_else() {
        assert!(is_at_or_below("docs://a", "docs://a"));
        assert!(is_at_or_below("docs://a", "docs://a/b"));
        assert!(is_at_or_below("notes:///", "notes:///x.md"));
        for beside in [
            "docs://ab",
            "docs://a/../b",
            "docs://a/%2e%2E/b",
            "docs://a/./b",
            "docs://a/",
            "docs://b",
        ] {
            assert!(!is_at_or_below("docs://a", beside), "{beside}");
        }
        assert!(!is_at_or_below("docs://", "docs:/x"));
    }
}
