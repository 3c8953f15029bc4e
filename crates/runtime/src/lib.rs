//! cordon-runtime: run AI-agent tools and hooks as sandboxed WebAssembly components.
//!
//! A [`Registry`] loads every plugin in a directory with the capabilities the operator granted in
//! `cordon.toml` ([`config::Config`]); a [`Pipeline`] runs batches of tool calls through
//! validation, hooks and fresh sandboxes, and always returns one [`ToolResult`] per call, success
//! or a classified error, in call order. [`RuntimeBuilder`] assembles both from a plugins
//! directory and a config.
//!
//! The modules, from the bottom up (each uses only those before it; `tests/integration/meta/layering.rs`
//! checks): `report/` (what a call tells the host: results, logs, progress, the bounds on them, and
//! `report::terminal_text`, the one sanitiser for untrusted text shown on a terminal or in a log
//! line), `trace_spans` (the spans exported over OpenTelemetry), `schema/` (argument validation),
//! `capabilities/` (what an operator grants: directories, HTTP, env vars, limits, hook rights, the
//! lock), `config/` (cordon.toml), `sandbox/` (wasmtime: the engine, one call's store, a folder per
//! capability with its gate (`fs/`, `http/`), the contracts (`contract/`, `plain/`), loading and
//! running a plugin), `registry/` (the plugins of a directory), `pipeline/` (a batch of calls
//! through hooks and sandboxes), `tool_search/` (the `search_tools` contract and its index),
//! `conformance/` (`cordon test`: one plugin checked against the contract), `builder/` (all of it
//! assembled from a config).

#![warn(missing_docs)]

mod builder;
pub mod capabilities;
pub mod config;
pub mod conformance;
pub mod pipeline;
pub mod registry;
pub mod report;
mod sandbox;
pub mod schema;
pub mod skills;
pub mod tool_search;
pub mod trace_spans;

pub use builder::{BuildError, RuntimeBuilder, watch};
pub use pipeline::{BatchOptions, CallRequest, Event, Pipeline};
pub use registry::Registry;
pub use report::{Content, ErrorKind, ToolResult};
pub use sandbox::cache::{CompileCache, CompileSource, cordon_cache_dir};
pub use sandbox::contract::{ContractVersion, WrongWorld, offer_terms};
/// The wasmtime engine as cordon configures it (the benchmarks compare bare wasmtime on it).
pub use sandbox::engine;
pub use sandbox::plugin::{
    Admission, CallOptions, ExecutionMode, HookInfo, LoadError, Plugin, SessionDecision,
    SessionStage, ToolAnnotations, ToolInfo, sandboxes_running,
};
