//! The bundled `fs` plugin inside its grants, and the sandbox refusing every way out of them,
//! checked both through `fs` (clear messages) and through raw `std::fs` in the probe fixture (the
//! sandbox itself, not the plugin's own checks).

use crate::support::{Workspace, kind, text};

/// `data/` granted read-only at /data, `work/` read-write at /work; a secret outside both.
fn workspace() -> Workspace {
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .plugin("fixture_probe", "probe")
        .file("data/notes.txt", "alpha\nbeta\ngamma\ndelta\n")
        .file("data/src/lib.rs", "fn main() {}\n// TODO: tests\n")
        .file("data/src/deep/mod.rs", "// TODO: more\n")
        .file("work/.keep", "")
        .file("secret.txt", "TOP SECRET");
    std::fs::write(ws.path().join("data/blob.bin"), [0u8, 1, 2, 3, 0, 255]).unwrap();
    let grants = r#"
[plugins.fs]
dirs = [{ host = "data", guest = "/data", mode = "ro" }, { host = "work", guest = "/work", mode = "rw" }]

[plugins.probe]
dirs = [{ host = "data", guest = "/data", mode = "ro" }, { host = "work", guest = "/work", mode = "rw" }]
"#;
    ws.config(grants)
}

#[test]
fn read_file_reads_inside_a_grant_with_offset_and_limit() {
    let ws = workspace();
    let whole = ws.call("read_file", r#"{"path": "/data/notes.txt"}"#);
    assert_eq!(text(&whole), "alpha\nbeta\ngamma\ndelta\n");
    let relative = ws.call("read_file", r#"{"path": "notes.txt"}"#);
    assert_eq!(
        text(&relative),
        text(&whole),
        "relative paths start at the first granted directory"
    );
    let window = ws.call(
        "read_file",
        r#"{"path": "/data/notes.txt", "offset": 2, "limit": 2}"#,
    );
    assert_eq!(
        text(&window),
        "beta\ngamma\n\n[Showing lines 2-3 of 4. Use offset=4 to continue.]"
    );
    assert_eq!(window["details"]["truncated"], true);
}

#[test]
fn read_file_truncates_long_files_and_says_so() {
    let long: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    let ws = workspace().file("data/long.txt", &long);
    let result = ws.call("read_file", r#"{"path": "/data/long.txt"}"#);
    let body = text(&result);
    assert!(
        body.starts_with("line 1\n")
            && body.contains("line 2000\n")
            && !body.contains("line 2001\n")
    );
    assert!(
        body.ends_with("[Showing lines 1-2000 of 3000. Use offset=2001 to continue.]"),
        "{}",
        &body[body.len() - 80..]
    );
}

#[test]
fn read_file_refuses_binary_files() {
    let result = workspace().call("read_file", r#"{"path": "/data/blob.bin"}"#);
    assert_eq!(kind(&result), "tool_error");
    assert!(text(&result).contains("binary file"), "{result}");
}

#[test]
fn paths_outside_the_grants_are_refused() {
    let ws = workspace();
    for path in [
        "/data/../secret.txt",
        "../secret.txt",
        "/etc/passwd",
        "/",
        "/work/../../secret.txt",
    ] {
        let result = ws.call("read_file", &format!(r#"{{"path": "{path}"}}"#));
        assert_eq!(kind(&result), "capability_denied", "{path}: {result}");
        assert!(
            text(&result).contains("/data (read-only), /work (read-write)"),
            "names the grants: {result}"
        );
        assert!(!text(&result).contains("TOP SECRET"));
    }
}

#[test]
fn the_sandbox_itself_refuses_escapes_that_skip_the_plugin_checks() {
    let ws = workspace();
    let secret = ws.path().join("secret.txt");
    for path in [
        "/data/../secret.txt",
        "/data/../../etc/passwd",
        "/etc/passwd",
        secret.to_str().unwrap(),
    ] {
        let result = ws.call("read_path", &format!(r#"{{"path": "{path}"}}"#));
        assert_eq!(
            result["isError"], true,
            "raw read of {path} must fail: {result}"
        );
        assert!(
            !text(&result).contains("TOP SECRET") && !text(&result).contains("root:"),
            "{result}"
        );
    }
}

#[test]
fn a_symlink_inside_a_rw_grant_pointing_outside_is_refused() {
    let ws = workspace();
    std::os::unix::fs::symlink(
        ws.path().join("secret.txt"),
        ws.path().join("work/link.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(ws.path(), ws.path().join("work/linkdir")).unwrap();

    let via_fs = ws.call("read_file", r#"{"path": "/work/link.txt"}"#);
    assert_eq!(via_fs["isError"], true, "{via_fs}");
    assert!(!text(&via_fs).contains("TOP SECRET"), "{via_fs}");
    for path in ["/work/link.txt", "/work/linkdir/secret.txt"] {
        let raw = ws.call("read_path", &format!(r#"{{"path": "{path}"}}"#));
        assert_eq!(raw["isError"], true, "{path}: {raw}");
        assert!(!text(&raw).contains("TOP SECRET"), "{raw}");
    }
    let write_through = ws.call(
        "write_path",
        r#"{"path": "/work/link.txt", "content": "pwned"}"#,
    );
    assert_eq!(write_through["isError"], true, "{write_through}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
}

#[test]
fn writes_into_a_read_only_grant_are_refused() {
    let ws = workspace();
    let via_fs = ws.call(
        "write_file",
        r#"{"path": "/data/notes.txt", "content": "x"}"#,
    );
    assert_eq!(kind(&via_fs), "capability_denied");
    assert!(
        text(&via_fs).contains("granted read-only") && text(&via_fs).contains("/work"),
        "{via_fs}"
    );
    let raw = ws.call("write_path", r#"{"path": "/data/new.txt", "content": "x"}"#);
    assert_eq!(
        kind(&raw),
        "capability_denied",
        "the sandbox refuses the raw write: {raw}"
    );
    assert!(!ws.path().join("data/new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("data/notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\ndelta\n"
    );
}

#[test]
fn write_and_edit_inside_a_read_write_grant() {
    let ws = workspace();
    let created = ws.call(
        "write_file",
        r#"{"path": "/work/sub/a.txt", "content": "one\ntwo\ntwo\n"}"#,
    );
    assert_eq!(text(&created), "Created /work/sub/a.txt (12 bytes)");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("work/sub/a.txt")).unwrap(),
        "one\ntwo\ntwo\n"
    );

    let ambiguous = ws.call(
        "edit_file",
        r#"{"path": "/work/sub/a.txt", "old_text": "two", "new_text": "2"}"#,
    );
    assert_eq!(kind(&ambiguous), "tool_error");
    assert!(
        text(&ambiguous).contains("occurs 2 times") && text(&ambiguous).contains("lines 2, 3"),
        "{ambiguous}"
    );

    let missing = ws.call(
        "edit_file",
        r#"{"path": "/work/sub/a.txt", "old_text": "three", "new_text": "3"}"#,
    );
    assert!(text(&missing).contains("was not found"), "{missing}");

    let edited = ws.call(
        "edit_file",
        r#"{"path": "/work/sub/a.txt", "old_text": "one\ntwo", "new_text": "1\n2"}"#,
    );
    assert_eq!(text(&edited), "Edited /work/sub/a.txt at line 1");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("work/sub/a.txt")).unwrap(),
        "1\n2\ntwo\n"
    );
}

#[test]
fn list_find_and_grep() {
    let ws = workspace();
    let listing = text(&ws.call("list_dir", r#"{"path": "/data"}"#));
    assert!(
        listing.contains("src/\n") && listing.contains("notes.txt (23 bytes)"),
        "{listing}"
    );

    let found = text(&ws.call("find_files", r#"{"pattern": "*.rs"}"#));
    assert_eq!(found, "/data/src/deep/mod.rs\n/data/src/lib.rs");
    let scoped = text(&ws.call("find_files", r#"{"pattern": "src/*.rs", "path": "/data"}"#));
    assert_eq!(scoped, "/data/src/lib.rs");

    let grep = text(&ws.call(
        "grep",
        r#"{"pattern": "todo", "ignore_case": true, "glob": "*.rs"}"#,
    ));
    assert_eq!(
        grep,
        "/data/src/deep/mod.rs:1: // TODO: more\n/data/src/lib.rs:2: // TODO: tests"
    );
    let bad = ws.call("grep", r#"{"pattern": "("}"#);
    assert!(text(&bad).contains("invalid regex"), "{bad}");
}

/// `^` and `$` anchor at every line, whichever line of the file they are on, and a match is never
/// made of two lines.
#[test]
fn grep_anchors_patterns_at_each_line_and_never_across_lines() {
    let ws = Workspace::new()
        .plugin("fs", "fs")
        .file(
            "src/a.rs",
            "use a;\nfn main() {}\nuse b;\r\nlet used = 1;\n",
        )
        .config("[plugins.fs]\ndirs = [{ host = \"src\", guest = \"/src\" }]\n");
    assert_eq!(
        text(&ws.call("grep", r#"{"pattern": "^use "}"#)),
        "/src/a.rs:1: use a;\n/src/a.rs:3: use b;"
    );
    assert_eq!(
        text(&ws.call("grep", r#"{"pattern": "\\{\\}$"}"#)),
        "/src/a.rs:2: fn main() {}"
    );
    assert_eq!(
        text(&ws.call("grep", r#"{"pattern": ";$"}"#)),
        "/src/a.rs:1: use a;\n/src/a.rs:3: use b;\n/src/a.rs:4: let used = 1;",
        "a line ending in \\r\\n ends where $ says"
    );
    let across = ws.call("grep", r#"{"pattern": "\\{\\}\\suse"}"#);
    assert_eq!(across["details"]["matches"], 0, "{across}");
}

#[test]
fn without_a_grant_the_fs_plugin_has_no_files() {
    let ws = Workspace::new().plugin("fs", "fs").file("a.txt", "x");
    let result = ws.call("read_file", r#"{"path": "a.txt"}"#);
    assert_eq!(kind(&result), "capability_denied");
    assert!(text(&result).contains("no directories granted"), "{result}");
}

/// A tree with ignore files at two levels, a negation, an ignored directory, a hidden file and a
/// `.git` directory; every file says "needle".
fn ignoring_workspace() -> Workspace {
    let mut ws = Workspace::new().plugin("fs", "fs");
    for (path, content) in [
        ("tree/.gitignore", "*.log\nbuild/\n!keep.log\n"),
        ("tree/.ignore", "private.txt\n"),
        ("tree/src/.gitignore", "generated.rs\n"),
    ] {
        ws = ws.file(path, content);
    }
    for path in [
        "tree/app.log",
        "tree/keep.log",
        "tree/build/out.txt",
        "tree/private.txt",
        "tree/.hidden.txt",
        "tree/.git/config",
        "tree/src/generated.rs",
        "tree/src/main.rs",
        "tree/src/nested/deep.rs",
    ] {
        ws = ws.file(path, "a needle here\n");
    }
    ws.config("[plugins.fs]\ndirs = [{ host = \"tree\", guest = \"/tree\" }]\n")
}

#[test]
fn find_and_grep_respect_gitignore_ignore_and_hidden_files_unless_asked() {
    let ws = ignoring_workspace();
    let found = text(&ws.call("find_files", r#"{"pattern": "*"}"#));
    assert_eq!(
        found, "/tree/keep.log\n/tree/src/main.rs\n/tree/src/nested/deep.rs",
        "ignored, nested-ignored, hidden and .git files are skipped; a negation keeps keep.log"
    );
    let grep = text(&ws.call("grep", r#"{"pattern": "needle"}"#));
    assert_eq!(
        grep,
        "/tree/keep.log:1: a needle here\n/tree/src/main.rs:1: a needle here\n/tree/src/nested/deep.rs:1: a needle here"
    );
    let everything = text(&ws.call("find_files", r#"{"pattern": "*", "include_ignored": true}"#));
    assert_eq!(
        everything,
        [
            "/tree/.gitignore",
            "/tree/.hidden.txt",
            "/tree/.ignore",
            "/tree/app.log",
            "/tree/build/out.txt",
            "/tree/keep.log",
            "/tree/private.txt",
            "/tree/src/.gitignore",
            "/tree/src/generated.rs",
            "/tree/src/main.rs",
            "/tree/src/nested/deep.rs",
        ]
        .join("\n"),
        ".git itself is always skipped"
    );
    let grep_all = ws.call("grep", r#"{"pattern": "needle", "include_ignored": true}"#);
    assert_eq!(grep_all["details"]["matches"], 8, "{grep_all}");
}

/// Precedence as ripgrep decides it: a `.ignore` rule beats a `.gitignore` rule, a `!` rule keeps
/// a hidden file, the rules of the directories above the one searched apply (inside a nested
/// repository too, as `rg --no-require-git` does), a `.git/info/exclude` applies; and a tree
/// deeper than the walk keeps directories open for is walked whole. The same answers as the
/// `ignore` crate's own walker.
#[test]
fn ignore_rules_take_precedence_from_parents_nested_repositories_and_ignore_files() {
    let deep_dir: String = (1..=80).map(|level| format!("d{level}/")).collect();
    let deep_file = format!("tree/deep/{deep_dir}bottom.rs");
    let mut ws = Workspace::new()
        .plugin("fs", "fs")
        .file("tree/.gitignore", "*.tmp\n!.keep-me\n")
        .file("tree/.ignore", "!special.tmp\n")
        .file("tree/vendor/.git/info/exclude", "excluded.rs\n")
        .file("tree/vendor/.git/HEAD", "ref: refs/heads/main\n");
    for path in [
        "tree/.keep-me",
        "tree/.other-hidden",
        "tree/other.tmp",
        "tree/special.tmp",
        "tree/sub/a.tmp",
        "tree/sub/b.rs",
        "tree/vendor/x.tmp",
        "tree/vendor/excluded.rs",
        deep_file.as_str(),
    ] {
        ws = ws.file(path, "a needle here\n");
    }
    let ws = ws.config("[plugins.fs]\ndirs = [{ host = \"tree\", guest = \"/tree\" }]\n");
    let bottom = format!("/tree/deep/{deep_dir}bottom.rs");
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "*"}"#)),
        [
            "/tree/.keep-me",
            bottom.as_str(),
            "/tree/special.tmp",
            "/tree/sub/b.rs",
        ]
        .join("\n")
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "*", "path": "/tree/sub"}"#)),
        "/tree/sub/b.rs",
        "the parent's .gitignore applies to a search that starts below it"
    );
    let vendor = ws.call("find_files", r#"{"pattern": "*", "path": "/tree/vendor"}"#);
    assert_eq!(vendor["details"]["matches"], 0, "{vendor}");
    let grep = ws.call("grep", r#"{"pattern": "needle", "path": "/tree/deep"}"#);
    assert_eq!(text(&grep), format!("{bottom}:1: a needle here"));
}

#[test]
fn find_files_accepts_an_absolute_pattern_inside_a_grant() {
    let ws = ignoring_workspace();
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/tree/src/*.rs"}"#)),
        "/tree/src/main.rs"
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/tree/**/*.rs"}"#)),
        "/tree/src/main.rs\n/tree/src/nested/deep.rs"
    );
    let outside = ws.call("find_files", r#"{"pattern": "/etc/*"}"#);
    assert_eq!(kind(&outside), "capability_denied", "{outside}");
}

/// What the model sees when a path is wrong: the path as the plugin sees it (a relative one
/// resolved), what is wrong with it, and, when it does not exist or the sandbox refused it, the
/// directories the tools may use.
#[test]
fn every_fs_error_names_the_path_and_where_the_tools_may_look() {
    let ws = workspace();
    std::os::unix::fs::symlink(
        ws.path().join("secret.txt"),
        ws.path().join("work/link.txt"),
    )
    .unwrap();
    let grants = "the directories you may use: /data (read-only), /work (read-write)";
    let missing = format!("/data/missing.txt does not exist; {grants}");
    for (tool, args, kind_seen, message) in [
        (
            "read_file",
            r#"{"path": "/data/missing.txt"}"#,
            "tool_error",
            missing.clone(),
        ),
        (
            "read_file",
            r#"{"path": "missing.txt"}"#,
            "tool_error",
            missing,
        ),
        (
            "read_file",
            r#"{"path": "/data/notes.txt/x"}"#,
            "tool_error",
            format!(
                "/data/notes.txt/x does not exist: /data/notes.txt is a file, not a directory; {grants}"
            ),
        ),
        (
            "read_file",
            r#"{"path": "/data/src"}"#,
            "tool_error",
            "/data/src is a directory, not a file; use list_dir or find_files to see what is in it"
                .into(),
        ),
        (
            "read_file",
            r#"{"path": "/work/link.txt"}"#,
            "capability_denied",
            format!(
                "/work/link.txt: permission denied by the sandbox (a symlink out of the granted directories?); {grants}"
            ),
        ),
        (
            "list_dir",
            r#"{"path": "/data/nope"}"#,
            "tool_error",
            format!("/data/nope does not exist; {grants}"),
        ),
        (
            "list_dir",
            r#"{"path": "/data/notes.txt"}"#,
            "tool_error",
            "/data/notes.txt is a file, not a directory; use read_file to read it".into(),
        ),
        (
            "grep",
            r#"{"pattern": "x", "path": "/data/nope"}"#,
            "tool_error",
            format!("/data/nope does not exist; {grants}"),
        ),
        (
            "find_files",
            r#"{"pattern": "*.rs", "path": "/data/nope"}"#,
            "tool_error",
            format!("/data/nope does not exist; {grants}"),
        ),
        (
            "edit_file",
            r#"{"path": "/work/nope.txt", "old_text": "a", "new_text": "b"}"#,
            "tool_error",
            format!("/work/nope.txt does not exist; {grants}"),
        ),
        (
            "write_file",
            r#"{"path": "/work/.keep/sub/a.txt", "content": "x"}"#,
            "tool_error",
            "/work/.keep/sub/a.txt cannot be created: /work/.keep is a file, not a directory"
                .into(),
        ),
        (
            "write_file",
            r#"{"path": "/work", "content": "x"}"#,
            "tool_error",
            "/work is a directory; give the path of a file to write".into(),
        ),
    ] {
        let result = ws.call(tool, args);
        assert_eq!(kind(&result), kind_seen, "{tool} {args}: {result}");
        assert_eq!(text(&result), message, "{tool} {args}");
        assert!(!text(&result).contains("os error"), "{result}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("secret.txt")).unwrap(),
        "TOP SECRET"
    );
}

/// An absolute pattern (results are shown absolute, so models pass them) matches as the same
/// pattern relative to the granted directory it lies in; with `path` too, only files under
/// `path`; outside every grant it is refused naming the grants, not answered with nothing.
#[test]
fn find_files_matches_an_absolute_pattern_as_the_relative_one_from_its_grant() {
    let ws = workspace().file("work/out/result.txt", "done\n");
    let relative = text(&ws.call("find_files", r#"{"pattern": "*"}"#));
    assert_eq!(
        relative,
        "/data/blob.bin\n/data/notes.txt\n/data/src/deep/mod.rs\n/data/src/lib.rs"
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/data/*"}"#)),
        relative
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/data"}"#)),
        relative,
        "the granted directory itself: every file in it"
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/data/src/*.rs"}"#)),
        text(&ws.call("find_files", r#"{"pattern": "src/*.rs"}"#)),
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/data/./src/deep/../*.rs"}"#)),
        "/data/src/lib.rs",
        "`.` and `..` in the fixed prefix are resolved"
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/work/*.txt"}"#)),
        "/work/out/result.txt",
        "a pattern in the second grant searches that one"
    );
    assert_eq!(
        text(&ws.call(
            "find_files",
            r#"{"pattern": "/data/*", "path": "/data/src"}"#
        )),
        "/data/src/deep/mod.rs\n/data/src/lib.rs",
        "with path, the files under it that the pattern matches"
    );
    assert_eq!(
        text(&ws.call(
            "find_files",
            r#"{"pattern": "/data/src/*.rs", "path": "/data/src"}"#
        )),
        "/data/src/lib.rs"
    );
    let elsewhere = ws.call(
        "find_files",
        r#"{"pattern": "/work/*", "path": "/data/src"}"#,
    );
    assert_eq!(kind(&elsewhere), "tool_error", "{elsewhere}");
    assert_eq!(
        text(&elsewhere),
        "pattern \"/work/*\" is not inside path /data/src; leave out path (an absolute pattern names its own directory) or give a pattern relative to path"
    );

    for pattern in ["/etc/*", "/data/../*", "/*/notes.txt"] {
        let outside = ws.call("find_files", &format!(r#"{{"pattern": "{pattern}"}}"#));
        assert_eq!(kind(&outside), "capability_denied", "{pattern}: {outside}");
        assert_eq!(
            text(&outside),
            format!(
                "{pattern:?} is outside the directories this tool may use: /data (read-only), /work (read-write). Use a path inside one of them."
            )
        );
    }
    let missing = ws.call("find_files", r#"{"pattern": "/data/nope/*.rs"}"#);
    assert_eq!(
        text(&missing),
        "/data/nope does not exist; the directories you may use: /data (read-only), /work (read-write)"
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/data/src"}"#)),
        "No files under /data match \"/data/src\"; /data/src is a directory: list it with list_dir, or find the files in it with the pattern \"/data/src/**\""
    );
    assert_eq!(
        text(&ws.call("find_files", r#"{"pattern": "/data/src/**"}"#)),
        "/data/src/deep/mod.rs\n/data/src/lib.rs"
    );
}
