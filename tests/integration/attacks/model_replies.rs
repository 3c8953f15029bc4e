//! A hostile (or broken) model and hostile transcript paths against `cordon run`, from round 7's
//! reproductions: two calls sharing one id resume; a call id at the end of the text-call counter
//! resumes without a panic; thousands of calls in one reply run at most `[agent]
//! max_calls_per_reply`; a call's arguments or a whole reply past their bounds end the turn with
//! an error naming the reply; a FIFO or a device as a transcript is refused at once; a stream that
//! never ends ends at `[agent] max_reply_time`.

use crate::support::agent_runs::{CONFIG, assert_mentions, call, openai_tool_messages, run};
use crate::support::model_server::ScriptedModel;
use crate::support::{Run, Workspace, probe};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// `cordon run` against `model`, killed (and the test failed) if it runs past `limit`.
fn run_within(ws: &Workspace, model: &ScriptedModel, extra: &[&str], limit: Duration) -> Run {
    let url = model.base_url();
    let mut args = vec!["run", "--base-url", &url, "--model", "scripted"];
    args.extend_from_slice(extra);
    let mut child = ws
        .cordon_command(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run cordon");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            let output = child.wait_with_output().unwrap();
            panic!(
                "cordon {extra:?} still ran after {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn transcript_lines(ws: &Workspace, name: &str) -> Vec<Value> {
    std::fs::read_to_string(ws.path().join(name))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn two_calls_sharing_an_id_are_each_answered_and_resume() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [
            call("a", "echo", json!({"text": "first"})),
            call("a", "fail", json!({"message": "second"})),
        ] },
        { "text": "Both done." },
        { "text": "Resumed fine." },
        { "text": "Resumed after the cut." },
    ]));
    let ws = probe().config(CONFIG);
    let out = run(&ws, &model, &["--transcript", "t.jsonl", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let answered = openai_tool_messages(&model.body(1));
    assert_eq!(answered.len(), 2, "{answered:?}");
    // The pipeline runs the first and refuses the second (a batch's ids must differ): each
    // call has its own answer either way.
    assert!(
        answered[0].1.contains("first") && answered[1].1.contains("already has the id"),
        "{answered:?}"
    );

    // cordon's own transcript, resumed as it is (today: "edited", exit 2).
    let out = run(&ws, &model, &["--resume", "t.jsonl", "again"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_mentions(&out.stdout, "Resumed fine.");

    // Cut after the first result (the session stopped while the second call ran): the second
    // call gets its own repair, though the first one's id answers it too.
    let lines = transcript_lines(&ws, "t.jsonl");
    let first_result = lines.iter().position(|l| l["role"] == "tool").unwrap();
    let cut: String = lines[..=first_result]
        .iter()
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(ws.path().join("cut.jsonl"), cut).unwrap();
    let out = run(&ws, &model, &["--resume", "cut.jsonl"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = openai_tool_messages(&model.body(3));
    assert_eq!(sent.len(), 2, "both calls answered: {sent:?}");
    assert_eq!(sent[1].0, "a");
    assert_mentions(&sent[1].1, "not run: the session stopped");
}

#[test]
fn a_native_call_id_at_the_end_of_the_text_call_counter_resumes() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("text_call_18446744073709551615", "echo", json!({"text": "x"}))] },
        { "text": "First answer." },
        { "text": "{\"name\": \"echo\", \"arguments\": {\"text\": \"written as text\"}}" },
        { "text": "Second answer." },
    ]));
    let ws = probe().config(&format!("{CONFIG}parse_text_tool_calls = true\n"));
    let out = run(&ws, &model, &["--transcript", "t.jsonl", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Today: "attempt to add with overflow", exit 101.
    let out = run(&ws, &model, &["--resume", "t.jsonl", "more"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    assert_mentions(&out.stdout, "Second answer.");
    let sent = openai_tool_messages(&model.body(3));
    let recovered = sent.last().unwrap();
    assert_eq!(recovered.0, "text_call_1", "{sent:?}");
    assert_mentions(&recovered.1, "written as text");
}

#[test]
fn two_thousand_identical_calls_in_one_reply_run_at_most_the_cap() {
    let calls: Vec<Value> = (0..2000)
        .map(|i| call(&format!("c{i}"), "echo", json!({"text": "same"})))
        .collect();
    for stream in [true, false] {
        let model = ScriptedModel::start(json!([
            { "tool_calls": calls },
            { "text": "Done." },
        ]));
        let ws = probe().config(CONFIG);
        // A window for every result whole (the default for other servers, 8,192, cuts them).
        let mut args = vec![
            "--context-window",
            "100000",
            "--events",
            "--transcript",
            "t.jsonl",
            "go",
        ];
        if !stream {
            args.insert(0, "--no-stream");
        }
        let out = run_within(&ws, &model, &args, Duration::from_secs(120));
        assert_eq!(out.code, 0, "stream {stream}: {}", out.stderr);
        let ran = out
            .stderr
            .lines()
            .filter(|line| line.contains("\"tool_execution_end\""))
            .count();
        assert_eq!(ran, 64, "stream {stream}: the default cap is 64");
        let sent = openai_tool_messages(&model.body(1));
        assert_eq!(sent.len(), 65, "64 results and the cap's answer");
        let over = &sent[64];
        assert_eq!(over.0, "c64");
        for needle in [
            "made 2000 tool calls",
            "at most 64",
            "[agent] max_calls_per_reply",
            "the 1935 calls after it were not run",
        ] {
            assert_mentions(&over.1, needle);
        }
        assert_mentions(&out.stderr, "only the first 64 run");
        let lines = transcript_lines(&ws, "t.jsonl");
        assert!(lines.len() < 80, "{} transcript lines", lines.len());
        // The transcript cordon wrote resumes.
        let again = run(&ws, &model, &["--resume", "t.jsonl", "again"], &[]);
        assert_ne!(again.code, 2, "{}", again.stderr);
    }
}

#[test]
fn the_cap_is_configurable() {
    let calls: Vec<Value> = (0..10)
        .map(|i| call(&format!("c{i}"), "echo", json!({"text": format!("n{i}")})))
        .collect();
    let model = ScriptedModel::start(json!([{ "tool_calls": calls }, { "text": "Done." }]));
    let ws = probe().config(&CONFIG.replace("[agent]\n", "[agent]\nmax_calls_per_reply = 3\n"));
    let out = run(&ws, &model, &["go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = openai_tool_messages(&model.body(1));
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_mentions(&sent[2].1, "n2");
    assert_mentions(&sent[3].1, "at most 3 of one reply");
}

#[test]
fn oversized_arguments_or_replies_end_the_turn_naming_the_reply() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("a", "echo", json!({"text": "x".repeat(2 << 20)}))] },
        { "flood_mb": 20 },
    ]));
    let ws = probe().config(CONFIG);
    let out = run_within(&ws, &model, &["--no-stream", "go"], Duration::from_secs(60));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(
        &out.stderr,
        "the model's reply has a tool call (#1, echo) with over 1 MiB of arguments",
    );
    assert!(!out.stderr.contains("system prompt"), "{}", out.stderr);
    let out = run_within(&ws, &model, &["--no-stream", "go"], Duration::from_secs(60));
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "the model's reply is over 16 MiB");
    assert_eq!(model.requests().len(), 2, "neither reply was retried");
}

#[test]
fn a_fifo_or_a_device_as_a_transcript_is_refused_at_once() {
    let model = ScriptedModel::start(json!([{ "text": "never asked" }]));
    let ws = probe().config(CONFIG);
    let made = std::process::Command::new("mkfifo")
        .arg(ws.path().join("t.jsonl"))
        .status()
        .unwrap();
    assert!(made.success());
    for (args, named) in [
        (
            ["--transcript", "t.jsonl", "hi"],
            "t.jsonl is a FIFO (named pipe)",
        ),
        (
            ["--resume", "t.jsonl", "hi"],
            "t.jsonl is a FIFO (named pipe)",
        ),
        (["--resume", "/dev/zero", "hi"], "/dev/zero is a device"),
        (["--transcript", ".", "hi"], "is a directory"),
    ] {
        let started = Instant::now();
        let out = run_within(&ws, &model, &args, Duration::from_secs(20));
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?}");
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_mentions(&out.stderr, named);
        assert_mentions(&out.stderr, "a transcript must be a regular file");
    }
    assert!(model.requests().is_empty());
}

#[test]
fn an_endless_stream_of_empty_deltas_ends_at_the_reply_deadline() {
    let model = ScriptedModel::start(json!([{ "empty_deltas": true }]));
    let ws = probe().config(&CONFIG.replace("[agent]\n", "[agent]\nmax_reply_time = \"2s\"\n"));
    let started = Instant::now();
    // --timeout bounds each pause, which this stream never makes.
    let out = run_within(
        &ws,
        &model,
        &["--timeout", "1s", "go"],
        Duration::from_secs(30),
    );
    let took = started.elapsed();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "did not finish its reply within 2s");
    assert_mentions(&out.stderr, "max_reply_time");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert_eq!(
        model.requests().len(),
        1,
        "a reply past its deadline is not retried"
    );
}
