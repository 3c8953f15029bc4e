//! Talking to a model API: the HTTP client with its retries, server-sent events, the wire
//! formats of each provider, recognising a request too long for the context window, and asking
//! a server for its window.

pub mod client;
mod context_exceeded;
mod model_error;
pub mod provider;
pub mod retry;
mod server_window;
pub mod sse;
