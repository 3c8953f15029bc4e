//! The shared wasmtime [`Engine`]: compilation settings, the pooling instance allocator, and the
//! epoch ticker that bounds wall time and serves cancellation.

use std::time::Duration;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances. A running guest checks its deadline and cancellation (and yields
/// to other tasks) at this granularity, so a runaway loop stops at most about this long past its
/// limit.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Bytes of a pooled slot kept resident (and zeroed by the host) between calls.
const KEEP_RESIDENT_BYTES: usize = 2 << 20;

/// Engine-wide settings derived from the operator's configuration.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// Instrument code for fuel metering (changes the compiled code, so it is engine-wide).
    pub fuel: bool,
    /// The largest linear memory any plugin may grow to.
    pub max_memory_bytes: u64,
    /// Sandboxes that can exist at once.
    pub max_instances: u32,
    /// The component model's async ABI (`[host] component_model_async`): `async func` exports,
    /// `future` and `stream`, WASI 0.3. Off, every call takes wasmtime's synchronous path and
    /// such components are refused at load.
    pub component_model_async: bool,
}

impl Default for EngineSettings {
    fn default() -> Self {
        Self {
            fuel: false,
            max_memory_bytes: 256 << 20,
            max_instances: crate::config::DEFAULT_MAX_SANDBOXES,
            // As the registry builds it when no plugin needs the async ABI.
            component_model_async: false,
        }
    }
}

/// wasmtime refused the engine's configuration (for example, the pooling allocator could not
/// reserve its address space).
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct EngineError(#[from] wasmtime::Error);

/// Builds the engine and starts its epoch ticker, which stops when the engine is dropped.
pub fn build(settings: &EngineSettings) -> Result<Engine, EngineError> {
    let mut config = Config::new();
    config.wasm_component_model(true);
    // `async func` exports and the `future` and `stream` types (WASI 0.3, wit-bindgen's async,
    // componentize-py's `async def`, componentize-qjs). With it every call runs on wasmtime's
    // concurrent path, sync exports included: docs/performance.md has its cost.
    config.concurrency_support(settings.component_model_async);
    config.wasm_component_model_async(settings.component_model_async);
    config.epoch_interruption(true);
    config.consume_fuel(settings.fuel);
    config.cranelift_opt_level(wasmtime::OptLevel::Speed);

    let instances = settings.max_instances;
    let mut pool = PoolingAllocationConfig::default();
    // Language runtimes (Python, JavaScript) bring several core instances, memories and large
    // tables per component; these bounds fit them with room to spare.
    pool.total_component_instances(instances)
        .total_core_instances(instances * 16)
        .total_memories(instances * 4)
        .total_tables(instances * 16)
        .total_stacks(instances)
        .max_core_instances_per_component(64)
        .max_memories_per_component(8)
        .max_tables_per_component(32)
        .max_component_instance_size(1 << 20)
        .max_core_instance_size(16 << 20)
        .table_elements(crate::capabilities::limits::MAX_TABLE_ELEMENTS)
        .max_memory_size(usize::try_from(settings.max_memory_bytes).unwrap_or(usize::MAX))
        // A reused slot is zeroed with memset up to these sizes instead of being handed back to the
        // kernel, so the next call does not page-fault its memory, table and stack in again. The
        // memory is cleared either way (see the hostile secret-scan test).
        .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .table_keep_resident(KEEP_RESIDENT_BYTES / 16)
        .async_stack_keep_resident(KEEP_RESIDENT_BYTES / 4)
        // On Linux 6.7 and later, the PAGEMAP_SCAN ioctl tells which of those pages the last call
        // dirtied, and only those are reset: a call that touched a few pages no longer pays for
        // zeroing the whole resident part. Elsewhere the memset above applies.
        .pagemap_scan(wasmtime::Enabled::Auto);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));

    let engine = Engine::new(&config).map_err(EngineError)?;
    start_epoch_ticker(&engine);
    Ok(engine)
}

fn start_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("cordon-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch ticker thread");
}
