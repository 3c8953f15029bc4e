//! Intent routing (`[agent.routing] mode = "model"`) in `cordon run` against the scripted model:
//! the routing request offers no tools and asks for one word; `none` sends the prompt with no
//! tools, a group offers exactly its tools, and an answer that names no route or a failed routing
//! request offers every tool (routing never loses one). The route and its tokens are reported.

use crate::support::agent_runs::{assert_mentions, tool_names};
use crate::support::model_server::ScriptedModel;
use crate::support::{Run, Workspace, probe};
use serde_json::{Value, json};

fn workspace(routing: &str) -> Workspace {
    probe().config(&format!(
        "[agent]\ntools = [\"echo\", \"fail\", \"sleep\"]\n\n[agent.groups]\nwords = [\"echo\"]\n\n[agent.routing]\n{routing}\n\n[model]\nretries = 0\n"
    ))
}

fn run(ws: &Workspace, model: &ScriptedModel, prompt: &str) -> Run {
    crate::support::agent_runs::run(ws, model, &["--events", prompt], &[])
}

fn routing_event(out: &Run) -> Value {
    out.stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "routing")
        .unwrap_or_else(|| panic!("no routing event: {}", out.stderr))
}

#[test]
fn a_request_routed_to_none_is_answered_with_no_tools_offered() {
    let model = ScriptedModel::start(json!([
        { "text": "none" },
        { "text": "132" }
    ]));
    let ws = workspace("mode = \"model\"");
    let out = run(&ws, &model, "What is 12 times 11?");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "132");
    let routing = model.body(0);
    assert!(
        routing.get("tools").is_none(),
        "the routing request offers no tools: {routing}"
    );
    assert_mentions(
        &routing["messages"].to_string(),
        "Answer with exactly one word",
    );
    assert_mentions(
        &routing["messages"].to_string(),
        "words - it needs only these tools: echo",
    );
    assert!(tool_names(&model.body(1)).is_empty(), "{}", model.body(1));
    let event = routing_event(&out);
    assert_eq!(event["route"], "none");
    assert!(
        event["usage"]["promptTokens"].as_u64().unwrap() > 0,
        "the routing request's tokens are reported: {event}"
    );
}

#[test]
fn a_group_route_offers_exactly_that_groups_tools() {
    let model = ScriptedModel::start(json!([{ "text": "Words." }, { "text": "done" }]));
    let ws = workspace("mode = \"model\"");
    let out = run(&ws, &model, "echo hello");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tool_names(&model.body(1)), ["echo"]);
    assert_eq!(routing_event(&out)["route"], "words");
}

#[test]
fn an_unclear_answer_or_a_failed_routing_request_offers_every_tool() {
    let model = ScriptedModel::start(json!([{ "text": "multiply" }, { "text": "done" }]));
    let ws = workspace("mode = \"model\"");
    let out = run(&ws, &model, "What is 12 times 11?");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tool_names(&model.body(1)), ["echo", "fail", "sleep"]);
    let event = routing_event(&out);
    assert_eq!(event["route"], "all");
    assert_mentions(event["fallback"].as_str().unwrap(), "names no route");

    let model = ScriptedModel::start(json!([
        { "status": 500, "error": "router down" },
        { "text": "done" }
    ]));
    let out = run(&ws, &model, "hi");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(tool_names(&model.body(1)), ["echo", "fail", "sleep"]);
    assert_mentions(
        routing_event(&out)["fallback"].as_str().unwrap(),
        "routing request failed",
    );
}

#[test]
fn routing_is_off_by_default_and_a_separate_model_can_route() {
    let model = ScriptedModel::start(json!([{ "text": "hello" }]));
    let ws = probe().config("[agent]\ntools = [\"echo\"]\n");
    let out = run(&ws, &model, "hi");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(model.requests().len(), 1, "no routing request");

    let model = ScriptedModel::start(json!([{ "text": "none" }, { "text": "hello" }]));
    let ws = workspace("mode = \"model\"\nmodel = \"tiny-router\"");
    let out = run(&ws, &model, "hi");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(model.body(0)["model"], "tiny-router");
    assert_eq!(model.body(1)["model"], "scripted");
}

#[test]
fn a_tool_called_against_the_route_never_runs() {
    let model = ScriptedModel::start(json!([
        { "text": "none" },
        { "text": "", "tool_calls": [{ "id": "c1", "name": "echo", "arguments": { "text": "RAN" } }] },
        { "text": "done" }
    ]));
    let ws = workspace("mode = \"model\"");
    let out = run(&ws, &model, "hi");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stderr.contains("tool_execution_start"),
        "{}",
        out.stderr
    );
    assert_mentions(&model.body(2)["messages"].to_string(), "was not offered");
}

#[test]
fn a_route_to_a_group_under_tool_search_offers_the_groups_tools() {
    // `tool_search = "always"` offers `search_tools` alone; a route to `words` offers its tool.
    let model = ScriptedModel::start(json!([
        { "text": "words" },
        { "text": "done" }
    ]));
    let ws = probe().config(
        "[agent]\ntools = [\"echo\", \"fail\", \"sleep\"]\ntool_search = \"always\"\n\n[agent.groups]\nwords = [\"echo\"]\n\n[agent.routing]\nmode = \"model\"\n\n[model]\nretries = 0\n",
    );
    let out = run(&ws, &model, "Repeat hello");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(routing_event(&out)["route"], "words");
    assert_eq!(tool_names(&model.body(1)), ["echo"]);
}
