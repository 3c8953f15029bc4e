//! How MCP messages reach the server: streamable HTTP with its own accept loop and bounds
//! (`http.rs`), its cancellations routed to the calls they name (`http_cancellation.rs`) and its
//! refusals answered as JSON (`forbidden.rs`), and
//! stdin/stdout (`stdio.rs`), set non-blocking where they are pipes (`pipes.rs`).

mod forbidden;
pub mod http;
mod http_cancellation;
pub(crate) mod pipes;
pub(crate) mod stdio;
