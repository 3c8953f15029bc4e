//! Benchmark: what recording the paths a tool opens costs (`make bench`). The bundled fs plugin's
//! `grep` searches 100 small files (101 opens: the directory and each file) and `read_file` reads
//! one (one open), each measured three ways in the same run, interleaved round by round:
//! - nobody listening: opens are not recorded (the wrapper around `open-at` only checks that);
//! - an event listener: every open becomes a `path_open` event;
//! - the audit log: every open is also written to the call's line (one write and flush per call).
//!
//! Prints median and p99 per row and the median cost per open against nobody listening.

use cordon::cache::CompileCache;
use cordon::config::Config;
use cordon::pipeline::audit::AuditLog;
use cordon::pipeline::events::EventSink;
use cordon::pipeline::{BatchOptions, CallRequest, Pipeline};
use cordon::{Registry, RegistryOptions};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROUNDS: usize = 300;
const FILES: usize = 100;

/// How a row's calls are observed.
#[derive(Clone, Copy)]
enum Observer {
    Nobody,
    Events,
    Audit,
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let guests = std::env::var_os("CORDON_GUEST_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("CORDON_GUEST_DIR is not set: run `make bench`"))?;
    let workspace = tempfile::tempdir()?;
    let plugins = workspace.path().join("plugins");
    let data = workspace.path().join("data");
    std::fs::create_dir(&plugins)?;
    std::fs::create_dir(&data)?;
    std::fs::copy(guests.join("fs.wasm"), plugins.join("fs.wasm"))?;
    for i in 0..FILES {
        std::fs::write(
            data.join(format!("f{i}.txt")),
            "a line of text\n".repeat(20),
        )?;
    }
    let config_path = workspace.path().join("cordon.toml");
    std::fs::write(
        &config_path,
        "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n",
    )?;
    let options = || -> anyhow::Result<RegistryOptions> {
        Ok(RegistryOptions {
            plugins_dir: plugins.clone(),
            config: Config::load(&config_path)?,
            cache: CompileCache::at(workspace.path().join("cache")),
            lock: None,
        })
    };
    let plain = Pipeline::new(
        Arc::new(Registry::load(options()?).await?),
        Default::default(),
        &[],
    )?;
    let audited = Pipeline::new(
        Arc::new(Registry::load(options()?).await?),
        Default::default(),
        &[],
    )?
    .with_audit_log(AuditLog::open(&workspace.path().join("audit.jsonl"))?);
    let listener: EventSink = Arc::new(|event| {
        std::hint::black_box(event);
    });

    let calls = [
        ("grep", r#"{"pattern": "needle"}"#, FILES + 1),
        ("read_file", r#"{"path": "/data/f0.txt"}"#, 1),
    ];
    let observers = [
        (Observer::Nobody, "nobody listening"),
        (Observer::Events, "event listener"),
        (Observer::Audit, "audit log"),
    ];
    println!("cost of recording opened paths, {ROUNDS} rounds each, interleaved, same run\n");
    println!(
        "{:<36} {:>12} {:>12} {:>16}",
        "", "median", "p99", "per open vs off"
    );
    for (tool, arguments, opens) in calls {
        let mut times = vec![Vec::with_capacity(ROUNDS); observers.len()];
        for _ in 0..ROUNDS {
            for (row, (observer, _)) in observers.iter().enumerate() {
                let (pipeline, events) = match observer {
                    Observer::Nobody => (&plain, None),
                    Observer::Events => (&plain, Some(listener.clone())),
                    Observer::Audit => (&audited, None),
                };
                let options = BatchOptions {
                    events,
                    ..Default::default()
                };
                let started = Instant::now();
                let result = pipeline
                    .call(CallRequest::new("bench", tool, arguments), &options)
                    .await;
                times[row].push(started.elapsed());
                assert!(!result.is_error, "{result:?}");
            }
        }
        let medians: Vec<Duration> = times
            .iter_mut()
            .map(|row| {
                row.sort();
                row[row.len() / 2]
            })
            .collect();
        for ((row, (_, name)), median) in times.iter().zip(&observers).zip(&medians) {
            let extra = median.as_secs_f64() - medians[0].as_secs_f64();
            println!(
                "{:<36} {:>9.1} µs {:>9.1} µs {:>13.2} µs",
                format!(
                    "{tool} ({opens} open{}), {name}",
                    if opens == 1 { "" } else { "s" }
                ),
                median.as_secs_f64() * 1e6,
                row[row.len() * 99 / 100].as_secs_f64() * 1e6,
                extra * 1e6 / opens as f64
            );
        }
    }
    Ok(())
}
