//! The guest's filesystem: `wasi:filesystem` as wasmtime implements it, with cordon's gates
//! shadowing the calls that need one. Preopens come from handles opened once per process, and every
//! open is bounded and recorded (`gate.rs`, without blocking on a FIFO: `nonblocking_open.rs`);
//! what a call holds open is counted per call and per process (`open_files.rs`); writes and
//! creations are charged to the call's disk quota (`writes.rs`, `disk_quota.rs`), file streams read
//! and write on the calling thread (`streams.rs`), directory listings are read whole and charged to
//! the memory limit (`listing.rs`), and slow operations run off the async workers, stopping at the
//! call's deadline (`blocking_ops.rs`). A path outside every grant lands in a directory of its
//! own where every open is refused and reported (`outside_grants.rs`).

pub(crate) mod blocking_ops;
pub(crate) mod disk_quota;
pub(crate) mod gate;
pub(crate) mod listing;
pub(crate) mod nonblocking_open;
pub(crate) mod open_files;
pub(crate) mod outside_grants;
pub(crate) mod streams;
pub(crate) mod writes;
