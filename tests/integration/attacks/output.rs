//! The host's own output under attack (security audit item 10 and the colour of item 11): a plugin
//! that logs a flood while nobody reads cordon's stderr cannot hang it, a closed stderr cannot make
//! it panic, guest log lines are cut, and colour codes go only to a terminal.

use crate::support::Workspace;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn flooder() -> Workspace {
    Workspace::new()
        .plugin("fixture_attacker", "attacker")
        .config("[plugins.attacker]\nlimits = { timeout = \"60s\", output = \"64MiB\" }\n")
}

const FLOOD: &str = r#"{"count": 1000, "line_bytes": 50000}"#;

#[test]
fn a_log_flood_with_nobody_reading_stderr_does_not_hang_cordon() {
    let ws = flooder();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["-v", "call", "log_flood", FLOOD])
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // stderr is a pipe nobody drains (its buffer holds 64 KiB); stdout is read.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("cordon hung on its own stderr");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
    assert_eq!(reader.join().unwrap().trim(), "logged 1000");
}

#[test]
fn a_closed_stderr_does_not_make_cordon_panic() {
    let ws = flooder();
    let output = Command::new("sh")
        .args(["-c", "exec \"$0\" -v call log_flood \"$1\" 2>&-"])
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .arg(FLOOD)
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "logged 1000"
    );
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let ws = flooder();
    let output = Command::new("sh")
        .args([
            "-c",
            "\"$0\" call log_flood '{\"count\": 1, \"line_bytes\": 1}' | true",
        ])
        .arg(env!("CARGO_BIN_EXE_cordon"))
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("panicked"),
        "{output:?}"
    );
}

#[test]
fn guest_log_lines_are_cut_and_logs_to_a_file_have_no_colour_codes() {
    let ws = flooder();
    let run = ws.cordon(&[
        "-v",
        "call",
        "log_flood",
        r#"{"count": 3, "line_bytes": 100000}"#,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().filter(|l| l.contains("lll")).collect();
    assert_eq!(
        lines.len(),
        3,
        "{}",
        &run.stderr[..500.min(run.stderr.len())]
    );
    for line in lines {
        assert!(line.len() < 9_000, "a log line of {} bytes", line.len());
        assert!(line.contains("more bytes]"), "the cut is marked");
    }
    assert!(!run.stderr.contains('\x1b'), "colour codes in a file");
}
