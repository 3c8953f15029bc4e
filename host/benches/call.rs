//! Benchmark: what one trivial tool call costs, measured side by side in one run (`make bench`):
//! - native: the same echo done in-process with serde_json (the floor);
//! - sandbox only: `Plugin::execute` (fresh Store from the InstancePre, WASI context, call), no
//!   pipeline;
//! - pipeline: the whole path a call takes (lookup, schema, hooks, sandbox, result), and the same
//!   with one before-hook and one after-hook (each a sandbox of its own);
//! - MCP stdio round trip: `cordon serve` in a subprocess, driven over its pipes by a raw JSON-RPC
//!   client, beside the pipe floor (the same client talking to `cat`).
//!
//! Prints median and p99 per row and ratios to the pipeline.

use cordon::cache::CompileCache;
use cordon::config::Config;
use cordon::pipeline::{BatchOptions, CallRequest, Pipeline};
use cordon::{CallOptions, Registry, RegistryOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ROUNDS: usize = 2000;
const ARGUMENTS: &str =
    r#"{"text": "a trivial tool call with about one hundred bytes of JSON arguments in it, ok"}"#;

struct Row {
    name: &'static str,
    times: Vec<Duration>,
}

impl Row {
    fn new(name: &'static str, mut times: Vec<Duration>) -> Self {
        times.sort();
        Self { name, times }
    }
    fn median(&self) -> Duration {
        self.times[self.times.len() / 2]
    }
    fn p99(&self) -> Duration {
        self.times[self.times.len() * 99 / 100]
    }
}

fn time_n(rounds: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let guests = std::env::var_os("CORDON_GUEST_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("CORDON_GUEST_DIR is not set: run `make bench`"))?;
    let cordon = std::env::var_os("CORDON_BIN")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("CORDON_BIN is not set: run `make bench`"))?;
    let workspace = tempfile::tempdir()?;
    let plugins = workspace.path().join("plugins");
    std::fs::create_dir(&plugins)?;
    std::fs::copy(
        guests.join("fixture_probe.wasm"),
        plugins.join("probe.wasm"),
    )?;
    let cache = workspace.path().join("cache");
    let options = RegistryOptions {
        plugins_dir: plugins.clone(),
        config: Config::default(),
        cache: CompileCache::at(cache.join("cordon").join("compiled")),
        lock: None,
    };
    let registry = Arc::new(Registry::load(options).await?);
    let pipeline = Pipeline::new(registry.clone(), Default::default(), &[])?;

    let native = Row::new(
        "native (serde_json echo, in-process)",
        time_n(ROUNDS, || {
            let value: serde_json::Value = serde_json::from_str(ARGUMENTS).unwrap();
            std::hint::black_box(
                serde_json::json!({ "content": [{ "type": "text", "text": value["text"] }] })
                    .to_string(),
            );
        }),
    );

    let (plugin, _) = registry.tool("echo").expect("echo");
    let call_arguments: serde_json::Value = serde_json::from_str(ARGUMENTS)?;
    let mut sandbox = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let result = plugin
            .call_tool("bench", "echo", &call_arguments, &CallOptions::default())
            .await;
        sandbox.push(started.elapsed());
        assert!(!result.is_error);
    }
    let sandbox = Row::new("sandbox only (fresh Store + instantiate + call)", sandbox);

    let mut through_pipeline = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let result = pipeline
            .call(
                CallRequest::new("bench", "echo", ARGUMENTS),
                &BatchOptions::default(),
            )
            .await;
        through_pipeline.push(started.elapsed());
        assert!(!result.is_error);
    }
    let through_pipeline = Row::new(
        "pipeline (whole call path, fresh sandbox)",
        through_pipeline,
    );

    // The same call with one before-hook and one after-hook (both pass-through) around it.
    let hooked_plugins = workspace.path().join("hooked");
    std::fs::create_dir(&hooked_plugins)?;
    std::fs::copy(
        guests.join("fixture_probe.wasm"),
        hooked_plugins.join("probe.wasm"),
    )?;
    std::fs::copy(
        guests.join("fixture_scripted_hook.wasm"),
        hooked_plugins.join("hook.wasm"),
    )?;
    let hooked_registry = Arc::new(
        Registry::load(RegistryOptions {
            plugins_dir: hooked_plugins,
            config: Config::default(),
            cache: CompileCache::at(cache.join("cordon").join("compiled")),
            lock: None,
        })
        .await?,
    );
    let hooked_pipeline = Pipeline::new(hooked_registry, Default::default(), &[])?;
    let mut hooked = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let result = hooked_pipeline
            .call(
                CallRequest::new("bench", "echo", ARGUMENTS),
                &BatchOptions::default(),
            )
            .await;
        hooked.push(started.elapsed());
        assert!(!result.is_error);
    }
    let hooked = Row::new("pipeline + one before-hook + one after-hook", hooked);

    let mcp = Row::new(
        "MCP stdio round trip (cordon serve, raw JSON-RPC)",
        mcp_round_trips(&cordon, workspace.path(), &cache)?,
    );
    let pipe = Row::new(
        "pipe floor (the same client talking to cat)",
        cat_round_trips()?,
    );

    println!(
        "one trivial tool call (echo, ~100-byte JSON arguments), {ROUNDS} rounds each, same run\n"
    );
    println!(
        "{:<52} {:>12} {:>12} {:>14}",
        "", "median", "p99", "÷ pipeline"
    );
    let base = through_pipeline.median().as_secs_f64();
    for row in [&native, &sandbox, &through_pipeline, &hooked, &mcp, &pipe] {
        println!(
            "{:<52} {:>9.1} µs {:>9.1} µs {:>13.2}x",
            row.name,
            row.median().as_secs_f64() * 1e6,
            row.p99().as_secs_f64() * 1e6,
            row.median().as_secs_f64() / base
        );
    }
    Ok(())
}

/// Round trips of `tools/call` against `cordon serve` over its stdio pipes.
fn mcp_round_trips(
    cordon: &PathBuf,
    workspace: &std::path::Path,
    cache: &std::path::Path,
) -> anyhow::Result<Vec<Duration>> {
    let mut child = Command::new(cordon)
        .args(["--plugins", "plugins", "serve"])
        .current_dir(workspace)
        .env("XDG_CACHE_HOME", cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"bench","version":"1"}}}}}}"#
    )?;
    stdout.read_line(&mut line)?;
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )?;
    let times = (1..=ROUNDS)
        .map(|id| {
            let started = Instant::now();
            writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{ARGUMENTS}}}}}"#).unwrap();
            // Skip notifications (the probe's echo logs a line) until the response arrives.
            let id_field = format!("\"id\":{id},");
            loop {
                line.clear();
                stdout.read_line(&mut line).unwrap();
                if line.contains(&id_field) {
                    break;
                }
            }
            assert!(line.contains("\"isError\":false"), "{line}");
            started.elapsed()
        })
        .collect();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    Ok(times)
}

/// Round trips of one JSON-RPC-sized line through `cat`.
fn cat_round_trips() -> anyhow::Result<Vec<Duration>> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let message = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{ARGUMENTS}}}}}"#
    );
    let times = time_n(ROUNDS, || {
        writeln!(stdin, "{message}").unwrap();
        line.clear();
        stdout.read_line(&mut line).unwrap();
    });
    drop(stdin);
    let _ = child.wait();
    Ok(times)
}
