//! Section 4: trivial calls per second through the pipeline, fresh sandbox each, with more and
//! more concurrent callers (tasks on the multi-threaded runtime, one worker per core) until both
//! cores are saturated.

use crate::per_call::ARGUMENTS;
use crate::report::{Report, Section};
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Pipeline};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(2);
const CALLERS: [usize; 4] = [1, 2, 4, 16];

/// The best calls per second seen.
pub async fn run(pipeline: &Pipeline, report: &mut Report) -> anyhow::Result<f64> {
    let mut section = Section::new(
        "4. Throughput",
        &format!(
            "Trivial echo calls through the pipeline (fresh sandbox each) for {} s per row, by \
             concurrent callers, on a runtime with {} worker threads.",
            WINDOW.as_secs(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        ),
        &["concurrent callers", "calls", "calls per second"],
    );
    let mut best: f64 = 0.0;
    for callers in CALLERS {
        let (calls, rate) = window(pipeline, callers).await?;
        best = best.max(rate);
        section.row(vec![
            callers.to_string(),
            calls.to_string(),
            format!("{rate:.0}"),
        ]);
    }
    report.add(section);
    Ok(best)
}

async fn window(pipeline: &Pipeline, callers: usize) -> anyhow::Result<(u64, f64)> {
    let done = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..callers {
        let (pipeline, done, failed, stop) =
            (pipeline.clone(), done.clone(), failed.clone(), stop.clone());
        tasks.spawn(async move {
            let options = BatchOptions::default();
            while !stop.load(Ordering::Relaxed) {
                let result = pipeline
                    .call(CallRequest::new("bench", "echo", ARGUMENTS), &options)
                    .await;
                if result.is_error {
                    failed.store(true, Ordering::Relaxed);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    tokio::time::sleep(WINDOW).await;
    stop.store(true, Ordering::Relaxed);
    while tasks.join_next().await.is_some() {}
    let elapsed = started.elapsed();
    anyhow::ensure!(!failed.load(Ordering::Relaxed), "a call failed");
    let calls = done.load(Ordering::Relaxed);
    Ok((calls, calls as f64 / elapsed.as_secs_f64()))
}
