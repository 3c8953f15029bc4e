//! The agent loop's sessions against a scripted model server: the output contract, tool calls
//! written as text, transcripts and resuming, `cordon chat`, setup errors, and Ctrl-C mid-step or
//! while waiting for the model.

use crate::support::agent_runs::{
    CONFIG, assert_mentions, call, openai_tool_messages, run, tool_names, workspace,
};
use crate::support::model_server::ScriptedModel;
use crate::support::{Workspace, probe};
use serde_json::{Value, json};
use std::io::BufRead as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const COUNT_SCHEMA: &str = r#"{"type": "object", "properties": {"count": {"type": "integer", "minimum": 0}}, "required": ["count"], "additionalProperties": false}"#;

#[test]
fn the_output_contract_sends_an_invalid_final_result_back_then_prints_the_valid_one() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("f1", "final_result", json!({"count": "three"}))] },
        { "tool_calls": [call("f2", "final_result", json!({"count": 3}))] }
    ]));
    let ws = workspace().file("schema.json", COUNT_SCHEMA);
    let out = run(
        &ws,
        &model,
        &["--output-schema", "schema.json", "count them"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let answer: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(answer, json!({"count": 3}));
    let first = model.body(0);
    assert!(tool_names(&first).contains(&"final_result".to_string()));
    assert!(
        first["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("final_result"),
        "the system prompt says how to finish"
    );
    let results = openai_tool_messages(&model.body(1));
    assert_eq!(results[0].0, "f1");
    assert!(results[0].1.contains("/count"), "{results:?}");
    assert!(
        results[0].1.starts_with("Error (invalid_arguments)"),
        "{results:?}"
    );
}

#[test]
fn the_output_contract_gives_up_after_two_retries_with_the_validation_errors() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("f", "final_result", json!({"count": -1}))], "repeat": true }
    ]));
    let ws = workspace().file("schema.json", COUNT_SCHEMA);
    let out = run(
        &ws,
        &model,
        &["--output-schema", "schema.json", "count them"],
        &[],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.is_empty());
    assert_mentions(&out.stderr, "no valid final_result in 3 attempts");
    assert_mentions(&out.stderr, "/count");
    assert_eq!(model.requests().len(), 3);
}

#[test]
fn a_final_result_written_as_json_text_is_taken_when_text_is_read_for_calls() {
    // What a 1.5B model wrote instead of calling final_result: the answer in doubled braces.
    let reading = || {
        probe()
            .config(&format!("{CONFIG}parse_text_tool_calls = true\n"))
            .file("schema.json", COUNT_SCHEMA)
    };
    let model = ScriptedModel::start(json!([{ "text": "{{\"count\": 5}}" }]));
    let out = run(
        &reading(),
        &model,
        &["--output-schema", "schema.json", "count them"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&out.stdout).unwrap(),
        json!({"count": 5})
    );
    assert_eq!(model.requests().len(), 1);

    // Text that does not match the schema is a failed attempt, as is any text without the switch.
    let finish = json!({ "tool_calls": [call("f", "final_result", json!({"count": 5}))] });
    for (ws, text) in [
        (reading(), "{\"count\": \"five\"}"),
        (reading(), "There are 5 files."),
        (
            workspace().file("schema.json", COUNT_SCHEMA),
            "{\"count\": 5}",
        ),
    ] {
        let model = ScriptedModel::start(json!([{ "text": text }, finish]));
        let out = run(
            &ws,
            &model,
            &["--output-schema", "schema.json", "count them"],
            &[],
        );
        assert_eq!(out.code, 0, "{text}: {}", out.stderr);
        assert_eq!(model.requests().len(), 2, "{text}: reminded once");
        let reminder = model.body(1)["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert!(
            reminder["content"]
                .as_str()
                .unwrap_or_default()
                .contains("final_result"),
            "{reminder}"
        );
    }
}

#[test]
fn tool_calls_written_as_text_are_recovered_only_when_asked() {
    let steps = json!([
        { "text": "<tool_call>{\"name\": \"echo\", \"arguments\": {\"text\": \"from text\"}}</tool_call>" },
        { "text": "Echoed: {last_tool_result}" }
    ]);
    let model = ScriptedModel::start(steps.clone());
    let ws = probe().config(&format!("{CONFIG}parse_text_tool_calls = true\n"));
    let out = run(&ws, &model, &["go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Echoed: from text");
    let second = model.body(1);
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["function"]["name"],
        "echo"
    );
    assert_eq!(openai_tool_messages(&second)[0].1, "from text");

    let model = ScriptedModel::start(steps);
    let out = run(&workspace(), &model, &["go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("<tool_call>"),
        "off by default: {}",
        out.stdout
    );
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn a_conversation_resumes_from_its_transcript() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("r1", "echo", json!({"text": "remembered"}))] },
        { "text": "First answer." },
        { "text": "Second answer." }
    ]));
    let ws = workspace();
    let out = run(
        &ws,
        &model,
        &["--transcript", "t.jsonl", "first question"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(
        &ws,
        &model,
        &["--resume", "t.jsonl", "second question"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Second answer.");
    let third = model.body(2);
    let messages = third["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert_eq!(messages[3]["content"], "remembered");
    assert_eq!(messages[5]["content"], "second question");
    let lines = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
    let roles: Vec<String> = lines
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["role"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "turn_start",
            "user",
            "assistant",
            "tool",
            "assistant",
            "turn_end",
            "turn_start",
            "user",
            "assistant",
            "turn_end"
        ],
        "the resumed run appended to it, and each turn ends with its usage:\n{lines}"
    );
    let turn: Value = serde_json::from_str(lines.lines().nth(6).unwrap()).unwrap();
    assert_eq!(turn["model_requests"], 2);
    assert!(
        turn["usage"]["prompt_tokens"].as_u64().unwrap() > 0,
        "{turn}"
    );

    let out = run(&ws, &model, &["--resume", "t.jsonl"], &[]);
    assert_eq!(out.code, 2, "nothing to continue: {}", out.stderr);
    assert_mentions(&out.stderr, "give a new prompt");
}

#[test]
fn chat_keeps_the_conversation_across_lines() {
    let model = ScriptedModel::start(json!([{ "text": "Hi!" }, { "text": "Still here." }]));
    let ws = workspace();
    let url = model.base_url();
    let out = ws.cordon_stdin(
        &["chat", "--base-url", &url, "--model", "scripted"],
        "hello\n\nhow are you?\n/exit\nnever sent\n",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "Hi!\nStill here.\n");
    let second = model.body(1);
    let contents: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["hello", "Hi!", "how are you?"]);
    assert_eq!(model.requests().len(), 2);
}

#[test]
fn missing_settings_are_setup_errors_that_say_what_to_do() {
    let ws = workspace();
    for (args, expected) in [
        (&["run", "hello"][..], "--model"),
        (
            &["run", "--provider", "anthropic", "--model", "m", "hello"],
            "ANTHROPIC_API_KEY",
        ),
        (
            &[
                "run",
                "--model",
                "m",
                "--api-key-env",
                "CORDON_NO_SUCH_VAR",
                "x",
            ],
            "CORDON_NO_SUCH_VAR is not set",
        ),
        (
            &[
                "run",
                "--model",
                "m",
                "--output-schema",
                "missing.json",
                "x",
            ],
            "missing.json",
        ),
    ] {
        let out = ws.cordon(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_mentions(&out.stderr, expected);
    }
}

/// Starts `cordon run` with `--events`, waits for an event line containing `marker` on stderr,
/// sends SIGINT, and returns the exit code, the time from the signal to the exit, and stderr.
fn interrupt_when(
    ws: &Workspace,
    model: &ScriptedModel,
    prompt: &str,
    marker: &str,
) -> (i32, Duration, String) {
    let url = model.base_url();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["run", "--base-url", &url, "--model", "scripted", "--events"])
        .args(["--transcript", "t.jsonl", prompt])
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "cordon ended early: {seen}"
        );
        seen.push_str(&line);
        if line.contains(marker) {
            break;
        }
    }
    // Let the step get under way before interrupting it.
    std::thread::sleep(Duration::from_millis(200));
    let signalled = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code().unwrap_or(-1);
    let took = signalled.elapsed();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    (code, took, seen + &rest)
}

fn transcript_lines(ws: &Workspace) -> Vec<Value> {
    std::fs::read_to_string(ws.path().join("t.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is whole JSON"))
        .collect()
}

#[test]
fn ctrl_c_mid_step_cancels_the_running_tools_and_keeps_the_transcript_valid() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("long", "sleep", json!({"millis": 30000})), call("quick", "echo", json!({"text": "x"}))] },
        { "text": "never asked for" }
    ]));
    let ws = workspace();
    let (code, took, stderr) = interrupt_when(&ws, &model, "sleep long", "tool_execution_start");
    assert_eq!(code, 130, "{stderr}");
    assert!(took < Duration::from_secs(5), "cancelled in {took:?}");
    assert!(stderr.contains("cancelled"), "{stderr}");
    let lines = transcript_lines(&ws);
    let results: Vec<(&str, &str)> = lines
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["error_kind"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(results, [("long", "cancelled"), ("quick", "")]);
    assert_eq!(
        model.requests().len(),
        1,
        "no further model request after Ctrl-C"
    );
}

#[test]
fn ctrl_c_while_waiting_for_the_model_cancels_the_request() {
    let model = ScriptedModel::start(json!([{ "hang": true }]));
    let ws = workspace();
    let (code, took, stderr) = interrupt_when(&ws, &model, "hello", "model_request");
    assert_eq!(code, 130, "{stderr}");
    assert!(took < Duration::from_secs(5), "cancelled in {took:?}");
    let roles: Vec<String> = transcript_lines(&ws)
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles, ["system", "turn_start", "user"]);
}

#[test]
fn the_default_system_prompt_states_the_time_and_where_the_tools_may_work() {
    let model = ScriptedModel::start(json!([{ "text": "Noted." }]));
    let ws = probe()
        .file("data/readme.txt", "hello")
        .config(&format!(
            "{CONFIG}\n[plugins.probe]\ndirs = [{{ host = \"data\", guest = \"/data\" }}]\nhttp = [{{ origin = \"https://api.example.com\" }}]\n"
        ));
    let out = run(&ws, &model, &["Where can you look?"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let system = model.body(0)["messages"][0].clone();
    assert_eq!(system["role"], "system", "{system}");
    let text = system["content"].as_str().unwrap();
    // `It is now 2026-11-30 23:58 UTC.`
    let now = text.split("It is now ").nth(1).expect("the time is stated");
    let shape: String = now
        .chars()
        .take(21)
        .map(|c| if c.is_ascii_digit() { '9' } else { c })
        .collect();
    assert_eq!(shape, "9999-99-99 99:99 UTC.", "{text}");
    assert!(text.contains("/data (read-only)"), "{text}");
    assert!(text.contains("https://api.example.com:443"), "{text}");
}

#[test]
fn the_default_system_prompt_carries_the_active_tools_prompt_guidelines() {
    let model = ScriptedModel::start(json!([{ "text": "Noted." }, { "text": "Again." }]));
    let ws = probe().plugin("fixture_contract_v2", "v2").config(CONFIG);
    let out = run(
        &ws,
        &model,
        &["--tools", "echo,word_stats", "Count the words of: a b"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let system = model.body(0)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains(
            "Guidelines from the tools:\n- Use word_stats instead of counting words yourself.\n"
        ),
        "{system}"
    );
    // Not when the tool is not active.
    let out = run(&ws, &model, &["--tools", "echo", "Again"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = model.body(1);
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(!system.contains("word_stats"), "{system}");
}
