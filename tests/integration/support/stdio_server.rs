//! `cordon serve` over stdio driven by hand at the JSON-RPC level, for tests that need requests
//! to overlap or need the server process itself (its peak memory, read from /proc while it runs).

use crate::support::Workspace;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `cordon serve` over stdio, driven by hand so requests can overlap.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

impl Server {
    pub fn start(ws: &Workspace) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
            .arg("serve")
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
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            child,
            stdin,
            lines,
        };
        server.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        server.answers(&[0]);
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    pub fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a `tools/call` (its answer comes through [`Self::answers`]).
    pub fn call(&mut self, id: i64, tool: &str, arguments: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }

    /// The answers to `ids`, in that order.
    pub fn answers(&mut self, ids: &[i64]) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = std::collections::HashMap::new();
        while seen.len() < ids.len() {
            let line = self
                .lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .expect("an answer in time");
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC on stdout");
            if let Some(id) = message["id"].as_i64().filter(|id| ids.contains(id)) {
                seen.insert(id, message);
            }
        }
        ids.iter().map(|id| seen.remove(id).unwrap()).collect()
    }

    /// The most memory the server has held so far (VmHWM), in bytes.
    pub fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .expect("VmHWM in /proc/PID/status")
            * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
