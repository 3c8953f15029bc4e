//! A plugin reading a file outside its grants with its language's own file API (Rust's std::fs,
//! Python's open, C's fopen), or the bundled fs plugin and the JavaScript SDK's readFile: the
//! host sees the attempt (wasi-libc resolves the path to the host's directory for paths outside
//! the grants), refuses it, and the call is `capability_denied` naming the path and what is
//! granted, with a `path_open` event and the refused open in the audit log. Inside the grants
//! nothing changes, and listing `/` shows nothing of the host.

use crate::support::{Workspace, text};

fn workspace() -> Workspace {
    Workspace::new()
        .plugin("fixture_probe", "probe")
        .plugin("fixture_py_files", "py_files")
        .plugin("fixture_c_files", "c_files")
        .plugin("fs", "fs")
        .file("data/ok.txt", "inside the grant")
        .file("outside/secret.txt", "never read")
        .config(
            "[audit]\npath = \"audit.jsonl\"\n\n[plugins.probe]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n\n[plugins.py_files]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n\n[plugins.c_files]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n\n[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"ro\" }]\n",
        )
}

#[test]
fn a_read_outside_the_grants_is_capability_denied_naming_the_path_and_the_grants_in_every_language()
{
    let ws = workspace();
    let secret = ws.path().join("outside/secret.txt");
    let secret = secret.display().to_string();
    for tool in ["read_path", "py_read", "c_read"] {
        let inside = ws.call(tool, r#"{"path": "/data/ok.txt"}"#);
        assert_eq!(text(&inside), "inside the grant", "{tool}: {inside}");

        let outside = ws.call(tool, &format!(r#"{{"path": "{secret}"}}"#));
        assert_eq!(
            outside["errorKind"], "capability_denied",
            "{tool}: {outside}"
        );
        let said = text(&outside);
        assert!(
            said.contains(&format!(
                "The host refused it to open {secret:?} (read): it is outside the directories granted to it (the granted directories are /data (read-only))"
            )),
            "{tool}: {said}"
        );
        assert!(!said.contains("never read"), "{tool}: {said}");
        // The plugin itself saw "not found", as before the host could see such a read, so code
        // falling back on a missing optional file still does.
        assert!(said.contains("No such file or directory"), "{tool}: {said}");
        assert!(outside["details"]["refused"].is_string(), "{outside}");
    }

    // The audit log has each refused open, with its path and outcome.
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let refused: Vec<serde_json::Value> = log
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|line| line["errorKind"] == "capability_denied")
        .collect();
    assert_eq!(refused.len(), 3, "{log}");
    for line in &refused {
        let opened = line["capabilities"]["pathsOpened"].as_array().unwrap();
        assert!(
            opened.iter().any(|open| open["path"] == secret.as_str()
                && open["outcome"] == "denied"
                && open["error"] == "outside-grants"
                && open["hostPath"].is_null()),
            "{line}"
        );
    }

    // An event names the refused open as the call runs.
    let events = ws.cordon(&[
        "call",
        "c_read",
        &format!(r#"{{"path": "{secret}"}}"#),
        "--events",
    ]);
    assert!(
        events
            .stdout
            .lines()
            .chain(events.stderr.lines())
            .any(|line| line.contains("path_open") && line.contains("secret.txt")),
        "{}{}",
        events.stdout,
        events.stderr
    );
}

#[test]
fn the_fs_plugin_lists_only_its_grants_and_the_root_shows_nothing_of_the_host() {
    let ws = workspace();
    // The fs plugin does not take the host's directory for a grant.
    let roots = ws.call("list_dir", r#"{"path": "/"}"#);
    assert_eq!(roots["errorKind"], "capability_denied", "{roots}");
    let said = text(&roots);
    assert!(said.contains("/data (read-only)"), "{said}");
    assert!(!said.contains("/ (read-only)"), "{said}");
    let inside = ws.call("read_file", r#"{"path": "/data/ok.txt"}"#);
    assert!(text(&inside).contains("inside the grant"), "{inside}");
    // A plain read of `/` finds an empty directory: nothing of the host is there.
    let listed = ws.call("read_path", r#"{"path": "/etc/passwd"}"#);
    assert_eq!(listed["errorKind"], "capability_denied", "{listed}");
    assert!(!text(&listed).contains("root:"), "{listed}");
}
