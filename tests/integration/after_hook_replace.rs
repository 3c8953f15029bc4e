//! After-hooks that replace a result of a tool with an output schema (`long_report` of the
//! `truncating_hook` fixture, whose last line is confidential in its text, structured output and
//! details), written in Rust and in JavaScript: the replacement is exactly what the hook returned.
//! A hook that cuts the text and returns no structured output leaves its text and no structured
//! copy of what it cut, through `cordon call` and over MCP; structured output of the hook's own
//! stands when it matches the schema and fails the hook closed when it does not.

use crate::support::{Workspace, kind, text};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

/// The line of `long_report` every replacing hook cuts away.
const CUT_AWAY: &str = "the confidential tail";

/// `long_report`, with the fixture's own Rust after-hook over it.
fn rust_hook() -> Workspace {
    Workspace::new()
        .plugin("fixture_truncating_hook", "truncating_hook")
        .config("[plugins.truncating_hook]\nhook = true\n")
}

/// `long_report` (its plugin's hook not granted) with the JavaScript after-hook over it.
fn js_hook() -> Workspace {
    Workspace::new()
        .plugin("fixture_truncating_hook", "truncating_hook")
        .plugin("fixture_js_truncating_hook", "js_truncating_hook")
        .config("[plugins.js_truncating_hook]\nhook = true\n")
}

/// Each hook's workspace, with the words its replacement text ends with.
fn hooks() -> [(Workspace, &'static str); 2] {
    [
        (rust_hook(), "[cut by the Rust hook]"),
        (js_hook(), "[cut by the JavaScript hook]"),
    ]
}

/// `cordon call long_report` with the hook told `mode`: the result and the whole of stdout.
fn report(ws: &Workspace, mode: &str) -> (Value, String) {
    let arguments = json!({ "hook": mode }).to_string();
    let run = ws.cordon(&["call", "long_report", &arguments, "--json"]);
    (run.json(), run.stdout)
}

#[test]
fn a_truncating_after_hook_leaves_its_text_and_no_structured_copy_of_what_it_cut() {
    for (ws, signature) in hooks() {
        // Unreplaced, the tool's structured output and details carry the line too.
        let (kept, _) = report(&ws, "keep");
        assert!(
            kept["structured"]["body"]
                .as_str()
                .unwrap()
                .contains(CUT_AWAY),
            "{kept}"
        );

        let (cut, stdout) = report(&ws, "truncate");
        assert_eq!(kind(&cut), "", "{signature}: {cut}");
        assert_eq!(text(&cut), format!("start of the report {signature}"));
        assert!(cut.get("structured").is_none(), "{signature}: {cut}");
        assert!(!stdout.contains(CUT_AWAY), "{signature}: {stdout}");
    }
}

#[test]
fn a_javascript_hook_that_returns_only_details_fails_closed_instead_of_keeping_the_rest() {
    let ws = js_hook();
    let (result, stdout) = report(&ws, "details_only");
    assert_eq!(kind(&result), "hook_failed", "{result}");
    assert!(!stdout.contains(CUT_AWAY), "{stdout}");
}

#[test]
fn a_hooks_own_structured_output_stands_when_it_matches_and_fails_closed_when_it_does_not() {
    for (ws, signature) in hooks() {
        let (cut, stdout) = report(&ws, "structured");
        assert_eq!(kind(&cut), "", "{signature}: {cut}");
        assert_eq!(
            cut["structured"],
            json!({ "body": "start of the report", "lines": 1 })
        );
        assert!(!stdout.contains(CUT_AWAY), "{signature}: {stdout}");

        let (broken, stdout) = report(&ws, "mismatch");
        assert_eq!(kind(&broken), "hook_failed", "{signature}: {broken}");
        let says = text(&broken);
        assert!(
            says.contains(
                "its replacement's structured output does not match the output schema of `long_report`: at /lines"
            ),
            "{signature}: {says}"
        );
        // The hook's fault, not the tool's.
        assert!(!says.contains("bug in the tool"), "{signature}: {says}");
        assert!(broken.get("structured").is_none(), "{signature}: {broken}");
        assert!(!stdout.contains(CUT_AWAY), "{signature}: {stdout}");
    }
}

#[test]
fn over_mcp_a_truncated_result_has_the_hooks_text_and_no_structured_content() {
    for (ws, signature) in hooks() {
        let (result, line) = mcp_call(&ws, "long_report", json!({ "hook": "truncate" }));
        assert_eq!(result["isError"], false, "{signature}: {line}");
        assert_eq!(
            result["content"][0]["text"],
            format!("start of the report {signature}"),
            "{signature}: {line}"
        );
        assert!(
            result.get("structuredContent").is_none(),
            "{signature}: {line}"
        );
        assert!(!line.contains(CUT_AWAY), "{signature}: {line}");
    }
}

/// One `tools/call` over `cordon serve` on stdio: the call's `result` and the response line.
fn mcp_call(ws: &Workspace, tool: &str, arguments: Value) -> (Value, String) {
    let mut child = ws
        .cordon_command(&["serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cordon serve");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |message: Value| {
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "after-hook test", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}));
    let line = loop {
        let line = lines
            .next()
            .expect("cordon serve answers the call before it exits")
            .unwrap();
        let response: Value = serde_json::from_str(&line).unwrap();
        if response["id"] == 2 {
            break line;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    let response: Value = serde_json::from_str(&line).unwrap();
    (response["result"].clone(), line)
}
