//! Section 1: what one trivial call (echo ~100 bytes of JSON) costs, fresh sandbox per call, side by
//! side: the native floor, bare wasmtime, cordon's sandbox alone, the whole pipeline (Rust), the
//! pipeline with one hook pair, and the same echo written in Python, C and JavaScript.

use crate::bare::Bare;
use crate::report::{Report, Section};
use crate::setup::{OPTIONAL_ECHOES, Setup};
use crate::stats::{Sample, micros, time_n};
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Pipeline};
use cordon_runtime::{CallOptions, Registry};
use std::time::{Duration, Instant};

pub const ARGUMENTS: &str =
    r#"{"text": "a trivial tool call with about one hundred bytes of JSON arguments in it, ok"}"#;
const ROUNDS: usize = 3000;
const SLOW_ROUNDS: usize = 300;
const WARM_UP: usize = 200;

/// Figures other sections and the targets need.
pub struct PerCall {
    pub pipeline: Duration,
    pub hook_pair: Duration,
    pub python: Duration,
    pub javascript: Option<Duration>,
}

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<PerCall> {
    let echo = setup.guest("fixture_echo.wasm");
    let pipeline = setup.pipeline("echo", &[("echo", &echo)], "").await?;
    let mut rows: Vec<(String, Option<Sample>)> = Vec::new();

    let native = time_n(ROUNDS, || {
        let value: serde_json::Value = serde_json::from_str(ARGUMENTS).unwrap();
        std::hint::black_box(
            serde_json::json!({ "content": [{ "type": "text", "text": value["text"] }] })
                .to_string(),
        );
    });
    rows.push((
        "native floor (serde_json echo, in-process)".into(),
        Some(native),
    ));

    let engine = cordon_runtime::engine::build(&Default::default())?;
    let bare = Bare::new(&engine, &echo)?;
    let (mut answered, mut dropped) = (Vec::new(), Vec::new());
    for round in 0..WARM_UP + ROUNDS {
        let (a, d) = bare.call(ARGUMENTS).await?;
        if round >= WARM_UP {
            answered.push(a);
            dropped.push(d);
        }
    }
    rows.push((
        "bare wasmtime: fresh Store + instantiate + call".into(),
        Some(Sample::new(answered)),
    ));
    rows.push((
        "bare wasmtime, including dropping the Store".into(),
        Some(Sample::new(dropped)),
    ));
    drop(bare);
    drop(engine);

    rows.push((
        "cordon sandbox only (Plugin::call_tool, no pipeline)".into(),
        Some(sandbox_calls(pipeline.registry()).await),
    ));
    let through_pipeline = pipeline_calls(&pipeline, "echo", ROUNDS).await;
    let pipeline_median = through_pipeline.median();
    rows.push((
        "**cordon pipeline, Rust echo** (lookup, schema, sandbox, result)".into(),
        Some(through_pipeline),
    ));

    // The same with the component model's async ABI on (as when a plugin needs it): every call
    // on wasmtime's concurrent path.
    let concurrent = setup
        .pipeline(
            "echo-concurrent-path",
            &[("echo", &echo)],
            "[host]\ncomponent_model_async = true\n",
        )
        .await?;
    rows.push((
        "cordon pipeline, Rust echo, async ABI on (`[host] component_model_async = true`)".into(),
        Some(pipeline_calls(&concurrent, "echo", ROUNDS).await),
    ));
    drop(concurrent);

    let hook = setup.guest("fixture_scripted_hook.wasm");
    let hooked = setup
        .pipeline(
            "hooked",
            &[("echo", &echo), ("hook", &hook)],
            "[plugins.hook]\nhook = true\n",
        )
        .await?;
    let hooked = pipeline_calls(&hooked, "echo", ROUNDS).await;
    let hook_pair = hooked.median().saturating_sub(pipeline_median);
    rows.push((
        "cordon pipeline + one before-hook + one after-hook".into(),
        Some(hooked),
    ));

    // A real tool touching a granted directory: the fs plugin reading a 4 KiB file.
    let data = setup.scratch.path().join("read-file-data");
    std::fs::create_dir_all(&data)?;
    std::fs::write(
        data.join("notes.txt"),
        "a line of text in a small file\n".repeat(128),
    )?;
    let fs = setup.guest("fs.wasm");
    let fs = setup
        .pipeline(
            "read-file",
            &[("fs", &fs)],
            "[plugins.fs]\ndirs = [{ host = \"read-file-data\", guest = \"/data\" }]\n",
        )
        .await?;
    rows.push((
        "cordon pipeline, fs `read_file` of a 4 KiB file (one read-only grant)".into(),
        Some(pipeline_calls_with(&fs, "read_file", r#"{"path": "/data/notes.txt"}"#, ROUNDS).await),
    ));

    let py_echo = setup.guest("fixture_py_echo.wasm");
    let python = setup
        .pipeline("python", &[("py_echo", &py_echo)], "")
        .await?;
    let python = pipeline_calls(&python, "py_echo", SLOW_ROUNDS).await;
    let python_median = python.median();
    rows.push((
        "cordon pipeline, Python echo (componentize-py)".into(),
        Some(python),
    ));

    let mut javascript = None;
    for (language, variable, file) in OPTIONAL_ECHOES {
        let name = format!("cordon pipeline, {language} echo");
        let Some(path) = setup.optional_echo(variable, file) else {
            rows.push((
                format!("{name}: not built (set {variable} or put {file} in CORDON_GUEST_DIR)"),
                None,
            ));
            continue;
        };
        let id = format!("echo_{}", language.to_lowercase());
        let pipeline = setup.pipeline(&id, &[(&id, &path)], "").await?;
        let sample = pipeline_calls(&pipeline, "echo", SLOW_ROUNDS).await;
        if language == "JavaScript" {
            javascript = Some(sample.median());
        }
        rows.push((name, Some(sample)));
    }

    let mut section = Section::new(
        "1. Per-call overhead",
        "One trivial tool call (echo of ~100 bytes of JSON), a fresh sandbox per call, calls one \
         after another on one task. `÷ pipeline` divides the row's median by the Rust pipeline's.",
        &["path", "runs", "median", "p99", "÷ pipeline"],
    );
    for (name, sample) in rows {
        match sample {
            Some(s) => section.row(vec![
                name,
                s.runs().to_string(),
                micros(s.median()),
                micros(s.p99()),
                format!(
                    "{:.2}",
                    s.median().as_secs_f64() / pipeline_median.as_secs_f64()
                ),
            ]),
            None => section.row(vec![name, "-".into(), "-".into(), "-".into(), "-".into()]),
        }
    }
    report.add(section);
    Ok(PerCall {
        pipeline: pipeline_median,
        hook_pair,
        python: python_median,
        javascript,
    })
}

/// `Plugin::call_tool` directly: a fresh sandbox and the call, without lookup, schema or hooks.
async fn sandbox_calls(registry: &Registry) -> Sample {
    let (plugin, _) = registry.tool("echo").expect("echo is loaded");
    let arguments: serde_json::Value = serde_json::from_str(ARGUMENTS).unwrap();
    let options = CallOptions::default();
    let mut times = Vec::with_capacity(ROUNDS);
    for round in 0..WARM_UP + ROUNDS {
        let started = Instant::now();
        let result = plugin
            .call_tool("bench", "echo", &arguments, &options)
            .await;
        let elapsed = started.elapsed();
        assert!(!result.is_error, "{result:?}");
        if round >= WARM_UP {
            times.push(elapsed);
        }
    }
    Sample::new(times)
}

/// `rounds` calls of `tool` through the whole pipeline, after a warm-up.
pub async fn pipeline_calls(pipeline: &Pipeline, tool: &str, rounds: usize) -> Sample {
    pipeline_calls_with(pipeline, tool, ARGUMENTS, rounds).await
}

/// `rounds` calls of `tool` with `arguments` through the whole pipeline, after a warm-up.
pub async fn pipeline_calls_with(
    pipeline: &Pipeline,
    tool: &str,
    arguments: &str,
    rounds: usize,
) -> Sample {
    let options = BatchOptions::default();
    let mut times = Vec::with_capacity(rounds);
    for round in 0..WARM_UP.min(rounds) + rounds {
        let started = Instant::now();
        let result = pipeline
            .call(CallRequest::new("bench", tool, arguments), &options)
            .await;
        let elapsed = started.elapsed();
        assert!(!result.is_error, "{tool}: {result:?}");
        if round >= WARM_UP.min(rounds) {
            times.push(elapsed);
        }
    }
    Sample::new(times)
}

/// The pipeline shared with other sections.
pub async fn echo_pipeline(setup: &Setup) -> anyhow::Result<Pipeline> {
    let echo = setup.guest("fixture_echo.wasm");
    let pipeline = setup
        .pipeline("echo-shared", &[("echo", &echo)], "")
        .await?;
    Ok(pipeline)
}
