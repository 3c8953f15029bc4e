//! Section 8: host memory with 100 Python sandboxes alive at once: resident set size (VmRSS of this
//! process) before, and at its peak while 100 calls of a Python tool that sleeps run concurrently.

use crate::report::{Report, Section};
use crate::setup::Setup;
use cordon_runtime::pipeline::{BatchOptions, CallRequest};
use std::time::{Duration, Instant};

const SANDBOXES: usize = 100;
const SLEEP_MS: u64 = 1500;

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let py_echo = setup.guest("fixture_py_echo.wasm");
    let pipeline = setup
        .pipeline(
            "memory",
            &[("py_echo", &py_echo)],
            "[host]\nmax_sandboxes = 128\n",
        )
        .await?;
    // One call first, so the baseline includes the runtime's own warm state.
    let warm = pipeline
        .call(
            CallRequest::new("warm", "py_sleep", r#"{"millis": 1}"#),
            &BatchOptions::default(),
        )
        .await;
    anyhow::ensure!(!warm.is_error, "{warm:?}");
    let before = rss_bytes()?;
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..SANDBOXES {
        let pipeline = pipeline.clone();
        calls.spawn(async move {
            pipeline
                .call(
                    CallRequest::new(
                        format!("c{i}"),
                        "py_sleep",
                        format!(r#"{{"millis": {SLEEP_MS}}}"#),
                    ),
                    &BatchOptions::default(),
                )
                .await
        });
    }
    let mut peak = before;
    while !calls.is_empty() {
        tokio::select! {
            joined = calls.join_next() => {
                let result = joined.expect("not empty")?;
                anyhow::ensure!(!result.is_error, "{result:?}");
            }
            () = tokio::time::sleep(Duration::from_millis(20)) => peak = peak.max(rss_bytes()?),
        }
    }
    let elapsed = started.elapsed();
    anyhow::ensure!(
        elapsed < Duration::from_millis(SLEEP_MS * 2),
        "the {SANDBOXES} sandboxes did not run at once ({elapsed:?})"
    );
    let mib = |bytes: u64| format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64);
    let mut section = Section::new(
        "8. Memory",
        &format!(
            "Resident set of the host process with {SANDBOXES} Python sandboxes alive at once \
             ({SANDBOXES} concurrent calls of a Python tool sleeping {SLEEP_MS} ms; all done in {:.0} ms).",
            elapsed.as_secs_f64() * 1e3
        ),
        &["what", "RSS"],
    );
    section.row(vec![
        "host before (engine, one Python plugin loaded)".into(),
        mib(before),
    ]);
    section.row(vec![
        format!("peak with {SANDBOXES} Python sandboxes"),
        mib(peak),
    ]);
    section.row(vec![
        "per sandbox".into(),
        mib(peak.saturating_sub(before) / SANDBOXES as u64),
    ]);
    report.add(section);
    Ok(())
}

fn rss_bytes() -> anyhow::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/self/status"))?;
    Ok(kib * 1024)
}
