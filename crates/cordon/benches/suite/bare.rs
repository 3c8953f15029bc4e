//! Bare wasmtime, no cordon pipeline: the echo component pre-linked into an `InstancePre` on the
//! same engine configuration as the host, then per call a fresh `Store`, instantiate, and a dynamic
//! call of `execute`. What cordon's own per-call work adds is the difference to the sandbox rows.

use std::path::Path;
use std::time::{Duration, Instant};
use wasmtime::component::{
    Component, ComponentExportIndex, InstancePre, Linker, ResourceTable, Val,
};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

pub struct BareState {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for BareState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The echo component ready to instantiate.
pub struct Bare {
    engine: Engine,
    pre: InstancePre<BareState>,
    execute: ComponentExportIndex,
}

impl Bare {
    pub fn new(engine: &Engine, component: &Path) -> anyhow::Result<Self> {
        let component = Component::from_file(engine, component)?;
        let mut linker = Linker::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        // The echo fixture imports WASI only (it never calls the cordon host functions).
        let pre = linker.instantiate_pre(&component)?;
        let interface = [
            "cordon:plugin/plugin@0.3.0",
            "cordon:plugin/plugin@0.2.0",
            "cordon:plugin/plugin@0.1.0",
        ]
        .into_iter()
        .find_map(|name| component.get_export_index(None, name))
        .ok_or_else(|| anyhow::anyhow!("the component exports no cordon plugin interface"))?;
        let execute = component
            .get_export_index(Some(&interface), "execute")
            .ok_or_else(|| anyhow::anyhow!("the plugin interface has no execute"))?;
        Ok(Self {
            engine: engine.clone(),
            pre,
            execute,
        })
    }

    /// One call in a fresh Store; returns the time until the result was back and the time
    /// including dropping the Store.
    pub async fn call(&self, arguments: &str) -> anyhow::Result<(Duration, Duration)> {
        let started = Instant::now();
        let mut store = Store::new(
            &self.engine,
            BareState {
                wasi: WasiCtx::builder().build(),
                table: ResourceTable::new(),
            },
        );
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = self.pre.instantiate_async(&mut store).await?;
        let func = instance
            .get_func(&mut store, self.execute)
            .ok_or_else(|| anyhow::anyhow!("execute is not a function"))?;
        let call = Val::Record(vec![
            ("id".into(), Val::String("bench".into())),
            ("name".into(), Val::String("echo".into())),
            ("arguments".into(), Val::String(arguments.into())),
        ]);
        let mut results = [Val::Bool(false)];
        func.call_async(&mut store, &[call], &mut results).await?;
        let answered = started.elapsed();
        anyhow::ensure!(
            matches!(&results[0], Val::Result(Ok(_))),
            "echo failed: {:?}",
            results[0]
        );
        drop(store);
        Ok((answered, started.elapsed()))
    }
}
