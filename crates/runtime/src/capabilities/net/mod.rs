//! Outbound HTTP for plugins: standard `wasi:http`, so each language's own client works, with every
//! request passing the plugin's HTTP grants before any connection is made (`gate.rs`). Grants name
//! origins (`grant.rs`); resolved addresses in non-public ranges need an explicit grant
//! (`address.rs`); the host adds secret headers the guest never sees; responses are bounded
//! (`body.rs`).

mod address;
mod body;
mod gate;
pub mod grant;

pub use gate::{ConnectionPool, GateSetup, HttpGate, HttpLimits};
pub use grant::HttpGrant;
