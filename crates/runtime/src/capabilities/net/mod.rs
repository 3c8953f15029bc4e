//! What an operator grants a plugin of outbound HTTP: origins, path prefixes, methods and secret
//! headers (`grant.rs`), and the one reading of a path every server shares (`request_path.rs`).
//! The gate that enforces them on each request is the sandbox's (`sandbox/http/`).

pub mod grant;
pub mod request_path;

pub use grant::HttpGrant;
