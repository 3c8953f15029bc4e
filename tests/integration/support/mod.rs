//! Test helpers: a temporary workspace with a plugins dir and a config, the `cordon` binary, and
//! the guest components built for the tests (crate cordon-test-guests).

pub mod agent_runs;
pub mod hostile_http;
pub mod model_server;
pub mod real_registry;
pub mod stdio_server;

use cordon_runtime::CompileCache;
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Pipeline};
use cordon_runtime::{RuntimeBuilder, ToolResult};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use tempfile::TempDir;

/// Where the guest components are: `CORDON_GUEST_DIR` (`make test` builds them there), else
/// where a plain `cargo test` built them (tests/guests/build.rs).
pub fn guest_dir() -> PathBuf {
    let dir = cordon_test_guests::dir();
    assert!(
        dir.join("fixture_probe.wasm").is_file(),
        "{} has no fixture_probe.wasm: run `make test`, or `cargo test` without CORDON_GUEST_DIR",
        dir.display()
    );
    dir
}

/// The cache directory (`XDG_CACHE_HOME`) shared by every test of this run, so each component
/// compiles once and each unchanged Python or JavaScript project builds once: the one
/// `CORDON_TEST_CACHE_HOME` names (`make test` keeps it between runs; both caches are keyed by
/// everything that makes their entries, see `sandbox/cache.rs` and `build/output_cache.rs`), else
/// a temporary one. Tests of the caches themselves take their own (`Workspace::own_cache`).
fn shared_cache_home() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static TEMP: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| match std::env::var_os("CORDON_TEST_CACHE_HOME") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir).expect("create CORDON_TEST_CACHE_HOME");
            forget_compiled_past(&dir.join("cordon").join("compiled"), KEPT_COMPILED_BYTES);
            dir
        }
        _ => TEMP
            .get_or_init(|| tempfile::tempdir().expect("temp dir"))
            .path()
            .to_path_buf(),
    })
}

/// How much compiled code a kept test cache may hold before it is emptied: each change of a
/// guest adds entries, and the compile cache drops none of its own.
const KEPT_COMPILED_BYTES: u64 = 4 << 30;

/// Empties `dir` when the files in it add up to more than `limit` bytes.
fn forget_compiled_past(dir: &Path, limit: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let files: Vec<(PathBuf, u64)> = entries
        .flatten()
        .filter_map(|entry| Some((entry.path(), entry.metadata().ok()?.len())))
        .collect();
    if files.iter().map(|(_, len)| len).sum::<u64>() > limit {
        for (path, _) in files {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What a `cordon` process did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn from(output: Output) -> Self {
        Self {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|err| {
            panic!(
                "stdout is not JSON ({err}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// A temporary workspace: `plugins/`, `cordon.toml`, data directories.
pub struct Workspace {
    pub dir: TempDir,
    cache_home: Option<PathBuf>,
}

impl Workspace {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join("plugins")).unwrap();
        Self {
            dir,
            cache_home: None,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies guest component `component` (e.g. "fixture_probe") in as `plugins/<id>.wasm`.
    pub fn plugin(self, component: &str, id: &str) -> Self {
        std::fs::copy(
            guest_dir().join(format!("{component}.wasm")),
            self.plugin_path(id),
        )
        .expect("copy plugin");
        self
    }

    pub fn plugin_path(&self, id: &str) -> PathBuf {
        self.path().join("plugins").join(format!("{id}.wasm"))
    }

    /// Writes a plugin file with arbitrary bytes.
    pub fn raw_plugin(self, id: &str, bytes: &[u8]) -> Self {
        std::fs::write(self.plugin_path(id), bytes).unwrap();
        self
    }

    pub fn config(self, text: &str) -> Self {
        std::fs::write(self.path().join("cordon.toml"), text).unwrap();
        self
    }

    /// Creates a file (and its parents) inside the workspace.
    pub fn file(self, relative: &str, content: &str) -> Self {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
        self
    }

    /// Uses a compile cache of this workspace's own instead of the shared one.
    pub fn own_cache(mut self) -> Self {
        self.cache_home = Some(self.path().join("cache-home"));
        self
    }

    pub fn cache_home(&self) -> &Path {
        match &self.cache_home {
            Some(dir) => dir,
            None => shared_cache_home(),
        }
    }

    /// Runs `cordon ARGS` in the workspace, with no stdin.
    pub fn cordon(&self, args: &[&str]) -> Run {
        self.cordon_with_env(args, &[])
    }

    pub fn cordon_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let output = self
            .cordon_command(args)
            .envs(env.iter().copied())
            .output()
            .expect("run cordon");
        Run::from(output)
    }

    /// `cordon ARGS` in the workspace with no stdin, to be started by the test.
    pub fn cordon_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cordon"));
        command
            .args(args)
            .current_dir(self.path())
            .env("XDG_CACHE_HOME", self.cache_home())
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        command
    }

    /// Runs `cordon call TOOL ARGS --json` and returns the result object.
    pub fn call(&self, tool: &str, args: &str) -> Value {
        self.cordon(&["call", tool, args, "--json"]).json()
    }

    /// Loads the workspace through the library, as a front end would.
    pub async fn pipeline(&self) -> Pipeline {
        self.runtime()
            .config_file_if_present(self.path().join("cordon.toml"))
            .build()
            .await
            .expect("runtime")
    }

    /// A runtime builder over the workspace's plugins and compile cache, before its config.
    pub fn runtime(&self) -> RuntimeBuilder {
        RuntimeBuilder::new(self.path().join("plugins")).cache(CompileCache::at(
            self.cache_home().join("cordon").join("compiled"),
        ))
    }
}

/// One call through the library's pipeline.
pub async fn call(pipeline: &Pipeline, tool: &str, args: &str) -> ToolResult {
    let request = CallRequest::new(format!("{tool}-call"), tool, args);
    pipeline.call(request, &BatchOptions::default()).await
}

/// The result's `errorKind` (or "" on success).
pub fn kind(result: &Value) -> &str {
    result["errorKind"].as_str().unwrap_or("")
}

/// The result's text content, joined.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

impl Workspace {
    /// Runs `cordon ARGS` with `input` on stdin.
    pub fn cordon_stdin(&self, args: &[&str], input: &str) -> Run {
        use std::io::Write as _;
        let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
            .args(args)
            .current_dir(self.path())
            .env("XDG_CACHE_HOME", self.cache_home())
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run cordon");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        Run::from(child.wait_with_output().expect("wait for cordon"))
    }
}

/// A workspace with the probe fixture as plugin `probe`.
pub fn probe() -> Workspace {
    Workspace::new().plugin("fixture_probe", "probe")
}

/// Runs a batch through the library, collecting its events in the order they were emitted.
pub async fn run_with_events(
    pipeline: &Pipeline,
    calls: Vec<CallRequest>,
    cancel: tokio_util::sync::CancellationToken,
) -> (Vec<ToolResult>, Vec<cordon_runtime::Event>) {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink: cordon_runtime::pipeline::events::EventSink = {
        let events = events.clone();
        std::sync::Arc::new(move |event| events.lock().unwrap().push(event))
    };
    let results = run_with_sink(pipeline, calls, cancel, sink).await;
    let events = events.lock().unwrap().clone();
    (results, events)
}

/// Runs a batch whose events go to `sink` as they happen.
pub async fn run_with_sink(
    pipeline: &Pipeline,
    calls: Vec<CallRequest>,
    cancel: tokio_util::sync::CancellationToken,
    sink: cordon_runtime::pipeline::events::EventSink,
) -> Vec<ToolResult> {
    pipeline
        .run(
            calls,
            &BatchOptions {
                cancel,
                events: Some(sink),
                approver: None,
            },
        )
        .await
}

/// `(type, call id)` of each event, e.g. `("tool_execution_end", "a")`.
pub fn event_trail(events: &[cordon_runtime::Event]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|event| {
            let value = serde_json::to_value(event).unwrap();
            (
                value["type"].as_str().unwrap().to_string(),
                event.tool_call_id().to_string(),
            )
        })
        .collect()
}

/// Zig as `make test` installs it (PyPI `ziglang` in the build venv), for native C tests.
pub fn zig() -> Command {
    let python = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cache/cordon-build-venv/bin/python"))
        .filter(|python| python.is_file())
        .expect("the build venv (~/.cache/cordon-build-venv) is missing: run `make test`");
    let mut command = Command::new(python);
    command.args(["-m", "ziglang"]);
    command
}

/// Compiles `sources` (in `dir`) into a native program with Zig, runs it, asserts that both
/// succeeded, and returns what the program printed.
pub fn run_native_c_test(dir: &Path, sources: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let binary = out.path().join("native_test");
    let compiled = zig()
        .arg("cc")
        .args(sources)
        .arg("-o")
        .arg(&binary)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    // Run where it was compiled, as its README says (a test may find files beside it), with the
    // cordon under test as `CORDON`.
    let ran = Command::new(&binary)
        .current_dir(dir)
        .env("CORDON", env!("CARGO_BIN_EXE_cordon"))
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    String::from_utf8_lossy(&ran.stdout).into_owned()
}

/// What every hook fixture (Python, JavaScript, C) does first: it watches `echo`, and it blocks an
/// echo of "a forbidden word" with a reason containing `reason`.
pub fn assert_echo_hook_blocks(ws: &Workspace, reason: &str) {
    let list = ws.cordon(&["list", "--json"]).json();
    assert_eq!(
        list["hooks"][0]["tools"],
        serde_json::json!(["echo"]),
        "{list}"
    );
    let blocked = ws.call("echo", r#"{"text": "a forbidden word"}"#);
    assert_eq!(kind(&blocked), "blocked");
    assert!(text(&blocked).contains(reason), "{blocked}");
}

/// The SDK fixtures' contract 0.3 word counter `tool` (C `c_stats`, JavaScript `js_stats`):
/// declared with its title, hints, guidelines, lock and output schema, and returning structured
/// output that matches it.
pub fn assert_declares_word_stats(ws: &Workspace, tool: &str) {
    let spec = ws.cordon(&["describe", tool, "--json"]).json();
    assert_eq!(spec["contract"], "0.3.0", "{spec}");
    assert_eq!(spec["title"], "Word statistics");
    assert_eq!(
        spec["annotations"],
        serde_json::json!({ "readOnly": true, "openWorld": false })
    );
    assert_eq!(
        spec["promptGuidelines"],
        serde_json::json!([format!("Count words with {tool}.")])
    );
    assert_eq!(spec["locks"], serde_json::json!(["/text"]));
    assert_eq!(
        spec["outputSchema"]["required"],
        serde_json::json!(["words", "characters"])
    );
    let result = ws.call(tool, r#"{"text": "three little words"}"#);
    assert_eq!(kind(&result), "", "{result}");
    assert_eq!(
        result["structured"],
        serde_json::json!({ "words": 3, "characters": 18 })
    );
}

/// Runs `cordon ARGS` on a pseudo-terminal that is its controlling terminal, answers the first
/// approval question with `answer`, and prints what cordon wrote before the answer, a
/// `<<ANSWERED>>` line, and what it wrote after.
const PTY_DRIVER: &str = r#"
import fcntl, os, pty, select, subprocess, sys, termios, time
cordon, workspace, cache, answer, *args = sys.argv[1:]
main, secondary = pty.openpty()
process = subprocess.Popen([cordon, *args], cwd=workspace, stdin=secondary, stdout=secondary,
    stderr=secondary, env={"XDG_CACHE_HOME": cache, "PATH": os.environ.get("PATH", ""), "TERM": "dumb"},
    start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
os.close(secondary)
seen, answered = b"", None
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    if answered is None and b"this session: " in seen:
        os.write(main, answer.encode() + b"\r")
        answered = len(seen)
    if process.poll() is not None and not select.select([main], [], [], 0.2)[0]:
        break
    ready, _, _ = select.select([main], [], [], 0.5)
    if ready:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
process.wait(timeout=10)
at = len(seen) if answered is None else answered
sys.stdout.write(seen[:at].decode(errors="replace") + "\n<<ANSWERED>>\n" + seen[at:].decode(errors="replace"))
sys.exit(process.returncode)
"#;

/// `cordon ARGS` on a pseudo-terminal (python3's `pty`, as a person at a terminal), the first
/// approval question answered with `answer`: its exit code, what it showed up to the answer (the
/// question), and everything it showed.
pub fn run_on_terminal(ws: &Workspace, answer: &str, args: &[&str]) -> (i32, String, String) {
    ws.cordon(&["list"]); // compiled before the clock starts
    let output = Command::new("python3")
        .args(["-c", PTY_DRIVER, env!("CARGO_BIN_EXE_cordon")])
        .arg(ws.path())
        .arg(ws.cache_home())
        .arg(answer)
        .args(args)
        .output()
        .expect("python3 drives the pseudo-terminal");
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    let (question, after) = printed
        .split_once("\n<<ANSWERED>>\n")
        .unwrap_or((printed.as_str(), ""));
    (
        output.status.code().unwrap_or(-1),
        question.to_string(),
        format!("{question}{after}"),
    )
}
