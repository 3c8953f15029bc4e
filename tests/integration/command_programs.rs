//! Command-line programs (`wasi:cli` commands) built by three toolchains with no cordon SDK: a
//! Python one from componentize-py (which exports its own `exports#init` beside `wasi:cli/run`),
//! a JavaScript one from componentize-js and a Rust one from cargo, each run as one tool. And what
//! a program like ripgrep needs: its grants in its description, a working directory for relative
//! paths, and `ok_exit_codes` so "no match" (1) is a success while an error (2) stays 2.

use crate::support::{Workspace, kind, text};
use serde_json::json;

#[test]
fn a_componentize_py_command_runs_and_prints() {
    let ws = Workspace::new().plugin("plain_py_greet", "greet");
    let listed = ws.cordon(&["list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let listed = listed.json();
    assert_eq!(listed["plugins"][0]["contract"], "command", "{listed}");
    assert_eq!(listed["tools"][0]["name"], "greet", "{listed}");

    let greeted = ws.call("greet", r#"{"args": ["Ann", "Bob"]}"#);
    assert_eq!(text(&greeted), "Hello, Ann!\nHello, Bob!\n", "{greeted}");
    assert_eq!(greeted["structured"]["exit_code"], 0);
    assert_eq!(greeted["structured"]["stderr"], "greeted 2\n");
    let from_stdin = ws.call("greet", r#"{"stdin": "Cy\n\nDee\n"}"#);
    assert_eq!(
        text(&from_stdin),
        "Hello, Cy!\nHello, Dee!\n",
        "{from_stdin}"
    );

    let nobody = ws.call("greet", "{}");
    assert_eq!(kind(&nobody), "tool_error", "{nobody}");
    let message = text(&nobody);
    assert!(
        message.contains("`greet` exited with status 1"),
        "{message}"
    );
    assert!(
        message.contains("no one to greet"),
        "stderr is quoted: {message}"
    );
    assert!(
        message.contains("It is granted no directories"),
        "the grants are listed: {message}"
    );
}

#[test]
fn a_componentize_js_command_runs_and_prints() {
    let ws = Workspace::new().plugin("plain_js_hello", "hello");
    let listed = ws.cordon(&["list", "--json"]).json();
    assert_eq!(listed["plugins"][0]["contract"], "command", "{listed}");
    let greeted = ws.call("hello", r#"{"args": ["Ann"]}"#);
    assert_eq!(text(&greeted), "Hello, Ann!\n", "{greeted}");
    let nobody = ws.call("hello", "{}");
    assert_eq!(kind(&nobody), "tool_error", "{nobody}");
    assert!(text(&nobody).contains("no one to greet"), "{nobody}");
}

/// The Rust command, granted a source tree the way ripgrep would be.
fn searcher(extra: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_cli_count", "count")
        .file("src/main.txt", "fn main() {}\n")
        .file("out/.keep", "")
        .config(&format!(
            r#"
[plugins.count]
dirs = [{{ host = "src", guest = "/src" }}, {{ host = "out", guest = "/out", mode = "rw" }}]
{extra}
"#
        ))
}

#[test]
fn a_rust_command_sees_its_grants_starts_in_its_working_directory_and_keeps_its_exit_status() {
    let ws = searcher("[plugins.count.tools.count]\nok_exit_codes = [0, 1]\n");
    let spec = ws.cordon(&["describe", "count", "--json"]).json();
    let description = spec["description"].as_str().unwrap();
    assert!(
        description.ends_with(
            "It sees only the directories /src (read-only), /out (read-write); relative paths start in /src, and has no network."
        ),
        "{description}"
    );
    assert!(
        description.contains("exit statuses 0, 1 are success"),
        "{description}"
    );

    // A relative path resolves in the first granted directory.
    let counted = ws.call("count", r#"{"args": ["main.txt"]}"#);
    assert_eq!(text(&counted), "1 3 13 main.txt\n", "{counted}");
    let written = ws.call("count", r#"{"args": ["--write", "/out/x.txt", "made"]}"#);
    assert_eq!(kind(&written), "", "{written}");

    // 1 ("not found", as ripgrep's "no match") is a success under ok_exit_codes, and says so.
    let missing = ws.call("count", r#"{"args": ["missing.txt"]}"#);
    assert_eq!(kind(&missing), "", "{missing}");
    assert_eq!(missing["structured"]["exit_code"], 1, "{missing}");
    assert!(
        text(&missing).contains("exited with status 1, a success for this tool"),
        "{missing}"
    );
    // 2 (an error, through exit-with-code) stays 2 and is an error naming the grants.
    let error = ws.call("count", r#"{"args": ["--bogus"]}"#);
    assert_eq!(kind(&error), "tool_error", "{error}");
    assert_eq!(error["details"]["exit_code"], 2, "{error}");
    let message = text(&error);
    assert!(message.contains("exited with status 2"), "{message}");
    assert!(
        message.contains("It is granted only /src (read-only), /out (read-write)"),
        "{message}"
    );

    // Without ok_exit_codes, 1 is an error as before.
    let strict = searcher("");
    let missing = strict.call("count", r#"{"args": ["missing.txt"]}"#);
    assert_eq!(kind(&missing), "tool_error", "{missing}");
}

#[test]
fn the_working_directory_can_be_another_grant_and_must_be_one() {
    let ws = searcher("working_dir = \"/out\"\n");
    let written = ws.call("count", r#"{"args": ["--write", "made.txt", "here"]}"#);
    assert_eq!(kind(&written), "", "{written}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/made.txt")).unwrap(),
        "here"
    );
    let spec = ws.cordon(&["describe", "count", "--json"]).json();
    assert!(
        spec["description"]
            .as_str()
            .unwrap()
            .contains("relative paths start in /out"),
        "{spec}"
    );

    let wrong = searcher("working_dir = \"/elsewhere\"\n");
    let listed = wrong.cordon(&["list"]);
    assert_ne!(listed.code, 0);
    assert!(
        listed.stderr.contains("working_dir") && listed.stderr.contains("/src, /out"),
        "{}",
        listed.stderr
    );
}

#[test]
fn exit_codes_are_checked_and_only_a_command_takes_them() {
    let bad = searcher("[plugins.count.tools.count]\nok_exit_codes = [0, 300]\n");
    let listed = bad.cordon(&["list"]);
    assert_ne!(listed.code, 0);
    assert!(
        listed.stderr.contains("300 is not an exit status"),
        "{}",
        listed.stderr
    );

    let plain = Workspace::new()
        .plugin("fixture_plain_geometry", "geometry")
        .config("[plugins.geometry.tools.centroid]\nok_exit_codes = [0, 1]\n");
    let listed = plain.cordon(&["list", "--json"]);
    let out = format!("{}{}", listed.stdout, listed.stderr);
    assert!(out.contains("only a command"), "{out}");
    assert_eq!(json!(null), json!(null));
}
