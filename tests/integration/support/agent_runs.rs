//! Driving `cordon run` against the scripted model server: the workspace the agent-loop tests
//! share (the probe plugin's tools), running the binary at a scripted model, and reading what the
//! loop sent (offered tool names, `role: "tool"` results) back out of its requests.

use crate::support::model_server::ScriptedModel;
use crate::support::{Run, Workspace, probe};
use serde_json::{Value, json};

pub(crate) const CONFIG: &str = r#"
[agent]
tools = ["echo", "sleep", "fail"]

[model]
retries = 2
retry_delay = "10ms"
"#;

pub(crate) fn workspace() -> Workspace {
    probe().config(CONFIG)
}

/// `cordon run --base-url … --model scripted EXTRA…`, with env.
pub(crate) fn run(
    ws: &Workspace,
    model: &ScriptedModel,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let url = model.base_url();
    let mut args = vec!["run", "--base-url", &url, "--model", "scripted"];
    args.extend_from_slice(extra);
    ws.cordon_with_env(&args, env)
}

pub(crate) fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| {
                    tool["function"]["name"]
                        .as_str()
                        .or(tool["name"].as_str())
                        .unwrap()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The OpenAI `role: "tool"` messages of a request: (tool_call_id, content).
pub(crate) fn openai_tool_messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Fails showing the whole text unless it contains `needle`.
pub(crate) fn assert_mentions(text: &str, needle: &str) {
    assert!(text.contains(needle), "expected {needle:?} in:\n{text}");
}

pub(crate) fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({ "id": id, "name": name, "arguments": arguments })
}
