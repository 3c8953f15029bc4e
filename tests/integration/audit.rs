//! The audit log: one JSON line per call with plugin, digests, hook decisions, outcome, the HTTP
//! requests made and the paths opened, and never the arguments themselves.

use crate::support::Workspace;
use sha2::{Digest, Sha256};

#[test]
fn every_call_is_one_line_with_digests_decisions_outcome_and_capabilities() {
    let ws = Workspace::new()
        .plugin("fixture_probe", "probe")
        .plugin("guard", "guard")
        .config("[audit]\npath = \"logs/audit.jsonl\"\n[plugins.guard]\nhook = true\n[plugins.guard.settings]\ndeny = [{ pattern = \"forbidden\" }]\n");
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
    assert_eq!(
        first["capabilities"]["pathsOpened"],
        serde_json::json!([]),
        "echo opens nothing"
    );

    assert_eq!(lines[1]["errorKind"], "blocked");
    assert_eq!(lines[1]["hooks"][0]["decision"], "block");

    assert_eq!(lines[2]["errorKind"], "capability_denied");
    assert_eq!(
        lines[2]["capabilities"]["http"],
        serde_json::json!([{ "method": "GET", "url": "http://127.0.0.1:9/secret-path", "allowed": false, "plugin": "probe" }])
    );
}

#[test]
fn paths_opened_are_logged_with_guest_and_host_path_mode_and_refusals() {
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .file("data/notes.txt", "some notes\n")
        .file("work/.keep", "")
        .file("secret.txt", "HOST SECRET")
        .config(
            "[audit]\npath = \"audit.jsonl\"\n[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\" }, { host = \"work\", guest = \"/work\", mode = \"rw\" }]\n",
        );
    // A symlink inside the read-write grant pointing out of it: the plugin's own checks pass, the
    // host refuses to follow it.
    std::os::unix::fs::symlink("../secret.txt", ws.path().join("work/escape")).unwrap();
    let host = std::fs::canonicalize(ws.path()).unwrap();
    let host = host.to_str().unwrap();

    let read = ws.call("read_file", r#"{"path": "/data/notes.txt"}"#);
    assert_eq!(read["isError"], false, "{read}");
    let write = ws.call("write_file", r#"{"path": "/work/out.txt", "content": "x"}"#);
    assert_eq!(write["isError"], false, "{write}");
    let escape = ws.call("write_file", r#"{"path": "/work/escape", "content": "x"}"#);
    assert_eq!(escape["isError"], true, "{escape}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("secret.txt")).unwrap(),
        "HOST SECRET"
    );

    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let paths: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .map(|line| line["capabilities"]["pathsOpened"].clone())
        .collect();
    assert_eq!(paths.len(), 3, "{log}");
    assert_eq!(
        paths[0],
        serde_json::json!([{
            "path": "/data/notes.txt",
            "hostPath": format!("{host}/data/notes.txt"),
            "mode": ["read"],
            "outcome": "opened",
            "plugin": "fs",
        }])
    );
    assert_eq!(
        paths[1],
        serde_json::json!([{
            "path": "/work/out.txt",
            "hostPath": format!("{host}/work/out.txt"),
            "mode": ["write", "create", "truncate"],
            "outcome": "opened",
            "plugin": "fs",
        }])
    );
    assert_eq!(
        paths[2],
        serde_json::json!([{
            "path": "/work/escape",
            "hostPath": format!("{host}/work/escape"),
            "mode": ["write", "create", "truncate"],
            "outcome": "denied",
            "error": "not-permitted",
            "plugin": "fs",
        }])
    );
}

#[test]
fn a_line_lists_at_most_a_thousand_opens_and_counts_the_rest() {
    let mut ws = Workspace::new().plugin("fs", "fs").config(
        "[audit]\npath = \"audit.jsonl\"\n[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n",
    );
    for i in 0..1100 {
        ws = ws.file(&format!("data/f{i}.txt"), "nothing to see\n");
    }
    let grep = ws.call("grep", r#"{"pattern": "needle"}"#);
    assert_eq!(grep["isError"], false, "{grep}");
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.trim_end()).unwrap();
    let capabilities = &line["capabilities"];
    assert_eq!(capabilities["pathsOpened"].as_array().unwrap().len(), 1000);
    // Every file was opened once to be searched; the directory too.
    assert!(
        capabilities["pathsOpenedOmitted"].as_u64().unwrap() >= 100,
        "{capabilities}"
    );
}
