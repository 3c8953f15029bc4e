//! The scripted model API (tests/scripted_model/scripted_model.py) as a test helper: start it on
//! 127.0.0.1 with a script, point `cordon run` at it, and read back every request it received.

use serde_json::Value;
use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use tempfile::TempDir;

pub struct ScriptedModel {
    child: Child,
    port: u16,
    dir: TempDir,
}

impl ScriptedModel {
    /// Starts a server answering with `steps` in order (see the script's docstring).
    pub fn start(steps: Value) -> Self {
        Self::start_script(serde_json::json!({ "replies": steps }))
    }

    /// Starts a server with a whole script: `{"replies": [...], "context_window": N, ...}`.
    pub fn start_script(whole: Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script.json");
        std::fs::write(&script, whole.to_string()).unwrap();
        let server = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/scripted_model/scripted_model.py");
        let mut child = Command::new("python3")
            .arg(&server)
            .arg(&script)
            .arg("--record")
            .arg(dir.path().join("requests.jsonl"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 is needed to run the scripted model server");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|port| port.parse().ok())
            .unwrap_or_else(|| panic!("the scripted model did not start: {line:?}"));
        Self { child, port, dir }
    }

    /// The base URL for `--base-url` (`/v1` like the real APIs).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request so far: `{"path", "headers", "body", "time"}`.
    pub fn requests(&self) -> Vec<Value> {
        let path = self.dir.path().join("requests.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The JSON body of request `index` (from 0).
    pub fn body(&self, index: usize) -> Value {
        let requests = self.requests();
        requests
            .get(index)
            .unwrap_or_else(|| panic!("request #{index} never came; got {}", requests.len()))["body"]
            .clone()
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
