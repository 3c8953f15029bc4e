//! How MCP messages reach the server: streamable HTTP with its own accept loop and bounds
//! (`http.rs`), and stdin/stdout (`stdio.rs`), set non-blocking where they are pipes (`pipes.rs`).

pub mod http;
pub(crate) mod pipes;
pub(crate) mod stdio;
