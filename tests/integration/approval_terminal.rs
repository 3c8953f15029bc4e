//! `cordon run` on a pseudo-terminal (driven by python3's `pty`, as a person at a terminal would):
//! the agent loop's call that a hook asks about is put to the person, and their answer decides.

use crate::agent_loop::call;
use crate::model_server::ScriptedModel;
use crate::support::Workspace;
use serde_json::json;
use std::process::Command;

/// Runs `cordon ARGS` on a pseudo-terminal that is its controlling terminal, answers the first
/// approval question with `answer`, and prints everything cordon wrote.
const PTY_DRIVER: &str = r#"
import fcntl, os, pty, select, subprocess, sys, termios, time
cordon, workspace, cache, answer, *args = sys.argv[1:]
main, secondary = pty.openpty()
process = subprocess.Popen([cordon, *args], cwd=workspace, stdin=secondary, stdout=secondary,
    stderr=secondary, env={"XDG_CACHE_HOME": cache, "PATH": os.environ.get("PATH", ""), "TERM": "dumb"},
    start_new_session=True, preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
os.close(secondary)
seen, answered = b"", False
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    if not answered and b"this session: " in seen:
        os.write(main, answer.encode() + b"\r")
        answered = True
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
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(process.returncode)
"#;

fn run_on_terminal(ws: &Workspace, answer: &str, args: &[&str]) -> (i32, String) {
    ws.cordon(&["list"]); // compiled before the clock starts
    let output = Command::new("python3")
        .args(["-c", PTY_DRIVER, env!("CARGO_BIN_EXE_cordon")])
        .arg(ws.path())
        .arg(ws.cache_home())
        .arg(answer)
        .args(args)
        .output()
        .expect("python3 drives the pseudo-terminal");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn asking_session(model: &ScriptedModel) -> (Workspace, Vec<String>) {
    let ws = Workspace::new()
        .plugin("fixture_contract_v2", "v2")
        .config("[plugins.v2]\nhook = true\n");
    let args = vec![
        "run".to_string(),
        "--base-url".to_string(),
        model.base_url(),
        "--model".to_string(),
        "scripted".to_string(),
        "Count the words".to_string(),
    ];
    (ws, args)
}

#[test]
fn cordon_run_asks_the_person_at_the_terminal_and_runs_the_call_they_approve() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("c1", "word_stats", json!({"text": "a b c", "ask": "it reads a private note"}))] },
        { "text": "Three words." }
    ]));
    let (ws, args) = asking_session(&model);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, screen) = run_on_terminal(&ws, "y", &args);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("? approve word_stats (plugin v2)"),
        "{screen}"
    );
    assert!(
        screen.contains("asked by hook `v2`: it reads a private note"),
        "{screen}"
    );
    assert!(screen.contains("Three words."), "{screen}");
    let sent = model.body(1).to_string();
    assert!(
        sent.contains("words"),
        "the tool ran and its result went to the model: {sent}"
    );
    assert!(!sent.contains("not_approved"), "{sent}");
}

#[test]
fn cordon_run_tells_the_model_when_the_person_says_no() {
    let model = ScriptedModel::start(json!([
        { "tool_calls": [call("c1", "word_stats", json!({"text": "a b c", "ask": "it reads a private note"}))] },
        { "text": "I was not allowed." }
    ]));
    let (ws, args) = asking_session(&model);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, screen) = run_on_terminal(&ws, "n", &args);
    assert_eq!(code, 0, "{screen}");
    let sent = model.body(1).to_string();
    assert!(
        sent.contains("user said no"),
        "the model reads the refusal: {sent}"
    );
}
