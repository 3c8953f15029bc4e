//! Section 3: a batch of four calls to a tool sleeping 250 ms (in a WASI clock wait), run in
//! parallel and sequentially through the pipeline, beside the ideal and the pi agent's published
//! figures (256 ms and 1,008 ms).

use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, millis};
use cordon_runtime::config::Execution;
use cordon_runtime::pipeline::{BatchOptions, CallRequest};
use std::time::{Duration, Instant};

const ROUNDS: usize = 7;
const SLEEP_MS: u64 = 250;
const CALLS: usize = 4;

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<Duration> {
    let probe = setup.guest("fixture_probe.wasm");
    let batch: Vec<CallRequest> = (0..CALLS)
        .map(|i| {
            CallRequest::new(
                format!("c{i}"),
                "sleep",
                format!(r#"{{"millis": {SLEEP_MS}}}"#),
            )
        })
        .collect();
    let mut section = Section::new(
        "3. Parallel batch",
        &format!(
            "A batch of {CALLS} calls to a tool that sleeps {SLEEP_MS} ms, {ROUNDS} rounds after a \
             warm-up."
        ),
        &[
            "execution",
            "ideal",
            "median",
            "min",
            "max",
            "pi agent (published)",
        ],
    );
    let mut parallel = Duration::ZERO;
    for (execution, ideal, pi) in [
        (Execution::Parallel, SLEEP_MS, 256),
        (Execution::Sequential, SLEEP_MS * CALLS as u64, 1008),
    ] {
        let config = match execution {
            Execution::Parallel => "[agent]\nexecution = \"parallel\"\n",
            Execution::Sequential => "[agent]\nexecution = \"sequential\"\n",
        };
        let pipeline = setup
            .pipeline("batch", &[("probe", &probe)], config)
            .await?;
        pipeline.run(batch.clone(), &BatchOptions::default()).await;
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
        let times = Sample::new(times);
        if execution == Execution::Parallel {
            parallel = times.median();
        }
        section.row(vec![
            format!("{execution:?}").to_lowercase(),
            format!("{ideal} ms"),
            millis(times.median()),
            millis(times.min()),
            millis(times.max()),
            format!("{pi} ms"),
        ]);
    }
    report.add(section);
    Ok(parallel)
}
