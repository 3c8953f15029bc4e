//! cordon: run AI-agent tools and hooks as sandboxed WebAssembly components.
//!
//! A [`registry::Registry`] loads every plugin in a directory with the capabilities the operator
//! granted in `cordon.toml` ([`config::Config`]); a [`pipeline::Pipeline`] runs batches of tool
//! calls through validation, hooks and fresh sandboxes, and always returns one
//! [`result::ToolResult`] per call, success or a classified error, in call order.

pub mod agent;
mod bindings;
pub mod cache;
mod call_state;
mod capture;
pub mod config;
mod convert;
pub mod declarations;
mod describe_context;
mod dir_listing;
pub mod engine;
mod failure;
mod file_streams;
mod fs_gate;
pub mod grant;
mod guest_report;
mod json_lines;
pub mod limits;
pub mod lock;
pub mod mcp;
pub mod net;
mod nonblocking_open;
pub mod pipeline;
pub mod plugin;
pub mod registry;
pub mod report_budget;
mod resource_budget;
pub mod result;
pub mod scaffold;
pub mod schema;
pub mod schema_cost;
pub mod schema_work;
pub mod tool_glob;
pub mod utc_time;

pub use guest_report::{
    GuestReport, HttpAttempt, LogLevel, LogLine, OmittedRecords, PathOpen, ProgressUpdate,
    ReportSink,
};
pub use pipeline::{BatchOptions, CallRequest, Event, Pipeline};
pub use plugin::CallOptions;
pub use registry::{Registry, RegistryOptions};
pub use result::{Content, ErrorKind, ToolResult};
