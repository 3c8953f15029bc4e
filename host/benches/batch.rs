//! Benchmark: a batch of four calls to a tool that sleeps 250 ms, run in parallel and then
//! sequentially through the real pipeline, printed side by side with the ideal times and the pi
//! agent's published figures (256 ms and 1,008 ms). Run with `make bench`.

use cordon::cache::CompileCache;
use cordon::config::{AgentSettings, Config, Execution};
use cordon::pipeline::{BatchOptions, CallRequest, Pipeline};
use cordon::{Registry, RegistryOptions};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROUNDS: usize = 7;
const SLEEP_MS: u64 = 250;
const CALLS: usize = 4;

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let guests = std::env::var_os("CORDON_GUEST_DIR").map(PathBuf::from).ok_or_else(|| {
        anyhow::anyhow!("CORDON_GUEST_DIR is not set: run `make bench`, which builds the guest plugins first")
    })?;
    let plugins = tempfile::tempdir()?;
    std::fs::copy(
        guests.join("fixture_probe.wasm"),
        plugins.path().join("probe.wasm"),
    )?;
    let options = RegistryOptions {
        plugins_dir: plugins.path().to_path_buf(),
        config: Config::default(),
        cache: CompileCache::default_location(),
        lock: None,
    };
    let registry = Arc::new(Registry::load(options).await?);
    let batch: Vec<CallRequest> = (0..CALLS)
        .map(|i| {
            CallRequest::new(
                format!("c{i}"),
                "sleep",
                format!(r#"{{"millis": {SLEEP_MS}}}"#),
            )
        })
        .collect();

    println!(
        "batch of {CALLS} calls to a tool sleeping {SLEEP_MS} ms, {ROUNDS} rounds each, medians side by side\n"
    );
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>9} {:>12}",
        "execution", "ideal", "median", "min", "max", "pi (published)"
    );
    for (execution, ideal, pi) in [
        (Execution::Parallel, SLEEP_MS, 256),
        (Execution::Sequential, SLEEP_MS * CALLS as u64, 1008),
    ] {
        let settings = AgentSettings {
            execution,
            ..AgentSettings::default()
        };
        let pipeline = Pipeline::new(registry.clone(), settings, &[])?;
        pipeline.run(batch.clone(), &BatchOptions::default()).await; // warm-up
        let mut times = Vec::new();
        for _ in 0..ROUNDS {
            let started = Instant::now();
            let results = pipeline.run(batch.clone(), &BatchOptions::default()).await;
            times.push(started.elapsed());
            anyhow::ensure!(
                results.iter().all(|r| !r.is_error),
                "a call failed: {results:?}"
            );
        }
        times.sort();
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
        println!(
            "{:<12} {:>9} {:>9} {:>9} {:>9} {:>12}",
            format!("{execution:?}").to_lowercase(),
            format!("{ideal} ms"),
            ms(times[ROUNDS / 2]),
            ms(times[0]),
            ms(times[ROUNDS - 1]),
            format!("{pi} ms")
        );
    }
    Ok(())
}
