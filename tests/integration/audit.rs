//! The audit log: one JSON line per call with plugin, digests, hook decisions, outcome and the
//! HTTP requests made, and never the arguments themselves.

use crate::support::Workspace;
use sha2::{Digest, Sha256};

#[test]
fn every_call_is_one_line_with_digests_decisions_outcome_and_capabilities() {
    let ws = Workspace::new()
        .plugin("fixture_probe", "probe")
        .plugin("guard", "guard")
        .config("[audit]\npath = \"logs/audit.jsonl\"\n[plugins.guard.settings]\ndeny = [{ pattern = \"forbidden\" }]\n");
    ws.cordon(&["call", "echo", r#"{"text": "my-private-argument"}"#]);
    ws.cordon(&["call", "echo", r#"{"text": "forbidden"}"#]);
    ws.cordon(&[
        "call",
        "http_get",
        r#"{"url": "http://127.0.0.1:9/secret-path?token=abc"}"#,
    ]);

    let log =
        std::fs::read_to_string(ws.path().join("logs/audit.jsonl")).expect("the audit log exists");
    assert!(
        !log.contains("my-private-argument") && !log.contains("token=abc"),
        "arguments leaked into the audit log:\n{log}"
    );
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{log}");

    let probe_sha = hex::encode(Sha256::digest(
        std::fs::read(ws.plugin_path("probe")).unwrap(),
    ));
    let first = &lines[0];
    assert_eq!(
        (first["tool"].as_str(), first["plugin"].as_str()),
        (Some("echo"), Some("probe"))
    );
    assert_eq!(first["pluginSha256"], probe_sha);
    assert_eq!(
        first["argumentsSha256"],
        hex::encode(Sha256::digest(r#"{"text":"my-private-argument"}"#))
    );
    assert_eq!(first["isError"], false);
    assert_eq!(
        first["hooks"],
        serde_json::json!([{ "hook": "guard", "stage": "before", "decision": "allow" }])
    );
    assert!(first["time"].as_str().unwrap().ends_with('Z') && first["durationMs"].is_u64());

    assert_eq!(lines[1]["errorKind"], "blocked");
    assert_eq!(lines[1]["hooks"][0]["decision"], "block");

    assert_eq!(lines[2]["errorKind"], "capability_denied");
    assert_eq!(
        lines[2]["capabilities"]["http"],
        serde_json::json!([{ "method": "GET", "url": "http://127.0.0.1:9/secret-path", "allowed": false }])
    );
}
