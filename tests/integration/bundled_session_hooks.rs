//! The bundled session hooks in `cordon run` against the scripted model server: `finish_line`
//! sends an answer that breaks its output contract back, naming each broken rule, until one
//! meets it (and a contract it cannot read stops the turn); `session_notes` writes the
//! compaction summary itself, keeping the paths, decisions and open questions of the folded
//! turns.

use crate::support::agent_runs::{assert_mentions, call, run};
use crate::support::model_server::ScriptedModel;
use crate::support::{Workspace, probe};
use serde_json::{Value, json};

fn finish_line(settings: &str) -> Workspace {
    probe().plugin("finish_line", "finish").config(&format!(
        "[agent]\ntools = [\"echo\"]\n[model]\nretries = 0\n[plugins.finish]\nhook = true\n[plugins.finish.settings]\n{settings}\n"
    ))
}

#[test]
fn finish_line_sends_back_an_answer_that_breaks_the_contract_until_one_meets_it() {
    let model = ScriptedModel::start(json!([
        { "text": "Fixed it. TODO: run the tests" },
        { "text": "Fixed it. Tests: 12 passed." }
    ]));
    let ws = finish_line("must_contain = [\"Tests:\"]\nmust_not_contain = [\"TODO\"]");
    let out = run(&ws, &model, &["fix the bug"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Fixed it. Tests: 12 passed.");
    assert_eq!(model.requests().len(), 2);
    let sent = model.body(1)["messages"].to_string();
    assert!(
        sent.contains("it must contain \\\"Tests:\\\"")
            && sent.contains("it must not contain \\\"TODO\\\""),
        "{sent}"
    );

    // A JSON contract: the answer must be an object with the keys asked for.
    let model = ScriptedModel::start(json!([
        { "text": "{\"summary\": \"ok\"}" },
        { "text": "```json\n{\"summary\": \"ok\", \"files\": [\"a.rs\"]}\n```" }
    ]));
    let ws = finish_line("json_keys = [\"summary\", \"files\"]");
    let out = run(&ws, &model, &["report"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        model.body(1)["messages"]
            .to_string()
            .contains("its JSON object lacks the keys files"),
        "{}",
        model.body(1)
    );
}

#[test]
fn finish_line_with_a_contract_it_cannot_read_stops_the_turn() {
    let model = ScriptedModel::start(json!([{ "text": "an answer" }, { "text": "never" }]));
    let ws = finish_line("must_contian = [\"Tests:\"]");
    let out = run(&ws, &model, &["fix the bug"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "stop hook `finish`");
    assert_eq!(model.requests().len(), 1, "no continuation was sent");
}

#[test]
fn session_notes_writes_the_compaction_summary_with_paths_decisions_and_questions() {
    let mut ws = Workspace::new()
        .plugin("fs", "fs")
        .plugin("session_notes", "notes");
    for n in 1..=6 {
        ws = ws.file(
            &format!("data/f{n:02}.txt"),
            &format!("file {n} says hello. ").repeat(1200),
        );
    }
    let ws = ws.config(
        "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n\n[agent]\ntools = [\"read_file\"]\nmax_steps = 20\n\n[model]\nretries = 0\n\n[plugins.notes]\nhook = true\n",
    );
    let mut replies: Vec<Value> = (1..=6)
        .map(|n| {
            json!({
                "text": format!("Reading /data/f{n:02}.txt next. We will skip the archive. Should the report list sizes?"),
                "tool_calls": [call(&format!("r{n}"), "read_file", json!({"path": format!("/data/f{n:02}.txt")}))]
            })
        })
        .collect();
    replies.push(json!({ "text": "Six files read." }));
    let model = ScriptedModel::start_script(json!({ "replies": replies, "context_window": 5000 }));
    let out = run(
        &ws,
        &model,
        &["--transcript", "t.jsonl", "Read six files."],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let summary = model
        .requests()
        .iter()
        .map(|r| r["body"]["messages"].to_string())
        .find(|sent| sent.contains("Notes kept by session_notes"))
        .expect("a request after the compaction carries the notes");
    for kept in [
        "- /data/f01.txt",
        "We will skip the archive.",
        "- Should the report list sizes?",
    ] {
        assert!(summary.contains(kept), "{kept}\n{summary}");
    }
    let transcript = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
    let compaction: Value = transcript
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["role"] == "compaction")
        .expect("the compaction is in the transcript");
    assert_eq!(compaction["method"], "hook");
}
