//! Host resources under attack (security audit items 7, 8, 9 and 11): what a plugin makes the
//! host record is bounded per sandbox (count, and bytes per path or URL), its schema cannot make
//! validation take exponential time, its memory limit holds across all its memories, and two calls
//! of a batch never share an identity.

use crate::support::{Workspace, call, kind, run_with_events, text};
use cordon_runtime::pipeline::CallRequest;
use tokio_util::sync::CancellationToken;

fn attacker(config: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_attacker", "attacker")
        .file("data/.keep", "")
        .config(&format!(
            "[plugins.attacker]\ndirs = [{{ host = \"data\", guest = \"/data\" }}]\n{config}"
        ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_requests_with_long_paths_cost_a_bounded_record() {
    let ws = attacker("limits = { timeout = \"60s\" }\n");
    let pipeline = ws.pipeline().await;
    let args = r#"{"authority": "127.0.0.1:9", "count": 3000, "path_bytes": 60000}"#;
    let (results, events) = run_with_events(
        &pipeline,
        vec![CallRequest::new("c", "http_refused", args)],
        CancellationToken::new(),
    )
    .await;
    assert_eq!(results[0].text(), "refused 3000");
    let urls: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            cordon_runtime::Event::HttpRequest { url, .. } => Some(url.len()),
            _ => None,
        })
        .collect();
    assert_eq!(
        urls.len(),
        1_000,
        "at most 1,000 requests are recorded per sandbox"
    );
    assert!(
        urls.iter().all(|len| *len < 1_100),
        "each URL is cut past 1 KiB"
    );
    let omitted = events.iter().find_map(|e| match e {
        cordon_runtime::Event::RecordsOmitted { omitted, .. } => Some(omitted.http),
        _ => None,
    });
    assert_eq!(omitted, Some(2_000));
}

#[test]
fn the_audit_line_and_stderr_stay_small_under_a_flood() {
    let ws = attacker("limits = { timeout = \"60s\" }\n[audit]\npath = \"audit.jsonl\"\n");
    let run = ws.cordon(&[
        "call",
        "http_refused",
        r#"{"authority": "127.0.0.1:9", "count": 3000, "path_bytes": 60000}"#,
    ]);
    assert_eq!(run.stdout.trim(), "refused 3000", "{}", run.stderr);
    assert!(
        run.stderr.len() < 20_000,
        "stderr grew to {} bytes",
        run.stderr.len()
    );
    assert!(
        run.stderr
            .contains("more warnings about this call were not logged"),
        "{}",
        run.stderr
    );
    let run = ws.cordon(&[
        "call",
        "open_flood",
        r#"{"count": 2000, "path_bytes": 1048576}"#,
    ]);
    assert_eq!(run.stdout.trim(), "failed 2000", "{}", run.stderr);
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    for line in log.lines() {
        assert!(
            line.len() < 2_500_000,
            "an audit line of {} bytes",
            line.len()
        );
    }
    let opens: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        opens["capabilities"]["pathsOpened"]
            .as_array()
            .unwrap()
            .len(),
        1_000
    );
    assert_eq!(opens["capabilities"]["pathsOpenedOmitted"], 1_000);
    let requests: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(requests["capabilities"]["httpOmitted"], 2_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cannot_exhaust_the_hosts_file_descriptors() {
    let ws = attacker("[host]\nmax_open_files = 300\n").file("data/f.txt", "x");
    let pipeline = ws.pipeline().await;
    let args = r#"{"path": "/data/f.txt", "count": 2000}"#;
    let one = call(&pipeline, "hold_files", args).await;
    assert_eq!(one.details["held"], 256, "{one:?}");
    assert!(
        one.details["firstError"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("quota"),
        "{one:?}"
    );
    let holding = r#"{"path": "/data/f.txt", "count": 2000, "hold_ms": 500}"#;
    let calls = (0..3)
        .map(|i| CallRequest::new(format!("c{i}"), "hold_files", holding))
        .collect();
    let results = pipeline.run(calls, &Default::default()).await;
    let held: u64 = results
        .iter()
        .map(|r| r.details["held"].as_u64().unwrap())
        .sum();
    assert!(
        held <= 300,
        "{held} files held at once across the calls: {results:?}"
    );
    // Every file was given back when its call ended: a new call gets its full share again.
    let again = call(&pipeline, "hold_files", args).await;
    assert_eq!(again.details["held"], 256, "{again:?}");
}

#[tokio::test]
async fn host_objects_a_plugin_keeps_count_against_its_memory_limit() {
    let mut ws = attacker("limits = { memory = \"16MiB\" }\n");
    for i in 0..2_000 {
        ws = ws.file(&format!("data/entry_with_a_long_name_{i:05}.txt"), "");
    }
    let pipeline = ws.pipeline().await;
    for (kind, bytes, count) in [
        ("requests", 65_000, 9_900),
        ("headers", 30_000, 9_900),
        ("bodies", 0, 9_900),
        ("written_bodies", 65_536, 9_900),
        ("listings", 0, 5_000),
    ] {
        let args = serde_json::json!({ "kind": kind, "count": count, "bytes": bytes }).to_string();
        let result = call(&pipeline, "hoard", &args).await;
        assert_eq!(
            result.error_kind,
            Some(cordon_runtime::ErrorKind::OutOfMemory),
            "{kind}: {result:?}"
        );
    }
    let small = call(
        &pipeline,
        "hoard",
        r#"{"kind": "requests", "count": 100, "bytes": 100}"#,
    )
    .await;
    assert_eq!(
        small.text(),
        "held 100",
        "ordinary use still fits: {small:?}"
    );
}

#[test]
fn a_schema_pattern_that_needs_backtracking_is_refused_at_load() {
    let ws = crate::support::probe().plugin("fixture_redos_schema", "redos");
    let reason = crate::loading::rejection(&ws, "redos.wasm");
    assert!(
        reason.contains("tool \"redos\"") && reason.contains("linear-time regex engine"),
        "{reason}"
    );
    assert_eq!(
        text(&ws.call("echo", r#"{"text": "still serving"}"#)),
        "still serving"
    );
}

#[test]
fn a_schema_whose_checks_multiply_with_nesting_is_refused_at_load() {
    let ws = crate::support::probe().plugin("fixture_costly_schema", "costly");
    let reason = crate::loading::rejection(&ws, "costly.wasm");
    assert!(
        reason.contains("too costly to check") && reason.contains("/$defs/n"),
        "{reason}"
    );
}

#[test]
fn arguments_nested_past_the_limit_are_invalid() {
    let ws = crate::support::probe();
    let nested = format!("{}1{}", "[".repeat(70), "]".repeat(70));
    let result = ws.call("echo", &format!(r#"{{"text": "x", "extra": {nested}}}"#));
    assert_eq!(
        crate::support::kind(&result),
        "invalid_arguments",
        "{result}"
    );
    assert!(text(&result).contains("nest 71 levels deep"), "{result}");
}

#[tokio::test]
async fn large_arguments_are_validated_off_the_async_workers_and_still_checked() {
    let ws = crate::support::probe();
    let pipeline = ws.pipeline().await;
    let big = "y".repeat(200_000);
    let result = call(
        &pipeline,
        "echo",
        &serde_json::json!({ "text": big, "times": 0 }).to_string(),
    )
    .await;
    assert_eq!(
        result.error_kind,
        Some(cordon_runtime::ErrorKind::InvalidArguments),
        "{result:?}"
    );
    assert!(
        result.text().contains("/times"),
        "{}",
        &result.text()[..200]
    );
    let fine = call(
        &pipeline,
        "echo",
        &serde_json::json!({ "text": big }).to_string(),
    )
    .await;
    assert!(!fine.is_error);
}

#[tokio::test]
async fn arguments_too_costly_for_a_schemas_patterns_are_refused_unchecked() {
    let pipeline = attacker("").pipeline().await;
    let text_of = |bytes: usize| {
        let s: String = (0..bytes)
            .map(|i| if i % 3 == 0 { 'a' } else { 'b' })
            .collect();
        serde_json::json!({ "s": s }).to_string()
    };
    let large = call(&pipeline, "slow_pattern", &text_of(200_000)).await;
    assert_eq!(
        large.error_kind,
        Some(cordon_runtime::ErrorKind::InvalidArguments),
        "{large:?}"
    );
    let most = large.details["maxArgumentBytes"].as_u64().unwrap();
    assert!(most < 200_000, "{large:?}");
    assert!(
        large.text().contains(&format!("at most {most} bytes")),
        "{large:?}"
    );
    // Well within the bound, and small enough to be checked inside the validation time limit even
    // on a loaded machine.
    let small = call(&pipeline, "slow_pattern", &text_of(2_000)).await;
    assert_eq!(
        small.error_kind,
        Some(cordon_runtime::ErrorKind::InvalidArguments),
        "checked, and the pattern does not match: {small:?}"
    );
    assert!(small.text().contains("/s"), "{small:?}");
}

/// A `required` list of 10,000 names over items sent as `{}`: every item breaks it 10,000 times.
/// Only the first violation is built (listing them all took seconds and GBs), and the list's
/// length counts in the work bound.
#[tokio::test]
async fn a_long_required_list_costs_its_length_and_lists_only_the_first_violation() {
    let pipeline = attacker("").pipeline().await;
    let items = |count: usize| {
        let xs: Vec<serde_json::Value> = (0..count).map(|_| serde_json::json!({})).collect();
        serde_json::json!({ "xs": xs }).to_string()
    };
    for count in [300, 7_000] {
        let started = std::time::Instant::now();
        let result = call(&pipeline, "many_required", &items(count)).await;
        assert_eq!(
            result.error_kind,
            Some(cordon_runtime::ErrorKind::InvalidArguments),
            "{result:?}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{count} items took {:?}",
            started.elapsed()
        );
        assert!(
            result.text().contains("k0")
                && result.text().contains("further violations are not listed"),
            "{result:?}"
        );
    }
    let huge = call(&pipeline, "many_required", &items(100_000)).await;
    assert!(
        huge.text().contains("at most"),
        "refused unchecked: {huge:?}"
    );
    let valid = call(&pipeline, "many_required", r#"{"xs": []}"#).await;
    assert_eq!(valid.text(), "ran", "{valid:?}");
}

/// tests/fixtures_wat/memory_spread.wat: eight memories, each grown until refused.
fn memory_spread_component() -> Vec<u8> {
    wat::parse_str(include_str!("../../fixtures_wat/memory_spread.wat"))
        .expect("tests/fixtures_wat/memory_spread.wat assembles")
}

#[tokio::test]
async fn the_memory_limit_holds_across_all_of_a_plugins_memories() {
    let ws = Workspace::new()
        .raw_plugin("spread", &memory_spread_component())
        .config("[plugins.spread]\nlimits = { memory = \"64MiB\", timeout = \"10s\" }\n");
    let pipeline = ws.pipeline().await;
    let rejected = pipeline.registry().rejected();
    assert!(rejected.is_empty(), "{rejected:?}");
    let result = call(&pipeline, "memory_spread", "{}").await;
    let pages: u64 = result
        .text()
        .parse()
        .unwrap_or_else(|_| panic!("{result:?}"));
    // 64 MiB is 1,024 pages; the main memory started with one.
    assert!(pages <= 1_023, "it grew {pages} pages across its memories");
    assert!(pages >= 1_000, "it could use its limit: {pages}");
    assert_eq!(call(&pipeline, "ping", "{}").await.text(), "pong");
}

#[test]
fn duplicate_call_ids_are_a_usage_error_in_a_batch_file() {
    let ws = crate::support::probe();
    let run = ws.cordon_stdin(
        &["batch"],
        r#"[{"id": "a", "name": "echo", "arguments": {"text": "1"}}, {"id": "a", "name": "echo", "arguments": {"text": "2"}}]"#,
    );
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("calls #1 and #2 have the same id \"a\""),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_duplicate_call_id_in_a_batch_is_not_run_and_keeps_its_own_record() {
    let ws = crate::support::probe().config("[audit]\npath = \"audit.jsonl\"\n");
    // The builder opens the audit log that cordon.toml names.
    let pipeline = ws.pipeline().await;
    let calls = vec![
        CallRequest::new("same", "echo", r#"{"text": "first"}"#),
        CallRequest::new("same", "echo", r#"{"text": "second"}"#),
    ];
    let results = pipeline.run(calls, &Default::default()).await;
    assert_eq!(results[0].text(), "first");
    assert_eq!(
        results[1].error_kind,
        Some(cordon_runtime::ErrorKind::InvalidArguments)
    );
    assert!(
        results[1].text().contains("already has the id \"same\""),
        "{:?}",
        results[1]
    );
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let ids: Vec<String> = log
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["callId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(
        ids.contains(&"same".to_string()) && ids.contains(&"same#2".to_string()),
        "{ids:?}"
    );

    // A model that names a real call the way duplicates are named cannot merge two records.
    std::fs::write(ws.path().join("audit.jsonl"), "").unwrap();
    let calls = vec![
        CallRequest::new("x#3", "echo", r#"{"text": "real"}"#),
        CallRequest::new("x", "echo", r#"{"text": "one"}"#),
        CallRequest::new("x", "echo", r#"{"text": "two"}"#),
    ];
    let results = pipeline.run(calls, &Default::default()).await;
    assert_eq!(results[0].text(), "real");
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let mut ids: Vec<String> = log
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["callId"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, ["x", "x#3", "x#3.1"], "{log}");
}

#[test]
fn the_output_limit_message_says_what_was_spent_on_what() {
    let ws = attacker("limits = { output = \"16KiB\" }\n");
    let result = ws.call(
        "log_then_return",
        r#"{"log_bytes": 10000, "result_bytes": 8000}"#,
    );
    assert_eq!(kind(&result), "tool_error", "{result}");
    let message = text(&result);
    assert!(
        message.contains("a result of 8016 bytes after 10064 bytes of log and progress messages")
            && message.contains("output limit of 16 KiB"),
        "{message}"
    );
}

/// Makes a FIFO at `path` with the system's `mkfifo`.
fn make_fifo(path: &std::path::Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The FIFO check is made on what was opened, not on a lookup before it: a plugin swapping a FIFO
/// and a file under one name while another call opens that name cannot make the open wait for
/// the FIFO's writer (which no timeout could interrupt).
#[test]
fn a_fifo_swapped_in_under_a_name_being_opened_never_blocks_the_open() {
    let ws = Workspace::new()
        .plugin("fixture_attacker", "attacker")
        .file("race/reg", "plain\n")
        // The race links names by the thousand: each link counts as an entry created and as
        // a block written, so on a fast machine it outruns both default budgets.
        .config("[plugins.attacker]\ndirs = [{ host = \"race\", guest = \"/race\", mode = \"rw\" }]\nlimits = { timeout = \"10s\", files_created = 100000000, disk_write = \"64GiB\" }\n");
    make_fifo(&ws.path().join("race/fifo"));
    std::fs::write(
        ws.path().join("batch.json"),
        r#"[{"id": "swap", "name": "fifo_swap", "arguments": {"millis": 1500}},
            {"id": "open", "name": "fifo_open", "arguments": {"millis": 1500}}]"#,
    )
    .unwrap();
    let mut child = ws
        .cordon_command(&["batch", "batch.json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the batch hung: an open waited on the FIFO");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed.contains("swapped") && printed.contains("opened"),
        "both calls ended with their own results: {printed}"
    );
}

#[test]
fn a_fifo_in_a_granted_directory_is_refused_instead_of_blocking_a_host_thread() {
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .file("data/ok.txt", "fine\n")
        .config("[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\" }]\nlimits = { timeout = \"5s\" }\n");
    make_fifo(&ws.path().join("data/pipe"));
    let started = std::time::Instant::now();
    let result = ws.call("read_file", r#"{"path": "/data/pipe"}"#);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "it blocked"
    );
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(
        text(&ws.call("read_file", r#"{"path": "/data/ok.txt"}"#)),
        "fine\n"
    );
}
