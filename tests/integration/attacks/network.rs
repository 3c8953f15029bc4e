//! Outbound HTTP under attack (security audit items 5 and 6): a path grant cannot be left with `..`
//! or encodings a server would resolve, matches whole segments, never sends TRACE; a call cannot
//! hold more connections open than its limit, nor the process more than its own.

use crate::support::{Workspace, kind, text};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server that records every request line it receives and reflects TRACE like a careless server.
async fn recorder() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
        let log = log.clone();
        async move {
            let line = format!("{} {}", request.method(), request.uri());
            log.lock().unwrap().push(line.clone());
            let secret = request
                .headers()
                .get("authorization")
                .map(|v| v.to_str().unwrap_or_default().to_string())
                .unwrap_or_default();
            format!("{line} {secret}")
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (address, seen)
}

async fn call(ws: &Arc<Workspace>, tool: &'static str, args: String) -> serde_json::Value {
    let ws = ws.clone();
    tokio::task::spawn_blocking(move || ws.call(tool, &args))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_prefix_cannot_be_left_with_dot_segments_encodings_or_a_longer_name() {
    let (server, seen) = recorder().await;
    let ws = Arc::new(
        Workspace::new()
            .plugin("fixture_attacker", "attacker")
            .config(&format!(
                "[plugins.attacker]\nhttp = [{{ origin = \"http://{server}\", path_prefix = \"/public/\", headers = {{ Authorization = \"Bearer s3cret\" }} }}]\n"
            )),
    );
    let send = |method: &str, path: &str| {
        serde_json::json!({ "method": method, "url": format!("http://{server}{path}") }).to_string()
    };
    let granted = call(&ws, "http_send", send("GET", "/public/page")).await;
    assert!(
        // The origin reflects the header the host added; the result shows it masked.
        text(&granted).starts_with("200: GET /public/page [REDACTED:secret]"),
        "{granted}"
    );
    for path in [
        "/public/../admin",
        "/public/%2e%2e/admin",
        "/public/%2E%2e/admin",
        "/public/.%2e/admin",
        "/public/..;/admin",
        "/public/..%2fadmin",
        "/public/%252e%252e/admin",
        "/public/a%5c..%5cadmin",
        "/publicity",
        "/public-admin/x",
    ] {
        let refused = call(&ws, "http_send", send("GET", path)).await;
        assert_eq!(kind(&refused), "capability_denied", "{path}: {refused}");
    }
    for method in ["TRACE", "TRACK", "CONNECT"] {
        let refused = call(&ws, "http_send", send(method, "/public/x")).await;
        assert_eq!(kind(&refused), "capability_denied", "{method}: {refused}");
    }
    let reached = seen.lock().unwrap().clone();
    assert_eq!(
        reached,
        ["GET /public/page"],
        "only the granted request was sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_name_why() {
    let ws = Arc::new(
        Workspace::new()
            .plugin("fixture_attacker", "attacker")
            .config("[plugins.attacker]\nhttp = [{ origin = \"http://127.0.0.1:9\", path_prefix = \"/v1\" }]\n"),
    );
    let run = {
        let ws = ws.clone();
        tokio::task::spawn_blocking(move || {
            ws.cordon(&[
                "call",
                "http_send",
                r#"{"method": "GET", "url": "http://127.0.0.1:9/v1/%2e%2e/admin"}"#,
            ])
        })
        .await
        .unwrap()
    };
    assert!(
        run.stderr.contains("a `.` or `..` segment")
            && run.stderr.contains("outside the granted path prefix"),
        "{}",
        run.stderr
    );
}

/// A server that answers every request with headers and the first bytes of a 1 MiB body, then
/// keeps the connection open; counts the connections it holds.
async fn holding_server() -> (SocketAddr, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (open, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (open_counter, most_counter) = (open.clone(), most.clone());
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let now = open_counter.fetch_add(1, Ordering::SeqCst) + 1;
            most_counter.fetch_max(now, Ordering::SeqCst);
            let open = open_counter.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1048576\r\n\r\nfirst bytes")
                    .await;
                // Held until the client closes it.
                let mut rest = [0u8; 64];
                while matches!(socket.read(&mut rest).await, Ok(n) if n > 0) {}
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    (address, open, most)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cannot_hold_more_connections_than_its_limit_and_they_close_with_it() {
    let (server, open, most) = holding_server().await;
    let ws = Workspace::new()
        .plugin("fixture_attacker", "attacker")
        .config(&format!(
            "[plugins.attacker]\nhttp = [{{ origin = \"http://{server}\" }}]\nlimits = {{ http_connections = 20 }}\n"
        ));
    let pipeline = ws.pipeline().await;
    let args = format!(r#"{{"authority": "{server}", "path": "/big", "count": 300}}"#);
    let result = crate::support::call(&pipeline, "http_hold", &args).await;
    assert_eq!(result.details["held"], 20, "{result:?}");
    assert_eq!(result.details["failed"], 280);
    assert!(
        most.load(Ordering::SeqCst) <= 20,
        "the server saw {} connections",
        most.load(Ordering::SeqCst)
    );
    for _ in 0..100 {
        if open.load(Ordering::SeqCst) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(
        open.load(Ordering::SeqCst),
        0,
        "the call's connections closed when it ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_holds_no_more_connections_than_its_own_limit() {
    let (server, _open, most) = holding_server().await;
    let ws = Workspace::new()
        .plugin("fixture_attacker", "attacker")
        .config(&format!(
            "[host]\nmax_http_connections = 30\n[plugins.attacker]\nhttp = [{{ origin = \"http://{server}\" }}]\nlimits = {{ http_connections = 25 }}\n"
        ));
    let pipeline = ws.pipeline().await;
    let args =
        format!(r#"{{"authority": "{server}", "path": "/big", "count": 25, "hold_ms": 500}}"#);
    let calls = (0..3)
        .map(|i| {
            cordon_runtime::pipeline::CallRequest::new(format!("c{i}"), "http_hold", args.clone())
        })
        .collect();
    let results = pipeline.run(calls, &Default::default()).await;
    let held: u64 = results
        .iter()
        .map(|r| r.details["held"].as_u64().unwrap())
        .sum();
    assert!(held <= 30, "{held} held across the calls");
    assert!(
        most.load(Ordering::SeqCst) <= 30,
        "the server saw {}",
        most.load(Ordering::SeqCst)
    );
    assert!(
        results
            .iter()
            .any(|r| r.details["failed"].as_u64().unwrap() > 0),
        "some requests were refused: {results:?}"
    );
}
