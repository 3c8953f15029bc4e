//! `make bench`: the whole benchmark suite in one run, side by side, printed and written to
//! BENCHMARKS.md (or to the file `CORDON_BENCH_OUT` names). Sections follow the benchmark issue:
//! per-call overhead, MCP over stdio, parallel batch, throughput, cold start, interrupt latency,
//! hook cost, memory, the cost of recording opened paths, real work on a real-sized repository,
//! the installed (release) build beside the development one, a plain component's call beside
//! an SDK plugin's, the prompt size of the agent loop's first request, and calls while plugins are
//! replaced, and the cost of OpenTelemetry export (a dead collector included); then each
//! target checked
//! against this run's figures. `CORDON_BENCH_ONLY` picks sections (see
//! [`wanted`]).

mod bare;
mod batch;
mod cold_start;
mod installed_build;
mod interrupt;
mod live_reload;
mod memory;
mod opened_paths;
mod per_call;
mod plain_components;
mod prompt_size;
mod real_repo;
mod repo_tree;
mod report;
mod session_stages;
mod setup;
mod stats;
mod stdio;
mod telemetry;
mod throughput;

use report::{Report, Section};
use stats::micros;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Whether section `name` runs: all of them, unless `CORDON_BENCH_ONLY` lists some (comma-separated:
/// per_call, stdio, batch, throughput, cold_start, interrupt, memory, opened_paths, real_repo,
/// installed_build, prompt_size, plain_components, live_reload, session_stages, telemetry).
fn wanted(name: &str) -> bool {
    std::env::var("CORDON_BENCH_ONLY").map_or(true, |only| {
        only.split(',').any(|section| section.trim() == name)
    })
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let started = Instant::now();
    let setup = setup::Setup::from_env()?;
    let mut report = Report::new();

    let per_call = match wanted("per_call") {
        true => Some(per_call::run(&setup, &mut report).await?),
        false => None,
    };
    let pipeline_median = per_call.as_ref().map(|p| p.pipeline);
    let stdio = match wanted("stdio") {
        true => Some(stdio::run(&setup, &mut report, pipeline_median)?),
        false => None,
    };
    let batch = match wanted("batch") {
        true => Some(batch::run(&setup, &mut report).await?),
        false => None,
    };
    let throughput = match wanted("throughput") {
        true => {
            let pipeline = per_call::echo_pipeline(&setup).await?;
            Some(throughput::run(&pipeline, &mut report).await?)
        }
        false => None,
    };
    let cold_start = match wanted("cold_start") {
        true => Some(cold_start::run(&setup, &mut report)?),
        false => None,
    };
    let interrupt = match wanted("interrupt") {
        true => Some(interrupt::run(&setup, &mut report).await?),
        false => None,
    };
    if let Some(per_call) = &per_call {
        let mut hooks = Section::new(
            "7. Hook cost",
            "What one before-hook plus one after-hook (each in a fresh sandbox of its own) add to \
             a call: the difference of the two pipeline medians of section 1.",
            &["what", "added per call"],
        );
        hooks.row(vec![
            "one hook pair (pass-through Rust hooks)".into(),
            micros(per_call.hook_pair),
        ]);
        report.add(hooks);
    }
    if wanted("memory") {
        memory::run(&setup, &mut report).await?;
    }
    if wanted("opened_paths") {
        opened_paths::run(&setup, &mut report).await?;
    }
    let real_repo = match wanted("real_repo") {
        true => Some(real_repo::run(&setup, &mut report).await?),
        false => None,
    };
    if wanted("installed_build") {
        installed_build::run(&setup, &mut report)?;
    }
    if wanted("prompt_size") {
        prompt_size::run(&setup, &mut report)?;
    }
    let plain = match wanted("plain_components") {
        true => Some(plain_components::run(&setup, &mut report).await?),
        false => None,
    };
    let reloads = match wanted("live_reload") {
        true => Some(live_reload::run(&setup, &mut report).await?),
        false => None,
    };

    if wanted("session_stages") {
        session_stages::run(&setup, &mut report).await?;
    }
    let telemetry = match wanted("telemetry") {
        true => Some(telemetry::run(&setup, &mut report)?),
        false => None,
    };
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let check = |figure: Option<Duration>, limit: f64, show: fn(Duration) -> String| {
        (
            figure.map_or_else(|| "not measured".into(), show),
            figure.map(|d| us(d) <= limit),
        )
    };
    let (measured, met) = check(pipeline_median, 20.0, micros);
    report.target(
        "Rust trivial call, whole pipeline, fresh sandbox (median)",
        "≤ 20 µs",
        measured,
        met,
    );
    let (measured, met) = check(stdio.map(|s| s.cordon_serve), 60.0, micros);
    report.target(
        "`cordon serve` stdio round trip (median)",
        "≤ 60 µs",
        measured,
        met,
    );
    let (measured, met) = check(per_call.as_ref().map(|p| p.python), 1000.0, micros);
    report.target("Python fresh call (median)", "≤ 1 ms", measured, met);
    let (measured, met) = check(per_call.as_ref().and_then(|p| p.javascript), 1000.0, micros);
    report.target("JavaScript fresh call (median)", "≤ 1 ms", measured, met);
    let (measured, met) = check(batch, 252_000.0, |d| {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    });
    report.target(
        "parallel batch of four 250 ms calls (median)",
        "≤ 252 ms",
        measured,
        met,
    );
    let (measured, met) = check(cold_start.map(|c| c.warm), 30_000.0, stats::millis);
    report.target(
        "cold start, 10 plugins, warm cache (median)",
        "≤ 30 ms",
        measured,
        met,
    );
    report.target(
        "runaway loop stopped past its limit (max; median)",
        "≤ 10 ms",
        interrupt.as_ref().map_or_else(
            || "not measured".into(),
            |i| {
                format!(
                    "{}; {}",
                    stats::millis(i.overrun_max),
                    stats::millis(i.overrun_median)
                )
            },
        ),
        interrupt.map(|i| i.overrun_max <= Duration::from_millis(10)),
    );
    report.target(
        "trivial calls per second on 2 cores",
        "≥ 30,000",
        throughput.map_or_else(|| "not measured".into(), |t| format!("{t:.0}")),
        throughput.map(|t| t >= 30_000.0),
    );
    let (measured, met) = check(per_call.as_ref().map(|p| p.hook_pair), 25.0, micros);
    report.target("one hook pair added to a call", "≤ 25 µs", measured, met);
    let times_native = |ratio: Option<f64>| {
        (
            ratio.map_or_else(|| "not measured".into(), |r| format!("{r:.2}× native")),
            ratio.map(|r| r <= 2.0),
        )
    };
    let (measured, met) = times_native(real_repo.as_ref().map(|r| r.grep_ratio));
    report.target(
        "grep over the real repository (slower of the two rows)",
        "≤ 2× `grep -rn`",
        measured,
        met,
    );
    let (measured, met) = times_native(real_repo.as_ref().map(|r| r.find_ratio));
    report.target(
        "find_files over the real repository",
        "≤ 2× `find`",
        measured,
        met,
    );
    let (measured, met) = check(
        real_repo.as_ref().map(|r| r.read_file),
        2_000.0,
        stats::millis,
    );
    report.target("read_file of 1 MiB (median)", "≤ 2 ms", measured, met);
    report.target(
        "plain component's echo beside the SDK echo (median)",
        "≤ 1.2× the SDK echo",
        plain.as_ref().map_or_else(
            || "not measured".into(),
            |p| format!("{:.2}×", p.echo_ratio),
        ),
        plain.as_ref().map(|p| p.echo_ratio <= 1.2),
    );
    report.target(
        "calls while a plugin is replaced every second (16 clients, 30 s)",
        "no failed call; p99 ≤ 1.5× without reloads",
        reloads.as_ref().map_or_else(
            || "not measured".into(),
            |r| format!("{} failed; p99 {:.2}×", r.failed, r.p99_ratio),
        ),
        reloads
            .as_ref()
            .map(|r| r.failed == 0 && r.p99_ratio <= 1.5),
    );

    report.target(
        "MCP call with a collector that never answers, beside one that answers (median)",
        "≤ 1.1×",
        telemetry.as_ref().map_or_else(
            || "not measured".into(),
            |t| format!("{:.2}×", t.dead_over_answering),
        ),
        telemetry.as_ref().map(|t| t.dead_over_answering <= 1.1),
    );

    let out = std::env::var_os("CORDON_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../BENCHMARKS.md"));
    let seconds = started.elapsed().as_secs_f64();
    report.write(&out, seconds)?;
    println!("\nwrote {} ({seconds:.0} s)", out.display());
    Ok(())
}
