//! Section 14: calls while plugins are replaced. One `cordon serve --http` watches its plugins
//! directory; 16 clients call `echo` over MCP (one JSON-RPC `tools/call` per HTTP request, as a
//! stateless client does) without pause. The run alternates blocks without reloads and blocks in
//! which another plugin file is replaced every second (each replacement a reload: the whole set
//! loaded, checked and swapped in); failed calls and latency are reported for each.

use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, millis};
use anyhow::{Context as _, bail};
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Clients calling at once.
const CLIENTS: usize = 16;
/// Blocks of each kind, alternating, and how long each lasts: 30 s of each in all.
const BLOCKS: usize = 6;
const BLOCK: Duration = Duration::from_secs(5);
/// How often a plugin is replaced in a reloading block.
const REPLACE_EVERY: Duration = Duration::from_secs(1);

/// The figures the issue's goal is stated in.
pub struct ReloadFigures {
    pub failed: u64,
    pub p99_ratio: f64,
}

/// One block's outcome: every call's latency, and the calls that failed.
struct Block {
    latencies: Vec<Duration>,
    failed: u64,
}

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<ReloadFigures> {
    let dir = setup.scratch.path().join("live-reload");
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins)?;
    std::fs::copy(setup.guest("fixture_echo.wasm"), plugins.join("echo.wasm"))?;
    let versions = [
        setup.guest("fixture_contract_v2.wasm"),
        setup.guest("fixture_conformance.wasm"),
    ];
    replace(&versions[0], &plugins)?;
    let mut server = Server::start(&setup.cordon_bin, &dir)?;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CLIENTS)
        .build()?;
    // Warm up: the server compiles nothing on the request path, but the first calls fill caches.
    for _ in 0..50 {
        call(&client, &server.url).await?;
    }
    let (mut quiet, mut reloading) = (Vec::new(), Vec::new());
    let mut replaced = 0u64;
    for _ in 0..BLOCKS {
        quiet.push(block(&client, &server.url, None).await);
        let (outcome, count) =
            block_with_reloads(&client, &server.url, &plugins, &versions).await?;
        reloading.push(outcome);
        replaced += count;
    }
    let reloads = server.reloads_applied(&client).await.unwrap_or(0);
    server.stop();

    let failed_quiet: u64 = quiet.iter().map(|b| b.failed).sum();
    let failed_reloading: u64 = reloading.iter().map(|b| b.failed).sum();
    let quiet = Sample::new(quiet.into_iter().flat_map(|b| b.latencies).collect());
    let reloading = Sample::new(reloading.into_iter().flat_map(|b| b.latencies).collect());
    let p99_ratio = reloading.p99().as_secs_f64() / quiet.p99().as_secs_f64();
    let mut section = Section::new(
        "14. Calls while plugins are replaced",
        &format!(
            "`cordon serve --http` watching its plugins directory, {CLIENTS} clients calling \
             `echo` without pause (one `tools/call` per HTTP request). Blocks of {}s without \
             reloads alternate with blocks in which another plugin file is replaced every \
             {}s (written beside, renamed in; {replaced} replacements, {reloads} reloads \
             applied as `/metrics` counted them), {BLOCKS} of each. A failed call is an HTTP \
             error, a JSON-RPC error or an error result.",
            BLOCK.as_secs(),
            REPLACE_EVERY.as_secs()
        ),
        &[
            "blocks",
            "calls",
            "failed",
            "median",
            "p99",
            "max",
            "p99 ÷ quiet p99",
        ],
    );
    for (name, sample, failed) in [
        ("without reloads", &quiet, failed_quiet),
        (
            "**a plugin replaced every second**",
            &reloading,
            failed_reloading,
        ),
    ] {
        section.row(vec![
            name.into(),
            sample.runs().to_string(),
            failed.to_string(),
            millis(sample.median()),
            millis(sample.p99()),
            millis(sample.max()),
            format!(
                "{:.2}",
                sample.p99().as_secs_f64() / quiet.p99().as_secs_f64()
            ),
        ]);
    }
    report.add(section);
    Ok(ReloadFigures {
        failed: failed_quiet + failed_reloading,
        p99_ratio,
    })
}

/// Puts `version` in place of plugins/extra.wasm the way a deploy should: written beside, renamed.
fn replace(version: &Path, plugins: &Path) -> anyhow::Result<()> {
    let staged = plugins.join(".extra.partial");
    std::fs::copy(version, &staged)?;
    std::fs::rename(&staged, plugins.join("extra.wasm"))?;
    Ok(())
}

/// One block: every client calls until the block ends.
async fn block(client: &reqwest::Client, url: &str, stop: Option<Arc<AtomicBool>>) -> Block {
    let ends = Instant::now() + BLOCK;
    let failed = Arc::new(AtomicU64::new(0));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..CLIENTS {
        let (client, url, failed) = (client.clone(), url.to_string(), failed.clone());
        clients.spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < ends {
                let started = Instant::now();
                let ok = call(&client, &url).await.is_ok();
                latencies.push(started.elapsed());
                if !ok {
                    failed.fetch_add(1, Ordering::Relaxed);
                }
            }
            latencies
        });
    }
    let mut latencies = Vec::new();
    while let Some(joined) = clients.join_next().await {
        latencies.extend(joined.unwrap_or_default());
    }
    if let Some(stop) = stop {
        stop.store(true, Ordering::Relaxed);
    }
    Block {
        latencies,
        failed: failed.load(Ordering::Relaxed),
    }
}

/// A block while another task replaces plugins/extra.wasm every second; also how many times.
async fn block_with_reloads(
    client: &reqwest::Client,
    url: &str,
    plugins: &Path,
    versions: &[std::path::PathBuf; 2],
) -> anyhow::Result<(Block, u64)> {
    let stop = Arc::new(AtomicBool::new(false));
    let replacer = {
        let (stop, plugins, versions) = (stop.clone(), plugins.to_path_buf(), versions.clone());
        tokio::spawn(async move {
            let mut count = 0u64;
            let mut next = 1;
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(REPLACE_EVERY).await;
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                if replace(&versions[next % 2], &plugins).is_ok() {
                    count += 1;
                }
                next += 1;
            }
            count
        })
    };
    let outcome = block(client, url, Some(stop)).await;
    let count = replacer.await?;
    Ok((outcome, count))
}

/// One `tools/call` of `echo`; an error unless it answered with a result that is not an error.
async fn call(client: &reqwest::Client, url: &str) -> anyhow::Result<()> {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
        )
        .send()
        .await?;
    if !response.status().is_success() {
        bail!("HTTP {}", response.status());
    }
    let body: serde_json::Value = response.json().await?;
    if body["result"]["isError"] != false || body["result"]["content"][0]["text"] != "hi" {
        bail!("not the echo: {body}");
    }
    Ok(())
}

/// `cordon serve --http` in `dir` (its plugins/ watched), on a free loopback port.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(cordon: &Path, dir: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(cordon)
            .args(["serve", "--http", "127.0.0.1:0"])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting cordon serve --http")?;
        let stderr = child.stderr.take().context("no stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let url = loop {
            let Some(line) = lines.next() else {
                bail!("cordon serve --http exited before it listened");
            };
            let line = line?;
            if let Some(at) = line.find("at http://") {
                let url = line[at + 3..].split_whitespace().next().unwrap_or_default();
                break url.to_string();
            }
        };
        // The rest of stderr is read so the server never blocks on it.
        std::thread::spawn(move || for _ in lines {});
        Ok(Self { child, url })
    }

    /// `cordon_reloads_total{outcome="applied"}` from `/metrics`.
    async fn reloads_applied(&self, client: &reqwest::Client) -> Option<u64> {
        let metrics = self.url.trim_end_matches("/mcp").to_string() + "/metrics";
        let text = client.get(metrics).send().await.ok()?.text().await.ok()?;
        text.lines()
            .find(|line| line.starts_with("cordon_reloads_total{outcome=\"applied\"}"))?
            .split_whitespace()
            .last()?
            .parse()
            .ok()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
