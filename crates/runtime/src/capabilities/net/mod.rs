//! Outbound HTTP for plugins: standard `wasi:http`, so each language's own client works, with every
//! request passing the plugin's HTTP grants before any connection is made (`gate.rs`). Grants name
//! origins (`grant.rs`), and a path must read the same to every server (`request_path.rs`);
//! resolved addresses in non-public ranges need an explicit grant
//! (`address.rs`); the host adds secret headers the guest never sees; responses are bounded
//! (`body.rs`).

mod address;
mod body;
mod gate;
pub mod grant;
pub mod request_path;

pub use body::BODY_CHUNK_BYTES;
pub use gate::HttpLimits;
pub(crate) use gate::{ConnectionPool, GateSetup, HttpGate};
pub use grant::HttpGrant;
