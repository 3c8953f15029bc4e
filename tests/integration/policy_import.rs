//! `cordon --yes add COMPONENT --policy policy.yaml` with a Wassette policy: a category
//! (storage, network, environment) with any deny rule has none of its allows granted, however the
//! deny is written, each listed as left out for the operator; a category without denies is
//! granted as narrowly as cordon can; a grant of the host, the home or the project is held back.
//! The component cannot read what was not granted.

use crate::support::{Workspace, guest_dir, kind, text};

/// A workspace with the Wassette-style files component at `component/files.wasm`, `data/` with a
/// report and `data/secret/key.txt`, an unrelated `public/`, and `policy.yaml`.
fn workspace(policy: &str) -> Workspace {
    let ws = Workspace::new()
        .file("data/report.txt", "quarterly numbers\n")
        .file("data/secret/key.txt", "hunter2\n")
        .file("public/readme.txt", "hello\n")
        .file("policy.yaml", policy);
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

fn add_with_policy(ws: &Workspace) -> crate::support::Run {
    let added = ws.cordon(&[
        "--yes",
        "add",
        "component/files.wasm",
        "--policy",
        "policy.yaml",
    ]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    added
}

#[test]
fn an_approved_policy_grants_nothing_of_a_category_with_denies() {
    // Spellings of a storage deny that earlier versions had to read (a relative `./`, a glob
    // first, `..` through a link): none is read, each keeps every storage allow out.
    for deny in [
        "fs://./data/secret/**",
        "fs://**/secret/**",
        "fs://link/../secret",
    ] {
        let ws = workspace(&format!(
            "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data/**\"\n        access: [\"read\", \"write\"]\n      - uri: \"fs://public\"\n        access: [\"read\"]\n    deny:\n      - uri: \"{deny}\"\n  network:\n    allow:\n      - host: \"api.example.com\"\n    deny:\n      - host: \"*.example.com\"\n  environment:\n    allow:\n      - key: \"FILES_GREETING\"\n      - key: \"FILES_TOKEN\"\n    deny:\n      - key: \" FILES_TOKEN \"\n  resources:\n    limits:\n      memory: \"64Mi\"\n"
        ));
        let added = add_with_policy(&ws);
        let grant = written_grant(&ws);
        assert!(granted_dirs(&grant).is_empty(), "{deny}: {grant}");
        assert!(grant.get("http").is_none(), "{deny}: {grant}");
        assert!(grant.get("env").is_none(), "{deny}: {grant}");
        assert_eq!(grant["limits"]["memory"].as_str(), Some("64MiB"), "{grant}");
        for (allow, category) in [
            ("storage \"fs://data/**\"", "storage"),
            ("storage \"fs://public\"", "storage"),
            ("network host \"api.example.com\"", "network"),
            ("environment key \"FILES_GREETING\"", "environment"),
            ("environment key \"FILES_TOKEN\"", "environment"),
        ] {
            let line = format!(
                "left out: {allow}: the policy has {category} deny rules, which cordon does not interpret, so no {category} allow is proposed; grant what the denies leave allowed by hand"
            );
            assert!(
                added.stdout.contains(&line),
                "{line:?} in:\n{}",
                added.stdout
            );
        }
        for path in ["/data/secret/key.txt", "/data/report.txt"] {
            let read = ws.call("read_file", &format!(r#"{{"path": "{path}"}}"#));
            assert_eq!(kind(&read), "capability_denied", "{deny}: {read}");
            assert!(!text(&read).contains("hunter2"), "{deny}: {read}");
        }
        // What was written loads: later commands work.
        let listed = ws.cordon(&["list"]);
        assert_eq!(listed.code, 0, "{}", listed.stderr);
    }
}

#[test]
fn an_approved_policy_grants_the_allows_of_a_category_without_denies() {
    let ws = workspace(
        "permissions:\n  storage:\n    allow:\n      - uri: \"fs://data/**\"\n        access: [\"read\"]\n      - uri: \"fs://public/*.txt\"\n        access: [\"read\"]\n  network:\n    allow:\n      - host: \"api.example.com\"\n    deny:\n      - cidr: \"10.0.0.0/8\"\n  environment:\n    allow:\n      - key: \"FILES_GREETING\"\n    deny: []\n",
    );
    let added = add_with_policy(&ws);
    let grant = written_grant(&ws);
    assert_eq!(granted_dirs(&grant), ["data"], "{grant}");
    assert_eq!(grant["dirs"][0]["mode"].as_str(), Some("ro"), "{grant}");
    assert!(grant.get("http").is_none(), "{grant}");
    assert_eq!(grant["env"][0].as_str(), Some("FILES_GREETING"), "{grant}");
    for line in [
        "left out: storage \"fs://public/*.txt\": cordon grants whole directories",
        "left out: network host \"api.example.com\": the policy has network deny rules",
    ] {
        assert!(
            added.stdout.contains(line),
            "{line:?} in:\n{}",
            added.stdout
        );
    }
    let read = ws.call("read_file", r#"{"path": "/data/report.txt"}"#);
    assert_eq!(text(&read), "quarterly numbers\n", "{read}");
    let public = ws.call("read_file", r#"{"path": "/public/readme.txt"}"#);
    assert_eq!(kind(&public), "capability_denied", "{public}");
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
