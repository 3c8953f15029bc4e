//! Session hooks written with each SDK (Rust, Python, JavaScript, C) against the real host: the
//! four fixtures decide alike (tests/fixtures/rust_session, fixtures_python/py_session,
//! fixtures_js/js_session, fixtures_c/c_session), and each is driven through `cordon run` against
//! the scripted model server: its prompt context and routing reach the first request, the
//! reply's call it drops never runs, its stop continuation gives one more request, and a prompt
//! it blocks sends nothing. `cordon test` runs each declared stage and lists them.

use crate::support::agent_runs::{assert_mentions, call, tool_names};
use crate::support::model_server::ScriptedModel;
use crate::support::{Run, Workspace, probe};
use serde_json::{Value, json};

/// (component, hook id, the name its decisions carry)
const HOOKS: [(&str, &str, &str); 4] = [
    ("fixture_rust_session", "rs", "rust"),
    ("fixture_py_session", "py", "python"),
    ("fixture_js_session", "jsh", "js"),
    ("fixture_c_session", "ch", "c"),
];

fn workspace(component: &str, id: &str) -> Workspace {
    probe().plugin(component, id).config(&format!(
        "[agent]\ntools = [\"echo\", \"fail\"]\n[model]\nretries = 0\n[plugins.{id}]\nhook = true\n"
    ))
}

fn run(ws: &Workspace, model: &ScriptedModel, prompt: &str) -> Run {
    crate::support::agent_runs::run(ws, model, &["--events", prompt], &[])
}

fn ran_tools(run: &Run) -> Vec<String> {
    run.stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "tool_execution_start")
        .map(|event| event["toolName"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_session_hook_in_every_sdk_routes_adds_context_drops_calls_and_continues() {
    for (component, id, lang) in HOOKS {
        let model = ScriptedModel::start(json!([
            { "text": "Calling.", "tool_calls": [
                call("keep", "echo", json!({"text": "kept"})),
                call("drop-me", "fail", json!({"message": "should not run"})),
            ]},
            { "text": "nearly there" },
            { "text": "all DONE" }
        ]));
        let ws = workspace(component, id);
        let out = run(&ws, &model, "say hi");
        assert_eq!(out.code, 0, "{lang}: {}", out.stderr);
        assert_eq!(out.stdout.trim(), "all DONE", "{lang}");

        let first = model.body(0);
        assert_eq!(tool_names(&first), ["echo"], "{lang}: routed to echo only");
        let sent = first["messages"].to_string();
        assert!(
            sent.contains(&format!("[context from hook `{id}`]"))
                && sent.contains(&format!("{lang} hook saw: say hi")),
            "{lang}: {sent}"
        );
        assert_eq!(
            ran_tools(&out),
            ["echo"],
            "{lang}: the dropped call never ran"
        );
        assert_eq!(
            model.requests().len(),
            3,
            "{lang}: the stop hook continued once"
        );
        let last = model.body(2)["messages"].to_string();
        assert!(
            last.contains(&format!("{lang} hook: finish with DONE")),
            "{lang}: {last}"
        );
    }
}

#[test]
fn a_prompt_a_session_hook_in_every_sdk_blocks_sends_nothing() {
    for (component, id, lang) in HOOKS {
        let model = ScriptedModel::start(json!([{ "text": "never" }]));
        let ws = workspace(component, id);
        let out = run(&ws, &model, "a forbidden request");
        assert_eq!(out.code, 1, "{lang}: {}", out.stderr);
        assert_mentions(
            &out.stderr,
            &format!("prompt hook `{id}` stopped the turn: {lang} hook: forbidden prompt"),
        );
        assert!(model.requests().is_empty(), "{lang}: nothing was sent");
    }
}

#[test]
fn cordon_test_runs_every_stage_an_sdk_hook_declares() {
    for (component, id, lang) in HOOKS {
        let ws = workspace(component, id);
        let path = ws.plugin_path(id).display().to_string();
        let out = ws.cordon(&["test", &path]);
        assert_eq!(out.code, 0, "{lang}: {}{}", out.stdout, out.stderr);
        for line in [
            "a hook (session stages prompt, model-response, stop)".to_string(),
            format!(
                "ok    session hook · prompt: on the sample event, adds context: {lang} hook saw: Summarise notes/sample.txt and fix its typos.; offers only: echo"
            ),
            format!(
                "ok    session hook · stop: on the sample event, replaces with: {lang} hook: finish with DONE"
            ),
        ] {
            assert!(out.stdout.contains(&line), "{lang}: {line}\n{}", out.stdout);
        }
    }
}

#[test]
fn a_nul_in_the_prompt_hides_nothing_from_a_hook_in_any_sdk() {
    // A C string ends at NUL: the C SDK reads an escaped NUL as U+FFFD, so the hook still sees
    // what follows it and blocks the prompt, as the other SDKs do.
    for (component, id, lang) in HOOKS {
        let model = ScriptedModel::start(json!([{ "text": "never" }]));
        let ws = workspace(component, id);
        let url = model.base_url();
        let out = ws.cordon_stdin(
            &["run", "--base-url", &url, "--model", "scripted"],
            "hello\0 a forbidden plan",
        );
        assert_eq!(out.code, 1, "{lang}: {}", out.stderr);
        assert_mentions(&out.stderr, "forbidden prompt");
        assert!(model.requests().is_empty(), "{lang}");
    }
}
