//! How MCP messages reach the server: streamable HTTP (`http.rs`, which puts the routes together)
//! with its own accept loop and bounds (`accept.rs`), its cancellations routed to the calls they
//! name (`http_cancellation.rs`), its refusals answered as JSON (`forbidden.rs`), its `Host` and
//! `Origin` allowlists (`host_check.rs`), the health probes (`health.rs`) and metrics
//! (`metrics_route.rs`) beside the MCP endpoint, and a graceful shutdown (`shutdown.rs`) that
//! refuses new requests at the gate (`drain_gate.rs`) and waits for those in flight
//! (`lifecycle.rs`); and stdin/stdout (`stdio.rs`), set non-blocking where they are pipes
//! (`pipes.rs`).

mod accept;
mod drain_gate;
mod forbidden;
mod health;
mod host_check;
pub mod http;
mod http_cancellation;
mod lifecycle;
mod metrics_route;
pub(crate) mod pipes;
mod shutdown;
pub(crate) mod stdio;
