//! The sandbox: one wasmtime engine, the contract versions and their generated bindings (they stay in
//! `contract/`), one store per call with its limits and captured output, the guest's filesystem
//! and resource gates (its disk use bounded, its syncs off the async workers), and loading and
//! running a plugin. Everything above speaks host types.

pub(crate) mod blocking_ops;
pub mod cache;
pub(crate) mod call_state;
pub(crate) mod capture;
pub mod contract;
pub(crate) mod describe_context;
pub(crate) mod dir_listing;
pub(crate) mod disk_budget;
pub mod engine;
pub(crate) mod failure;
pub(crate) mod file_streams;
pub(crate) mod fs_gate;
pub(crate) mod fs_writes;
pub(crate) mod host_objects;
pub(crate) mod nonblocking_open;
pub(crate) mod open_files;
pub mod plugin;
pub(crate) mod resource_budget;
pub(crate) mod result_memory;
