//! Directory grants under attack (security audit item 1): a grant is a handle opened once, not a
//! path looked up again per call, and a layout in which a plugin could redirect a grant (a grant
//! inside a read-write grant, a grant through a symlink, a read-write grant over cordon's own files)
//! is refused at load, naming the entries concerned.

use crate::support::{Workspace, call};

/// The audit's setup: `work` read-write, `work/docs` read-only, for the same plugin.
const NESTED: &str = r#"
[plugins.hostile]
dirs = [{ host = "work", guest = "/w", mode = "rw" }, { host = "work/docs", guest = "/docs", mode = "ro" }]
"#;

fn hostile() -> Workspace {
    Workspace::new()
        .plugin("fixture_hostile", "hostile")
        .file("work/docs/readme.txt", "the docs")
        .file("data/file.txt", "granted content")
}

fn fs_args(op: &str, path: &str, other: &str) -> String {
    serde_json::json!({ "op": op, "path": path, "other": other }).to_string()
}

#[test]
fn a_read_only_grant_inside_a_read_write_grant_is_refused_at_load() {
    let ws = hostile().config(NESTED);
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(
        run.stderr.contains("plugins.hostile.dirs[1].host")
            && run.stderr.contains("plugins.hostile.dirs[0].host")
            && run.stderr.contains("symlink to anywhere"),
        "{}",
        run.stderr
    );
    // Nothing ran: the plugin never got the chance to swap /docs for a link to the host's root.
    let call = ws.cordon(&["call", "fs_probe", &fs_args("list", "/docs", "")]);
    assert_eq!(call.code, 2);
}

#[test]
fn another_plugins_read_write_grant_cannot_contain_a_grant_either() {
    let ws = hostile().plugin("fixture_probe", "probe").config(
        r#"
[plugins.hostile]
dirs = [{ host = "work", guest = "/w", mode = "rw" }]
[plugins.probe]
dirs = [{ host = "work/docs", guest = "/docs" }]
"#,
    );
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("plugins.probe.dirs[0].host")
            && run.stderr.contains("plugins.hostile.dirs[0].host")
            && run.stderr.contains("read-write for plugin `hostile`"),
        "{}",
        run.stderr
    );
    let shared = ws.config(
        r#"
[plugins.hostile]
dirs = [{ host = "work", guest = "/w", mode = "rw" }]
[plugins.probe]
dirs = [{ host = "work", guest = "/w", mode = "rw" }, { host = "data", guest = "/data" }]
"#,
    );
    assert_eq!(
        shared.cordon(&["list"]).code,
        0,
        "the same directory may be shared, and separate ones are fine"
    );
}

#[test]
fn a_grant_through_a_symlink_is_refused() {
    let ws = hostile()
        .config("[plugins.hostile]\ndirs = [{ host = \"link/docs\", guest = \"/docs\" }]\n");
    std::os::unix::fs::symlink("work", ws.path().join("link")).unwrap();
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("plugins.hostile.dirs[0].host")
            && run.stderr.contains("goes through the symlink"),
        "{}",
        run.stderr
    );
    let direct = ws.config("[plugins.hostile]\ndirs = [{ host = \"link\", guest = \"/docs\" }]\n");
    assert_eq!(
        direct.cordon(&["list"]).code,
        2,
        "a grant that is a symlink"
    );
}

#[test]
fn a_read_write_grant_over_cordons_own_files_is_refused() {
    let cases = [
        (
            "the config file",
            "[plugins.hostile]\ndirs = [{ host = \".\", guest = \"/all\", mode = \"rw\" }]\n",
        ),
        (
            "the plugins directory",
            "[plugins.hostile]\ndirs = [{ host = \"plugins\", guest = \"/p\", mode = \"rw\" }]\n",
        ),
        (
            "the audit log",
            "[audit]\npath = \"work/audit.jsonl\"\n[plugins.hostile]\ndirs = [{ host = \"work\", guest = \"/w\", mode = \"rw\" }]\n",
        ),
    ];
    for (what, config) in cases {
        let ws = hostile().config(config);
        let run = ws.cordon(&["list"]);
        assert_eq!(run.code, 2, "{what}: {}", run.stdout);
        assert!(run.stderr.contains(what), "{what}: {}", run.stderr);
    }
    // The compile cache (under XDG_CACHE_HOME) and the lockfile, named on the command line.
    let ws = hostile()
        .config("[plugins.hostile]\ndirs = [{ host = \"work\", guest = \"/w\", mode = \"rw\" }]\n");
    let cache = ws.path().join("work/cache");
    let run = ws.cordon_with_env(&["list"], &[("XDG_CACHE_HOME", cache.to_str().unwrap())]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("the compile cache"), "{}", run.stderr);
    let run = ws.cordon(&["--lock-file", "work/cordon.lock", "list"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("the lockfile"), "{}", run.stderr);
    assert_eq!(
        ws.cordon(&["list"]).code,
        0,
        "the same grant elsewhere is fine"
    );
}

#[test]
fn nested_guest_paths_are_refused() {
    let ws = hostile().config(
        "[plugins.hostile]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"rw\" }, { host = \"work\", guest = \"/data/sub\" }]\n",
    );
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("plugins.hostile.dirs[1].guest") && run.stderr.contains("nest"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_audit_log_names_where_a_file_really_is_after_a_rename_under_a_handle() {
    let ws = Workspace::new()
        .plugin("fixture_attacker", "attacker")
        .file("w/pub/.keep", "")
        .config(
            "[audit]\npath = \"audit.jsonl\"\n[plugins.attacker]\ndirs = [{ host = \"w\", guest = \"/w\", mode = \"rw\" }]\n",
        );
    let result = ws.call("rename_under_handle", "{}");
    assert_eq!(result["isError"], false, "{result}");
    assert!(ws.path().join("w/stash/loot.txt").is_file());
    let log = std::fs::read_to_string(ws.path().join("audit.jsonl")).unwrap();
    let line: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let paths = line["capabilities"]["pathsOpened"].as_array().unwrap();
    let loot = paths
        .iter()
        .find(|p| p["path"].as_str().unwrap().ends_with("loot.txt"))
        .unwrap_or_else(|| panic!("{line}"));
    let real = std::fs::canonicalize(ws.path().join("w/stash/loot.txt")).unwrap();
    assert_eq!(loot["hostPath"], real.to_str().unwrap(), "{line}");
}

#[tokio::test]
async fn a_grant_keeps_pointing_at_the_directory_it_was_opened_on() {
    let ws =
        hostile().config("[plugins.hostile]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n");
    let pipeline = ws.pipeline().await;
    let before = call(
        &pipeline,
        "fs_probe",
        &fs_args("read", "/data/file.txt", ""),
    )
    .await;
    assert_eq!(before.text(), "granted content");

    // Someone replaces the granted directory with a symlink to the host's root while cordon runs.
    std::fs::rename(ws.path().join("data"), ws.path().join("data-moved")).unwrap();
    std::os::unix::fs::symlink("/", ws.path().join("data")).unwrap();

    let listed = call(&pipeline, "fs_probe", &fs_args("list", "/data", "")).await;
    assert_eq!(listed.text(), "file.txt", "{listed:?}");
    let escaped = call(
        &pipeline,
        "fs_probe",
        &fs_args("read", "/data/etc/hostname", ""),
    )
    .await;
    assert!(escaped.is_error, "{escaped:?}");
    // And the next process start refuses the planted link instead of following it.
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("symlink"), "{}", run.stderr);
}

#[test]
fn a_plugin_file_that_is_a_link_into_a_read_write_grant_is_not_loaded() {
    // plugins/ is cordon's own; a .wasm there that is a symbolic or hard link to a file in a
    // read-write grant is a tool the granted plugin could rewrite between loads.
    let ws = hostile()
        .config("[plugins.hostile]\ndirs = [{ host = \"work\", guest = \"/w\", mode = \"rw\" }]\n");
    let count = crate::support::guest_dir().join("fixture_cli_count.wasm");
    std::fs::copy(&count, ws.path().join("work/sym.wasm")).unwrap();
    std::fs::copy(&count, ws.path().join("work/hard.wasm")).unwrap();
    std::os::unix::fs::symlink(
        ws.path().join("work/sym.wasm"),
        ws.path().join("plugins/sym_count.wasm"),
    )
    .unwrap();
    std::fs::hard_link(
        ws.path().join("work/hard.wasm"),
        ws.path().join("plugins/hard_count.wasm"),
    )
    .unwrap();
    let listed = ws.cordon(&["list", "--json"]);
    let names: Vec<String> = serde_json::from_str::<serde_json::Value>(&listed.stdout)
        .map(|list| {
            list["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|tool| tool["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        !names.iter().any(|name| name.contains("count")),
        "{names:?}\n{}",
        listed.stderr
    );
    assert!(
        listed.stderr.contains("the plugin file") && listed.stderr.contains("sym_count"),
        "{}",
        listed.stderr
    );
    assert!(listed.stderr.contains("hard links"), "{}", listed.stderr);
}
