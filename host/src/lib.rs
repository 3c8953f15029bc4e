//! cordon: run AI-agent tools and hooks as sandboxed WebAssembly components.
//!
//! A [`registry::Registry`] loads every plugin in a directory with the capabilities the operator
//! granted in `cordon.toml` ([`config::Config`]); [`registry::Registry::call`] runs one tool call
//! in a fresh sandbox and always returns a [`result::ToolResult`], success or a classified error.

mod bindings;
pub mod cache;
pub mod call;
mod call_state;
mod capture;
pub mod config;
mod convert;
pub mod engine;
mod failure;
pub mod grant;
pub mod limits;
pub mod plugin;
pub mod registry;
pub mod result;
pub mod schema;

pub use call::CallRequest;
pub use call_state::{ProgressSink, ProgressUpdate};
pub use plugin::CallOptions;
pub use registry::{Registry, RegistryOptions};
pub use result::{Content, ErrorKind, ToolResult};
