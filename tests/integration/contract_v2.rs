//! Contract 0.2 through real components: a 0.1, a 0.2 and a 0.4 (SDK) plugin side by side, structured output
//! checked against the output schema, title, annotations, guidelines and locks as declared, calls
//! that lock one value run one after another, and approval (a hook's `ask`, the operator's
//! `[approval]` policy) with and without someone to ask.

use crate::support::{Workspace, kind, text};
use cordon_runtime::pipeline::{Approval, ApprovalRequest, Approver, BatchOptions, CallRequest};
use cordon_runtime::{ContractVersion, Event};
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

fn workspace(config: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_contract_v2", "v2")
        .plugin("fixture_legacy_v01", "legacy")
        .plugin("fixture_legacy_v02", "v02")
        .config(config)
}

fn result_json(result: &cordon_runtime::ToolResult) -> Value {
    serde_json::to_value(result).unwrap()
}

#[tokio::test]
async fn a_0_1_a_0_2_and_a_0_4_plugin_run_in_one_batch() {
    let ws = workspace("");
    let pipeline = ws.pipeline().await;
    let contract = |id: &str| {
        pipeline
            .registry()
            .plugins()
            .iter()
            .find(|plugin| &*plugin.id == id)
            .map(|plugin| plugin.contract)
    };
    assert_eq!(contract("v2"), Some(ContractVersion::V0_4));
    assert_eq!(contract("v02"), Some(ContractVersion::V0_2));
    assert_eq!(contract("legacy"), Some(ContractVersion::V0_1));
    let results = pipeline
        .run(
            vec![
                CallRequest::new("1", "word_stats", r#"{"text": "two words"}"#),
                CallRequest::new("2", "legacy_echo", r#"{"text": "hi"}"#),
                CallRequest::new("3", "legacy_stats", r#"{"text": "three little words"}"#),
            ],
            &BatchOptions::default(),
        )
        .await;
    assert!(!results[0].is_error, "{:?}", results[0]);
    assert_eq!(
        results[0].structured,
        Some(json!({ "words": 2, "characters": 9 }))
    );
    assert!(!results[1].is_error, "{:?}", results[1]);
    assert_eq!(results[1].structured, None);
    assert!(!results[2].is_error, "{:?}", results[2]);
    assert_eq!(results[2].structured, Some(json!({ "words": 3 })));

    let list = ws.cordon(&["list"]);
    assert!(
        list.stdout.contains("v2") && list.stdout.contains("contract 0.4.0"),
        "{}",
        list.stdout
    );
    assert!(list.stdout.contains("contract 0.2.0"), "{}", list.stdout);
    assert!(list.stdout.contains("contract 0.1.0"), "{}", list.stdout);
    let listed = ws.cordon(&["list", "--json"]).json();
    let plugin = |id: &str| {
        listed["plugins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(plugin("v2")["contract"], "0.4.0");
    assert_eq!(plugin("v02")["contract"], "0.2.0");
    assert_eq!(plugin("legacy")["contract"], "0.1.0");
}

#[test]
fn a_tool_declares_title_annotations_output_schema_guidelines_and_locks() {
    let ws = workspace("");
    let stats = ws.cordon(&["describe", "word_stats", "--json"]).json();
    assert_eq!(stats["title"], "Word statistics");
    assert_eq!(
        stats["annotations"],
        json!({ "readOnly": true, "destructive": false, "idempotent": true, "openWorld": false })
    );
    assert_eq!(stats["outputSchema"]["type"], "object");
    assert!(stats["outputSchema"]["properties"]["words"].is_object());
    assert_eq!(
        stats["promptGuidelines"],
        json!(["Use word_stats instead of counting words yourself."])
    );
    let touch = ws.cordon(&["describe", "touch", "--json"]).json();
    assert_eq!(touch["locks"], json!(["/key"]));
    assert_eq!(touch["annotations"]["destructive"], true);
    // A 0.1 tool: no hints, its label as the title.
    let echo = ws.cordon(&["describe", "legacy_echo", "--json"]).json();
    assert_eq!(echo["title"], "Legacy echo");
    assert_eq!(echo["annotations"], json!({}));
    assert!(echo.get("outputSchema").is_none());
    let readable = ws.cordon(&["describe", "word_stats"]).stdout;
    assert!(
        readable.contains("annotations: read-only, non-destructive, idempotent, closed-world"),
        "{readable}"
    );
}

#[test]
fn structured_output_must_match_the_output_schema() {
    let ws = workspace("");
    let ok = ws.call("word_stats", r#"{"text": "a b c"}"#);
    assert_eq!(ok["structured"], json!({ "words": 3, "characters": 5 }));
    assert!(text(&ok).contains("\"words\": 3"), "{ok}");
    for (mode, says) in [
        ("mismatch", "does not match its output schema: at /words"),
        (
            "missing",
            "returned no structured output, but the tool declares an output schema",
        ),
        ("not_object", "structured output that is not a JSON object"),
    ] {
        let broken = ws.call(
            "word_stats",
            &json!({ "text": "x", "mode": mode }).to_string(),
        );
        assert_eq!(kind(&broken), "tool_error", "{mode}: {broken}");
        assert!(text(&broken).contains(says), "{mode}: {}", text(&broken));
        assert!(broken.get("structured").is_none(), "{broken}");
    }
}

/// `(key, started, ended)` of a `touch` result.
fn interval(result: &cordon_runtime::ToolResult) -> (String, u64, u64) {
    let text = result.text();
    let parts: Vec<&str> = text.split(' ').collect();
    (
        parts[0].to_string(),
        parts[1].parse().unwrap(),
        parts[2].parse().unwrap(),
    )
}

#[tokio::test]
async fn calls_that_lock_one_value_run_in_call_order_and_the_rest_in_parallel() {
    let ws = workspace("");
    let pipeline = ws.pipeline().await;
    let touch = |id: &str, key: &str| {
        CallRequest::new(
            id,
            "touch",
            json!({ "key": key, "hold_ms": 400 }).to_string(),
        )
    };
    let results = pipeline
        .run(
            vec![
                touch("1", "a"),
                touch("2", "a"),
                touch("3", "b"),
                touch("4", "a"),
            ],
            &BatchOptions::default(),
        )
        .await;
    for result in &results {
        assert!(!result.is_error, "{result:?}");
    }
    let [first, second, other, third] = [0, 1, 2, 3].map(|i| interval(&results[i]));
    assert!(
        second.1 >= first.2,
        "the second `a` overlapped the first: {first:?} {second:?}"
    );
    assert!(
        third.1 >= second.2,
        "the third `a` overlapped the second: {second:?} {third:?}"
    );
    assert!(
        other.1 < first.2,
        "`b` waited for `a` though it locks another value: {first:?} {other:?}"
    );
}

/// Four 250 ms calls, two sharing a lock value: the pair runs in turn, the others beside it, so the
/// batch takes about two calls' time, not four (the figure is printed; run with `--nocapture`).
#[tokio::test]
async fn four_calls_of_250_ms_with_two_sharing_a_lock_take_about_500_ms() {
    let ws = workspace("");
    let pipeline = ws.pipeline().await;
    let touch = |id: &str, key: &str| {
        CallRequest::new(
            id,
            "touch",
            json!({ "key": key, "hold_ms": 250 }).to_string(),
        )
    };
    // Once, so the component is instantiated warm.
    pipeline
        .call(touch("warm", "w"), &BatchOptions::default())
        .await;
    let started = std::time::Instant::now();
    let results = pipeline
        .run(
            vec![
                touch("1", "a"),
                touch("2", "a"),
                touch("3", "b"),
                touch("4", "c"),
            ],
            &BatchOptions::default(),
        )
        .await;
    let took = started.elapsed();
    eprintln!(
        "four 250 ms calls, two sharing a lock: {} ms",
        took.as_millis()
    );
    let [first, second, b, c] = [0, 1, 2, 3].map(|i| interval(&results[i]));
    assert!(second.1 >= first.2, "{first:?} {second:?}");
    assert!(b.1 < first.2 && c.1 < first.2, "{first:?} {b:?} {c:?}");
    // Run one after another, the four would take 1 s.
    assert!(
        took < std::time::Duration::from_millis(900),
        "{} ms",
        took.as_millis()
    );
}

/// A 0.1 after-hook cannot see structured output, so it cannot review it: a tool that promised
/// structured output fails closed rather than pass on what the hook never saw.
#[test]
fn a_0_1_after_hook_cannot_pass_on_structured_output_it_never_saw() {
    let ws = workspace("[plugins.legacy]\nhook = true\n");
    let result = ws.call("word_stats", r#"{"text": "a b"}"#);
    assert_eq!(kind(&result), "hook_failed", "{result}");
    assert!(
        text(&result).contains("speaks contract 0.1") && result.get("structured").is_none(),
        "{result}"
    );
    // Tools it does not watch are untouched.
    let touch = ws.call("touch", r#"{"key": "k", "hold_ms": 1}"#);
    assert_eq!(kind(&touch), "", "{touch}");
}

/// Approves or refuses every call, recording what it was asked.
struct Person {
    approve: bool,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Approver for Person {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        self.asked.lock().unwrap().push(request.clone());
        Box::pin(async move {
            Some(Approval {
                approved: self.approve,
                decided_by: "the test".into(),
                reason: (!self.approve).then(|| "not today".to_string()),
            })
        })
    }
}

async fn call_with(
    ws: &Workspace,
    approver: Option<Arc<Person>>,
    tool: &str,
    arguments: Value,
) -> (cordon_runtime::ToolResult, Vec<Event>) {
    let pipeline = ws.pipeline().await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let options = BatchOptions {
        events: Some(Arc::new(move |event| sink.lock().unwrap().push(event))),
        approver: approver.map(|person| person as Arc<dyn Approver>),
        ..BatchOptions::default()
    };
    let result = pipeline
        .call(CallRequest::new("c", tool, arguments.to_string()), &options)
        .await;
    let events = events.lock().unwrap().clone();
    (result, events)
}

fn approval_event(events: &[Event]) -> Value {
    events
        .iter()
        .map(|event| serde_json::to_value(event).unwrap())
        .find(|event| event["type"] == "approval")
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn a_hooks_ask_is_denied_when_nobody_can_be_asked() {
    let ws = workspace("[plugins.v2]\nhook = true\n");
    let (result, events) = call_with(
        &ws,
        None,
        "word_stats",
        json!({ "text": "x", "ask": "it counts secrets" }),
    )
    .await;
    let value = result_json(&result);
    assert_eq!(kind(&value), "not_approved", "{value}");
    let message = text(&value);
    assert!(
        message.contains("it counts secrets") && message.contains("nobody could be asked"),
        "{message}"
    );
    assert!(message.contains("unattended"), "{message}");
    let event = approval_event(&events);
    assert_eq!(event["approved"], false);
    assert_eq!(event["decidedBy"], "default");
    assert_eq!(event["askedBy"][0]["who"], "hook `v2`");
    // Without `ask`, the hook allows.
    let (plain, _) = call_with(&ws, None, "word_stats", json!({ "text": "x" })).await;
    assert!(!plain.is_error, "{plain:?}");
}

#[tokio::test]
async fn a_person_approves_or_refuses_and_the_event_says_who() {
    let ws = workspace("[plugins.v2]\nhook = true\n");
    let yes = Arc::new(Person {
        approve: true,
        asked: Mutex::new(Vec::new()),
    });
    let arguments = json!({ "text": "a b", "ask": "check with a person" });
    let (result, events) = call_with(&ws, Some(yes.clone()), "word_stats", arguments.clone()).await;
    assert!(!result.is_error, "{result:?}");
    let asked = yes.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].arguments, arguments);
    assert_eq!(asked[0].asked_by[0].reason, "check with a person");
    assert_eq!(approval_event(&events)["decidedBy"], "the test");

    let no = Arc::new(Person {
        approve: false,
        asked: Mutex::new(Vec::new()),
    });
    let (refused, _) = call_with(&ws, Some(no), "word_stats", arguments).await;
    let value = result_json(&refused);
    assert_eq!(kind(&value), "not_approved");
    assert!(
        text(&value).contains("the test said no: not today"),
        "{value}"
    );
}

#[tokio::test]
async fn the_operators_policy_asks_before_destructive_or_named_tools() {
    let ws = workspace("[approval]\ndestructive = true\n");
    let (touch, events) = call_with(&ws, None, "touch", json!({ "key": "k", "hold_ms": 1 })).await;
    assert_eq!(touch.error_kind.map(|k| k.as_str()), Some("not_approved"));
    assert_eq!(approval_event(&events)["askedBy"][0]["who"], "cordon.toml");
    let (read, _) = call_with(&ws, None, "word_stats", json!({ "text": "x" })).await;
    assert!(
        !read.is_error,
        "a read-only tool is not asked about: {read:?}"
    );

    let named = workspace("[approval]\ntools = [\"word_*\"]\nunattended = \"allow\"\n");
    let (allowed, events) = call_with(&named, None, "word_stats", json!({ "text": "x" })).await;
    assert!(!allowed.is_error, "unattended = allow runs it: {allowed:?}");
    assert_eq!(approval_event(&events)["approved"], true);
    let (echo, events) = call_with(&named, None, "legacy_echo", json!({ "text": "x" })).await;
    assert!(!echo.is_error);
    assert_eq!(approval_event(&events), Value::Null, "echo is not named");
}

#[test]
fn a_bad_approval_section_names_the_key() {
    let ws = workspace("[approval]\ntools = [\"bad glob!\"]\n");
    let run = ws.cordon(&["list"]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("approval.tools"), "{}", run.stderr);
}

#[test]
fn the_cli_without_a_terminal_denies_and_with_yes_approves_and_the_audit_log_says_who() {
    let ws = workspace("[plugins.v2]\nhook = true\n[audit]\npath = \"audit.jsonl\"\n");
    let arguments = r#"{"text": "x", "ask": "it reads private notes"}"#;
    let denied = ws.cordon(&["call", "word_stats", arguments]);
    assert_eq!(denied.code, 1, "{}", denied.stderr);
    assert!(
        denied.stdout.starts_with("[not_approved]") && denied.stdout.contains("--yes"),
        "{}",
        denied.stdout
    );
    let approved = ws.cordon(&["call", "word_stats", arguments, "--yes"]);
    assert_eq!(approved.code, 0, "{} {}", approved.stdout, approved.stderr);
    let audit = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{audit}");
    assert_eq!(lines[0]["approval"]["decidedBy"], "default");
    assert_eq!(lines[0]["approval"]["approved"], false);
    assert_eq!(lines[0]["errorKind"], "not_approved");
    assert_eq!(lines[1]["approval"]["decidedBy"], "--yes");
    assert_eq!(
        lines[1]["approval"]["askedBy"][0]["reason"],
        "it reads private notes"
    );
}
