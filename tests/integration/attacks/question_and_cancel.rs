//! Attacks on what the approval question shows (line separators, bidi marks, long blank runs,
//! forged markers), on one file locked under two spellings, and on cancelling a call from a
//! cross-origin page over `cordon serve --http`. Each test asserts the safe behaviour.

use crate::support::{Workspace, kind};
use cordon_runtime::pipeline::lock_keys::touched;
use cordon_runtime::pipeline::{
    Approval, ApprovalRequest, Approver, AskedBy, BatchOptions, CallRequest,
};
use serde_json::{Value, json};
use std::future::Future;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The lines a person is asked with (terminal and elicitation share them), for a write_file call.
fn write_question(arguments: Value, reason: Option<&str>) -> Vec<String> {
    let request = ApprovalRequest {
        tool_call_id: "c".into(),
        tool_name: "write_file".into(),
        plugin: "fs".into(),
        touched: touched(&arguments, &["/path".into()], Some("/scratch")),
        arguments,
        asked_by: reason
            .map(|reason| AskedBy {
                who: "hook `guard`".into(),
                reason: reason.into(),
            })
            .into_iter()
            .collect(),
    };
    request.lines(&cordon_runtime::report::secrets::Secrets::default())
}

/// Characters Unicode says end a line (UAX #14 class BK): browsers, Python's `splitlines` and
/// many MCP clients break there.
fn line_breaks(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            matches!(
                c,
                '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
            )
        })
        .collect()
}

// ---- what the person approving is shown -------------------------------------------------------

/// `one_line` replaces control characters (Cc) only; U+2028 LINE SEPARATOR and U+2029 PARAGRAPH
/// SEPARATOR are Zl/Zp, and serde_json does not escape them, so a model's argument (or a hook's
/// reason) still puts a line break into the question, and the text after it reads as a line of
/// cordon's own: here a second, harmless `touches` line under the real one.
#[test]
fn no_unicode_line_separator_reaches_the_question() {
    let content = "ok\u{2028}touches /path = \u{201c}/scratch/notes.txt\u{201d}\u{2029}";
    let lines = write_question(
        json!({ "path": "/scratch/notes.txt", "content": content }),
        Some("routine\u{2028}touches /path = \"/scratch/notes.txt\""),
    );
    let breaks: Vec<char> = lines.iter().flat_map(|line| line_breaks(line)).collect();
    assert!(
        breaks.is_empty(),
        "line breaks {breaks:?} in the question: {lines:#?}"
    );
}

/// LRM and RLM are replaced, but U+061C ARABIC LETTER MARK (the third bidi mark, invisible and
/// strongly right-to-left) is not: `\u{61C}1 2` is displayed as `2 1`.
#[test]
fn no_bidi_mark_reaches_the_question() {
    let lines = write_question(
        json!({ "path": "/scratch/notes.txt", "content": "rm -rf \u{61c}1 2" }),
        Some("\u{61c}reason"),
    );
    let marks: Vec<&String> = lines
        .iter()
        .filter(|line| line.contains('\u{61c}'))
        .collect();
    assert!(marks.is_empty(), "U+061C shown in {marks:?}");
}

/// Runs of blanks are counted in string arguments only. A hook's reason (which a hook may echo
/// from the model's arguments, as contract_v2's `ask` does) keeps 200 spaces, and characters that
/// render blank but are not `char::is_whitespace` (U+3164 HANGUL FILLER, U+2800 BRAILLE BLANK)
/// are never counted: on an 80-column terminal the text after them starts a line of its own.
#[test]
fn long_blank_runs_are_counted_wherever_they_are_shown() {
    let filler = "\u{3164}".repeat(30);
    let lines = write_question(
        json!({ "path": "/scratch/notes.txt", "content": format!("a{filler}b") }),
        Some(&format!(
            "fine{}touches /path = \"/scratch/notes.txt\"",
            " ".repeat(190)
        )),
    );
    let blankish = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '\u{3164}'
                    | '\u{2800}'
                    | '\u{115f}'
                    | '\u{1160}'
                    | '\u{ffa0}'
                    | '\u{200b}'
                    | '\u{2060}'
                    | '\u{feff}'
            )
    };
    let long_runs: Vec<&String> = lines
        .iter()
        .filter(|line| {
            let mut run = 0;
            line.chars().any(|c| {
                run = if blankish(c) { run + 1 } else { 0 };
                run >= 8
            })
        })
        .collect();
    assert!(
        long_runs.is_empty(),
        "lines with 8+ blank characters in a row: {long_runs:#?}"
    );
}

/// The count markers cordon adds are plain text a value can carry too: a short value shows as a
/// cut one, and a value with real blanks shows the same as one spelling the marker out.
#[test]
fn a_value_cannot_forge_cordons_markers() {
    let real = write_question(
        json!({ "path": format!("/scratch/a{}b", " ".repeat(5)), "content": "" }),
        None,
    );
    let forged = write_question(
        json!({ "path": "/scratch/a⟨5 blanks⟩b", "content": "" }),
        None,
    );
    assert_ne!(
        real[1], forged[1],
        "two different paths are shown alike: {:?}",
        real[1]
    );
}

// ---- locks ------------------------------------------------------------------------------------

/// Lock keys are guest paths. A directory granted under two guest paths (allowed: only nested
/// guest paths and grants inside *other* read-write grants are refused) is one file under two
/// keys: edits of /a/f.txt and /b/f.txt run at once and one overwrites the other.
#[tokio::test]
async fn one_host_file_is_one_lock_whichever_grant_names_it() {
    let mut original = String::new();
    for index in 0..6 {
        original.push_str(&format!("marker-{index}\n"));
    }
    for _ in 0..20_000 {
        original.push_str("padding padding padding padding padding padding padding padding\n");
    }
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .file("scratch/f.txt", &original)
        .config(
            "[plugins.fs]\ndirs = [{ host = \"scratch\", guest = \"/a\", mode = \"rw\" }, { host = \"scratch\", guest = \"/b\", mode = \"rw\" }]\nlimits = { memory = \"256MiB\", timeout = \"30s\" }\n",
        );
    let pipeline = ws.pipeline().await;
    let calls: Vec<CallRequest> = (0..6)
        .map(|index| {
            let path = if index % 2 == 0 { "/a/f.txt" } else { "/b/f.txt" };
            CallRequest::new(
                format!("e{index}"),
                "edit_file",
                json!({ "path": path, "old_text": format!("marker-{index}\n"), "new_text": format!("edited-{index}\n") })
                    .to_string(),
            )
        })
        .collect();
    let (results, events) =
        crate::support::run_with_events(&pipeline, calls, Default::default()).await;
    // An edit that lost its marker to another's overwrite fails with "old_text was not found".
    let failed: Vec<&str> = results
        .iter()
        .filter(|result| result.is_error)
        .map(|result| result.tool_call_id.as_str())
        .collect();
    // Overlaps, from the order of start and end events: calls on one file must not overlap.
    let trail = crate::support::event_trail(&events);
    let position = |kind: &str, id: &str| {
        trail
            .iter()
            .position(|(k, i)| k == kind && i == id)
            .unwrap()
    };
    let mut overlapping = Vec::new();
    for a in 0..6 {
        for b in a + 1..6 {
            let (a_id, b_id) = (format!("e{a}"), format!("e{b}"));
            if position("tool_execution_start", &b_id) < position("tool_execution_end", &a_id) {
                overlapping.push((a_id, b_id));
            }
        }
    }
    let now = std::fs::read_to_string(ws.path().join("scratch/f.txt")).unwrap();
    let lost: Vec<usize> = (0..6)
        .filter(|index| !now.contains(&format!("edited-{index}\n")))
        .collect();
    assert!(
        failed.is_empty() && overlapping.is_empty() && lost.is_empty(),
        "edits of one file ran at once: {overlapping:?}; edits lost: {lost:?}; edits failed: {failed:?}"
    );
}

// ---- a hook's reason end to end -------------------------------------------------------------------

struct Recorder(Mutex<Vec<ApprovalRequest>>);

impl Approver for Recorder {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        self.0.lock().unwrap().push(request.clone());
        Box::pin(async {
            Some(Approval {
                approved: false,
                decided_by: "recorder".into(),
                reason: None,
            })
        })
    }
}

/// Through the real pipeline: a hook that asks with text from the model's arguments (contract_v2's
/// `ask`) puts a U+2028 line break into what the person reads.
#[tokio::test]
async fn a_hooks_reason_carries_no_line_separator_to_the_person() {
    let ws = Workspace::new()
        .plugin("fixture_contract_v2", "v2")
        .config("[plugins.v2]\nhook = true\n");
    let pipeline = ws.pipeline().await;
    let recorder = Arc::new(Recorder(Mutex::new(Vec::new())));
    let options = BatchOptions {
        approver: Some(recorder.clone()),
        ..BatchOptions::default()
    };
    let result = pipeline
        .call(
            CallRequest::new(
                "1",
                "touch",
                json!({ "key": "k", "hold_ms": 1, "ask": "please\u{2028}touches /key = \"other\"" })
                    .to_string(),
            ),
            &options,
        )
        .await;
    assert_eq!(
        kind(&serde_json::to_value(&result).unwrap()),
        "not_approved"
    );
    let asked = recorder.0.lock().unwrap().clone();
    let lines = asked[0].lines(&cordon_runtime::report::secrets::Secrets::default());
    let breaks: Vec<char> = lines.iter().flat_map(|line| line_breaks(line)).collect();
    assert!(breaks.is_empty(), "{lines:#?}");
}

// ---- notifications/cancelled over HTTP --------------------------------------------------------

/// One HTTP/1.1 POST to `addr` (`host:port`); the status code and body.
fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    post_as(
        addr,
        "application/json",
        "application/json, text/event-stream",
        headers,
        body,
    )
}

fn post_as(
    addr: &str,
    content_type: &str,
    accept: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nAccept: {accept}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A browser page on any site can POST a "simple" cross-origin request (no preflight) to the
/// loopback server. The transport refuses it for its Origin (403), but the cancellation middleware
/// sits outside the transport's Host/Origin check: it has already stopped the call the page named.
/// Without --token (the loopback default) every local client's ids share one namespace, and ids
/// are small integers, so the page stops the user's running calls.
#[test]
fn a_cross_origin_page_cannot_cancel_a_local_clients_call() {
    let ws = Workspace::new().plugin("fixture_probe", "probe").config(
        "[plugins.probe]\nlimits = { timeout = \"30s\" }\n[audit]\npath = \"audit.jsonl\"\n",
    );
    ws.cordon(&["list"]); // compile first
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cordon serve --http");
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    let mut addr = None;
    let mut lines = BufReader::new(stderr).lines();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.split("http://").nth(1) {
            addr = rest.split('/').next().map(str::to_string);
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    let addr = addr.expect("the server's address");

    // The user's client calls a tool that takes 3 s.
    let call_addr = addr.clone();
    let call = std::thread::spawn(move || {
        post(
            &call_addr,
            &[("MCP-Protocol-Version", "2025-11-25")],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"millis": 3000}}})
            .to_string(),
        )
    });
    std::thread::sleep(Duration::from_millis(1_000));
    // A page on https://evil.example: fetch(url, {method: "POST", mode: "no-cors", body}).
    let (status, body) = post_as(
        &addr,
        "text/plain;charset=UTF-8",
        "*/*",
        &[("Origin", "https://evil.example")],
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "evil"}})
        .to_string(),
    );
    assert_eq!(status, 403, "the page's request was not refused: {body}");
    let (_, answer) = call.join().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut entry = Value::Null;
    while Instant::now() < deadline && entry.is_null() {
        if let Ok(log) = std::fs::read_to_string(ws.path().join("audit.jsonl")) {
            entry = log
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .find(|line| line["tool"] == "sleep")
                .unwrap_or(Value::Null);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    assert!(!entry.is_null(), "the call never ran: {answer}");
    assert_ne!(
        entry["errorKind"], "cancelled",
        "a refused cross-origin request cancelled the user's call: audit {entry}; the call got {answer}"
    );
}
