//! `cordon run` against scripted OpenAI and Anthropic servers on 127.0.0.1, streaming and not:
//! what the loop sends (offered tools, results in call order with ids and error flags), parallel
//! batches, max steps, cut-off replies, bad argument JSON, retries and failing servers. The
//! sessions around it (output contract, text tool calls, transcripts, chat, Ctrl-C) are in
//! agent_sessions.rs.

use crate::support::agent_runs::{
    assert_mentions, call, openai_tool_messages, run, tool_names, workspace,
};
use crate::support::model_server::ScriptedModel;
use serde_json::{Value, json};

#[test]
fn openai_stream_offers_only_active_tools_and_returns_results_in_call_order() {
    let model = ScriptedModel::start(json!([
        { "text": "Checking.", "tool_calls": [
            call("a", "sleep", json!({"millis": 300})),
            call("b", "echo", json!({"text": "hi"})),
            call("c", "fail", json!({"message": "nope"})),
            call("d", "no_such_tool", json!({})),
            call("e", "echo", json!("{\"text\": ")),
            call("f", "counter", json!({})),
        ]},
        { "text": "All done." }
    ]));
    let ws = workspace();
    let out = run(&ws, &model, &["What now?"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.trim(),
        "All done.",
        "off a terminal, stdout gets the final answer only"
    );

    let first = model.body(0);
    assert_eq!(first["stream"], true);
    assert_eq!(first["model"], "scripted");
    assert_eq!(tool_names(&first), ["echo", "fail", "sleep"]);
    let messages = first["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(
        !system.contains("echo"),
        "the default system prompt does not repeat the tools array: {system}"
    );
    assert!(system.len() < 600, "{} bytes: {system}", system.len());
    assert_eq!(messages[1], json!({"role": "user", "content": "What now?"}));

    let second = model.body(1);
    let assistant = &second["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "a");
    let results = openai_tool_messages(&second);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        ["a", "b", "c", "d", "e", "f"],
        "call order, not finish order"
    );
    assert_eq!(results[0].1, "slept");
    assert_eq!(results[1].1, "hi");
    assert!(
        results[2].1.starts_with("Error (tool_error): nope"),
        "{results:?}"
    );
    assert!(results[3].1.starts_with("Error (not_found)"), "{results:?}");
    assert!(
        results[4].1.starts_with("Error (invalid_arguments)"),
        "{results:?}"
    );
    assert!(
        results[5].1.starts_with("Error (not_active)"),
        "counter exists but is not offered: {results:?}"
    );
}

#[test]
fn anthropic_without_streaming_sends_tool_results_with_error_flags_and_the_key_header() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [
            call("t1", "echo", json!({"text": "one"})),
            call("t2", "fail", json!({"message": "broken"})),
        ]},
        { "text": "Finished." }
    ]));
    let ws = workspace();
    let out = run(
        &ws,
        &model,
        &[
            "--provider",
            "anthropic",
            "--api-key-env",
            "SCRIPTED_KEY",
            "--no-stream",
            "--transcript",
            "t.jsonl",
            "Go",
        ],
        &[("SCRIPTED_KEY", "sk-test-secret-123")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Finished.");
    let requests = model.requests();
    assert_eq!(requests[0]["path"], "/v1/messages");
    assert_eq!(requests[0]["headers"]["x-api-key"], "sk-test-secret-123");
    assert_eq!(requests[0]["headers"]["anthropic-version"], "2023-06-01");
    let first = &requests[0]["body"];
    assert_eq!(first["stream"], false);
    assert!(
        first["system"]
            .as_str()
            .unwrap()
            .starts_with("You are a capable assistant.")
    );
    assert_eq!(first["tools"][0]["input_schema"]["type"], "object");
    let second = &requests[1]["body"];
    let turns = second["messages"].as_array().unwrap();
    assert_eq!(
        turns.len(),
        3,
        "user, assistant, user(tool results): {turns:?}"
    );
    let results = turns[2]["content"].as_array().unwrap();
    assert_eq!(
        results
            .iter()
            .map(|r| (
                r["tool_use_id"].as_str().unwrap(),
                r["is_error"].as_bool().unwrap()
            ))
            .collect::<Vec<_>>(),
        [("t1", false), ("t2", true)]
    );
    assert_eq!(results[1]["content"], "broken");
    let transcript = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
    assert!(
        !transcript.contains("sk-test-secret"),
        "keys never reach transcripts"
    );
    assert!(!out.stderr.contains("sk-test-secret"));
}

#[test]
fn the_providers_own_key_variable_goes_only_to_the_providers_own_api() {
    // OPENAI_API_KEY / ANTHROPIC_API_KEY exported for the real APIs are not sent to another base
    // URL (here a local server) unless --api-key-env names them.
    for provider in ["openai", "anthropic"] {
        let model = ScriptedModel::start(json!([{ "text": "Hi." }]));
        let ws = workspace();
        let env = [
            ("OPENAI_API_KEY", "sk-real-openai-key-1234"),
            ("ANTHROPIC_API_KEY", "sk-ant-real-key-5678"),
        ];
        let out = run(&ws, &model, &["--provider", provider, "Hello"], &env);
        assert_eq!(out.code, 0, "{provider}: {}", out.stderr);
        let headers = &model.requests()[0]["headers"];
        assert!(headers["authorization"].is_null(), "{provider}: {headers}");
        assert!(headers["x-api-key"].is_null(), "{provider}: {headers}");

        let named = ScriptedModel::start(json!([{ "text": "Hi." }]));
        let variable = if provider == "openai" {
            "OPENAI_API_KEY"
        } else {
            "ANTHROPIC_API_KEY"
        };
        let out = run(
            &ws,
            &named,
            &["--provider", provider, "--api-key-env", variable, "Hello"],
            &env,
        );
        assert_eq!(out.code, 0, "{provider}: {}", out.stderr);
        let headers = &named.requests()[0]["headers"];
        let sent = headers["authorization"]
            .as_str()
            .or(headers["x-api-key"].as_str())
            .unwrap_or_default();
        assert!(
            sent.contains("real"),
            "{provider}: named, it is sent: {headers}"
        );
    }
}

#[test]
fn both_providers_work_streamed_and_whole() {
    for provider in ["openai", "anthropic"] {
        for stream in [true, false] {
            let model = ScriptedModel::start(json!([
                { "text": "Let me echo.", "tool_calls": [call("x1", "echo", json!({"text": "ping"}))] },
                { "text": "The tool said {last_tool_result}." }
            ]));
            let ws = workspace();
            let mut args = vec!["--provider", provider, "Say ping"];
            if !stream {
                args.insert(0, "--no-stream");
            }
            let out = run(&ws, &model, &args, &[("ANTHROPIC_API_KEY", "k")]);
            let label = format!("{provider} stream={stream}");
            assert_eq!(out.code, 0, "{label}: {}", out.stderr);
            assert!(
                out.stdout.contains("The tool said ping."),
                "{label}: {}",
                out.stdout
            );
            assert_eq!(model.requests().len(), 2, "{label}");
            assert_eq!(model.body(0)["stream"], stream, "{label}");
        }
    }
}

#[test]
fn independent_calls_of_one_reply_run_in_parallel() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [
            call("s1", "sleep", json!({"millis": 400})),
            call("s2", "sleep", json!({"millis": 400})),
        ]},
        { "text": "ok" }
    ]));
    let ws = workspace();
    let out = run(&ws, &model, &["--events", "sleep twice"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let events: Vec<Value> = out
        .stderr
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .filter(|k| k.starts_with("tool_execution_"))
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_execution_start",
            "tool_execution_start",
            "tool_execution_end",
            "tool_execution_end"
        ],
        "both calls start before either ends"
    );
    assert!(events.iter().any(|e| e["type"] == "model_request"));
    assert!(events.iter().any(|e| e["type"] == "model_reply"));
}

#[test]
fn reaching_max_steps_is_reported() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("again", "echo", json!({"text": "loop"}))], "repeat": true }
    ]));
    let ws = workspace();
    let out = run(&ws, &model, &["--max-steps", "3", "loop forever"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "stopped after 3 model replies");
    assert_mentions(&out.stderr, "max_steps");
    assert_eq!(model.requests().len(), 3);
}

#[test]
fn calls_of_a_reply_cut_off_by_the_length_limit_are_not_run() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("cut", "echo", json!({"text": "partial"}))], "finish": "length" },
        { "text": "ok" }
    ]));
    let ws = workspace();
    let out = run(&ws, &model, &["--events", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("tool_execution_start"),
        "the echo never ran: {}",
        out.stderr
    );
    let results = openai_tool_messages(&model.body(1));
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "cut");
    assert!(
        results[0].1.starts_with("Error (truncated): not run"),
        "{results:?}"
    );
}

#[test]
fn rate_limits_are_retried_after_the_wait_the_server_asks_for() {
    let model = ScriptedModel::start(json!([
        { "status": 429, "headers": {"Retry-After": "1"}, "error": "slow down" },
        { "text": "made it" }
    ]));
    let ws = workspace();
    let out = run(&ws, &model, &["hello"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "made it");
    assert_mentions(&out.stderr, "retry 1");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let waited = requests[1]["time"].as_f64().unwrap() - requests[0]["time"].as_f64().unwrap();
    assert!(
        waited >= 0.95,
        "Retry-After: 1 was honoured, waited {waited:.3}s"
    );
}

#[test]
fn a_server_failing_forever_is_a_clear_error_and_the_transcript_is_kept() {
    let model = ScriptedModel::start(json!([
        { "status": 500, "error": "the GPU caught fire", "repeat": true }
    ]));
    let ws = workspace();
    let out = run(&ws, &model, &["--transcript", "t.jsonl", "hello"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "failed 3 time(s)");
    assert_mentions(&out.stderr, "the GPU caught fire");
    assert_mentions(&out.stderr, "t.jsonl");
    assert_eq!(
        model.requests().len(),
        3,
        "one try and the two configured retries"
    );
    let transcript = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
    let roles: Vec<String> = transcript
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["role"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(roles, ["system", "turn_start", "user"]);
}

#[test]
fn client_errors_show_the_providers_message_without_retrying() {
    let model = ScriptedModel::start(json!([
        { "status": 401, "error": "Incorrect API key provided" }
    ]));
    let out = run(&workspace(), &model, &["hello"], &[]);
    assert_eq!(out.code, 1);
    assert_mentions(&out.stderr, "HTTP 401");
    assert_mentions(&out.stderr, "Incorrect API key provided");
    assert!(out.stderr.contains("api-key-env"), "a hint: {}", out.stderr);
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn a_malformed_reply_is_a_clear_error() {
    for stream in [false, true] {
        let model = ScriptedModel::start(json!([{ "malformed": "<html>502 Bad Gateway</html>" }]));
        let ws = workspace();
        let mut args = vec!["--transcript", "t.jsonl", "hello"];
        if !stream {
            args.insert(0, "--no-stream");
        }
        let out = run(&ws, &model, &args, &[]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert_mentions(&out.stderr, "cordon cannot read");
        assert_mentions(&out.stderr, "502 Bad Gateway");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("t.jsonl"))
                .unwrap()
                .lines()
                .count(),
            3
        );
    }
}

#[test]
fn an_endless_reply_or_line_is_refused_without_holding_it() {
    for (stream, bound) in [
        (false, "the model's reply is over 16 MiB"),
        (true, "a line of the event stream"),
    ] {
        let model = ScriptedModel::start(json!([{ "flood_mb": 100 }]));
        let ws = workspace();
        let mut args = vec!["hello"];
        if !stream {
            args.insert(0, "--no-stream");
        }
        let out = run(&ws, &model, &args, &[]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert_mentions(&out.stderr, bound);
        assert_eq!(model.requests().len(), 1, "not retried");
    }
}
