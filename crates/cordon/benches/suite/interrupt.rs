//! Section 6: interrupt latency. A tool looping forever under a 100 ms time limit: how far past the
//! limit its result comes back; and a looping call cancelled mid-way: how long from cancelling
//! until its result is back.

use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, millis};
use cordon_runtime::ErrorKind;
use cordon_runtime::pipeline::{BatchOptions, CallRequest};
use std::time::{Duration, Instant};

const RUNS: usize = 30;
const LIMIT: Duration = Duration::from_millis(100);
const CANCEL_AFTER: Duration = Duration::from_millis(30);

pub struct Interrupt {
    pub overrun_max: Duration,
    pub overrun_median: Duration,
}

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<Interrupt> {
    let probe = setup.guest("fixture_probe.wasm");
    let limited = setup
        .pipeline(
            "interrupt",
            &[("probe", &probe)],
            "[plugins.probe]\nlimits = { timeout = \"100ms\" }\n",
        )
        .await?;
    let mut overruns = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let result = limited
            .call(
                CallRequest::new("bench", "spin", "{}"),
                &BatchOptions::default(),
            )
            .await;
        let elapsed = started.elapsed();
        anyhow::ensure!(
            result.error_kind == Some(ErrorKind::Timeout),
            "spin did not time out: {result:?}"
        );
        overruns.push(elapsed.saturating_sub(LIMIT));
    }
    let overruns = Sample::new(overruns);

    let pipeline = setup.pipeline("cancel", &[("probe", &probe)], "").await?;
    let mut waits = Vec::new();
    for _ in 0..RUNS {
        let options = BatchOptions::default();
        let cancel = options.cancel.clone();
        let running = pipeline.clone();
        let call = tokio::spawn(async move {
            let result = running
                .call(CallRequest::new("bench", "spin", "{}"), &options)
                .await;
            (result, Instant::now())
        });
        tokio::time::sleep(CANCEL_AFTER).await;
        let cancelled_at = Instant::now();
        cancel.cancel();
        let (result, returned_at) = call.await?;
        anyhow::ensure!(
            result.error_kind == Some(ErrorKind::Cancelled),
            "spin was not cancelled: {result:?}"
        );
        waits.push(returned_at.saturating_duration_since(cancelled_at));
    }
    let waits = Sample::new(waits);

    let mut section = Section::new(
        "6. Interrupt latency",
        &format!(
            "A tool in an infinite loop: with a {} ms time limit, how long past the limit its \
             `timeout` result came back; cancelled {} ms into the call, how long from cancelling \
             until its `cancelled` result came back. {RUNS} runs each.",
            LIMIT.as_millis(),
            CANCEL_AFTER.as_millis()
        ),
        &["what", "runs", "median", "max"],
    );
    section.row(vec![
        "runaway loop: past its 100 ms limit".into(),
        overruns.runs().to_string(),
        millis(overruns.median()),
        millis(overruns.max()),
    ]);
    section.row(vec![
        "cancelled mid-call: until its result is back".into(),
        waits.runs().to_string(),
        millis(waits.median()),
        millis(waits.max()),
    ]);
    report.add(section);
    Ok(Interrupt {
        overrun_max: overruns.max(),
        overrun_median: overruns.median(),
    })
}
