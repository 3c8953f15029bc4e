//! Talking to a model API: the HTTP client with its retries, server-sent events, and the wire
//! formats of each provider.

pub mod client;
pub mod provider;
pub mod retry;
pub mod sse;
