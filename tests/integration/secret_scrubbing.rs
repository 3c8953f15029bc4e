//! The one scrubber (cordon_runtime::report::secrets) on every output path: a hostile model API
//! that echoes the API key it was sent (in an error body, in its answer, in a tool call id and
//! arguments) and a hostile registry that echoes the credentials: the key never reaches stderr,
//! stdout, the events, the transcript, the audit log, or the next request to the model.

use crate::agent_loop::{run, workspace};
use crate::hostile_http::{Server, docker_config, status};
use crate::model_server::ScriptedModel;
use crate::support::Workspace;
use base64::Engine as _;
use serde_json::json;

const KEY: &str = "sk-proj-echoed-0123456789abcdefABCDEF";

fn key_env() -> [(&'static str, &'static str); 1] {
    [("CORDON_SCRUB_TEST_KEY", KEY)]
}

#[test]
fn the_model_api_key_a_server_echoes_in_an_error_never_reaches_stderr() {
    let model = ScriptedModel::start(json!([{
        "status": 401,
        "error": format!("Invalid key provided: Bearer {KEY}. You can find your API key at ..."),
        "repeat": true,
    }]));
    let ws = workspace();
    let out = run(
        &ws,
        &model,
        &["--api-key-env", "CORDON_SCRUB_TEST_KEY", "say hi"],
        &key_env(),
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("HTTP 401") && out.stderr.contains("Bearer [REDACTED:secret]"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(KEY) && !out.stdout.contains(KEY),
        "{}",
        out.stderr
    );
}

#[test]
fn the_model_api_key_the_model_echoes_appears_in_no_output_or_file() {
    let model = ScriptedModel::start(json!([
        {"tool_calls": [{"id": format!("call-{KEY}"), "name": "echo", "arguments": {"text": KEY}}]},
        {"text": format!("Done. Your key is {KEY}.")},
    ]));
    let ws = workspace().config(&format!(
        "{}\n[audit]\npath = \"audit.jsonl\"\n",
        crate::agent_loop::CONFIG
    ));
    let transcript = ws.path().join("session.jsonl");
    let out = run(
        &ws,
        &model,
        &[
            "--api-key-env",
            "CORDON_SCRUB_TEST_KEY",
            "--events",
            "--transcript",
            transcript.to_str().unwrap(),
            "echo my key",
        ],
        &key_env(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("Your key is [REDACTED:secret]"),
        "{}",
        out.stdout
    );
    let audit = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let saved = std::fs::read_to_string(&transcript).unwrap();
    for (path, text) in [
        ("stdout", out.stdout.as_str()),
        ("stderr (events)", out.stderr.as_str()),
        ("the transcript", saved.as_str()),
        ("the audit log", audit.as_str()),
    ] {
        assert!(!text.contains(KEY), "the key reached {path}:\n{text}");
    }
    assert!(
        audit.contains("call-[REDACTED:secret]"),
        "the call is still in the audit log: {audit}"
    );
    // The tool's result, which echoed the key, went back to the model masked.
    let results = crate::agent_loop::openai_tool_messages(&model.body(1));
    assert!(
        results.iter().all(|(_, content)| !content.contains(KEY))
            && results
                .iter()
                .any(|(_, content)| content.contains("[REDACTED:secret]")),
        "{results:?}"
    );
}

#[test]
fn registry_credentials_a_registry_echoes_in_an_error_are_not_printed() {
    let registry = Server::start("127.0.0.1:0", |request| {
        let path = request.path.split('?').next().unwrap_or_default();
        match request.header("authorization") {
            None => status(401, &[("WWW-Authenticate", "Basic realm=\"r\"")], "{}"),
            Some(_) if path == "/v2/" => status(200, &[], "{}"),
            Some(sent) => status(
                400,
                &[],
                &format!("bad request, you sent Authorization: {sent}"),
            ),
        }
    });
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let docker = docker_config(&ws, &registry.addr.to_string(), "alice", "alice-pw-echoed");
    let out = ws.cordon_with_env(
        &[
            "push",
            "probe",
            &format!("oci://{}/published/probe:1", registry.addr),
        ],
        &[("DOCKER_CONFIG", docker.as_str())],
    );
    assert_ne!(out.code, 0);
    let basic = base64::engine::general_purpose::STANDARD.encode("alice:alice-pw-echoed");
    assert!(
        out.stderr
            .contains("you sent Authorization: Basic [REDACTED:secret]"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains(&basic) && !out.stderr.contains("alice-pw-echoed"),
        "{}",
        out.stderr
    );
}
