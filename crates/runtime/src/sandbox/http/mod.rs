//! Outbound HTTP: standard `wasi:http`, so each language's own client works, with every request
//! passing the call's gate (`gate.rs`) before any connection is made. The gate checks the plugin's
//! grants (`capabilities/net/`), refuses non-public addresses that were not granted
//! (`address.rs`), adds secret headers the guest never sees and bounds responses (`body.rs`); what
//! a guest makes the host hold in `wasi:http` objects is charged to its memory limit
//! (`host_memory.rs`).

mod address;
mod body;
mod gate;
pub(crate) mod host_memory;

pub(crate) use body::BODY_CHUNK_BYTES;
pub(crate) use gate::{ConnectionPool, GateSetup, HttpGate};
