//! The one scrubber (cordon_runtime::report::secrets) on every output path: a hostile model API
//! that echoes the API key it was sent (in an error body, in its answer, in a tool call id and
//! arguments) and a hostile registry that echoes the credentials: the key never reaches stderr,
//! stdout, the events, the transcript, the audit log, or the next request to the model.

use crate::support::Workspace;
use crate::support::agent_runs::{run, workspace};
use crate::support::hostile_http::{Server, docker_config, status};
use crate::support::model_server::ScriptedModel;
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
        crate::support::agent_runs::CONFIG
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
    let results = crate::support::agent_runs::openai_tool_messages(&model.body(1));
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

#[test]
fn a_key_streamed_in_pieces_shows_in_no_text_delta_even_joined() {
    // The scripted server streams text in 7-byte pieces, so the key arrives split across deltas.
    let model = ScriptedModel::start(
        json!([{ "text": format!("Your configured key is {KEY} as requested.") }]),
    );
    let ws = workspace();
    let out = run(
        &ws,
        &model,
        &[
            "--api-key-env",
            "CORDON_SCRUB_TEST_KEY",
            "--events",
            "say it",
        ],
        &key_env(),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let joined: String = out
        .stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["type"] == "text_delta")
        .map(|event| event["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        joined, "Your configured key is [REDACTED:secret] as requested.",
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(&KEY[..12]), "{}", out.stderr);
}

#[test]
fn a_model_error_cut_in_the_middle_of_the_key_shows_none_of_it() {
    // The error preview is cut at 300 characters, here one byte before the key's end.
    let padding = "x".repeat(300 - "Invalid key ".len() - KEY.len() + 1);
    let model = ScriptedModel::start(json!([{
        "status": 401,
        "error": format!("{padding}Invalid key {KEY}"),
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
        out.stderr.contains("Invalid key [REDACTED:secret]") && !out.stderr.contains(&KEY[..12]),
        "{}",
        out.stderr
    );
}

#[test]
fn no_model_request_follows_a_redirect_so_the_key_stays_with_its_address() {
    for provider in ["openai", "anthropic"] {
        let elsewhere = ScriptedModel::start(json!([{ "text": "should never be asked" }]));
        let moved_to = format!("{}/messages", elsewhere.base_url());
        let model = ScriptedModel::start(json!([{
            "status": 307,
            "headers": { "Location": moved_to },
            "error": "moved",
            "repeat": true,
        }]));
        let ws = workspace();
        let out = run(
            &ws,
            &model,
            &[
                "--provider",
                provider,
                "--api-key-env",
                "CORDON_SCRUB_TEST_KEY",
                "say hi",
            ],
            &key_env(),
        );
        assert_ne!(out.code, 0, "{provider}");
        assert!(
            elsewhere.requests().is_empty(),
            "{provider}: the request (and its key) followed the redirect: {:?}",
            elsewhere.requests()
        );
        assert!(
            out.stderr.contains("HTTP 307") && out.stderr.contains("follows no redirect"),
            "{provider}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_base_url_with_a_password_in_it_is_refused_without_printing_it() {
    let ws = workspace();
    let out = ws.cordon(&[
        "run",
        "--base-url",
        "http://proxyuser:Pr0xyPassw0rd@127.0.0.1:9/v1",
        "--model",
        "m",
        "hi",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("user name or password") && !out.stderr.contains("Pr0xyPassw0rd"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_secret_with_quotes_and_backslashes_is_masked_without_breaking_a_json_line() {
    // Masking the serialised line would cut a `\"` escape in half; values are masked before
    // they are serialised, so every line stays JSON.
    const ODD: &str = r#"pa"ss\wo/rd-0123456789abcdefXYZ"#;
    let model = ScriptedModel::start(json!([
        {"tool_calls": [{"id": "c1", "name": "echo", "arguments": {"text": ODD}}]},
        {"text": format!("It said {ODD}.")},
    ]));
    let ws = workspace().config(&format!(
        "{}\n[audit]\npath = \"audit.jsonl\"\n",
        crate::support::agent_runs::CONFIG
    ));
    let transcript = ws.path().join("session.jsonl");
    let out = run(
        &ws,
        &model,
        &[
            "--api-key-env",
            "CORDON_ODD_KEY",
            "--events",
            "--transcript",
            transcript.to_str().unwrap(),
            "echo it",
        ],
        &[("CORDON_ODD_KEY", ODD)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let audit = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let saved = std::fs::read_to_string(&transcript).unwrap();
    for (path, text) in [
        ("stderr (events)", out.stderr.as_str()),
        ("the transcript", saved.as_str()),
        ("the audit log", audit.as_str()),
    ] {
        let lines: Vec<&str> = text.lines().filter(|line| line.starts_with('{')).collect();
        assert!(!lines.is_empty(), "{path}: no JSON lines:\n{text}");
        for line in lines {
            let parsed: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("{path}: not JSON ({err}): {line}"));
            let back = parsed.to_string();
            assert!(!back.contains("0123456789abcdefXYZ"), "{path}: {line}");
        }
    }
    assert!(
        out.stdout.contains("It said [REDACTED:secret]."),
        "{}",
        out.stdout
    );
}

#[test]
fn a_plain_header_value_in_a_grant_is_not_a_secret_but_a_credential_is() {
    // `Accept = "application/json"` is not a secret: masking it would hide ordinary words in
    // every result. An Authorization value written in cordon.toml is one.
    let model = ScriptedModel::start(json!([
        {"tool_calls": [{"id": "c1", "name": "echo",
                         "arguments": {"text": "send application/json with Bearer lit-4f9a8b7c6d5e4f3a"}}]},
        {"text": "Done."},
    ]));
    let ws = workspace().config(&format!(
        "{}\n[plugins.probe]\nhttp = [{{ origin = \"http://127.0.0.1:9\", headers = {{ Accept = \"application/json\", Authorization = \"Bearer lit-4f9a8b7c6d5e4f3a\" }} }}]\n",
        crate::support::agent_runs::CONFIG
    ));
    let out = run(&ws, &model, &["--events", "echo it"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let result = crate::support::agent_runs::openai_tool_messages(&model.body(1));
    let content = &result[0].1;
    assert!(
        content.contains("send application/json with [REDACTED:secret]"),
        "{content}"
    );
}
