//! How MCP messages reach the server: streamable HTTP with its own accept loop and bounds
//! (`http.rs`) and its cancellations routed to the calls they name (`http_cancellation.rs`), and
//! stdin/stdout (`stdio.rs`), set non-blocking where they are pipes (`pipes.rs`).

pub mod http;
mod http_cancellation;
pub(crate) mod pipes;
pub(crate) mod stdio;
