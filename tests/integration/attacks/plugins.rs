//! Hostile plugins: each case tries one way out of the sandbox or one way to take the host down,
//! and asserts the classified outcome (named in the test name), that the host is alive, and that
//! the next call to the same plugin works. SECURITY.md lists every case of the suite with its test;
//! the others live in fs_tools.rs (escapes through the fs plugin), sandbox.rs (loops, memory and
//! fuel bombs, blocked host calls, stdio floods, env), network.rs (sockets, DNS, ungranted HTTP),
//! hooks.rs (hooks that trap or never return) and loading.rs / cache.rs (truncated components,
//! other worlds, tampered cache entries).

use crate::support::{Workspace, call};
use cordon_runtime::{ErrorKind, Pipeline, ToolResult};

const GRANTS: &str = r#"
[plugins.hostile]
dirs = [{ host = "data", guest = "/data", mode = "ro" }, { host = "work", guest = "/work", mode = "rw" }]
limits = { timeout = "500ms", memory = "64MiB" }
"#;

fn workspace() -> Workspace {
    Workspace::new()
        .plugin("fixture_hostile", "hostile")
        .file("data/file.txt", "read-only content")
        .file("work/.keep", "")
        .file("secret.txt", "HOST SECRET")
        .config(GRANTS)
}

/// The host is alive and the plugin still works after whatever happened.
async fn still_works(pipeline: &Pipeline) {
    let result = call(pipeline, "ambient", "{}").await;
    assert!(!result.is_error, "the next call failed: {result:?}");
}

async fn fs(pipeline: &Pipeline, op: &str, path: &str, other: &str) -> ToolResult {
    let args = serde_json::json!({ "op": op, "path": path, "other": other }).to_string();
    call(pipeline, "fs_probe", &args).await
}

fn assert_refused(result: &ToolResult, what: &str) {
    assert!(result.is_error, "{what} should fail: {result:?}");
    assert!(
        !result.text().contains("HOST SECRET") && !result.text().contains("root:"),
        "{what} leaked: {result:?}"
    );
}

#[tokio::test]
async fn path_escapes_are_refused_traversal_absolute_double_slash_and_trailing_slash() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let host_secret = ws.path().join("secret.txt");
    for path in [
        "/data/../secret.txt",
        "/data/../../etc/passwd",
        host_secret.to_str().unwrap(),
        "//etc/passwd",
        "/data//../secret.txt",
        "/work/../secret.txt/",
        "/etc/passwd",
        "/proc/self/status",
        "/proc/self/environ",
        "/dev/zero",
        "/dev/null",
    ] {
        assert_refused(&fs(&pipeline, "read", path, "").await, path);
    }
    assert_eq!(
        fs(&pipeline, "read", "/data//file.txt", "").await.text(),
        "read-only content",
        "a doubled slash inside a grant still works"
    );
    still_works(&pipeline).await;
}

#[tokio::test]
async fn symlinks_made_by_the_guest_cannot_leave_the_grant_absolute_relative_loop_dangling() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    for (link, target) in [
        ("/work/etc", "/etc"),
        ("/work/up", "../.."),
        ("/work/loop", "loop"),
        ("/work/dangling", "no-such-file"),
    ] {
        // Creating the link may itself be refused; either way, following it must not escape.
        let _ = fs(&pipeline, "symlink", link, target).await;
        assert_refused(
            &fs(&pipeline, "read", &format!("{link}/passwd"), "").await,
            link,
        );
        assert_refused(
            &fs(&pipeline, "read", &format!("{link}/secret.txt"), "").await,
            link,
        );
        assert_refused(&fs(&pipeline, "read", link, "").await, link);
    }
    still_works(&pipeline).await;
}

#[tokio::test]
async fn a_read_only_grant_cannot_be_truncated_linked_or_moved_out_of() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let truncate = fs(&pipeline, "truncate", "/data/file.txt", "").await;
    assert_eq!(
        truncate.error_kind,
        Some(ErrorKind::CapabilityDenied),
        "{truncate:?}"
    );
    assert_refused(
        &fs(&pipeline, "hardlink", "/work/linked.txt", "/data/file.txt").await,
        "hard link out of ro",
    );
    assert_refused(
        &fs(&pipeline, "rename", "/work/moved.txt", "/data/file.txt").await,
        "rename out of ro",
    );
    assert_refused(
        &fs(&pipeline, "write", "/data/new.txt", "x").await,
        "write into ro",
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("data/file.txt")).unwrap(),
        "read-only content"
    );
    assert!(!ws.path().join("work/moved.txt").exists() && !ws.path().join("data/new.txt").exists());
    still_works(&pipeline).await;
}

#[tokio::test]
async fn nothing_ambient_no_env_no_args_and_stdin_is_empty() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let ambient = call(&pipeline, "ambient", "{}").await;
    assert_eq!(ambient.details["env"], serde_json::json!([]));
    assert_eq!(ambient.details["args"], serde_json::json!([]));
    let stdin = call(&pipeline, "read_stdin", "{}").await;
    assert_eq!(
        stdin.text(),
        "read 0 bytes",
        "stdin is closed, not the host's: {stdin:?}"
    );
}

#[tokio::test]
async fn memory_grow_until_refused_stays_within_the_limit() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let grown = call(&pipeline, "grow_bomb", "{}").await;
    let pages: u64 = grown
        .text()
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a page count");
    assert!(
        pages * 65536 <= 64 << 20,
        "grew to {} bytes past a 64 MiB limit",
        pages * 65536
    );
    still_works(&pipeline).await;
}

#[tokio::test]
async fn deep_recursion_is_a_trap() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "recurse", "{}").await;
    // Rust keeps its stack in linear memory: overflowing it is an out-of-bounds trap.
    assert_eq!(result.error_kind, Some(ErrorKind::Trap), "{result:?}");
    still_works(&pipeline).await;
}

#[tokio::test]
async fn a_one_gib_result_is_out_of_memory() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "huge_result", r#"{"bytes": 1073741824}"#).await;
    assert_eq!(
        result.error_kind,
        Some(ErrorKind::OutOfMemory),
        "{result:?}"
    );
    still_works(&pipeline).await;
}

#[tokio::test]
async fn absurd_random_bytes_requests_are_a_trap_and_small_ones_work() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "random_bomb", r#"{"bytes": 1099511627776}"#).await;
    assert_eq!(result.error_kind, Some(ErrorKind::Trap), "{result:?}");
    let fine = call(&pipeline, "random_bomb", r#"{"bytes": 32}"#).await;
    assert_eq!(fine.text(), "got 32 bytes");
}

#[tokio::test]
async fn a_flood_of_resource_handles_is_a_trap_at_the_per_call_handle_limit() {
    // A generous time limit, so the flood reaches the handle limit however slow the machine is.
    let ws = workspace().config(&GRANTS.replace("timeout = \"500ms\"", "timeout = \"20s\""));
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "handle_flood", "{}").await;
    assert_eq!(result.error_kind, Some(ErrorKind::Trap), "{result:?}");
    assert!(
        result
            .text()
            .contains("held more handles at once than one call may"),
        "{}",
        result.text()
    );
    assert_eq!(result.details["handle_limit"], true, "{result:?}");
    still_works(&pipeline).await;
}

#[tokio::test]
async fn invalid_utf8_and_lying_list_lengths_across_the_wit_boundary_are_traps() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    for tool in ["invalid_utf8", "bogus_list"] {
        let result = call(&pipeline, tool, "{}").await;
        assert_eq!(
            result.error_kind,
            Some(ErrorKind::Trap),
            "{tool}: {result:?}"
        );
        still_works(&pipeline).await;
    }
}

#[tokio::test]
async fn exit_from_the_guest_is_a_trap_result_not_a_host_exit() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "exit", r#"{"code": 3}"#).await;
    assert_eq!(result.error_kind, Some(ErrorKind::Trap), "{result:?}");
    // WASI 0.2's exit carries only success or failure, so any non-zero code arrives as 1.
    assert!(
        result.text().contains("exited with status 1"),
        "{}",
        result.text()
    );
    still_works(&pipeline).await;
}

#[tokio::test]
async fn a_secret_left_in_memory_is_gone_for_the_next_call_in_the_same_pool_slot() {
    let ws = workspace();
    let pipeline = ws.pipeline().await;
    for round in 0..3 {
        assert_eq!(
            call(&pipeline, "write_secret", "{}").await.text(),
            "written"
        );
        let scan = call(&pipeline, "scan_memory", "{}").await;
        assert!(
            scan.text().starts_with("0 copies"),
            "round {round}: {}",
            scan.text()
        );
    }
}

/// Resident memory of this process, from /proc.
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kb| kb * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_calls_queue_and_each_gets_one_result() {
    // Sixteen sandboxes at most: the other 984 calls queue.
    let ws = Workspace::new()
        .plugin("fixture_probe", "probe")
        .config("[host]\nmax_sandboxes = 16\n");
    let pipeline = ws.pipeline().await;
    call(&pipeline, "echo", r#"{"text": "warm"}"#).await;
    let before = rss_bytes();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..1000 {
        let pipeline = pipeline.clone();
        tasks.spawn(async move {
            (
                i,
                call(&pipeline, "echo", &format!(r#"{{"text": "{i}"}}"#)).await,
            )
        });
    }
    let mut results = vec![None; 1000];
    while let Some(joined) = tasks.join_next().await {
        let (i, result) = joined.expect("call task");
        assert!(results[i].is_none(), "call {i} got two results");
        results[i] = Some(result.text());
    }
    for (i, text) in results.iter().enumerate() {
        assert_eq!(text.as_deref(), Some(i.to_string().as_str()));
    }
    let grown = rss_bytes().saturating_sub(before);
    assert!(
        grown < 512 << 20,
        "host memory grew by {} MiB for 1,000 queued calls",
        grown >> 20
    );
}

/// The hand-written component of tests/fixtures_wat/table_bomb.wat (no language we build emits
/// `table.grow`), assembled here; `table` replaces its table declaration when given.
fn table_bomb_component(table: Option<&str>) -> Vec<u8> {
    let mut text = include_str!("../../fixtures_wat/table_bomb.wat").to_string();
    if let Some(table) = table {
        let declaration = "(table $table 1 funcref)";
        assert!(text.contains(declaration), "table_bomb.wat changed");
        text = text.replace(declaration, table);
    }
    wat::parse_str(&text).expect("tests/fixtures_wat/table_bomb.wat assembles")
}

#[tokio::test]
async fn a_table_grow_bomb_is_out_of_memory_and_the_next_call_works() {
    let ws = Workspace::new()
        .raw_plugin("tables", &table_bomb_component(None))
        .config("[plugins.tables]\nlimits = { timeout = \"5s\" }\n");
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "table_bomb", "{}").await;
    // Unbounded, the loop would run into the time limit instead.
    assert_eq!(
        result.error_kind,
        Some(ErrorKind::OutOfMemory),
        "{result:?}"
    );
    assert_eq!(
        result.details["limitTableElements"],
        cordon_runtime::capabilities::limits::MAX_TABLE_ELEMENTS
    );
    assert!(result.text().contains("grow a table"), "{}", result.text());
    assert_eq!(call(&pipeline, "ping", "{}").await.text(), "pong");
}

#[test]
fn a_component_declaring_a_huge_initial_table_is_refused_at_load_and_the_others_load() {
    let ws = crate::support::probe().raw_plugin(
        "tables",
        &table_bomb_component(Some("(table $table 50000000 funcref)")),
    );
    let reason = crate::loading::rejection(&ws, "tables.wasm");
    // The pooling allocator refuses it when it is compiled, before anything runs.
    assert!(
        reason.contains("minimum element size of 50000000 which exceeds the limit of 100000"),
        "{reason}"
    );
    assert_eq!(
        crate::support::text(&ws.call("echo", r#"{"text": "ok"}"#)),
        "ok"
    );
}
