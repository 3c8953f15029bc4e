//! `cordon --yes add COMPONENT --policy policy.yaml` with a Wassette policy whose denies are not
//! written in the canonical form (`./`, a relative deny under an absolute allow, a deny starting
//! with `**`, `//`; a wildcard, `:443` or trailing-dot host; a padded env key) and an `http://`
//! host: the cordon.toml it writes grants none of what the policy denies, the proposal says what
//! it left out and why, and the component cannot read the denied file.

use crate::support::{Workspace, guest_dir, kind, text};

/// A workspace with the Wassette-style files component at `component/files.wasm`, `data/` with a
/// report and `data/secret/key.txt`, an unrelated `public/`, and `policy.yaml` (`ABS` in it
/// replaced by the workspace's own path).
fn workspace(policy: &str) -> Workspace {
    let ws = Workspace::new()
        .file("data/report.txt", "quarterly numbers\n")
        .file("data/secret/key.txt", "hunter2\n")
        .file("public/readme.txt", "hello\n");
    let absolute = ws.path().canonicalize().unwrap();
    let ws = ws.file(
        "policy.yaml",
        &policy.replace("ABS", absolute.to_str().unwrap()),
    );
    std::fs::create_dir_all(ws.path().join("component")).unwrap();
    std::fs::copy(
        guest_dir().join("fixture_wassette_files.wasm"),
        ws.path().join("component/files.wasm"),
    )
    .unwrap();
    ws
}

fn written_grant(ws: &Workspace) -> toml::Value {
    let text = std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap();
    let config: toml::Value = toml::from_str(&text).unwrap();
    config["plugins"]["files"].clone()
}

fn granted_dirs(grant: &toml::Value) -> Vec<String> {
    grant
        .get("dirs")
        .and_then(toml::Value::as_array)
        .map(|dirs| {
            dirs.iter()
                .map(|dir| dir["host"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_approved_policy_never_grants_the_tree_it_denies() {
    for (shape, allow, deny) in [
        ("./ in the deny", "fs://data/**", "fs://./data/secret/**"),
        (
            "a relative deny under an absolute allow",
            "fs://ABS/data/**",
            "fs://data/secret/**",
        ),
        (
            "a deny starting with a glob",
            "fs://data/**",
            "fs://**/secret/**",
        ),
        ("// in the deny", "fs://ABS/data", "fs://ABS//data/secret"),
        ("// in the allow", "fs://.//data//**", "fs://data/secret"),
    ] {
        let ws = workspace(&format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"{allow}\"\n        access: [\"read\", \"write\"]\n      - uri: \"fs://public\"\n        access: [\"read\"]\n    deny:\n      - uri: \"{deny}\"\n        access: [\"read\"]\n"
        ));
        let added = ws.cordon(&[
            "--yes",
            "add",
            "component/files.wasm",
            "--policy",
            "policy.yaml",
        ]);
        assert_eq!(added.code, 0, "{shape}: {}", added.stderr);
        assert!(
            added.stdout.contains("left out: storage")
                && added.stdout.contains("the policy denies"),
            "{shape}: {}",
            added.stdout
        );
        let grant = written_grant(&ws);
        let dirs = granted_dirs(&grant);
        assert!(
            !dirs.iter().any(|host| host.contains("data")),
            "{shape}: cordon.toml grants {grant}"
        );
        // A deny that starts with a glob can match under any directory; the others leave the
        // unrelated directory granted.
        let expected: &[&str] = if deny.starts_with("fs://**") {
            &[]
        } else {
            &["public"]
        };
        assert_eq!(dirs, expected, "{shape}: {grant}");
        let secret = ws.call("read_file", r#"{"path": "/data/secret/key.txt"}"#);
        assert_eq!(kind(&secret), "tool_error", "{shape}: {secret}");
        assert!(!text(&secret).contains("hunter2"), "{shape}: {secret}");
    }
}

#[test]
fn an_approved_policy_grants_no_denied_host_or_variable_and_no_plain_http() {
    let ws = workspace(
        "permissions:\n  network:\n    allow:\n      - host: \"api.example.com\"\n      - host: \"cdn.example.org\"\n      - host: \"status.example.net\"\n      - host: \"http://plain.example.dev\"\n      - host: \"https://ok.example.dev/v1\"\n    deny:\n      - host: \"*.example.com\"\n      - host: \"cdn.example.org:443\"\n      - host: \"status.example.net.\"\n  environment:\n    allow:\n      - key: \"FILES_GREETING\"\n      - key: \"FILES_TOKEN\"\n    deny:\n      - key: \" FILES_TOKEN \"\n",
    );
    let added = ws.cordon(&[
        "--yes",
        "add",
        "component/files.wasm",
        "--policy",
        "policy.yaml",
    ]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let grant = written_grant(&ws);
    let origins: Vec<&str> = grant["http"]
        .as_array()
        .unwrap()
        .iter()
        .map(|http| http["origin"].as_str().unwrap())
        .collect();
    assert_eq!(origins, ["https://ok.example.dev"], "{grant}");
    assert_eq!(grant["env"].as_array().unwrap().len(), 1, "{grant}");
    assert_eq!(grant["env"][0].as_str(), Some("FILES_GREETING"), "{grant}");
    for line in [
        "left out: network host \"api.example.com\": the policy denies \"*.example.com\"",
        "left out: network host \"cdn.example.org\": the policy denies \"cdn.example.org:443\"",
        "left out: network host \"status.example.net\": the policy denies \"status.example.net.\"",
        "left out: network host \"http://plain.example.dev\": plain http is not proposed",
        "left out: environment key FILES_TOKEN: the policy denies \" FILES_TOKEN \"",
    ] {
        assert!(
            added.stdout.contains(line),
            "{line:?} in:\n{}",
            added.stdout
        );
    }
}

#[test]
fn a_policy_is_read_as_the_filesystem_and_the_network_read_it() {
    // Red team, round 6: each of these denies was dropped and its allow granted whole. Since
    // round 8 a deny with `..` reaches everywhere (a link it passes may be made later), so
    // `public` is left out too.
    let ws = workspace(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data\"\n        access: [\"read\", \"write\"]\n      - uri: \"fs://public\"\n        access: [\"read\"]\n    deny:\n      - uri: \"fs://link/../secret\"\n        access: [\"read\"]\n      - uri: \"fs://ABS/al*/secret\"\n        access: [\"read\"]\n  network:\n    allow:\n      - host: \"[::ffff:127.0.0.1]:8443\"\n      - host: \"127.0.0.1\"\n    deny:\n      - host: \"127.0.0.1\"\n      - host: \"0x7f.1\"\n  resources:\n    limits:\n      memory: \"18446744073709551615Gi\"\n",
    );
    std::os::unix::fs::symlink("data/public", ws.path().join("link")).unwrap();
    std::os::unix::fs::symlink("data", ws.path().join("alias")).unwrap();
    std::fs::create_dir_all(ws.path().join("data/public")).unwrap();
    let added = ws.cordon(&[
        "--yes",
        "add",
        "component/files.wasm",
        "--policy",
        "policy.yaml",
    ]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let grant = written_grant(&ws);
    assert!(granted_dirs(&grant).is_empty(), "{grant}");
    assert!(grant.get("http").is_none(), "{grant}");
    assert!(grant.get("limits").is_none(), "{grant}");
    for line in [
        "left out: network host \"[::ffff:127.0.0.1]:8443\": the policy denies \"127.0.0.1\"",
        "left out: storage \"fs://public\": the policy denies \"fs://link/../secret\" (it has `..`",
        "left out: resources memory: \"18446744073709551615Gi\" is more than 32-bit WebAssembly can address",
    ] {
        assert!(
            added.stdout.contains(line),
            "{line:?} in:\n{}",
            added.stdout
        );
    }
    let secret = ws.call("read_file", r#"{"path": "/data/secret/key.txt"}"#);
    assert_eq!(kind(&secret), "tool_error", "{secret}");
    assert!(!text(&secret).contains("hunter2"), "{secret}");
    // What was written loads: later commands work.
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
}

#[test]
fn a_policy_that_would_expose_the_host_the_home_or_the_project_is_not_applied_by_yes_alone() {
    let parent = {
        let ws = Workspace::new();
        ws.path()
            .canonicalize()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf()
    };
    let home = std::env::var("HOME").expect("HOME is set");
    for (shape, allow, exposes) in [
        ("the whole host", "fs:///".to_string(), "the whole host"),
        (
            "the home directory",
            format!("fs://{home}"),
            "your home directory",
        ),
        (
            "a directory holding the project",
            format!("fs://{}", parent.display()),
            "a directory holding this project",
        ),
    ] {
        let policy = format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"{allow}\"\n        access: [\"read\"]\n      - uri: \"fs://public\"\n        access: [\"read\"]\n"
        );
        let ws = workspace(&policy);
        let added = ws.cordon(&[
            "--yes",
            "add",
            "component/files.wasm",
            "--policy",
            "policy.yaml",
        ]);
        assert_eq!(added.code, 0, "{shape}: {}", added.stderr);
        assert!(
            added.stdout.contains(&format!("it exposes {exposes}"))
                && added.stdout.contains("--allow-broad-grants"),
            "{shape}: the proposal says what the grant would expose: {}",
            added.stdout
        );
        let dirs = granted_dirs(&written_grant(&ws));
        assert_eq!(
            dirs,
            ["public"],
            "{shape}: only the narrow grant is written"
        );

        // Asked for explicitly, it is granted, and the warning says what it exposes.
        let ws = workspace(&format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"{allow}\"\n        access: [\"read\"]\n"
        ));
        let added = ws.cordon(&[
            "--yes",
            "add",
            "component/files.wasm",
            "--policy",
            "policy.yaml",
            "--allow-broad-grants",
        ]);
        assert_eq!(added.code, 0, "{shape}: {}", added.stderr);
        assert!(
            added.stdout.contains("warning: ") && added.stdout.contains(exposes),
            "{shape}: {}",
            added.stdout
        );
        assert_eq!(
            granted_dirs(&written_grant(&ws)).len(),
            1,
            "{shape}: the broad grant is written"
        );
    }
}
