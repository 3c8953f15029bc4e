//! Session hooks (contract 0.3) in `cordon run` against the scripted model servers: every stage
//! in order in `--events`, what each decision does to what the server receives (a blocked
//! prompt makes no request, context reaches the next request, narrowed tools are exactly what is
//! offered, a stop hook's continue gives one more turn within its limit, a compaction hook's
//! summary is what the next request carries), and that a hook that
//! traps, spins or answers garbage fails closed, reads no file without a grant and never sees a
//! configured secret. The hook is tests/fixtures/session_hook, steered by its settings.

use crate::support::agent_runs::{assert_mentions, call, tool_names};
use crate::support::model_server::ScriptedModel;
use crate::support::{Run, Workspace, probe};
use serde_json::{Value, json};

/// A workspace with the probe tools and the session hook, granted, with `settings` (TOML lines
/// of `[plugins.session.settings]`) and `extra` config.
fn workspace(settings: &str, extra: &str) -> Workspace {
    probe().plugin("fixture_session_hook", "session").config(&format!(
        "[agent]\ntools = [\"echo\", \"fail\"]\n{extra}\n[model]\nretries = 0\n\n[plugins.session]\nhook = true\n\n[plugins.session.settings]\n{settings}\n"
    ))
}

fn run(ws: &Workspace, model: &ScriptedModel, extra: &[&str]) -> Run {
    crate::support::agent_runs::run(ws, model, &[&["--events"], extra].concat(), &[])
}

/// The `session_hook` events of a run, as (stage, decision).
fn stages(run: &Run) -> Vec<(String, String)> {
    run.stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "session_hook")
        .map(|event| {
            (
                event["stage"].as_str().unwrap().to_string(),
                event["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A configured secret the hooks of these tests must never see.
const SECRET: &str = "sk-session-hook-s3cret-9f1e";

/// The probe with `secret` in a grant header, and the session hook echoing what it sees at
/// `stage` into the conversation as its added context.
fn echoing_with_a_secret(secret: &str, stage: &str) -> Workspace {
    probe().plugin("fixture_session_hook", "session").config(&format!(
        "[agent]\ntools = [\"echo\"]\n[plugins.probe]\nhttp = [{{ origin = \"https://api.example.com\", headers = {{ Authorization = \"Bearer {secret}\" }} }}]\n[plugins.session]\nhook = true\n[plugins.session.settings]\n{stage} = {{ echo = true }}\n"
    ))
}

/// What the session hook added to a request's text (after its `[context from hook]` line).
fn context_from_session_hook(sent: &str) -> &str {
    sent.split("[context from hook `session`]")
        .nth(1)
        .unwrap_or_default()
}

/// Every text the server received in request `index`, joined.
fn request_text(model: &ScriptedModel, index: usize) -> String {
    model.body(index)["messages"].to_string()
}

#[test]
fn every_stage_runs_in_order_around_the_tool_calls_with_both_providers() {
    for provider in ["openai", "anthropic"] {
        let model = ScriptedModel::start(json!([
            { "text": "Echoing.", "tool_calls": [call("e1", "echo", json!({"text": "hi"}))] },
            { "text": "Done." }
        ]));
        let ws = workspace("", "");
        let out = run(
            &ws,
            &model,
            &["--provider", provider, "--api-key-env", "HOME", "say hi"],
        );
        assert_eq!(out.code, 0, "{provider}: {}", out.stderr);
        assert_eq!(out.stdout.trim(), "Done.");
        let order: Vec<String> = stages(&out).into_iter().map(|(stage, _)| stage).collect();
        assert_eq!(
            order,
            [
                "session-start",
                "prompt",
                "model-request",
                "model-response",
                "model-request",
                "model-response",
                "stop",
                "session-end"
            ],
            "{provider}"
        );
        let kinds: Vec<String> = out
            .stderr
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter_map(|e| e["type"].as_str().map(str::to_string))
            .filter(|kind| kind == "session_hook" || kind.starts_with("tool_execution_"))
            .collect();
        let first_tool = kinds
            .iter()
            .position(|k| k == "tool_execution_start")
            .unwrap();
        let session_before = kinds[..first_tool]
            .iter()
            .filter(|k| *k == "session_hook")
            .count();
        assert_eq!(
            session_before, 4,
            "the tool ran after the first reply's hooks: {kinds:?}"
        );
    }
}

#[test]
fn a_blocked_prompt_makes_no_model_request_and_says_why() {
    let model = ScriptedModel::start(json!([{ "text": "never" }]));
    let ws = workspace("prompt = { block = \"no prompts about the weather\" }", "");
    let out = run(&ws, &model, &["what is the weather?"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(
        &out.stderr,
        "prompt hook `session` stopped the turn: no prompts about the weather",
    );
    assert!(model.requests().is_empty(), "nothing was sent to the model");

    // The reason is the hook's own text: it reaches the terminal as one line with no escapes.
    let model = ScriptedModel::start(json!([{ "text": "never" }]));
    let ws = workspace("prompt = { block = \"no\\u001b[2J\\nfake: line\" }", "");
    let out = run(&ws, &model, &["hi"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
    assert!(
        !out.stderr.lines().any(|line| line.starts_with("fake:")),
        "{}",
        out.stderr
    );
}

#[test]
fn context_a_hook_adds_and_a_rewritten_prompt_reach_the_next_request() {
    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let ws = workspace(
        "session-start = { add_context = \"the repository is cordon\" }\nprompt = { replace = \"rewritten prompt\", add_context = \"prefer short answers\" }",
        "",
    );
    let out = run(&ws, &model, &["original prompt"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = request_text(&model, 0);
    assert!(
        sent.contains("rewritten prompt") && !sent.contains("original prompt"),
        "{sent}"
    );
    assert!(sent.contains("the repository is cordon"), "{sent}");
    assert!(sent.contains("prefer short answers"), "{sent}");
    assert!(sent.contains("[context from hook `session`]"), "{sent}");
}

#[test]
fn narrowed_tools_are_exactly_what_the_request_offers_and_never_widened() {
    let model = ScriptedModel::start(json!([{ "text": "ok" }, { "text": "ok" }]));
    let ws = workspace("model-request = { only_tools = [\"echo\", \"sleep\"] }", "");
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        tool_names(&model.body(0)),
        ["echo"],
        "sleep is not active, so naming it offers nothing more"
    );

    // A prompt hook that routes the turn to no tools at all sends a request with none.
    let model = ScriptedModel::start(json!([{ "text": "132" }]));
    let ws = workspace("prompt = { only_tools = [] }", "");
    let out = run(&ws, &model, &["What is 12 times 11?"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(tool_names(&model.body(0)).is_empty(), "{}", model.body(0));
}

#[test]
fn a_response_hook_drops_calls_and_replaces_the_text() {
    let model = ScriptedModel::start(json!([
        { "text": "Calling.", "tool_calls": [
            call("keep", "echo", json!({"text": "kept"})),
            call("gone", "fail", json!({"message": "should not run"})),
        ]},
        { "text": "model text" }
    ]));
    let ws = workspace("model-response = { drop_calls = [\"gone\"] }", "");
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let second = request_text(&model, 1);
    assert!(
        second.contains("kept") && !second.contains("should not run"),
        "{second}"
    );

    let model = ScriptedModel::start(json!([{ "text": "model text" }]));
    let ws = workspace("model-response = { replace = \"hook text\" }", "");
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "hook text");
}

#[test]
fn a_stop_hook_continues_the_turn_within_its_limit() {
    let model = ScriptedModel::start(json!([
        { "text": "first answer" },
        { "text": "second answer" },
        { "text": "third answer" }
    ]));
    let ws = workspace(
        "stop = { replace = \"run the tests before you finish\" }",
        "max_continuations = 1",
    );
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(model.requests().len(), 2, "exactly one more turn");
    assert!(request_text(&model, 1).contains("run the tests before you finish"));
    assert_eq!(out.stdout.trim(), "second answer");
    assert_mentions(&out.stderr, "max_continuations");
}

#[test]
fn a_hook_that_traps_spins_or_answers_garbage_fails_closed() {
    for (settings, expect) in [
        (
            "prompt = { trap = true }",
            "prompt hook `session` stopped the turn",
        ),
        ("model-request = { garbage = true }", "does not take"),
        (
            "model-response = { trap = true }",
            "model-response hook `session`",
        ),
    ] {
        let model = ScriptedModel::start(json!([{ "text": "answer" }]));
        let ws = workspace(settings, "");
        let out = run(&ws, &model, &["go"]);
        assert_eq!(out.code, 1, "{settings}: {}", out.stderr);
        assert_mentions(&out.stderr, expect);
        assert!(!out.stdout.contains("answer"), "{settings}: {}", out.stdout);
        let failed = stages(&out)
            .into_iter()
            .any(|(_, decision)| decision == "failed");
        assert!(failed, "{settings}: {}", out.stderr);
    }
    let model = ScriptedModel::start(json!([{ "text": "answer" }]));
    let ws = probe().plugin("fixture_session_hook", "session").config(
        "[agent]\ntools = [\"echo\"]\n[plugins.session]\nhook = true\nlimits = { timeout = \"300ms\" }\n[plugins.session.settings]\nprompt = { spin = true }\n",
    );
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_mentions(&out.stderr, "prompt hook `session` stopped the turn");
    assert!(model.requests().is_empty());
}

#[test]
fn a_hook_without_grants_reads_no_file_and_never_sees_a_secret() {
    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let ws =
        workspace("prompt = { read = \"/etc/hostname\" }", "").file("secret.txt", "not for hooks");
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = request_text(&model, 0);
    assert!(sent.contains("could not read /etc/hostname"), "{sent}");

    // The prompt carries a configured secret; the hook echoes what it saw into the request.
    let secret = SECRET;
    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let ws = echoing_with_a_secret(secret, "prompt");
    let out = run(&ws, &model, &[&format!("use token {secret} please")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = request_text(&model, 0);
    let echoed = context_from_session_hook(&sent);
    assert!(echoed.contains("use token"), "{sent}");
    assert!(
        !echoed.contains(secret),
        "the hook saw the secret: {echoed}"
    );
}

#[test]
fn a_compaction_hook_supplies_the_summary_the_next_request_carries() {
    let mut ws = Workspace::new()
        .plugin("fs", "fs")
        .plugin("fixture_session_hook", "session");
    for n in 1..=6 {
        ws = ws.file(
            &format!("data/f{n:02}.txt"),
            &format!("file {n} says hello. ").repeat(1200),
        );
    }
    let ws = ws.config(
        "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n\n[agent]\ntools = [\"read_file\"]\nmax_steps = 20\n\n[model]\nretries = 0\n\n[plugins.session]\nhook = true\n\n[plugins.session.settings]\ncompaction = { replace = \"SUMMARY FROM THE HOOK: six files were read\" }\n",
    );
    let mut replies: Vec<Value> = (1..=6)
        .map(|n| json!({ "tool_calls": [call(&format!("r{n}"), "read_file", json!({"path": format!("/data/f{n:02}.txt")}))] }))
        .collect();
    replies.push(json!({ "text": "Six files read." }));
    let model = ScriptedModel::start_script(json!({ "replies": replies, "context_window": 5000 }));
    let out = run(&ws, &model, &["--transcript", "t.jsonl", "Read six files."]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let requests = model.requests();
    assert!(
        requests.iter().all(|r| r["body"].get("tools").is_some()),
        "the model was never asked for a summary"
    );
    let carried = requests
        .iter()
        .position(|r| {
            r["body"]["messages"]
                .to_string()
                .contains("SUMMARY FROM THE HOOK")
        })
        .expect("a request after the compaction carries the hook's summary");
    assert!(carried > 0);
    let transcript = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
    let compaction: Value = transcript
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["role"] == "compaction")
        .expect("the compaction is in the transcript");
    assert_eq!(compaction["method"], "hook");
    let phases: Vec<String> = stages(&out)
        .into_iter()
        .filter(|(stage, _)| stage == "compaction")
        .map(|(_, decision)| decision)
        .collect();
    assert_eq!(phases[..2], ["replace", "failed"], "{}", out.stderr);
    // After the compaction a hook only watches: its replace there is refused, and nothing
    // changes the summary already written.
    assert_mentions(
        &out.stderr,
        "the compaction stage after a compaction does not take",
    );
}

#[test]
fn a_tool_the_narrowed_request_did_not_offer_never_runs() {
    let model = ScriptedModel::start(json!([
        { "text": "", "tool_calls": [call("c1", "echo", json!({"text": "RAN-ANYWAY"}))] },
        { "text": "done" }
    ]));
    let ws = workspace("prompt = { only_tools = [] }", "");
    let out = run(&ws, &model, &["hi there"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("tool_execution_start"),
        "{}",
        out.stderr
    );
    let results = crate::support::agent_runs::openai_tool_messages(&model.body(1));
    assert!(
        results[0].1.starts_with("Error (not_active)") && results[0].1.contains("was not offered"),
        "{results:?}"
    );
}

#[test]
fn a_secret_cut_at_an_events_bound_is_masked_before_the_cut() {
    let secret = SECRET;
    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let ws = echoing_with_a_secret(secret, "model-request");
    // The prompt puts the secret across the 4 KiB bound of one message in the event.
    let prompt = format!("{}{secret} tail", "A".repeat(4096 - 26));
    let out = run(&ws, &model, &[&prompt]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sent = request_text(&model, 0);
    let echoed = context_from_session_hook(&sent);
    assert!(echoed.contains("AAAA"), "{sent}");
    assert!(
        !echoed.contains("sk-session-hook-s3cret"),
        "the hook saw part of the secret: {echoed}"
    );
}

#[test]
fn a_replaced_reply_is_all_the_user_sees_and_groups_narrow_as_their_tools() {
    let model = ScriptedModel::start(json!([{ "text": "ORIGINAL-MODEL-TEXT" }]));
    let ws = workspace("model-response = { replace = \"the hook's text\" }", "");
    let out = run(&ws, &model, &["hello"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "the hook's text");
    assert!(
        !out.stderr.contains("ORIGINAL-MODEL-TEXT"),
        "streamed before the hook: {}",
        out.stderr
    );

    // One hook allows group `words`, another `echo` by name: echo is offered.
    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let ws = probe()
        .plugin("fixture_session_hook", "session")
        .plugin("fixture_session_hook", "session2")
        .config(
            "[agent]\ntools = [\"echo\", \"fail\"]\n[agent.groups]\nwords = [\"echo\"]\n[plugins.session]\nhook = true\n[plugins.session.settings]\nmodel-request = { only_tools = [\"words\"] }\n[plugins.session2]\nhook = true\n[plugins.session2.settings]\nmodel-request = { only_tools = [\"echo\"] }\n",
        );
    let out = run(&ws, &model, &["go"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tool_names(&model.body(0)), ["echo"]);
}
