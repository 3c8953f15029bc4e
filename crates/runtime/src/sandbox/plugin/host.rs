//! The engine-wide parts every plugin shares: the engine, the linker with WASI, `wasi:http`, the
//! contract's host functions and cordon's own gates shadowing some of them, the compile cache, and
//! the process-wide bounds on sandboxes, HTTP connections and open files.

use crate::report::secrets::Secrets;
use crate::sandbox::cache::CompileCache;
use crate::sandbox::call_state::CallState;
use crate::sandbox::engine::{EngineError, EngineSettings};
use crate::sandbox::fs::open_files::ProcessFiles;
use crate::sandbox::http::ConnectionPool;
use std::sync::Arc;
use tokio::sync::Semaphore;
use wasmtime::Engine;
use wasmtime::component::Linker;

/// The engine-wide parts every plugin shares.
pub(crate) struct PluginHost {
    pub engine: Engine,
    pub linker: Linker<CallState>,
    pub cache: CompileCache,
    pub fuel_metering: bool,
    /// Whether the engine has the component model's async ABI (`[host] component_model_async`).
    pub component_model_async: bool,
    /// One permit per sandbox the pooling allocator has room for; calls beyond it wait their turn
    /// instead of failing to instantiate.
    pub sandbox_slots: Arc<Semaphore>,
    /// Outgoing HTTP connections the whole process may have open.
    pub connections: ConnectionPool,
    /// Files and directories guests of the whole process may hold open.
    pub files: ProcessFiles,
    /// The host's secrets: what a guest logs or prints is masked before it is cut or escaped.
    pub secrets: Secrets,
}

impl PluginHost {
    pub fn new(
        engine: Engine,
        cache: CompileCache,
        settings: &EngineSettings,
        max_http_connections: usize,
        max_open_files: usize,
        secrets: Secrets,
    ) -> Result<Self, EngineError> {
        let mut linker = Linker::new(&engine);
        // All of WASI p2 is linked so every language runtime instantiates; what a plugin can reach
        // through it is decided by its WASI context (see grant.rs): sockets are always off.
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        // WASI 0.3's cli (a `wasi:cli/run@0.3` command's arguments, stdio and exit), clocks and
        // random, over the same WASI context. Its filesystem, sockets and HTTP are not linked:
        // they have no gate yet, so a component importing them is refused at load, by name.
        if settings.component_model_async {
            wasmtime_wasi::p3::cli::add_to_linker(&mut linker)?;
            wasmtime_wasi::p3::clocks::add_to_linker(&mut linker)?;
            wasmtime_wasi::p3::random::add_to_linker(&mut linker)?;
        }
        // Outgoing HTTP passes each call's gate (see sandbox/http/gate.rs).
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        // Preopens from handles, file opens bounded and recorded, closes counted (see fs/gate.rs).
        crate::sandbox::fs::gate::shadow_in_linker(&mut linker)?;
        // What the guest makes the host hold (header maps, request lines, body buffers, directory
        // listings) is charged to its memory limit (see http/host_memory.rs).
        crate::sandbox::http::host_memory::shadow_in_linker(&mut linker)?;
        // File streams read and write on the calling thread (see fs/streams.rs).
        crate::sandbox::fs::streams::shadow_in_linker(&mut linker)?;
        // Writes and creations charged to the call's disk quota, syncs off the async workers
        // (see fs/writes.rs).
        crate::sandbox::fs::writes::shadow_in_linker(&mut linker)?;
        // Directory listings read with their types from the directory (see fs/listing.rs).
        crate::sandbox::fs::listing::shadow_in_linker(&mut linker)?;
        // The plugin's settings as `wasi:config/store` (see settings/).
        crate::sandbox::settings::add_to_linker(&mut linker)?;
        // The contract's host functions, for every version the host speaks.
        crate::sandbox::contract::add_to_linker(&mut linker)?;
        Ok(Self {
            engine,
            linker,
            cache,
            fuel_metering: settings.fuel,
            component_model_async: settings.component_model_async,
            sandbox_slots: Arc::new(Semaphore::new(settings.max_instances as usize)),
            connections: ConnectionPool::new(max_http_connections),
            files: ProcessFiles::new(max_open_files),
            secrets,
        })
    }
}
