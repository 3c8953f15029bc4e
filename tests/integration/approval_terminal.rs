//! `cordon run` on a pseudo-terminal (driven by python3's `pty`, as a person at a terminal would):
//! the agent loop's call that a hook asks about is put to the person, and their answer decides.

use crate::support::agent_runs::call;
use crate::support::model_server::ScriptedModel;
use crate::support::{Workspace, run_on_terminal};
use serde_json::json;

fn asking_session(model: &ScriptedModel) -> (Workspace, Vec<String>) {
    let ws = Workspace::new()
        .plugin("fixture_contract_v2", "v2")
        .config("[plugins.v2]\nhook = true\n");
    let args = vec![
        "run".to_string(),
        "--base-url".to_string(),
        model.base_url(),
        "--model".to_string(),
        "scripted".to_string(),
        "Count the words".to_string(),
    ];
    (ws, args)
}

#[test]
fn cordon_run_asks_the_person_at_the_terminal_and_runs_the_call_they_approve() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("c1", "word_stats", json!({"text": "a b c", "ask": "it reads a private note"}))] },
        { "text": "Three words." }
    ]));
    let (ws, args) = asking_session(&model);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _question, screen) = run_on_terminal(&ws, "y", &args);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("? approve word_stats (plugin v2)"),
        "{screen}"
    );
    assert!(
        screen.contains("asked by hook `v2`: it reads a private note"),
        "{screen}"
    );
    assert!(screen.contains("Three words."), "{screen}");
    let sent = model.body(1).to_string();
    assert!(
        sent.contains("words"),
        "the tool ran and its result went to the model: {sent}"
    );
    assert!(!sent.contains("not_approved"), "{sent}");
}

#[test]
fn cordon_run_tells_the_model_when_the_person_says_no() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("c1", "word_stats", json!({"text": "a b c", "ask": "it reads a private note"}))] },
        { "text": "I was not allowed." }
    ]));
    let (ws, args) = asking_session(&model);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _question, screen) = run_on_terminal(&ws, "n", &args);
    assert_eq!(code, 0, "{screen}");
    let sent = model.body(1).to_string();
    assert!(
        sent.contains("user said no"),
        "the model reads the refusal: {sent}"
    );
}
