//! `make bench`: the whole benchmark suite in one run, side by side, printed and written to
//! BENCHMARKS.md (or to the file `CORDON_BENCH_OUT` names). Sections follow the benchmark issue:
//! per-call overhead, MCP over stdio, parallel batch, throughput, cold start, interrupt latency,
//! hook cost and memory; then each target checked against this run's figures.

mod bare;
mod batch;
mod cold_start;
mod interrupt;
mod memory;
mod per_call;
mod report;
mod setup;
mod stats;
mod stdio;
mod throughput;

use report::{Report, Section};
use stats::micros;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    let setup = setup::Setup::from_env()?;
    let mut report = Report::default();

    let per_call = per_call::run(&setup, &mut report).await?;
    let stdio = stdio::run(&setup, &mut report, per_call.pipeline)?;
    let batch = batch::run(&setup, &mut report).await?;
    let (_registry, pipeline) = per_call::echo_pipeline(&setup).await?;
    let throughput = throughput::run(&pipeline, &mut report).await?;
    let cold_start = cold_start::run(&setup, &mut report)?;
    let interrupt = interrupt::run(&setup, &mut report).await?;
    let mut hooks = Section::new(
        "7. Hook cost",
        "What one before-hook plus one after-hook (each in a fresh sandbox of its own) add to a \
         call: the difference of the two pipeline medians of section 1.",
        &["what", "added per call"],
    );
    hooks.row(vec![
        "one hook pair (pass-through Rust hooks)".into(),
        micros(per_call.hook_pair),
    ]);
    report.add(hooks);
    memory::run(&setup, &mut report).await?;

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    report.target(
        "Rust trivial call, whole pipeline, fresh sandbox (median)",
        "≤ 20 µs",
        micros(per_call.pipeline),
        Some(us(per_call.pipeline) <= 20.0),
    );
    report.target(
        "`cordon serve` stdio round trip (median)",
        "≤ 60 µs",
        micros(stdio.cordon_serve),
        Some(us(stdio.cordon_serve) <= 60.0),
    );
    report.target(
        "Python fresh call (median)",
        "≤ 1 ms",
        micros(per_call.python),
        Some(us(per_call.python) <= 1000.0),
    );
    report.target(
        "JavaScript fresh call (median)",
        "≤ 1 ms",
        per_call
            .javascript
            .map_or_else(|| "not built".into(), micros),
        per_call.javascript.map(|d| us(d) <= 1000.0),
    );
    report.target(
        "parallel batch of four 250 ms calls (median)",
        "≤ 252 ms",
        stats::millis(batch),
        Some(batch <= Duration::from_millis(252)),
    );
    report.target(
        "cold start, 10 plugins, warm cache (median)",
        "≤ 30 ms",
        stats::millis(cold_start.warm),
        Some(cold_start.warm <= Duration::from_millis(30)),
    );
    report.target(
        "runaway loop stopped past its limit (max; median)",
        "≤ 10 ms",
        format!(
            "{}; {}",
            stats::millis(interrupt.overrun_max),
            stats::millis(interrupt.overrun_median)
        ),
        Some(interrupt.overrun_max <= Duration::from_millis(10)),
    );
    report.target(
        "trivial calls per second on 2 cores",
        "≥ 30,000",
        format!("{throughput:.0}"),
        Some(throughput >= 30_000.0),
    );
    report.target(
        "one hook pair added to a call",
        "≤ 25 µs",
        micros(per_call.hook_pair),
        Some(us(per_call.hook_pair) <= 25.0),
    );

    let out = std::env::var_os("CORDON_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../BENCHMARKS.md"));
    let seconds = started.elapsed().as_secs_f64();
    report.write(&out, seconds)?;
    println!("\nwrote {} ({seconds:.0} s)", out.display());
    Ok(())
}
