//! What the agent loop tells whoever watches it (a live view on a terminal, JSON event lines, a
//! test): each model request, text as it streams, retries, each reply, and the pipeline's tool
//! events. Every method has an empty default, so an observer implements only what it shows.

use crate::conversation::message::Reply;
use cordon_runtime::pipeline::Event;
use std::time::Duration;

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
}

/// Watches nothing.
pub struct Unobserved;

impl AgentObserver for Unobserved {}
