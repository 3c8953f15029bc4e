//! Cordon's own agent loop (`cordon run`, `cordon chat`): a model proposes tool calls, the
//! pipeline runs them in sandboxes, the results go back in call order, until the model answers.
//!
//! - `session.rs`: the loop itself ([`Agent`]).
//! - `client.rs`, `retry.rs`, `sse.rs`: HTTP to the model API, retries, server-sent events.
//! - `provider/`: the OpenAI Chat Completions and Anthropic Messages wire formats.
//! - `message.rs`, `transcript.rs`: the conversation and its JSON-lines transcript.
//! - `contract.rs`: `--output-schema` and its `final_result` tool.
//! - `text_calls.rs`: tool calls that small models write as text.
//! - `observer.rs`: what a live view or an event stream is told.

mod client;
mod contract;
mod message;
mod observer;
mod provider;
mod retry;
mod session;
mod sse;
mod system_prompt;
mod text_calls;
mod transcript;

pub use client::{ModelClient, ModelError};
pub use contract::{FINAL_RESULT, OutputContract};
pub use message::{Message, Reply, StopReason, ToolCall, ToolOutcome};
pub use observer::{AgentObserver, Unobserved};
pub use provider::ToolSpec;
pub use session::{Agent, AgentError, AgentOptions, Answer};
pub use transcript::{Loaded, TranscriptError, TranscriptWriter, load as load_transcript};
