//! Many tools, small prompts: with 160 tools active (tests/fixtures/many_tools) the agent loop
//! offers only `search_tools`; the model searches, the tools found become callable (and their
//! calls run in call order), a resumed session still has them, groups load whole and narrow
//! `--tools`; with few tools nothing changes. Against the scripted OpenAI and Anthropic servers.

use crate::support::Workspace;
use crate::support::agent_runs::{call, openai_tool_messages, run, tool_names};
use crate::support::model_server::ScriptedModel;
use serde_json::{Value, json};

const CONFIG: &str = r#"
[agent.groups]
billing = ["invoices_*", "payroll_*"]
"#;

fn many_tools(extra_config: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_many_tools", "saas")
        .config(&format!("{CONFIG}{extra_config}"))
}

/// The first request's size in bytes, and its tool names, for `cordon run` with `config` (in a
/// window large enough for every spec).
fn first_request(config: &str) -> (usize, Vec<String>) {
    let model = ScriptedModel::start(json!([{ "text": "132" }]));
    let ws = many_tools(config);
    let out = run(
        &ws,
        &model,
        &[
            "--no-stream",
            "--context-window",
            "200000",
            "What is 12 times 11?",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = model.body(0);
    (body.to_string().len(), tool_names(&body))
}

#[test]
fn with_many_tools_the_first_request_carries_only_the_search() {
    let (searching, tools) = first_request("");
    assert_eq!(tools, ["search_tools"], "160 tools are over the threshold");
    let (all, every) = first_request("[agent]\ntool_search = \"never\"\n");
    assert_eq!(every.len(), 160);
    assert!(
        searching < 3_000,
        "the first request with tool search is {searching} bytes (every spec: {all} bytes)"
    );
    assert!(all > 20 * searching, "{all} vs {searching}");
    let (_, threshold) = first_request("[agent]\ntool_search_threshold = 200\n");
    assert_eq!(
        threshold.len(),
        160,
        "under the threshold, every tool is offered"
    );

    // In a small window, specs over half of it turn search on whatever the count.
    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let ws = many_tools("[agent]\ntool_search_threshold = 200\n");
    let out = run(
        &ws,
        &model,
        &["--no-stream", "--context-window", "8192", "hi"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tool_names(&model.body(0)), ["search_tools"]);
}

#[test]
fn a_guessed_tool_name_loads_the_tools_that_match_it_instead_of_listing_every_tool() {
    // A small model calls `create_invoice` without searching (native and as text); the answer
    // names and loads the invoice tool, and the next step calls it.
    for first in [
        json!({ "tool_calls": [call("g1", "create_invoice", json!({"customer_id": "c-42", "amount": 12.5}))] }),
        json!({ "text": "<tool_call>{\"name\": \"create_invoice\", \"arguments\": {\"customer_id\": \"c-42\", \"amount\": 12.5}}</tool_call>" }),
    ] {
        let model = ScriptedModel::start(json!([
            first,
            { "tool_calls": [call("c1", "invoices_create_invoice", json!({"customer_id": "c-42", "amount_cents": 1250}))] },
            { "text": "Invoiced." },
            { "text": "Resumed." }
        ]));
        let ws = many_tools("[model]\nparse_text_tool_calls = true\n");
        let out = run(
            &ws,
            &model,
            &[
                "--transcript",
                "t.jsonl",
                "--events",
                "Invoice c-42 12.50 euros.",
            ],
            &[],
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout.trim(), "Invoiced.");

        let second = model.body(1);
        let answered = openai_tool_messages(&second);
        let guess = &answered[0].1;
        assert!(
            guess.starts_with("Error (not_found): Unknown tool \"create_invoice\""),
            "{guess}"
        );
        assert!(
            guess.contains("invoices_create_invoice(customer_id, amount_cents, due_date?)"),
            "{guess}"
        );
        assert!(
            guess.len() < 1_000 && !guess.contains("weather_"),
            "not every tool's name: {guess}"
        );
        let offered = tool_names(&second);
        assert!(
            offered.contains(&"invoices_create_invoice".to_string()) && offered.len() <= 4,
            "{offered:?}"
        );
        let created = openai_tool_messages(&model.body(2));
        let created: Value = serde_json::from_str(&created[1].1).unwrap();
        assert_eq!(created["arguments"]["amount_cents"], 1250);

        let transcript = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
        assert!(
            transcript.lines().any(|line| {
                let line: Value = serde_json::from_str(line).unwrap();
                line["role"] == "tools_loaded"
                    && line["tools"]
                        .as_array()
                        .unwrap()
                        .contains(&json!("invoices_create_invoice"))
            }),
            "{transcript}"
        );
        // The guess went through the pipeline like any call: its events are there.
        assert!(
            out.stderr
                .lines()
                .any(|line| line.contains("\"tool_execution_end\"")
                    && line.contains("\"create_invoice\"")
                    && line.contains("not_found")),
            "{}",
            out.stderr
        );
        // A resumed session offers what the guess loaded.
        let out = run(&ws, &model, &["--resume", "t.jsonl", "Anything else?"], &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stdout.trim(), "Resumed.");
        assert!(
            tool_names(&model.body(3)).contains(&"invoices_create_invoice".to_string()),
            "{:?}",
            tool_names(&model.body(3))
        );
    }

    // Calling a group's name as a tool loads a few of its tools, not the whole group.
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("g", "billing", json!({}))] },
        { "text": "ok" }
    ]));
    let out = run(&many_tools(""), &model, &["--no-stream", "bill"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let offered = tool_names(&model.body(1));
    assert!(offered.len() <= 4, "{offered:?}");

    // A name matching nothing says how to search; final_result is no guess.
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("g", "zzqx", json!({}))] },
        { "tool_calls": [call("f", "final_result", json!({"done": true}))] }
    ]));
    let ws = many_tools("").file(
        "schema.json",
        r#"{"type": "object", "properties": {"done": {"type": "boolean"}}, "required": ["done"]}"#,
    );
    let out = run(
        &ws,
        &model,
        &["--output-schema", "schema.json", "Do it."],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        serde_json::from_str::<Value>(&out.stdout).unwrap(),
        json!({"done": true})
    );
    let nothing = &openai_tool_messages(&model.body(1))[0].1;
    assert!(
        nothing.contains("no tool of this session has that name")
            && nothing.contains("search_tools"),
        "{nothing}"
    );
}

#[test]
fn the_model_searches_loads_two_tools_calls_both_and_a_resumed_session_keeps_them() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [
            call("s1", "search_tools", json!({"query": "create an invoice", "limit": 1})),
            call("s2", "search_tools", json!({"query": "list the CRM contacts", "limit": 1})),
        ] },
        { "tool_calls": [
            call("c1", "invoices_create_invoice", json!({"customer_id": "c-9", "amount_cents": 1200})),
            call("c2", "crm_list_contacts", json!({"query": "acme"})),
        ] },
        { "text": "Invoiced and listed." },
        { "text": "Still here." }
    ]));
    let ws = many_tools("");
    let out = run(
        &ws,
        &model,
        &[
            "--transcript",
            "t.jsonl",
            "Bill customer c-9 12 euros, then show the Acme contacts.",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "Invoiced and listed.");

    let second = model.body(1);
    let searched = openai_tool_messages(&second);
    assert_eq!(searched[0].0, "s1");
    assert!(
        searched[0]
            .1
            .contains("invoices_create_invoice(customer_id, amount_cents, due_date?)"),
        "{searched:?}"
    );
    assert!(searched[1].1.contains("crm_list_contacts("), "{searched:?}");
    assert_eq!(
        tool_names(&second),
        [
            "crm_list_contacts",
            "invoices_create_invoice",
            "search_tools"
        ],
        "what the searches found is offered from the next request on"
    );
    let third = model.body(2);
    let results = openai_tool_messages(&third);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["s1", "s2", "c1", "c2"], "results in call order");
    let created: Value = serde_json::from_str(&results[2].1).unwrap();
    assert_eq!(created["tool"], "invoices_create_invoice");
    assert_eq!(created["arguments"]["amount_cents"], 1200);

    let transcript = std::fs::read_to_string(ws.path().join("t.jsonl")).unwrap();
    let loaded: Vec<Value> = transcript
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|line| line["role"] == "tools_loaded")
        .collect();
    assert_eq!(
        loaded,
        [
            json!({"role": "tools_loaded", "tools": ["invoices_create_invoice", "crm_list_contacts"]})
        ],
        "{transcript}"
    );

    let out = run(&ws, &model, &["--resume", "t.jsonl", "Anything else?"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        tool_names(&model.body(3)),
        [
            "crm_list_contacts",
            "invoices_create_invoice",
            "search_tools"
        ],
        "a resumed session offers what its searches loaded"
    );
}

#[test]
fn a_group_loads_whole_and_narrows_the_active_set() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("g", "search_tools", json!({"query": "billing"}))] },
        { "text": "Loaded." }
    ]));
    let ws = many_tools("");
    let out = run(&ws, &model, &["--no-stream", "load billing"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let system = model.body(0)["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("billing (16)"), "{system}");
    let offered = tool_names(&model.body(1));
    assert_eq!(
        offered.len(),
        17,
        "the 16 tools of the group and the search: {offered:?}"
    );

    let model = ScriptedModel::start(json!([{ "text": "ok" }]));
    let out = run(
        &ws,
        &model,
        &["--no-stream", "--tools", "billing", "hi"],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let offered = tool_names(&model.body(0));
    assert_eq!(
        offered.len(),
        16,
        "a group under the threshold: every tool, no search"
    );
    assert!(
        offered
            .iter()
            .all(|name| name.starts_with("invoices_") || name.starts_with("payroll_"))
    );
    let unknown = ws.cordon(&["--tools", "nonsense", "list"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("groups: billing"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn search_works_with_the_anthropic_protocol_and_with_calls_written_as_text() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("s", "search_tools", json!({"query": "weather forecast"}))] },
        { "text": "Found it." }
    ]));
    let ws = many_tools("");
    let out = run(
        &ws,
        &model,
        &["--provider", "anthropic", "--no-stream", "weather?"],
        &[("ANTHROPIC_API_KEY", "k")],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let second = model.body(1);
    let names: Vec<&str> = second["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"weather_get_forecast"), "{names:?}");

    let model = ScriptedModel::start(json!([
        { "text": "<tool_call>{\"name\": \"search_tools\", \"arguments\": {\"query\": \"delete a DNS record\", \"limit\": 1}}</tool_call>" },
        { "text": "Done: {last_tool_result}" }
    ]));
    let ws = many_tools("[model]\nparse_text_tool_calls = true\n");
    let out = run(&ws, &model, &["--no-stream", "drop the record"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("dns_delete_record"), "{}", out.stdout);
    assert!(tool_names(&model.body(1)).contains(&"dns_delete_record".to_string()));
}

#[test]
fn schema_examples_reach_the_model_only_when_asked() {
    let config = "[plugins.geometry.tools.measure]\nexamples = [{ shape = \"nothing\", unit = \"metres\" }]\n";
    for (extra, sent) in [("", false), ("[agent]\nsend_tool_examples = true\n", true)] {
        let model = ScriptedModel::start(json!([{ "text": "ok" }]));
        let ws = Workspace::new()
            .plugin("fixture_plain_geometry", "geometry")
            .config(&format!("{config}{extra}"));
        let out = run(&ws, &model, &["--no-stream", "measure nothing"], &[]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let body = model.body(0);
        let measure = body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["function"]["name"] == "measure")
            .cloned()
            .unwrap();
        assert_eq!(
            measure["function"]["parameters"].get("examples").is_some(),
            sent,
            "{measure}"
        );
    }
}

#[test]
fn a_plugins_tool_named_search_tools_is_not_offered_while_tools_are_searched() {
    // The operator renamed a plain component's `checksum` to `search_tools`: while the session
    // searches, that name is the session's own; no request offers two tools of one name.
    let model = ScriptedModel::start(json!([
        { "tool_calls": [{ "id": "s1", "name": "search_tools", "arguments": { "query": "checksum bytes search" } }] },
        { "text": "done" },
    ]));
    let ws = Workspace::new()
        .plugin("fixture_plain_geometry", "geometry")
        .config("[agent]\ntool_search = \"always\"\n[plugins.geometry.tools.checksum]\nname = \"search_tools\"\n");
    let out = run(&ws, &model, &["--no-stream", "find a tool"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for index in 0..2 {
        let names = tool_names(&model.body(index));
        let searches = names.iter().filter(|name| *name == "search_tools").count();
        assert_eq!(searches, 1, "request {index}: {names:?}");
    }
    assert!(
        out.stderr.contains("not offered while tools are searched"),
        "{}",
        out.stderr
    );
}
