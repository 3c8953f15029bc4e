//! Which tools a model request carries. With few tools, every active tool's spec; with many
//! (`[agent] tool_search`), only `search_tools` and the tools a search has loaded, so a request
//! that needs no tool never pays for the specs. A search matches names, titles, descriptions and
//! parameter names (BM25, [`Pipeline::search_tools`]) or a group of `[agent.groups]`; what it finds stays callable
//! for the rest of the session, and the transcript records it (`Message::ToolsLoaded`) so
//! `--resume` loads it again. Specs go to the model without their schemas' `examples`, which are
//! for `cordon test` and the docs.

use crate::conversation::message::{Message, ToolCall, ToolOutcome};
use crate::model::provider::ToolSpec;
use crate::settings::ToolSearch;
use cordon_runtime::Pipeline;
use cordon_runtime::ToolInfo;
use cordon_runtime::report::ErrorKind;
use cordon_runtime::tool_search as search;
pub use cordon_runtime::tool_search::SEARCH_TOOL;
use serde_json::Value;
use std::collections::BTreeSet;

/// Under `auto`, specs taking more than this share of the context window turn search on.
pub const MAX_SPEC_SHARE_PERCENT: u64 = 50;
/// Tools loaded for a call to a name that no tool has.
const GUESS_RESULTS: usize = 3;

/// How the agent loop decides on tool search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchSettings {
    pub mode: ToolSearch,
    /// Under `auto`, more active tools than this search.
    pub threshold: usize,
    /// Send the schemas' `examples` too.
    pub send_examples: bool,
}

/// The tools a session offers, and what searches loaded.
pub struct ToolOffer {
    searching: bool,
    send_examples: bool,
    loaded: BTreeSet<String>,
}

impl ToolOffer {
    /// Decides for a session over `pipeline`'s active tools: `always`, `never`, or under `auto`
    /// whether there are more than the threshold or their specs (`spec_tokens`) would take more
    /// than half of a `window_tokens` context window.
    pub fn decide(
        pipeline: &Pipeline,
        settings: SearchSettings,
        spec_tokens: u64,
        window_tokens: u32,
    ) -> Self {
        let active = pipeline.active_tools().count();
        let searching = match settings.mode {
            ToolSearch::Always => true,
            ToolSearch::Never => false,
            ToolSearch::Auto => {
                active > settings.threshold
                    || spec_tokens * 100 > u64::from(window_tokens) * MAX_SPEC_SHARE_PERCENT
            }
        };
        if searching
            && pipeline.registry().tool(SEARCH_TOOL).is_some()
            && pipeline.is_active(SEARCH_TOOL)
        {
            tracing::warn!(
                "a plugin declares a tool named {SEARCH_TOOL:?}, which the session's tool search uses for itself; that tool is not offered while tools are searched"
            );
        }
        Self {
            searching,
            send_examples: settings.send_examples,
            loaded: BTreeSet::new(),
        }
    }

    pub fn searching(&self) -> bool {
        self.searching
    }

    /// The tools loaded by searches so far, sorted.
    pub fn loaded(&self) -> impl Iterator<Item = &str> {
        self.loaded.iter().map(String::as_str)
    }

    /// Loads again what the transcript says earlier searches loaded (tools still active).
    pub fn restore(&mut self, pipeline: &Pipeline, messages: &[Message]) {
        for message in messages {
            if let Message::ToolsLoaded { tools } = message {
                self.loaded.extend(
                    tools
                        .iter()
                        .filter(|tool| pipeline.is_active(tool))
                        .cloned(),
                );
            }
        }
    }

    /// The specs a request carries: every active tool, or the loaded ones and `search_tools`.
    pub fn specs(&self, pipeline: &Pipeline) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = pipeline
            .active_tools()
            .filter(|(_, tool)| {
                !self.searching || (self.loaded.contains(&tool.name) && tool.name != SEARCH_TOOL)
            })
            .map(|(_, tool)| spec_for_model(tool, self.send_examples))
            .collect();
        if self.searching {
            specs.push(search_spec(pipeline));
        }
        specs
    }

    /// Whether `call` is a search this offer answers (not a plugin's tool).
    pub fn answers(&self, call: &ToolCall) -> bool {
        self.searching && call.name == SEARCH_TOOL
    }

    /// Whether `call`, while the session searches, names no tool it could run: the model guessed
    /// a name (a small model writes `create_invoice` for `invoices_create_invoice` rather than
    /// searching first).
    pub fn is_guess(&self, pipeline: &Pipeline, call: &ToolCall) -> bool {
        self.searching
            && call.name != SEARCH_TOOL
            && (pipeline.registry().tool(&call.name).is_none() || !pipeline.is_active(&call.name))
    }

    /// What the model reads for a guessed name (in place of the pipeline's `not_found`, which
    /// lists every active tool: what searching spares the model), and the tools it loaded: the
    /// best few a search for the name and the call's argument names finds (a few of a group, when
    /// the guess is a group's name), named with their arguments, so the next step can call the
    /// right one.
    pub fn answer_guess(&mut self, pipeline: &Pipeline, call: &ToolCall) -> (String, Vec<String>) {
        let mut query = call.name.replace(['_', '-', '.', '/'], " ");
        if let Ok(Value::Object(arguments)) = serde_json::from_str::<Value>(&call.arguments) {
            for key in arguments.keys() {
                query.push(' ');
                query.push_str(&key.replace(['_', '-'], " "));
            }
        }
        let query = &query[..query.floor_char_boundary(search::MAX_QUERY_BYTES)];
        let found: Vec<String> = search::find(pipeline, query, GUESS_RESULTS)
            .into_iter()
            .take(GUESS_RESULTS)
            .collect();
        let name = pipeline.secrets().scrub(&call.name).into_owned();
        let content = if found.is_empty() {
            format!(
                "Unknown tool {name:?}: no tool of this session has that name. Call {SEARCH_TOOL} with a few words saying what the tool should do, or answer without a tool."
            )
        } else {
            format!(
                "Unknown tool {name:?}: no tool of this session has that name. These tools match it and are loaded now; call the one that fits, with its own arguments:{}",
                search::listing(pipeline, &found)
            )
        };
        let newly: Vec<String> = found
            .into_iter()
            .filter(|tool| self.loaded.insert(tool.clone()))
            .collect();
        (content, newly)
    }

    /// Runs one search: the outcome the model reads, and the tools it loaded.
    pub fn search(&mut self, pipeline: &Pipeline, call: &ToolCall) -> (ToolOutcome, Vec<String>) {
        let arguments: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let request = match search::read_request(&arguments) {
            Ok(request) => request,
            Err(message) => {
                return (
                    ToolOutcome::error(call, ErrorKind::InvalidArguments, message),
                    Vec::new(),
                );
            }
        };
        // `search_tools` is the session's own while it searches: a plugin's tool of that name is
        // neither found nor offered.
        let found = search::find(pipeline, &request.query, request.limit);
        let content = describe_found(pipeline, &request.query, &found);
        let newly: Vec<String> = found
            .into_iter()
            .filter(|tool| self.loaded.insert(tool.clone()))
            .collect();
        let outcome = ToolOutcome {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            is_error: false,
            error_kind: None,
            content,
        };
        (outcome, newly)
    }
}

/// A tool's spec as a model gets it: its schema without the `examples` it gives for `cordon
/// test` and the docs (a small model copies an example's values into a real call), unless
/// `send_examples`.
pub fn spec_for_model(tool: &ToolInfo, send_examples: bool) -> ToolSpec {
    let schema = tool.schema.as_json();
    ToolSpec {
        name: tool.name.clone(),
        description: tool.description.clone(),
        parameters: if send_examples {
            schema.clone()
        } else {
            cordon_runtime::schema::without_examples(schema)
        },
    }
}

/// The `search_tools` spec, naming the groups there are.
fn search_spec(pipeline: &Pipeline) -> ToolSpec {
    ToolSpec {
        name: SEARCH_TOOL.into(),
        description: "Finds tools for a task and makes them callable: the tools it names can be called from the next step on.".into(),
        parameters: search::input_schema(pipeline),
    }
}

/// What the model reads after a search: each tool found, its arguments and its first line.
fn describe_found(pipeline: &Pipeline, query: &str, found: &[String]) -> String {
    if found.is_empty() {
        return search::no_match(query);
    }
    format!(
        "Loaded {} tool(s); call them directly from now on:{}",
        found.len(),
        search::listing(pipeline, found)
    )
}
