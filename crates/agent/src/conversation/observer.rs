//! What the agent loop tells whoever watches it (a live view on a terminal, JSON event lines, a
//! test): each model request, text as it streams, retries, each reply with its token usage,
//! compactions of the history, warnings, the pipeline's tool events, the tools a search loaded,
//! and each turn's usage.
//! Every method has an empty default, so an observer implements only what it shows.

use crate::conversation::message::{Reply, Usage};
use cordon_runtime::pipeline::Event;
use std::time::Duration;

/// Older turns were folded into a summary to fit the context window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionReport {
    /// `model` or `digest`.
    pub method: String,
    /// Conversation messages the summary now stands in for.
    pub folded_messages: usize,
    /// The history's estimated tokens before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    /// The window it had to fit.
    pub window: u32,
}

/// How intent routing sent one turn (`[agent.routing]`), and what the routing request took.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    /// `none`, `all`, or a group name.
    pub route: String,
    /// The routing request's token counts, when the API reported them.
    pub usage: Option<Usage>,
    /// Why the route is `all` although the model did not say so (a failed request, an answer
    /// that names no route), if that is why.
    pub fallback: Option<String>,
}

pub trait AgentObserver: Send + Sync {
    /// A request for step `step` (counting from 1) is about to be sent.
    fn model_request(&self, _step: u32) {}
    /// A piece of the reply's text arrived.
    fn text_delta(&self, _text: &str) {}
    /// A request failed and will be retried after `delay`.
    fn retry(&self, _retry: u32, _delay: Duration, _reason: &str) {}
    /// The whole reply of a step is in.
    fn model_reply(&self, _reply: &Reply) {}
    /// Something happened in a batch of tool calls.
    fn tool_event(&self, _event: &Event) {}
    /// The history was compacted.
    fn compaction(&self, _report: &CompactionReport) {}
    /// Intent routing chose this turn's tools.
    fn routed(&self, _route: &Route) {}
    /// Something the user should know that is not an error.
    fn warning(&self, _text: &str) {}
    /// `search_tools` loaded these tools; later requests offer them.
    fn tools_loaded(&self, _tools: &[String]) {}
    /// The active tools changed (a live reload); the next request offers the new set.
    fn tools_changed(&self, _changes: &cordon_runtime::pipeline::ToolChanges) {}
    /// A turn ended (answered or not) after `model_requests` requests that took `usage`
    /// (`None`: the API reported no usage).
    fn turn_end(&self, _model_requests: u32, _usage: Option<Usage>) {}
}

/// Watches nothing.
pub struct Unobserved;

impl AgentObserver for Unobserved {}
