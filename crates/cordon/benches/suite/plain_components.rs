//! Section 12: a plain component's call (its JSON arguments converted to WIT values through
//! wasmtime's dynamic `Val` interface, its return value back to JSON and structured output) beside
//! an SDK plugin doing the same work (the Rust echo of section 1, one JSON string each way), in
//! alternating blocks on one pipeline each; and a call whose arguments and result are a variant, an
//! enum and a record.

use crate::per_call::{ARGUMENTS, pipeline_calls_with};
use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, micros};

/// Alternating blocks, and calls per block.
const BLOCKS: usize = 10;
const CALLS_PER_BLOCK: usize = 300;

/// The plain echo's median over the SDK echo's: the figure the goal is stated in.
pub struct PlainFigures {
    pub echo_ratio: f64,
}

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<PlainFigures> {
    let sdk = setup.guest("fixture_echo.wasm");
    let plain = setup.guest("fixture_plain_geometry.wasm");
    let sdk = setup.pipeline("sdk-echo", &[("echo", &sdk)], "").await?;
    let plain = setup
        .pipeline("plain-echo", &[("geometry", &plain)], "")
        .await?;
    let (mut sdk_blocks, mut plain_blocks) = (Vec::new(), Vec::new());
    for _ in 0..BLOCKS {
        sdk_blocks.push(pipeline_calls_with(&sdk, "echo", ARGUMENTS, CALLS_PER_BLOCK).await);
        plain_blocks.push(pipeline_calls_with(&plain, "echo", ARGUMENTS, CALLS_PER_BLOCK).await);
    }
    let (sdk_echo, plain_echo) = (Sample::combined(sdk_blocks), Sample::combined(plain_blocks));
    let measure = pipeline_calls_with(
        &plain,
        "measure",
        r#"{"shape": {"polygon": [{"x": 0, "y": 0}, {"x": 4, "y": 0}, {"x": 0, "y": 3}]}, "unit": "metres"}"#,
        BLOCKS * CALLS_PER_BLOCK,
    )
    .await;
    let base = sdk_echo.median().as_secs_f64();
    let mut section = Section::new(
        "12. Plain components",
        "A component built with plain wit-bindgen for a world of its own (tests/fixtures/\
         plain_geometry): its arguments become WIT values through wasmtime's dynamic `Val` \
         interface and its return value comes back as text and structured output checked \
         against the derived output schema. Beside it, the SDK echo of section 1 (one JSON \
         string each way); the two echoes run in alternating blocks. `÷ SDK echo` divides the \
         row's median by the SDK echo's.",
        &["call", "runs", "median", "p99", "÷ SDK echo"],
    );
    for (name, sample) in [
        ("SDK plugin (Rust SDK, contract 0.2), `echo`", &sdk_echo),
        (
            "**plain component (wit-bindgen), `echo: func(text: string) -> string`**",
            &plain_echo,
        ),
        (
            "plain component, `measure` (a variant of a list of records in, a record out)",
            &measure,
        ),
    ] {
        section.row(vec![
            name.into(),
            sample.runs().to_string(),
            micros(sample.median()),
            micros(sample.p99()),
            format!("{:.2}", sample.median().as_secs_f64() / base),
        ]);
    }
    report.add(section);
    Ok(PlainFigures {
        echo_ratio: plain_echo.median().as_secs_f64() / base,
    })
}
