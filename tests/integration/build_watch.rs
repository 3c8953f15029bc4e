//! `cordon build --watch`: a save of the project's source is rebuilt into the plugin (a real file
//! change, seen by the running watch), a save that does not build is reported while the watch
//! goes on, and the next good save builds again.

use crate::support::{Workspace, text};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// Waits for a line containing `wanted` from the watch, failing after `within`.
fn wait_for(lines: &Receiver<String>, wanted: &str, within: Duration, seen: &mut Vec<String>) {
    let deadline = Instant::now() + within;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(wanted);
                seen.push(line);
                if found {
                    return;
                }
            }
            Err(_) => break,
        }
    }
    panic!(
        "no line with {wanted:?} within {within:?}:\n{}",
        seen.join("\n")
    );
}

#[test]
fn a_save_is_rebuilt_and_a_broken_one_is_reported_while_the_watch_goes_on() {
    let ws = Workspace::new();
    let created = ws.cordon(&["new", "count_c", "--lang", "c"]);
    assert_eq!(created.code, 0, "{}", created.stderr);
    let mut watch = ws
        .cordon_command(&["build", "--watch", "plugins/count_c"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (sender, lines) = channel();
    for stream in [
        Box::new(watch.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(watch.stderr.take().unwrap()),
    ] {
        let sender = sender.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
    }
    let mut seen = Vec::new();
    let long = Duration::from_secs(180);
    wait_for(&lines, "watching", long, &mut seen);
    assert!(
        seen.iter().any(|line| line.starts_with("built ")),
        "{seen:?}"
    );
    assert_eq!(text(&ws.call("count_c", r#"{"text": "one two"}"#)), "2");

    let source = ws.path().join("plugins/count_c/app.c");
    let original = std::fs::read_to_string(&source).unwrap();
    let edited = original.replace(
        r#""%zu", count_words(text)"#,
        r#""%zu words", count_words(text)"#,
    );
    assert_ne!(edited, original, "the template's answer line moved");
    std::fs::write(&source, &edited).unwrap();
    wait_for(&lines, "built ", long, &mut seen);
    assert_eq!(
        text(&ws.call("count_c", r#"{"text": "one two"}"#)),
        "2 words"
    );

    std::fs::write(&source, "this is not C\n").unwrap();
    wait_for(&lines, "still watching", long, &mut seen);
    assert_eq!(
        text(&ws.call("count_c", r#"{"text": "one two"}"#)),
        "2 words",
        "a failed build leaves the last good plugin"
    );
    std::fs::write(&source, &original).unwrap();
    wait_for(&lines, "built ", long, &mut seen);
    assert_eq!(text(&ws.call("count_c", r#"{"text": "one two"}"#)), "2");
    let _ = watch.kill();
    let _ = watch.wait();
}
