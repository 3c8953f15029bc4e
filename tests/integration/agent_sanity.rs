//! The agent loop staying sane when the model does not, against the scripted server: the same
//! call repeated gets a note and then stops the turn; an empty answer gets one reminder and then
//! is an error; every reply asks for a bounded output and a cut-off names its real cause; token
//! usage is reported per step and per turn; calls written as text in every shape are recovered
//! (unknown names become `not_found`, ids stay unique, none is shown as answer text), and a
//! warning names the switch when recovery is off; a reply that writes one call again and again is
//! read no further; a whole reply that times out is not retried.

use crate::support::agent_runs::{
    CONFIG, assert_mentions, call, openai_tool_messages, run, workspace,
};
use crate::support::model_server::ScriptedModel;
use crate::support::probe;
use serde_json::{Value, json};

fn events(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

#[test]
fn the_same_call_repeated_gets_a_note_then_stops_the_turn() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("same", "echo", json!({"text": "again"}))], "repeat": true }
    ]));
    let out = run(&workspace(), &model, &["loop"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(
        &out.stderr,
        "called echo with the same arguments 4 times in a row",
    );
    assert_mentions(&out.stderr, "max_repeated_calls");
    assert_eq!(model.requests().len(), 4);
    let third = openai_tool_messages(&model.body(3));
    assert_eq!(third[1].1, "again", "the second result has no note");
    assert!(third[2].1.starts_with("again"), "{third:?}");
    assert_mentions(
        &third[2].1,
        "call number 3 in a row of echo with exactly these arguments",
    );

    // Key order does not make a call different; `max_repeated_calls = 0` turns the check off.
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("a", "echo", json!({"text": "x"}))] },
        { "tool_calls": [call("b", "echo", json!("{ \"text\" : \"x\" }"))] },
        { "tool_calls": [call("c", "echo", json!({"text": "x"}))] },
        { "tool_calls": [call("d", "echo", json!({"text": "x"}))] },
        { "text": "done" }
    ]));
    let ws = probe().config(&CONFIG.replace("[agent]\n", "[agent]\nmax_repeated_calls = 0\n"));
    let out = run(&ws, &model, &["loop"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "done");
}

#[test]
fn an_empty_answer_gets_one_reminder_then_is_an_error() {
    let model = ScriptedModel::start(json!([{ "text": "" }, { "text": "  " }]));
    let out = run(&workspace(), &model, &["say something"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.trim().is_empty());
    assert_mentions(&out.stderr, "final answer was empty, also after a reminder");
    let second = model.body(1);
    let last = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert_mentions(
        last["content"].as_str().unwrap(),
        "Your last reply was empty",
    );

    let model = ScriptedModel::start(json!([{ "text": "" }, { "text": "Here it is." }]));
    let out = run(&workspace(), &model, &["say something"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Here it is.");
}

#[test]
fn replies_are_bounded_and_a_cut_off_names_its_cause() {
    // No max_tokens set, a local server that does not say its window: 8,192 assumed, a quarter of
    // it asked for the reply.
    let model = ScriptedModel::start(json!([{ "text": "The answer is", "finish": "length" }]));
    let out = run(&workspace(), &model, &["go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(model.body(0)["max_tokens"], 2048);
    assert_mentions(
        &out.stderr,
        "cut off by cordon's default output limit of 2048 tokens (set [model] max_tokens",
    );

    let model = ScriptedModel::start(json!([{ "text": "The answer is", "finish": "length" }]));
    let ws = probe().config(&format!("{CONFIG}max_tokens = 100\n"));
    let out = run(&ws, &model, &["go"], &[]);
    assert_eq!(model.body(0)["max_tokens"], 100);
    assert_mentions(
        &out.stderr,
        "cut off by the output token limit (max_tokens = 100)",
    );

    // A reply that filled the server's whole window says so (the usage shows it).
    let model = ScriptedModel::start_script(json!({
        "replies": [{ "text": "word ".repeat(1100), "finish": "length" }],
        "context_window": 1200,
    }));
    let out = run(&workspace(), &model, &["go"], &[]);
    assert_mentions(
        &out.stderr,
        "cut off by the model's context window (1200 tokens) filling up",
    );
    assert!(model.body(0)["max_tokens"].as_u64().unwrap() <= 300);

    // Nothing written at all before the cut: an error, not an empty answer.
    let model = ScriptedModel::start(json!([{ "text": "", "finish": "length" }]));
    let out = run(&workspace(), &model, &["go"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "cut off by cordon's default output limit");
}

#[test]
fn token_usage_is_reported_per_step_and_per_turn() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("e", "echo", json!({"text": "hi"}))] },
        { "text": "Done." }
    ]));
    let ws = workspace();
    let out = run(
        &ws,
        &model,
        &["--events", "--transcript", "t.jsonl", "go"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let events = events(&out.stderr);
    let replies: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "model_reply")
        .collect();
    assert_eq!(replies.len(), 2);
    let served: Vec<u64> = model
        .requests()
        .iter()
        .map(|r| r["prompt_tokens"].as_u64().unwrap())
        .collect();
    for (reply, prompt) in replies.iter().zip(&served) {
        assert_eq!(reply["usage"]["promptTokens"], *prompt, "{reply}");
        assert!(reply["usage"]["completionTokens"].as_u64().unwrap() > 0);
    }
    let end = events.iter().find(|e| e["type"] == "turn_end").unwrap();
    assert_eq!(end["modelRequests"], 2);
    assert_eq!(end["usage"]["promptTokens"], served.iter().sum::<u64>());
    let lines: Vec<Value> = std::fs::read_to_string(ws.path().join("t.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let assistant = lines.iter().find(|l| l["role"] == "assistant").unwrap();
    assert_eq!(assistant["usage"]["prompt_tokens"], served[0]);
    let turn = lines.last().unwrap();
    assert_eq!(turn["role"], "turn_end");
    assert_eq!(turn["usage"]["prompt_tokens"], served.iter().sum::<u64>());
}

#[test]
fn calls_written_as_text_in_every_shape_are_recovered_and_never_shown() {
    let lines = "{\"name\": \"echo\", \"arguments\": {\"text\": \"one\"}}\n{\"name\": \"echo\", \"arguments\": {\"text\": \"two\"}}";
    let fences = "Let me check.\n```json\n{\"name\": \"echo\", \"arguments\": {\"text\": \"three\"}}\n```\n```json\n{\"name\": \"list_files\", \"arguments\": {\"path\": \"/data\"}}\n```";
    let array = "[{\"name\": \"echo\", \"arguments\": {\"text\": \"four\"}}]";
    let tags =
        "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"text\": \"five\"}}\n</tool_call>";
    let model = ScriptedModel::start(json!([
        { "text": lines }, { "text": fences }, { "text": array }, { "text": tags },
        { "text": "All echoed." }
    ]));
    let ws = probe().config(&format!("{CONFIG}parse_text_tool_calls = true\n"));
    let out = run(&ws, &model, &["--events", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "All echoed.");
    let results = openai_tool_messages(&model.body(4));
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "text_call_1",
            "text_call_2",
            "text_call_3",
            "text_call_4",
            "text_call_5",
            "text_call_6"
        ],
        "ids are unique across the session"
    );
    let texts: Vec<&str> = results.iter().map(|(_, text)| text.as_str()).collect();
    assert_eq!(&texts[..3], ["one", "two", "three"]);
    assert!(
        texts[3].starts_with(
            "Error (not_found): Unknown tool \"list_files\". Available tools: echo, fail, sleep"
        ),
        "{texts:?}"
    );
    assert_eq!(&texts[4..], ["four", "five"]);
    let shown: String = events(&out.stderr)
        .iter()
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(
        !shown.contains("\"name\""),
        "a recovered call was shown as text: {shown:?}"
    );
    assert!(shown.contains("Let me check."), "{shown:?}");
    assert!(shown.contains("All echoed."), "{shown:?}");

    // A model looping inside one reply (cut off by the output limit) gets each call run once.
    let looping = "{\"name\": \"echo\", \"arguments\": {\"text\": \"loop\"}}\n".repeat(40)
        + "{\"name\": \"echo\", \"argu";
    let model = ScriptedModel::start(json!([
        { "text": looping, "finish": "length" }, { "text": "Stopped looping." }
    ]));
    let out = run(&ws, &model, &["go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let results = openai_tool_messages(&model.body(1));
    assert_eq!(results, [("text_call_1".to_string(), "loop".to_string())]);

    // Recovery off: the call is not run, the text is the answer, and a warning names the switch.
    let model = ScriptedModel::start(json!([{ "text": lines }]));
    let out = run(&workspace(), &model, &["go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_mentions(&out.stderr, "parse_text_tool_calls = true");
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn a_reply_that_repeats_a_call_is_read_no_further() {
    // The server streams one call over and over, then neither ends the reply nor sends more, as
    // a local model does that writes the same call until its output limit. Without the cut the
    // 5 s idle limit would fail the turn; with it the call runs once and the turn goes on.
    let call =
        "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"text\": \"loop\"}}\n</tool_call>\n";
    let looping = format!("I will echo it.\n{}", call.repeat(30));
    let model = ScriptedModel::start(json!([
        { "text": looping, "then_stall": true }, { "text": "Stopped looping." }
    ]));
    let ws = probe().config(&format!(
        "{CONFIG}parse_text_tool_calls = true\ntimeout = \"5s\"\n"
    ));
    let out = run(&ws, &model, &["--events", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Stopped looping.");
    assert_mentions(&out.stderr, "the rest of the reply was not read");
    let second = model.body(1);
    assert_eq!(
        openai_tool_messages(&second),
        [("text_call_1".to_string(), "loop".to_string())]
    );
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["content"], "I will echo it.", "{assistant}");
    // The server never counted the cut reply, so its usage is cordon's estimate.
    let replies: Vec<Value> = events(&out.stderr)
        .into_iter()
        .filter(|e| e["type"] == "model_reply")
        .collect();
    assert!(
        replies[0]["usage"]["completionTokens"].as_u64().unwrap() > 0,
        "{replies:?}"
    );
}

#[test]
fn recovered_ids_stay_unique_after_a_resume() {
    let step = json!({ "text": "{\"name\": \"echo\", \"arguments\": {\"text\": \"x\"}}" });
    let model = ScriptedModel::start(json!([
        step.clone(), { "text": "first" }, step, { "text": "second" }
    ]));
    let ws = probe().config(&format!("{CONFIG}parse_text_tool_calls = true\n"));
    let out = run(&ws, &model, &["--transcript", "t.jsonl", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = run(&ws, &model, &["--resume", "t.jsonl", "again"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ids: Vec<String> = openai_tool_messages(&model.body(3))
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(ids, ["text_call_1", "text_call_2"]);
}

#[test]
fn a_whole_reply_that_times_out_is_not_retried() {
    let model = ScriptedModel::start(json!([{ "text": "slow", "delay_ms": 3000, "repeat": true }]));
    let out = run(
        &workspace(),
        &model,
        &["--no-stream", "--timeout", "1s", "go"],
        &[],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "sent nothing for 1s");
    assert_mentions(&out.stderr, "--timeout");
    assert_eq!(
        model.requests().len(),
        1,
        "a timed-out generation is not asked again"
    );

    // Without --timeout, a whole reply may take as long as it takes (here longer than 1 s).
    let model = ScriptedModel::start(json!([{ "text": "worth the wait", "delay_ms": 1500 }]));
    let out = run(&workspace(), &model, &["--no-stream", "go"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "worth the wait");
}
