//! The JavaScript SDK (componentize-js), through the bundled `json_query` plugin and a JS fixture:
//! a tool reading a granted file, invalid arguments caught by the host, a thrown error as
//! `tool_error` with its name and message, the call context (settings, progress, signal), and a
//! hook written in JavaScript blocking, rewriting and replacing. Both components are built by
//! `cordon build` in `make test`.

use crate::support::{Workspace, kind, text};

const BOOKS: &str = r#"{"books": [
  {"title": "Dune", "price": 9.99, "tags": ["sf"]},
  {"title": "Emma", "price": 7.5},
  {"title": "Neuromancer", "price": 12.0, "tags": ["sf", "cyberpunk"]}
]}"#;

#[test]
fn a_javascript_tool_works_like_any_other() {
    let ws = Workspace::new()
        .plugin("json_query", "json_query")
        .file("data/books.json", BOOKS)
        .file("data/broken.json", "{\"books\": [")
        .file("secret.json", r#"{"key": "hunter2"}"#)
        .config("[plugins.json_query]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n");

    let spec = ws.cordon(&["describe", "json_query", "--json"]).json();
    assert_eq!(spec["parameters"]["required"], serde_json::json!(["query"]));

    let cheap = ws.call(
        "json_query",
        r#"{"query": "$.books[?(@.price < 10)].title", "path": "/data/books.json"}"#,
    );
    assert_eq!(
        text(&cheap),
        "$.books[0].title = \"Dune\"\n$.books[1].title = \"Emma\"",
        "{cheap}"
    );
    assert_eq!(cheap["details"]["matches"], 2);

    let relative = ws.call(
        "json_query",
        r#"{"query": "$..tags[*]", "path": "books.json", "limit": 2}"#,
    );
    assert_eq!(
        text(&relative),
        "$.books[0].tags[0] = \"sf\"\n$.books[2].tags[0] = \"sf\"\n[2 of 3 matches shown; raise limit to see more]"
    );

    let inline = ws.call(
        "json_query",
        r#"{"query": "$.a[-1]", "document": {"a": [1, 2, {"b": true}]}}"#,
    );
    assert_eq!(text(&inline), "$.a[2] = {\"b\":true}");
    let as_text = ws.call(
        "json_query",
        r#"{"query": "$.a[0:2]", "document": "{\"a\": [1, 2, 3]}"}"#,
    );
    assert_eq!(text(&as_text), "$.a[0] = 1\n$.a[1] = 2");

    for bad in [
        r#"{"path": "/data/books.json"}"#,
        r#"{"query": "$", "document": 1, "limit": -1}"#,
        r#"{"query": "$", "document": 1, "colour": "red"}"#,
    ] {
        let rejected = ws.call("json_query", bad);
        assert_eq!(kind(&rejected), "invalid_arguments", "{bad}: {rejected}");
    }

    let bad_query = ws.call("json_query", r#"{"query": "books", "document": {}}"#);
    assert_eq!(kind(&bad_query), "tool_error");
    assert!(
        text(&bad_query).starts_with("PathError: a query starts with $"),
        "{bad_query}"
    );
    assert_eq!(bad_query["details"]["exception"], "PathError");

    let broken = ws.call(
        "json_query",
        r#"{"query": "$", "path": "/data/broken.json"}"#,
    );
    assert_eq!(kind(&broken), "tool_error");
    assert!(
        text(&broken).contains("/data/broken.json is not valid JSON"),
        "{broken}"
    );
    let missing = ws.call("json_query", r#"{"query": "$", "path": "/data/nope.json"}"#);
    assert_eq!(text(&missing), "\"/data/nope.json\" does not exist");

    let secret = ws.path().join("secret.json");
    for path in [
        "/data/../secret.json",
        secret.to_str().unwrap(),
        "/etc/passwd",
    ] {
        let escape = ws.call(
            "json_query",
            &format!(r#"{{"query": "$", "path": "{path}"}}"#),
        );
        assert_eq!(kind(&escape), "capability_denied", "{path}: {escape}");
        assert!(!text(&escape).contains("hunter2"), "{escape}");
    }
}

#[test]
fn hooks_and_tool_context_written_in_javascript() {
    let ws = crate::support::probe()
        .plugin("fixture_js_hook", "js_hook")
        .config("[plugins.js_hook]\nhook = true\nsettings = { greeting = \"hi\" }\n");
    crate::support::assert_echo_hook_blocks(&ws, "the JavaScript hook does not allow that word");
    assert_eq!(
        text(&ws.call("echo", r#"{"text": "shout hi"}"#)),
        "SHOUT HI [seen by javascript]"
    );
    assert_eq!(
        text(&ws.call("counter", "{}")),
        "1",
        "other tools are not watched"
    );
    let asked = ws.call("echo", r#"{"text": "ask first"}"#);
    assert_eq!(kind(&asked), "not_approved", "{asked}");
    assert!(
        text(&asked).contains("the JavaScript hook wants a person to see this"),
        "{asked}"
    );
    let approved = ws.cordon(&["call", "echo", r#"{"text": "ask first"}"#, "--yes"]);
    assert_eq!(approved.stdout.trim(), "ask first [seen by javascript]");

    let run = ws.cordon(&[
        "call",
        "js_context",
        "{}",
        "--json",
        "--events",
        "--id",
        "c-7",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = run.json();
    assert_eq!(text(&result), "call c-7, aborted: false");
    assert_eq!(result["details"]["settings"]["greeting"], "hi");
    let update = run
        .stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["type"] == "tool_execution_update")
        .unwrap_or_else(|| panic!("no progress event: {}", run.stderr));
    assert_eq!(update["content"][0]["text"], "halfway");
    assert_eq!(update["details"]["step"], 1);

    let failed = ws.call("js_context", r#"{"fail": true}"#);
    assert_eq!(kind(&failed), "tool_error");
    assert_eq!(text(&failed), "TypeError: asked to fail");
    assert_eq!(failed["details"]["exception"], "TypeError");
}

#[test]
fn the_json_query_plugins_own_tests_pass_in_node() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ran = std::process::Command::new("node")
        .args(["--test", "plugins/json_query/test_path.js"])
        .current_dir(&root)
        .output()
        .expect("node (Node.js 20) runs the JavaScript tests");
    assert!(
        ran.status.success(),
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

/// A local HTTP server answering every request with `body`; counts the connections it accepts.
fn serve_once_per_connection(
    body: &'static str,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

#[test]
fn fetch_works_for_granted_origins_only() {
    let (port, seen) = serve_once_per_connection("hello from a test server");
    let ws = Workspace::new()
        .plugin("fixture_js_hook", "js_hook")
        .config(&format!(
            "[plugins.js_hook]\nhttp = [{{ origin = \"http://127.0.0.1:{port}\", path_prefix = \"/x\" }}]\n"
        ));
    let granted = ws.call(
        "js_fetch",
        &format!(r#"{{"url": "http://127.0.0.1:{port}/x"}}"#),
    );
    assert_eq!(text(&granted), "200: hello from a test server", "{granted}");
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);

    let (other_port, other_seen) = serve_once_per_connection("must not be reached");
    let refused = ws.call(
        "js_fetch",
        &format!(r#"{{"url": "http://127.0.0.1:{other_port}/x"}}"#),
    );
    // The host refused it, so the call failed for want of a grant, and says which rule.
    assert_eq!(kind(&refused), "capability_denied", "{refused}");
    assert!(
        text(&refused).contains(&format!(
            "The host refused it an HTTP request to http://127.0.0.1:{other_port}: no grant covers its origin (granted: http://127.0.0.1:{port} (under /x))"
        )),
        "{refused}"
    );
    assert_eq!(
        other_seen.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "refused before connecting"
    );
    // The granted origin, outside its path prefix: the prefix is named.
    let outside = ws.call(
        "js_fetch",
        &format!(r#"{{"url": "http://127.0.0.1:{port}/y"}}"#),
    );
    assert_eq!(kind(&outside), "capability_denied", "{outside}");
    assert!(
        text(&outside).contains(&format!(
            "its path /y is under no granted path prefix of http://127.0.0.1:{port} (granted there: http://127.0.0.1:{port} (under /x))"
        )),
        "{outside}"
    );
    assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn a_javascript_tool_declares_contract_0_2_features_in_mcps_terms() {
    let ws = Workspace::new().plugin("fixture_echo_js", "js");
    crate::support::assert_declares_word_stats(&ws, "js_stats");
}
