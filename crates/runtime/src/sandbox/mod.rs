//! The sandbox: one wasmtime engine, one store per call with its limits and captured output, and
//! loading and running a plugin. Its core sits here (the engine and compile cache, a call's store
//! state, the limits and how a call that passed one is classified); each capability the guest
//! reaches through WASI has a folder with its gate and accounting (`fs/`, `http/`, and `settings/`,
//! the plugin's settings as `wasi:config/store`); the contracts a
//! component can follow are `contract/` (cordon's own versions and `wasi:cli` commands, with the
//! generated bindings) and `plain/` (components of a WIT world of their own); `plugin/` loads and
//! runs one. Everything above speaks host types.

pub mod cache;
pub(crate) mod call_state;
pub(crate) mod capture;
pub mod contract;
pub(crate) mod describe_context;
pub mod engine;
pub(crate) mod failure;
pub(crate) mod fs;
pub(crate) mod host_charges;
pub(crate) mod host_objects;
pub(crate) mod http;
pub(crate) mod plain;
pub mod plugin;
pub(crate) mod result_memory;
pub(crate) mod settings;
