//! Section 9: what recording the paths a tool opens costs. The bundled fs plugin's `grep` searches
//! 100 small files (101 opens: the directory and each file) and `read_file` reads one (one open),
//! each measured three ways, interleaved round by round: nobody listening (opens are not recorded),
//! an event listener (each open is a `path_open` event), and the audit log (each open is also
//! listed in the call's line, written and flushed once per call).

use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, micros};
use cordon_runtime::pipeline::events::EventSink;
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Pipeline};
use std::sync::Arc;
use std::time::Instant;

const ROUNDS: usize = 200;
const FILES: usize = 100;

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let data = setup.scratch.path().join("opened_paths_data");
    std::fs::create_dir_all(&data)?;
    for i in 0..FILES {
        std::fs::write(
            data.join(format!("f{i}.txt")),
            "a line of text\n".repeat(20),
        )?;
    }
    let config = format!(
        "[plugins.fs]\ndirs = [{{ host = {:?}, guest = \"/data\" }}]\n",
        data.display().to_string()
    );
    let fs = setup.guest("fs.wasm");
    let pipeline = |name: &'static str, audit: String| {
        let config = format!("{config}{audit}");
        let fs = fs.clone();
        async move { setup.pipeline(name, &[("fs", &fs)], &config).await }
    };
    let plain = pipeline("opened_paths_plain", String::new()).await?;
    let audit = setup.scratch.path().join("opened_paths_audit.jsonl");
    let audited = pipeline(
        "opened_paths_audited",
        format!("[audit]\npath = {:?}\n", audit.display().to_string()),
    )
    .await?;
    let listener: EventSink = Arc::new(|event| {
        std::hint::black_box(event);
    });
    let observers: [(&Pipeline, Option<EventSink>, &str); 3] = [
        (&plain, None, "nobody listening"),
        (&plain, Some(listener), "an event listener"),
        (&audited, None, "the audit log"),
    ];

    let mut section = Section::new(
        "9. Recording opened paths",
        "The audit log's `pathsOpened` and `path_open` events: the same calls observed three ways, \
         interleaved round by round; the last column is the median cost per open against nobody \
         listening.",
        &["call", "observed by", "median", "p99", "per open"],
    );
    for (tool, arguments, opens) in [
        ("grep", r#"{"pattern": "needle"}"#, FILES + 1),
        ("read_file", r#"{"path": "/data/f0.txt"}"#, 1),
    ] {
        let mut times = vec![Vec::with_capacity(ROUNDS); observers.len()];
        for _ in 0..ROUNDS {
            for (row, (pipeline, events, _)) in observers.iter().enumerate() {
                let options = BatchOptions {
                    events: events.clone(),
                    ..Default::default()
                };
                let started = Instant::now();
                let result = pipeline
                    .call(CallRequest::new("bench", tool, arguments), &options)
                    .await;
                times[row].push(started.elapsed());
                anyhow::ensure!(!result.is_error, "{tool} failed: {}", result.text());
            }
        }
        let samples: Vec<Sample> = times.into_iter().map(Sample::new).collect();
        let baseline = samples[0].median().as_secs_f64();
        for (sample, (_, _, observer)) in samples.iter().zip(&observers) {
            let extra = (sample.median().as_secs_f64() - baseline) * 1e6 / opens as f64;
            section.row(vec![
                format!(
                    "`{tool}` ({opens} open{})",
                    if opens == 1 { "" } else { "s" }
                ),
                (*observer).into(),
                micros(sample.median()),
                micros(sample.p99()),
                format!("{extra:+.2} µs"),
            ]);
        }
    }
    report.add(section);
    Ok(())
}
