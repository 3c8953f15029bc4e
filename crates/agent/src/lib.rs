//! Cordon's own agent loop (`cordon run`, `cordon chat`): a model proposes tool calls, the
//! pipeline runs them in sandboxes, the results go back in call order, until the model answers.
//!
//! - `conversation/`: the messages (`message.rs`), their JSON-lines transcript, tool calls that
//!   small models write as text, and what a live view or an event stream is told (`observer.rs`).
//! - `model/`: HTTP to the model API (`client.rs`), retries, server-sent events, and the OpenAI
//!   Chat Completions and Anthropic Messages wire formats (`provider/`).
//! - `context/`: the context budget: the window, counting tokens, cutting long results and
//!   compacting older turns so that every request fits.
//! - `session/`: the loop itself ([`Agent`]), the default system prompt, and `--output-schema`
//!   with its `final_result` tool (`contract.rs`).
//! - `settings/`: the agent's part of cordon.toml (`[model]`, the loop's keys of `[agent]`).
//! - `tool_search/`: which tools each request carries; with many, `search_tools` finds them.

mod context;
mod conversation;
mod model;
mod session;
pub mod settings;
pub mod tool_search;

pub use context::fit::SUMMARY_HEADING;
pub use context::summary::SUMMARY_INSTRUCTION;
pub use conversation::message::{Message, Reply, StopReason, ToolCall, ToolOutcome, Usage};
pub use conversation::observer::{AgentObserver, CompactionReport, Route, Unobserved};
pub use conversation::transcript::{
    Loaded, TranscriptError, TranscriptWriter, load as load_transcript,
};
pub use model::client::{ModelClient, ModelError};
pub use model::provider::ToolSpec;
pub use session::contract::{FINAL_RESULT, OutputContract, Verdict};
pub use session::routing::Routing;
pub use session::{Agent, AgentError, AgentOptions, Answer};
