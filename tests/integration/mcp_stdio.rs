//! `cordon serve` over stdio at the protocol level: only JSON-RPC on stdout (even with verbose
//! logging), -32601 for unknown methods, and no response at all for a cancelled request.

use crate::support::probe;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn stdio_speaks_only_protocol_and_honours_cancellation() {
    let ws = probe();
    ws.cordon(&["list"]); // compile into the cache first
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["-vv", "serve"])
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start cordon serve");
    let mut stdin = child.stdin.take().unwrap();
    let (lines, received) = mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |message: Value| {
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .unwrap()
    };
    let mut seen: Vec<Value> = Vec::new();
    let wait_for = |id: i64, seen: &mut Vec<Value>| -> Value {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let line = received
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("a response in time");
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|_| panic!("stdout carried a non-JSON line: {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            seen.push(message.clone());
            if message["id"] == id {
                return message;
            }
        }
    };

    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    assert_eq!(
        wait_for(1, &mut seen)["result"]["protocolVersion"],
        "2025-11-25"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    send(json!({"jsonrpc": "2.0", "id": 2, "method": "no/such/method", "params": {}}));
    let unknown = wait_for(2, &mut seen);
    assert_eq!(unknown["error"]["code"], -32601);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Method not found: no/such/method"),
        "{unknown}"
    );
    // A standard method cordon does not offer reads the same way, not as a bare method name.
    send(
        json!({"jsonrpc": "2.0", "id": 20, "method": "resources/subscribe", "params": {"uri": "docs://x"}}),
    );
    let resources = wait_for(20, &mut seen);
    assert_eq!(resources["error"]["code"], -32601);
    assert!(
        resources["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Method not found: resources/subscribe"),
        "{resources}"
    );

    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "sleep", "arguments": {"millis": 30000}}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "test"}}),
    );
    let started = Instant::now();
    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "after"}}}),
    );
    let after = wait_for(4, &mut seen);
    assert_eq!(after["result"]["content"][0]["text"], "after");
    assert!(started.elapsed() < Duration::from_secs(3));

    // Give a stray response to the cancelled request every chance to appear.
    send(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    wait_for(5, &mut seen);
    std::thread::sleep(Duration::from_millis(300));

    let _ = child.kill();
    seen.extend(
        received
            .try_iter()
            .filter_map(|line| serde_json::from_str(&line).ok()),
    );
    assert!(
        !seen.iter().any(|message| message["id"] == 3),
        "a cancelled request got a response: {seen:?}"
    );
    let _ = child.wait();
}
