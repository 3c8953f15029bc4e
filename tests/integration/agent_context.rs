//! The context budget against a scripted server that counts tokens its own way and refuses, as
//! llama.cpp does, any request over its window: a 60-step session reading 24 KB each step stays
//! under an 8,000-token window; a transcript far over the window resumes; `cordon chat` goes on
//! past it; a refusal for exceeding the window is recovered once (and only once); the summary
//! falls back to cordon's digest when the model cannot write it; and no request ever separates a
//! tool call from its result.

use crate::support::agent_runs::{assert_mentions, call};
use crate::support::model_server::ScriptedModel;
use crate::support::{Run, Workspace};
use serde_json::{Value, json};

/// The `fs` plugin with `count` files of about 24 KB at /data/f01.txt, /data/f02.txt, …
fn library(count: usize, extra_config: &str) -> Workspace {
    let mut ws = Workspace::new().plugin("fs", "fs");
    for n in 1..=count {
        let mut text = String::new();
        let mut line = 0;
        while text.len() < 24 * 1024 {
            line += 1;
            text.push_str(&format!(
                "file {n:02} line {line}: the quick brown fox jumps over the lazy dog, {line} times.\n"
            ));
        }
        ws = ws.file(&format!("data/f{n:02}.txt"), &text);
    }
    ws.config(&format!(
        "[plugins.fs]\ndirs = [{{ host = \"data\", guest = \"/data\", mode = \"ro\" }}]\n\n[agent]\ntools = [\"read_file\"]\nmax_steps = 100\n\n[model]\nretries = 0\n{extra_config}"
    ))
}

fn read_step(n: usize) -> Value {
    json!({ "tool_calls": [call(&format!("r{n}"), "read_file", json!({"path": format!("/data/f{n:02}.txt")}))] })
}

fn session(ws: &Workspace, model: &ScriptedModel, args: &[&str]) -> Run {
    let url = model.base_url();
    let mut all = vec!["run", "--base-url", &url, "--model", "scripted", "--events"];
    all.extend_from_slice(args);
    ws.cordon(&all)
}

fn events(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Every request's messages pair each tool call with its result, and each result with its call.
fn assert_calls_keep_their_results(model: &ScriptedModel) {
    for (number, request) in model.requests().iter().enumerate() {
        let messages = request["body"]["messages"].as_array().unwrap();
        let calls: Vec<&str> = messages
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        let results: Vec<&str> = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["tool_call_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            calls, results,
            "request #{number} split a call from its result"
        );
    }
}

/// The largest request the server counted, after checking none was over `window` or refused.
fn assert_all_within(model: &ScriptedModel, window: u64) -> u64 {
    let requests = model.requests();
    let mut largest = 0;
    for (number, request) in requests.iter().enumerate() {
        let tokens = request["prompt_tokens"].as_u64().unwrap();
        assert!(
            request.get("refused").is_none() && tokens <= window,
            "request #{number} took {tokens} tokens of a {window}-token window"
        );
        largest = largest.max(tokens);
    }
    largest
}

fn transcript(ws: &Workspace, name: &str) -> Vec<Value> {
    std::fs::read_to_string(ws.path().join(name))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_sixty_step_session_reading_24_kb_each_step_stays_inside_an_8000_token_window() {
    let mut replies: Vec<Value> = (1..=60).map(read_step).collect();
    replies.push(json!({ "text": "Read all 60 files." }));
    let model = ScriptedModel::start_script(json!({
        "replies": replies,
        "context_window": 8000,
        "report_window": false,
    }));
    let ws = library(60, "context_window = 8000\n");
    let out = session(
        &ws,
        &model,
        &["--transcript", "t.jsonl", "Read every file."],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Read all 60 files.");
    let largest = assert_all_within(&model, 8000);
    println!(
        "60 steps of 24 KB reads in an 8,000-token window: {} requests, the largest {largest} tokens",
        model.requests().len()
    );
    assert_calls_keep_their_results(&model);

    let compactions: Vec<Value> = events(&out.stderr)
        .into_iter()
        .filter(|e| e["type"] == "compaction")
        .collect();
    assert!(!compactions.is_empty(), "{}", out.stderr);
    assert!(
        compactions
            .iter()
            .all(|c| c["method"] == "model" && c["contextWindow"] == 8000)
    );
    let summaries = model
        .requests()
        .iter()
        .filter(|r| r["body"].get("tools").is_none())
        .count();
    assert_eq!(
        summaries,
        compactions.len(),
        "each compaction asked the model once"
    );

    // What the model saw last: the summary, and the newest result cut with a marker it can act on.
    let requests = model.requests();
    let last = &requests.last().unwrap()["body"]["messages"];
    let contents: Vec<&str> = last
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(
        contents
            .iter()
            .any(|c| c.starts_with("[Earlier in this session, summarised"))
    );
    let newest = last
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(newest["tool_call_id"], "r60");
    let newest = newest["content"].as_str().unwrap();
    assert!(newest.starts_with("file 60 line 1:"), "{newest}");
    assert_mentions(newest, "call read_file again with a narrower request");

    // The transcript keeps everything: every whole result, and each compaction.
    let lines = transcript(&ws, "t.jsonl");
    let results: Vec<&Value> = lines.iter().filter(|l| l["role"] == "tool").collect();
    assert_eq!(results.len(), 60);
    assert!(
        results
            .iter()
            .all(|r| r["content"].as_str().unwrap().len() >= 24 * 1024)
    );
    assert_eq!(
        lines.iter().filter(|l| l["role"] == "compaction").count(),
        compactions.len()
    );
}

#[test]
fn a_transcript_far_over_the_window_resumes_and_chat_goes_on_past_it() {
    // Ten whole 24 KB results, written with a window that held them all.
    let mut replies: Vec<Value> = (1..=10).map(read_step).collect();
    replies.push(json!({ "text": "Done reading." }));
    let big = ScriptedModel::start(json!(replies));
    let ws = library(12, "");
    let out = session(
        &ws,
        &big,
        &[
            "--context-window",
            "200000",
            "--transcript",
            "t.jsonl",
            "Read ten files.",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);

    let small = ScriptedModel::start_script(json!({
        "replies": [read_step(11), { "text": "Resumed fine." }],
        "context_window": 6000,
    }));
    let out = session(&ws, &small, &["--resume", "t.jsonl", "And the eleventh?"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Resumed fine.");
    assert_all_within(&small, 6000);
    assert_calls_keep_their_results(&small);
    assert!(
        events(&out.stderr)
            .iter()
            .any(|e| e["type"] == "compaction"),
        "{}",
        out.stderr
    );

    // `cordon chat`: every line reads a whole file, far more than the window holds in all.
    let chat = ScriptedModel::start_script(json!({
        "replies": [
            read_step(1), { "text": "one" },
            read_step(2), { "text": "two" },
            read_step(3), { "text": "three" },
            read_step(4), { "text": "four" },
        ],
        "context_window": 4000,
    }));
    let url = chat.base_url();
    let out = ws.cordon_stdin(
        &["chat", "--base-url", &url, "--model", "scripted"],
        "first\nsecond\nthird\nfourth\n",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "one\ntwo\nthree\nfour\n");
    assert_all_within(&chat, 4000);
    assert_calls_keep_their_results(&chat);
}

#[test]
fn a_refusal_for_exceeding_the_window_is_recovered_once() {
    // The user says 32,000; the server has 8,000 and does not say so until it refuses.
    let model = ScriptedModel::start_script(json!({
        "replies": [read_step(1), read_step(2), read_step(3), { "text": "All three read." }],
        "context_window": 8000,
        "report_window": false,
    }));
    let ws = library(3, "");
    let out = session(
        &ws,
        &model,
        &["--context-window", "32000", "Read three files."],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "All three read.");
    let requests = model.requests();
    let refused = requests
        .iter()
        .filter(|r| r.get("refused").is_some())
        .count();
    assert_eq!(refused, 1, "one refusal taught cordon the real window");
    let warnings: Vec<Value> = events(&out.stderr)
        .into_iter()
        .filter(|e| e["type"] == "warning")
        .collect();
    assert_eq!(warnings.len(), 1, "{}", out.stderr);
    assert_mentions(warnings[0]["message"].as_str().unwrap(), "trying once more");
    assert_calls_keep_their_results(&model);

    // A server whose window cannot hold even the first request: one retry, then a clear error.
    let tiny = ScriptedModel::start_script(json!({
        "replies": [{ "text": "never" }],
        "context_window": 50,
        "report_window": false,
    }));
    let out = session(&ws, &tiny, &["--context-window", "32000", "Read a file."]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "does not fit the model's context window");
    assert_eq!(
        tiny.requests().len(),
        2,
        "refused, retried once, and no more"
    );
}

#[test]
fn the_digest_stands_in_when_the_model_cannot_write_the_summary() {
    let mut replies: Vec<Value> = (1..=6).map(read_step).collect();
    replies.push(json!({ "text": "Six files read." }));
    let model = ScriptedModel::start_script(json!({
        "replies": replies,
        "context_window": 5000,
        "summary": { "status": 500, "error": "summaries are broken today" },
    }));
    let ws = library(6, "");
    let out = session(&ws, &model, &["--transcript", "t.jsonl", "Read six files."]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_all_within(&model, 5000);
    let lines = transcript(&ws, "t.jsonl");
    let compaction = lines
        .iter()
        .find(|l| l["role"] == "compaction")
        .unwrap_or_else(|| panic!("no compaction in the transcript: {}", out.stderr));
    assert_eq!(compaction["method"], "digest");
    assert_mentions(
        compaction["summary"].as_str().unwrap(),
        "You called read_file {\"path\": \"/data/f01.txt\"}",
    );

    // `[model] compaction = "digest"` never asks.
    let model = ScriptedModel::start_script(json!({
        "replies": (1..=6).map(read_step).chain([json!({ "text": "ok" })]).collect::<Vec<_>>(),
        "context_window": 5000,
    }));
    let ws = library(6, "compaction = \"digest\"\n");
    let out = session(&ws, &model, &["Read six files."]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        model
            .requests()
            .iter()
            .all(|r| r["body"].get("tools").is_some()),
        "no summary request"
    );
    assert!(
        events(&out.stderr)
            .iter()
            .any(|e| e["type"] == "compaction" && e["method"] == "digest")
    );
}
