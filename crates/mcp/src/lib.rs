//! cordon-mcp: the MCP server. Every active tool of a cordon pipeline is offered to any MCP
//! client, over stdio or streamable HTTP; `tools/call` runs through the same pipeline as every
//! other front end.
//!
//! `server/` answers MCP requests (tools, logging, results in MCP's shapes); `transport/` carries
//! them (the HTTP accept loop and its bounds, health probes, metrics and graceful shutdown,
//! non-blocking stdio pipes); `metrics/` counts and times the calls for `/metrics`.

mod metrics;
mod server;
mod transport;

pub use server::results::{META_DETAILS, META_ERROR_KIND};
pub use server::{DEFAULT_PAGE_SIZE, McpServer};
pub use transport::http;
pub use transport::stdio::StdioServeError;
