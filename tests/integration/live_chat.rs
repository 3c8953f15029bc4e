//! `cordon chat` follows live reloads: a plugin dropped into plugins/ between two prompts is
//! offered to the model from the next request on, and the transcript records the change; a config
//! edit that would grant a plugin the transcript's directory read-write is refused on reload as it
//! is at start, and the conversation keeps its tools; a reload that would leave a granted hook
//! watching less is refused.

use crate::support::agent_runs::tool_names as offered;
use crate::support::model_server::ScriptedModel;
use crate::support::{Workspace, guest_dir, probe};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a reload may take to be seen on a busy machine.
const RELOAD_WITHIN: Duration = Duration::from_secs(60);

/// A `cordon -v chat` with its stdin held open, its stdout read line by line and its stderr
/// lines forwarded to a channel.
struct Chat {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    stderr: mpsc::Receiver<String>,
}

impl Chat {
    fn start(ws: &Workspace, model: &ScriptedModel, transcript: &str) -> Self {
        let url = model.base_url();
        let mut child = ws
            .cordon_command(&[
                "-v",
                "chat",
                "--base-url",
                &url,
                "--model",
                "scripted",
                "--transcript",
                transcript,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start cordon chat");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (lines, received) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            stdout,
            stderr: received,
        }
    }

    /// Sends one prompt and returns the answer's line.
    fn say(&mut self, prompt: &str) -> String {
        writeln!(self.stdin, "{prompt}").unwrap();
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).unwrap();
        answer
    }

    /// Waits for a stderr line containing `needle`; returns it.
    fn log_line(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + RELOAD_WITHIN;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.stderr.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("no log line with {needle:?} within {RELOAD_WITHIN:?}"),
            }
        }
    }

    fn finish(mut self) -> i32 {
        drop(self.stdin);
        self.child.wait().unwrap().code().unwrap_or(-1)
    }
}

fn workspace() -> Workspace {
    probe().config("[plugins.probe]\nlimits = { timeout = \"30s\" }\n")
}

fn transcript_roles(ws: &Workspace, transcript: &str) -> Vec<Value> {
    std::fs::read_to_string(ws.path().join(transcript))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn chat_offers_a_plugin_dropped_in_between_two_prompts_and_records_it() {
    let model = ScriptedModel::start(json!([{ "text": "One." }, { "text": "Two." }]));
    let ws = workspace();
    let mut chat = Chat::start(&ws, &model, "t.jsonl");
    assert_eq!(chat.say("first"), "One.\n");
    assert!(!offered(&model.body(0)).contains(&"word_stats".to_string()));

    let staged = ws.path().join("plugins").join(".extra.partial");
    std::fs::copy(guest_dir().join("fixture_contract_v2.wasm"), &staged).unwrap();
    std::fs::rename(&staged, ws.plugin_path("extra")).unwrap();
    let line = chat.log_line("reloaded the plugins");
    assert!(line.contains("+word_stats"), "{line}");

    assert_eq!(chat.say("second"), "Two.\n");
    assert_eq!(chat.finish(), 0);
    let tools = offered(&model.body(1));
    assert!(
        tools.contains(&"word_stats".to_string()) && tools.contains(&"sleep".to_string()),
        "the second request offers the new set: {tools:?}"
    );
    let lines = transcript_roles(&ws, "t.jsonl");
    let changed = lines
        .iter()
        .find(|line| line["role"] == "tools_changed")
        .expect("a tools_changed line in the transcript");
    assert!(
        changed["added"]
            .as_array()
            .unwrap()
            .contains(&json!("word_stats")),
        "{changed}"
    );
    let position = |role: &str, content: &str| {
        lines
            .iter()
            .position(|line| line["role"] == role && line["content"] == content)
            .unwrap()
    };
    let at = lines
        .iter()
        .position(|line| line["role"] == "tools_changed");
    assert!(
        at > Some(position("user", "first")) && at < Some(position("assistant", "Two.")),
        "recorded between the turns: {lines:?}"
    );

    // The transcript, tools_changed line and all, resumes.
    let model = ScriptedModel::start(json!([{ "text": "Three." }]));
    let url = model.base_url();
    let out = ws.cordon_stdin(
        &[
            "chat",
            "--base-url",
            &url,
            "--model",
            "scripted",
            "--resume",
            "t.jsonl",
        ],
        "third\n",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "Three.\n");
}

#[test]
fn a_reloaded_config_cannot_grant_a_plugin_the_transcript() {
    let model = ScriptedModel::start(json!([{ "text": "One." }, { "text": "Two." }]));
    let ws = workspace();
    std::fs::create_dir(ws.path().join("chats")).unwrap();
    let config = std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap();
    let mut chat = Chat::start(&ws, &model, "chats/t.jsonl");
    assert_eq!(chat.say("first"), "One.\n");

    let granted = config.replace(
        "[plugins.probe]",
        "[plugins.probe]\ndirs = [{ host = \"chats\", guest = \"/chats\", mode = \"rw\" }]",
    );
    assert_ne!(granted, config, "the config has a [plugins.probe] table");
    std::fs::write(ws.path().join("cordon.toml"), granted).unwrap();
    let line = chat.log_line("reload refused");
    assert!(line.contains("transcript"), "{line}");

    assert_eq!(chat.say("second"), "Two.\n");
    assert_eq!(chat.finish(), 0);
    assert!(
        !transcript_roles(&ws, "chats/t.jsonl")
            .iter()
            .any(|line| line["role"] == "tools_changed")
    );
}

#[test]
fn a_reload_that_would_leave_a_hook_watching_less_is_refused() {
    // The session hook's file is replaced by a tool hook with no session stages, its grant
    // unchanged: the reload is refused and the running set keeps guarding.
    let model = ScriptedModel::start(json!([{ "text": "One." }]));
    let ws = workspace()
        .plugin("fixture_session_hook", "session")
        .config("[plugins.session]\nhook = true\n");
    let mut chat = Chat::start(&ws, &model, "t.jsonl");
    assert_eq!(chat.say("first"), "One.\n");
    std::fs::copy(
        guest_dir().join("fixture_hook.wasm"),
        ws.plugin_path("session"),
    )
    .unwrap();
    let line = chat.log_line("reload refused");
    assert!(
        line.contains("hook `session` would no longer watch"),
        "{line}"
    );
    assert_eq!(chat.finish(), 0);
}
