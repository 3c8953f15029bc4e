//! The exports of contract 0.4 beyond tools and hooks, called through one interface: reading a
//! resource, filling in a prompt, completing an argument. A plugin of an older contract declares
//! none of these, so it is never asked; if it were, it would answer that it serves none.

use super::offer_terms::{CompletionRequest, FilledPrompt, ResourceContents};
use super::{Instance, v0_4, with_refusal_named};
use crate::report::ErrorKind;
use crate::sandbox::call_state::CallState;
use crate::sandbox::failure::Failure;
use serde_json::Value;
use wasmtime::Store;

/// What a plugin that predates contract 0.4 answers.
fn serves_none(what: &str) -> Failure {
    Failure::new(
        ErrorKind::ToolError,
        format!("this plugin's contract predates resources and prompts, so it serves no {what}"),
        Value::Null,
    )
}

impl Instance {
    /// The contents of resource `uri`, or why it could not be read.
    pub async fn read_resource(
        &self,
        store: &mut Store<CallState>,
        uri: &str,
    ) -> wasmtime::Result<Result<Vec<ResourceContents>, Failure>> {
        let outcome = match self {
            Self::V0_4(plugin) => v0_4::read_resource(plugin, store, uri).await?,
            _ => return Ok(Err(serves_none("resources"))),
        };
        let state = store.data();
        Ok(outcome.map_err(|failure| with_refusal_named(state, failure)))
    }

    /// Prompt `name` filled in with `arguments` (a JSON object's text), or why it could not be.
    pub async fn get_prompt(
        &self,
        store: &mut Store<CallState>,
        name: &str,
        arguments: &str,
    ) -> wasmtime::Result<Result<FilledPrompt, Failure>> {
        let outcome = match self {
            Self::V0_4(plugin) => v0_4::get_prompt(plugin, store, name, arguments).await?,
            _ => return Ok(Err(serves_none("prompts"))),
        };
        let state = store.data();
        Ok(outcome.map_err(|failure| with_refusal_named(state, failure)))
    }

    /// The plugin's suggestions for an argument being typed (none from an older contract).
    pub async fn complete(
        &self,
        store: &mut Store<CallState>,
        request: &CompletionRequest,
    ) -> wasmtime::Result<Vec<String>> {
        match self {
            Self::V0_4(plugin) => v0_4::complete(plugin, store, request).await,
            _ => Ok(Vec::new()),
        }
    }
}
