//! Section 16: what session hooks (contract 0.3) add to a turn of the agent loop: the stages of a
//! one-request turn (session-start, prompt, model-request, model-response, stop, session-end) run
//! through the pipeline with one pass-through hook watching every stage
//! (tests/fixtures/session_hook with no settings: it proceeds everywhere), against the same
//! stages with no hook (where the loop builds no event and starts no sandbox), side by side.

use crate::report::{Report, Section};
use crate::setup::Setup;
use crate::stats::{Sample, micros};
use cordon_runtime::SessionStage;
use cordon_runtime::pipeline::{Pipeline, StageOptions};
use serde_json::json;
use std::time::Instant;

const ROUNDS: usize = 300;
const WARM_UP: usize = 20;

/// The stages of a turn with one model request, in order.
const TURN: [SessionStage; 6] = [
    SessionStage::SessionStart,
    SessionStage::Prompt,
    SessionStage::ModelRequest,
    SessionStage::ModelResponse,
    SessionStage::Stop,
    SessionStage::SessionEnd,
];

pub async fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let hook = setup.guest("fixture_session_hook.wasm");
    let echo = setup.guest("fixture_echo.wasm");
    let none = setup
        .pipeline("stages-none", &[("echo", &echo)], "")
        .await?;
    let hooked = setup
        .pipeline(
            "stages-hooked",
            &[("echo", &echo), ("session", &hook)],
            "[plugins.session]\nhook = true\n",
        )
        .await?;
    let mut section = Section::new(
        "16. Session hooks: one turn's stages",
        "The six stages of a one-request turn through the pipeline, with one pass-through \
         session hook (tests/fixtures/session_hook, no settings) watching every stage, and with \
         none; each stage's event is the size the loop sends for a short prompt and reply. \
         Measured side by side in one run.",
        &[
            "hooks",
            "turn's stages (median)",
            "p99",
            "per stage (median)",
        ],
    );
    let without = turn_samples(&none).await;
    let with = turn_samples(&hooked).await;
    for (name, sample) in [("none", &without), ("one pass-through hook", &with)] {
        section.row(vec![
            name.into(),
            micros(sample.median()),
            micros(sample.p99()),
            micros(sample.median() / TURN.len() as u32),
        ]);
    }
    section.row(vec![
        "what the hook adds".into(),
        micros(with.median().saturating_sub(without.median())),
        String::new(),
        String::new(),
    ]);
    report.add(section);
    Ok(())
}

/// How long the stages of one turn take, `ROUNDS` times.
async fn turn_samples(pipeline: &Pipeline) -> Sample {
    let options = StageOptions::default();
    let mut times = Vec::with_capacity(ROUNDS);
    for round in 0..WARM_UP + ROUNDS {
        let started = Instant::now();
        for stage in TURN {
            // What the loop does first: no event is built when no hook watches the stage.
            if pipeline.session_hooks(stage).next().is_none() {
                continue;
            }
            let payload = payload(stage);
            std::hint::black_box(pipeline.session_stage(stage, payload, &options).await);
        }
        if round >= WARM_UP {
            times.push(started.elapsed());
        }
    }
    Sample::new(times)
}

/// An event of the size the loop sends for a short prompt and reply.
fn payload(stage: SessionStage) -> serde_json::Value {
    match stage {
        SessionStage::SessionStart => json!({"resumed": false, "messages": 1, "tools": ["echo"]}),
        SessionStage::Prompt => json!({"prompt": "Echo the word hello back to me, please."}),
        SessionStage::ModelRequest => json!({
            "step": 1,
            "messages": [
                {"role": "system", "text": "You are a helpful assistant with tools."},
                {"role": "user", "text": "Echo the word hello back to me, please."}
            ],
            "tools": ["echo"],
        }),
        SessionStage::ModelResponse => json!({"step": 1, "text": "hello", "calls": []}),
        SessionStage::Stop => json!({"answer": "hello", "continuations": 0}),
        _ => json!({"outcome": "answered", "messages": 3}),
    }
}
