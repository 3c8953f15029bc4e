//! Why a model request produced no reply, as the agent loop and the binary see it: each case
//! says what went wrong and what to do, and has a kind for a span's `error.type`.

use std::time::Duration;

/// Why a model request produced no reply.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "no model is configured: set `model` under [model] in cordon.toml, or pass --model NAME"
    )]
    NoModel,
    #[error(
        "the API key variable {var} is not set (or empty): export {var}=... or name another variable with --api-key-env / [model] api_key_env"
    )]
    MissingKey { var: String },
    #[error("cannot set up the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    #[error("the model API at {url} refused the request (HTTP {status}): {message}{hint}")]
    Refused {
        url: String,
        status: u16,
        message: String,
        hint: String,
    },
    #[error("the model API at {url} failed {attempts} time(s) in a row; the last failure: {last}")]
    GaveUp {
        url: String,
        attempts: u32,
        last: String,
    },
    #[error(
        "the model at {url} sent nothing for {}s{}; it may still be generating: raise the limit with --timeout or [model] timeout{}",
        after.as_secs_f64(),
        if *streaming { " in the middle of its streamed reply" } else { " (the limit covers the whole reply when not streaming)" },
        if *streaming { "" } else { ", or stream the reply" }
    )]
    TimedOut {
        url: String,
        after: Duration,
        streaming: bool,
    },
    #[error(
        "the request does not fit the model's context window ({message}); lower [model] context_window to the server's real size"
    )]
    ContextExceeded {
        message: String,
        /// What the server said the request took, and its window, when it said.
        prompt_tokens: Option<u64>,
        window: Option<u64>,
    },
    #[error(
        "the model's reply {what}, so it was not used and the turn stopped; the request was fine (this is the model's reply, not the prompt, history or tools): ask again, for smaller steps or a shorter answer"
    )]
    ReplyTooLarge { what: String },
    #[error(
        "the model at {url} did not finish its reply within {}s ([agent] max_reply_time, which bounds all of one reply; --timeout bounds each pause); raise max_reply_time in cordon.toml if the model is only slow",
        after.as_secs_f64()
    )]
    ReplyDeadline { url: String, after: Duration },
    #[error("the model API at {url} sent a reply cordon cannot read: {reason}")]
    Malformed { url: String, reason: String },
    #[error("the model request was cancelled")]
    Cancelled,
}

impl ModelError {
    /// What kind of failure this is, for a span's `error.type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NoModel => "no_model",
            Self::MissingKey { .. } => "missing_key",
            Self::Client(_) => "client_setup",
            Self::Refused { .. } => "refused",
            Self::GaveUp { .. } => "gave_up",
            Self::TimedOut { .. } => "timeout",
            Self::ContextExceeded { .. } => "context_exceeded",
            Self::ReplyTooLarge { .. } => "reply_too_large",
            Self::ReplyDeadline { .. } => "reply_deadline",
            Self::Malformed { .. } => "malformed_reply",
            Self::Cancelled => "cancelled",
        }
    }
}
