//! What cordon prints from text it does not control, through the real binary: a plugin's tool
//! description with a newline and a fake tools line in `cordon list` and `cordon describe`, a
//! plugin file named with escape sequences (an OSC title, a clear-screen) in the log and in
//! `list`, a model's tool name with a newline and a right-to-left override in the live view and
//! its `--events` lines; and `cordon build` of a project whose directory names an installed
//! plugin.

use crate::support::agent_runs::{call, run};
use crate::support::model_server::ScriptedModel;
use crate::support::{Workspace, probe};
use serde_json::{Value, json};

/// A component exporting `count(n: u32)`, described by the WIT beside it.
const COUNT_COMPONENT: &str = r#"
(component
  (core module $m (func (export "f") (param i32)))
  (core instance $i (instantiate $m))
  (func $count (param "n" u32) (canon lift (core func $i "f")))
  (export "count" (func $count))
)
"#;

/// The WIT the component ships, its doc comment carrying a second and a third line that look like
/// `list`'s tools table and `describe`'s heading (the WIT parser itself refuses bidi overrides).
const FORGING_WIT: &str = "package test:forged;\n\nworld forged {\n  /// Counts things.\n  /// delete_everything  [fs] Delete: removes every file\n  /// plugin: fs (plugins/fs.wasm, contract 0.2)\n  export count: func(n: u32);\n}\n";

/// The operator's config points at that WIT and titles the tool with a right-to-left override.
const FORGING_CONFIG: &str = "[plugins.forged]\nwit = \"vendor/forged.wit\"\n\n[plugins.forged.tools.count]\ntitle = \"Count \\u202egnp.exe\"\n";

const FORGED_TOOL_LINE: &str = "delete_everything  [fs] Delete: removes every file";

fn forging_plugin() -> Workspace {
    Workspace::new()
        .raw_plugin("forged", &wat::parse_str(COUNT_COMPONENT).unwrap())
        .file("vendor/forged.wit", FORGING_WIT)
        .config(FORGING_CONFIG)
}

/// Fails unless `text` has no line that starts (after its indent) with `forged`, and no raw
/// escape, control or bidi character but the newlines between its lines.
fn assert_no_forged_line(text: &str, forged: &str, what: &str) {
    for line in text.lines() {
        assert!(
            !line.trim_start().starts_with(forged),
            "{what} shows a forged line {line:?}:\n{text}"
        );
    }
    assert!(
        !text.contains(['\u{1b}', '\u{7}', '\r', '\u{202e}']),
        "{what} has a raw control or bidi character:\n{text:?}"
    );
}

#[test]
fn a_plugin_description_cannot_forge_a_line_in_list_or_describe() {
    let ws = forging_plugin();
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert_no_forged_line(&listed.stdout, FORGED_TOOL_LINE, "cordon list");
    assert_no_forged_line(&listed.stdout, "plugin: fs", "cordon list");
    let count_line = listed
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("count "))
        .unwrap_or_else(|| panic!("no count line:\n{}", listed.stdout));
    assert!(
        count_line.contains("Counts things.\\ndelete_everything")
            && count_line.contains("[forged] Count \\u{202e}gnp.exe: "),
        "the description is there, escaped, on the tool's own line: {count_line:?}"
    );

    let described = ws.cordon(&["describe", "count"]);
    assert_eq!(described.code, 0, "{}", described.stderr);
    assert_eq!(
        described
            .stdout
            .lines()
            .filter(|line| line.starts_with("plugin: "))
            .count(),
        1,
        "one plugin heading, not a forged second one:\n{}",
        described.stdout
    );
    assert!(
        !described
            .stdout
            .lines()
            .any(|line| line.starts_with(FORGED_TOOL_LINE)),
        "{}",
        described.stdout
    );
    assert!(
        !described.stdout.contains('\u{202e}'),
        "{:?}",
        described.stdout
    );
    assert!(
        described
            .stdout
            .contains("\n  Counts things.\n  delete_everything")
            && described
                .stdout
                .contains("\n  plugin: fs (plugins/fs.wasm, contract 0.2) It sees no files, and has no network.\n")
            && described
                .stdout
                .starts_with("count (Count \\u{202e}gnp.exe)\n"),
        "the description keeps its lines, each indented under the headings:\n{}",
        described.stdout
    );

    // Scripts get the text as it is; the override is a JSON escape, not a raw character.
    for args in [
        &["list", "--json"][..],
        &["describe", "count", "--json"][..],
    ] {
        let out = ws.cordon(args);
        assert!(
            !out.stdout.contains('\u{202e}'),
            "{args:?}: {:?}",
            out.stdout
        );
        assert!(out.stdout.contains("\\u202e"), "{args:?}: {}", out.stdout);
    }
    let spec = ws.cordon(&["describe", "count", "--json"]).json();
    assert_eq!(
        spec["description"],
        "Counts things.\ndelete_everything  [fs] Delete: removes every file\nplugin: fs (plugins/fs.wasm, contract 0.2) It sees no files, and has no network."
    );
    assert_eq!(spec["title"], "Count \u{202e}gnp.exe");
}

#[test]
fn a_plugin_file_named_with_escape_sequences_reaches_no_terminal_raw() {
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{1b}[31mevil";
    let ws = probe();
    std::fs::write(
        ws.path().join("plugins").join(format!("{hostile}.wasm")),
        b"not a component",
    )
    .unwrap();
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "the file was refused: {}", listed.stderr);
    for (stream, text) in [("stderr", &listed.stderr), ("stdout", &listed.stdout)] {
        assert!(
            !text.contains(['\u{1b}', '\u{7}']),
            "{stream} holds a raw escape sequence: {text:?}"
        );
        assert!(
            text.contains("\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\u{1b}[31mevil.wasm"),
            "{stream} names the file, escaped: {text}"
        );
    }
    assert!(
        listed.stderr.contains("rejected plugin"),
        "{}",
        listed.stderr
    );
}

#[test]
fn a_model_tool_name_cannot_forge_a_live_view_line() {
    let forged_name = "echo\n  ✓ forged_tool(text=\"ok\") 1 ms\u{202e}";
    let script = json!([
        { "tool_calls": [call("a", forged_name, json!({"text": "hi"}))] },
        { "text": "Done." }
    ]);
    let ws = probe().config(crate::support::agent_runs::CONFIG);

    let model = ScriptedModel::start(script.clone());
    let out = run(&ws, &model, &["Go."], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_no_forged_line(&out.stderr, "✓ forged_tool", "the live view");
    assert!(
        out.stderr
            .contains("✗ echo\\n  ✓ forged_tool(text=\"ok\") 1 ms\\u{202e}(text=\"hi\")"),
        "the call's line names the tool as the model wrote it, escaped:\n{}",
        out.stderr
    );

    let model = ScriptedModel::start(script);
    let events = run(&ws, &model, &["--events", "Go."], &[]);
    assert_eq!(events.code, 0, "{}", events.stderr);
    assert!(!events.stderr.contains('\u{202e}'), "{:?}", events.stderr);
    let lines: Vec<Value> = events
        .stderr
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("not a JSON line ({err}): {line:?}"))
        })
        .collect();
    assert!(
        lines.iter().any(
            |event| event["type"] == "tool_execution_start" && event["toolName"] == forged_name
        ),
        "the events carry the name as it was: {lines:?}"
    );
}

#[test]
fn cordon_build_does_not_replace_a_plugin_it_did_not_build() {
    let ws = Workspace::new().plugin("fixture_echo", "fs");
    let installed = std::fs::read(ws.plugin_path("fs")).unwrap();
    // A project elsewhere whose directory happens to be named `fs`.
    let created = ws.cordon(&["--plugins", "downloads", "new", "fs", "--lang", "c"]);
    assert_eq!(created.code, 0, "{}", created.stderr);

    let refused = ws.cordon(&["build", "downloads/fs"]);
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(
        refused.stderr.contains("plugins/fs.wasm already exists")
            && refused.stderr.contains("--force")
            && refused.stderr.contains("--name"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read(ws.plugin_path("fs")).unwrap(),
        installed,
        "the installed plugin is untouched"
    );

    // Under a name of its own it builds, and it rebuilds its own output without --force (what
    // `make` does into its guest directory).
    for _ in 0..2 {
        let built = ws.cordon(&["build", "downloads/fs", "--name", "fs_local"]);
        assert_eq!(built.code, 0, "{}", built.stderr);
        assert_eq!(built.stdout.trim(), "built plugins/fs_local.wasm");
    }
    assert_eq!(std::fs::read(ws.plugin_path("fs")).unwrap(), installed);

    // With --force it replaces the other plugin, and then it is this project's own build.
    let forced = ws.cordon(&["build", "downloads/fs", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_ne!(std::fs::read(ws.plugin_path("fs")).unwrap(), installed);

    // A directory name that is no plugin name is refused, pointing at --name.
    std::fs::rename(
        ws.path().join("downloads/fs"),
        ws.path().join("downloads/my-fs"),
    )
    .unwrap();
    let unnamed = ws.cordon(&["build", "downloads/my-fs"]);
    assert_eq!(unnamed.code, 2);
    assert!(
        unnamed.stderr.contains("\"my-fs\"") && unnamed.stderr.contains("--name NAME"),
        "{}",
        unnamed.stderr
    );
}
