//! Attacks on contract 0.2's locks and on approval: lock pointers declared twice or aliased, the
//! approval prompt and elicitation showing what a write really targets, answers that are not
//! approvals, the result budget on structured output, and a dropped approval policy under
//! `--locked`. Each test asserts the safe behaviour.

use crate::support::{Workspace, kind, text};
use cordon_runtime::pipeline::{Approval, ApprovalRequest, Approver, BatchOptions, CallRequest};
use serde_json::{Value, json};
use std::future::Future;
use std::io::{BufRead, BufReader, Write};
use std::pin::Pin;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

fn redteam(config: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_redteam_v2", "rt")
        .config(config)
}

/// Runs a batch, giving up (and cancelling it) after `limit`.
async fn run_within(
    ws: &Workspace,
    calls: Vec<CallRequest>,
    limit: Duration,
) -> Option<Vec<cordon_runtime::ToolResult>> {
    let pipeline = ws.pipeline().await;
    let options = BatchOptions::default();
    let cancel = options.cancel.clone();
    let outcome = tokio::time::timeout(limit, pipeline.run(calls, &options)).await;
    cancel.cancel();
    outcome.ok()
}

// ---- (d) locks -------------------------------------------------------------------------------

/// A copy tool locks both its ends; a call copying a note onto itself locks one value twice, and
/// `holders.insert` hands the call its own position to wait for: it waits for itself forever.
#[tokio::test]
async fn a_call_locking_one_value_at_two_pointers_does_not_hang_its_batch() {
    let ws = redteam("");
    let calls = vec![
        CallRequest::new(
            "1",
            "copy_note",
            json!({ "from": "a", "to": "a" }).to_string(),
        ),
        CallRequest::new(
            "2",
            "copy_note",
            json!({ "from": "b", "to": "c" }).to_string(),
        ),
    ];
    let results = run_within(&ws, calls, Duration::from_secs(20)).await;
    let results = results.expect("the batch hung: call 1 waits for its own lock");
    assert!(!results[0].is_error, "{:?}", results[0]);
}

/// A tool that names one lock pointer twice is refused at load, with the reason.
#[test]
fn a_tool_declaring_one_lock_pointer_twice_is_refused_at_load() {
    let ws = Workspace::new().plugin("fixture_twice_locked", "twice");
    let listed = ws.cordon(&["list", "--json"]).json();
    let reason = listed["rejected"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("its lock \"/key\" is declared twice"),
        "{listed}"
    );
}

/// `write_file` and `edit_file` lock on the JSON text of `/path`, but the fs plugin resolves
/// `.`, `..`, `//` and relative paths: eight spellings of one file take eight different locks, so
/// eight edits of one file run in parallel and overwrite each other's work.
#[tokio::test]
async fn two_edits_of_one_file_never_interleave_however_its_path_is_spelled() {
    let spellings = [
        "/scratch/f.txt",
        "/scratch/./f.txt",
        "/scratch//f.txt",
        "f.txt",
        "./f.txt",
        "/scratch/sub/../f.txt",
        "/scratch/././f.txt",
        "//scratch/f.txt",
    ];
    let mut original = String::new();
    for index in 0..spellings.len() {
        original.push_str(&format!("marker-{index}\n"));
    }
    // Padding, so each edit's read and write take a moment.
    for _ in 0..20_000 {
        original.push_str("padding padding padding padding padding padding padding padding\n");
    }
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .file("scratch/f.txt", &original)
        .config(
            "[plugins.fs]\ndirs = [{ host = \"scratch\", guest = \"/scratch\", mode = \"rw\" }]\nlimits = { memory = \"256MiB\", timeout = \"30s\" }\n",
        );
    let pipeline = ws.pipeline().await;
    let calls: Vec<CallRequest> = spellings
        .iter()
        .enumerate()
        .map(|(index, path)| {
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
    for result in &results {
        assert!(!result.is_error, "{result:?}");
    }
    // Overlaps, from the order of start and end events.
    let trail = crate::support::event_trail(&events);
    let position = |kind: &str, id: &str| {
        trail
            .iter()
            .position(|(k, i)| k == kind && i == id)
            .unwrap()
    };
    let mut overlapping = Vec::new();
    for a in 0..spellings.len() {
        for b in a + 1..spellings.len() {
            let (a_id, b_id) = (format!("e{a}"), format!("e{b}"));
            if position("tool_execution_start", &b_id) < position("tool_execution_end", &a_id) {
                overlapping.push((spellings[a], spellings[b]));
            }
        }
    }
    let now = std::fs::read_to_string(ws.path().join("scratch/f.txt")).unwrap();
    let lost: Vec<usize> = (0..spellings.len())
        .filter(|index| !now.contains(&format!("edited-{index}\n")))
        .collect();
    assert!(
        overlapping.is_empty() && lost.is_empty(),
        "edits of one file ran at once ({} overlapping pairs, e.g. {:?}); edits lost: {lost:?}",
        overlapping.len(),
        overlapping.first()
    );
}

// ---- (b) what the person approving sees ------------------------------------------------------

/// The real target hides behind 2,000 spaces: the question is cut there, so it shows
/// `/scratch/notes.txt` and a byte count, while `/..` after the spaces makes the fs plugin write
/// `/scratch/victim.txt`.
fn disguised_write() -> String {
    let path = format!("/scratch/notes.txt{}/../victim.txt", " ".repeat(2_000));
    json!({ "path": path, "content": "overwritten by the model" }).to_string()
}

fn approval_ws(extra: &str) -> Workspace {
    Workspace::new()
        .plugin("fs", "fs")
        .file("scratch/victim.txt", "precious\n")
        .file("scratch/notes.txt", "notes\n")
        .config(&format!(
            "[plugins.fs]\ndirs = [{{ host = \"scratch\", guest = \"/scratch\", mode = \"rw\" }}]\n[approval]\ndestructive = true\n{extra}"
        ))
}

/// The person at the terminal is asked about the write; the question must show the file that will
/// be written.
#[test]
fn the_terminal_question_shows_the_file_a_write_really_targets() {
    let ws = approval_ws("");
    let write = disguised_write();
    let (_, question, _) =
        crate::support::run_on_terminal(&ws, "y", &["call", "write_file", &write]);
    assert!(question.contains("approve write_file"), "{question}");
    let victim = std::fs::read_to_string(ws.path().join("scratch/victim.txt")).unwrap();
    let visible: String = question.chars().filter(|c| *c != ' ').collect();
    assert!(
        question.contains("victim.txt"),
        "the person approved a write shown as {:?}; it overwrote victim.txt, which now reads {victim:?}",
        visible.chars().take(160).collect::<String>()
    );
}

/// A raw MCP client over stdio that declares form elicitation.
struct RawClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl RawClient {
    fn start(ws: &Workspace) -> Self {
        ws.cordon(&["list"]); // compile first
        let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
            .args(["serve"])
            .current_dir(ws.path())
            .env("XDG_CACHE_HOME", ws.cache_home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cordon serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Self {
            child,
            stdin,
            lines,
        };
        client.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "redteam", "version": "1"}}}),
        );
        client.next();
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a message in time");
        serde_json::from_str(&line).unwrap()
    }

    /// Calls `tool`, answering the elicitation with `answer(request)`; the elicitation message (if
    /// any) and the call's result.
    fn call(
        &mut self,
        tool: &str,
        arguments: &str,
        answer: impl Fn(&Value) -> Value,
    ) -> (Option<String>, Value) {
        let arguments: Value = serde_json::from_str(arguments).unwrap();
        self.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let mut message = None;
        let started = Instant::now();
        loop {
            assert!(started.elapsed() < Duration::from_secs(60));
            let incoming = self.next();
            if incoming["method"] == "elicitation/create" {
                message = incoming["params"]["message"].as_str().map(str::to_string);
                let mut reply = answer(&incoming);
                reply["jsonrpc"] = json!("2.0");
                reply["id"] = incoming["id"].clone();
                self.send(reply);
            } else if incoming["id"] == 7 {
                return (message, incoming["result"].clone());
            }
        }
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The MCP client's user is asked through elicitation; the message must show the file that will
/// be written.
#[test]
fn the_elicitation_shows_the_file_a_write_really_targets() {
    let ws = approval_ws("");
    let mut client = RawClient::start(&ws);
    let (message, result) = client.call(
        "write_file",
        &disguised_write(),
        |_| json!({"result": {"action": "accept", "content": {}}}),
    );
    let message = message.expect("the client was asked");
    let victim = std::fs::read_to_string(ws.path().join("scratch/victim.txt")).unwrap();
    assert!(
        message.contains("victim.txt"),
        "the user accepted {:?}; the call ({}) overwrote victim.txt, which now reads {victim:?}",
        message
            .replace(' ', "")
            .chars()
            .take(160)
            .collect::<String>(),
        result["content"][0]["text"]
    );
}

// ---- (a) approval without a person's yes ------------------------------------------------------

/// `unattended = "allow"` is for when nobody can be asked. A client that was asked and answered
/// the elicitation with an error (or never answered: after the 300 s timeout) did not approve.
#[test]
fn an_elicitation_answered_with_an_error_is_not_an_approval() {
    let ws = approval_ws("unattended = \"allow\"\n");
    let mut client = RawClient::start(&ws);
    let (message, result) = client.call(
        "write_file",
        r#"{"path": "/scratch/victim.txt", "content": "overwritten"}"#,
        |_| json!({"error": {"code": -32000, "message": "the user closed the dialog"}}),
    );
    assert!(message.is_some(), "the client was asked");
    let victim = std::fs::read_to_string(ws.path().join("scratch/victim.txt")).unwrap();
    assert_eq!(
        result["_meta"]["cordon/errorKind"], "not_approved",
        "the call ran though the asked user never approved: {result}; victim.txt: {victim:?}"
    );
}

// ---- (e) the result budget --------------------------------------------------------------------

/// `max_result_bytes` bounds what a result hands the model and the client; structured output
/// (`structuredContent` over MCP) escapes it: 1 MiB goes out under a 4 KiB budget.
#[tokio::test]
async fn structured_output_is_held_to_max_result_bytes() {
    let ws = redteam("[agent]\nmax_result_bytes = \"4KiB\"\n");
    let pipeline = ws.pipeline().await;
    let result = crate::support::call(&pipeline, "bulk", r#"{"bytes": 1048576}"#).await;
    let size = serde_json::to_string(&result).unwrap().len();
    assert!(
        size < 64 << 10,
        "a result of {size} bytes (structured output {} bytes) under a 4 KiB max_result_bytes",
        result
            .structured
            .as_ref()
            .map_or(0, |s| s.to_string().len())
    );
}

// ---- (f) the lock file ------------------------------------------------------------------------

/// The lock pins the deployment around the plugins (audit log, hook order) so a locked start
/// refuses a weakened one; `[approval]` is part of it: with it gone the destructive call runs
/// unasked.
#[test]
fn a_locked_start_refuses_a_dropped_approval_policy() {
    let approving = "[approval]\ndestructive = true\n";
    let ws = Workspace::new()
        .plugin("fixture_contract_v2", "v2")
        .config(approving);
    assert_eq!(ws.cordon(&["lock"]).code, 0);
    let touch = ["--locked", "call", "touch", r#"{"key": "k", "hold_ms": 1}"#];
    let asked = ws.cordon(&touch);
    assert!(
        asked.stdout.starts_with("[not_approved]"),
        "{}",
        asked.stdout
    );
    let ws = ws.config("");
    let run = ws.cordon(&touch);
    assert_ne!(
        run.code, 0,
        "a locked start ran a destructive call without the approved [approval]: {}",
        run.stdout
    );
}

// ---- attacks that were stopped ------------------------------------------------------------------

struct Recorder(Mutex<Vec<ApprovalRequest>>);

impl Approver for Recorder {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        self.0.lock().unwrap().push(request.clone());
        Box::pin(async {
            Some(Approval {
                approved: true,
                decided_by: "recorder".into(),
                reason: None,
            })
        })
    }
}

/// A duplicate key: the person sees the value that runs (the last), not the first.
#[tokio::test]
async fn with_a_duplicate_key_the_person_sees_the_value_that_runs() {
    let ws = redteam("[approval]\ntools = [\"copy_note\"]\n");
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
                "copy_note",
                r#"{"from": "shown", "to": "x", "from": "real"}"#,
            ),
            &options,
        )
        .await;
    let asked = recorder.0.lock().unwrap().clone();
    assert_eq!(asked[0].arguments["from"], "real");
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(kind(&value), "", "{value}");
    assert_eq!(text(&value), "copied real to x");
}

/// The terminal question replaces bidirectional overrides; the elicitation message passes them on,
/// so a model's arguments can reorder what the client's user reads (a path with U+202E shows its
/// file name reversed).
#[test]
fn the_elicitation_message_carries_no_bidi_overrides() {
    let ws = approval_ws("");
    let mut client = RawClient::start(&ws);
    let (message, _) = client.call(
        "write_file",
        &json!({ "path": "/scratch/\u{202e}txt.mitciv", "content": "x" }).to_string(),
        |_| json!({"result": {"action": "decline"}}),
    );
    let message = message.expect("the client was asked");
    assert!(
        !message
            .chars()
            .any(|c| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
        "{message:?}"
    );
}
