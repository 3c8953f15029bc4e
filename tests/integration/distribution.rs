//! Installing and publishing plugins against a real OCI registry (the CNCF Distribution server,
//! installed by tests/registry/install.sh and started per test on 127.0.0.1): a component pushed
//! by `oras push` installs with `cordon add` by tag and by digest, and components cross with
//! `wkg` (wasm-pkg-tools) both ways; a digest that does not match is
//! refused and nothing is written; `cordon add --locked` and `cordon sync` reinstall exactly the
//! locked set, pinned by digest even when the tag moves; `cordon push` then `cordon add` round
//! trips in the Wasm component layout; credentials come from the environment or the docker
//! config file and never reach the config or the lock; a component written for Wassette, pushed
//! with `wkg`, installs with the grants of its policy.yaml.

use crate::support::Workspace;
use crate::support::hostile_http::{component, sha256};
use crate::support::real_registry::Registry;
use serde_json::Value;
use std::process::Command;

fn lock(ws: &Workspace) -> toml::Value {
    toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap()).unwrap()
}

#[test]
fn a_component_pushed_by_oras_installs_by_tag_and_by_digest() {
    let registry = Registry::start(None);
    let probe = component("fixture_probe");
    registry.oras_push(&probe, "tools/probe:1.0.0", None);
    let (_, digest) = registry.manifest("tools/probe", "1.0.0");
    let ws = Workspace::new();

    let out = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/probe:1.0.0", registry.address),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("contract 0."), "{}", out.stdout);
    assert!(out.stdout.contains("tools: "), "{}", out.stdout);
    assert!(out.stdout.contains("echo"), "{}", out.stdout);
    assert!(
        out.stdout.contains("could use, if granted: ")
            && out.stdout.contains("files (grant directories with `dirs`)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("granted: nothing"), "{}", out.stdout);
    assert_eq!(
        std::fs::read(ws.path().join("plugins/probe.wasm")).unwrap(),
        probe
    );
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap()).unwrap();
    assert_eq!(
        config["plugins"]["probe"]["sha256"].as_str().unwrap(),
        sha256(&probe)
    );
    assert_eq!(
        config["plugins"]["probe"].as_table().unwrap().len(),
        1,
        "pinned, with no grants"
    );
    let source = &lock(&ws)["sources"]["probe"];
    assert_eq!(
        source["source"].as_str().unwrap(),
        format!("oci://{}/tools/probe@{digest}", registry.address),
        "the lock pins the manifest digest even when added by tag"
    );
    assert_eq!(source["sha256"].as_str().unwrap(), sha256(&probe));
    let call = ws.cordon(&["call", "echo", r#"{"text": "installed"}"#]);
    assert_eq!(call.code, 0, "{}", call.stderr);
    assert!(call.stdout.contains("installed"), "{}", call.stdout);

    let out = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/probe@{digest}", registry.address),
        "--name",
        "probe_pinned",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read(ws.path().join("plugins/probe_pinned.wasm")).unwrap(),
        probe
    );
}

#[test]
fn components_cross_with_wkg_both_ways() {
    let registry = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let probe = component("fixture_probe");
    let file = dir.path().join("probe.wasm");
    std::fs::write(&file, &probe).unwrap();

    // Pushed by `wkg oci push`, installed by `cordon add`.
    let pushed = format!("{}/wkg/probe:1.0.0", registry.address);
    registry.wkg(&["push", &pushed, file.to_str().unwrap()]);
    let (wkg_manifest, digest) = registry.manifest("wkg/probe", "1.0.0");
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{pushed}")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read(ws.path().join("plugins/probe.wasm")).unwrap(),
        probe
    );
    assert_eq!(
        lock(&ws)["sources"]["probe"]["source"].as_str().unwrap(),
        format!("oci://{}/wkg/probe@{digest}", registry.address)
    );
    let call = ws.cordon(&["call", "echo", r#"{"text": "via wkg"}"#]);
    assert!(call.stdout.contains("via wkg"), "{}", call.stderr);

    // Pushed by `cordon push`, pulled by `wkg oci pull`, in the same layout as wkg's own.
    let published = format!("{}/cordon/probe:1.0.0", registry.address);
    let out = ws.cordon(&["push", "probe", &format!("oci://{published}")]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pulled = dir.path().join("pulled.wasm");
    registry.wkg(&["pull", &published, "-o", pulled.to_str().unwrap()]);
    assert_eq!(std::fs::read(&pulled).unwrap(), probe);
    let (cordon_manifest, _) = registry.manifest("cordon/probe", "1.0.0");
    assert_eq!(
        wkg_manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    for pointer in [
        "/mediaType",
        "/config/mediaType",
        "/layers/0/mediaType",
        "/layers/0/digest",
        "/layers/0/size",
    ] {
        assert_eq!(
            cordon_manifest.pointer(pointer),
            wkg_manifest.pointer(pointer),
            "{pointer}: cordon {cordon_manifest} wkg {wkg_manifest}"
        );
    }
    assert_eq!(cordon_manifest["layers"].as_array().unwrap().len(), 1);
}

#[test]
fn a_component_built_for_wassette_installs_with_its_policy_and_works_inside_its_grants() {
    let registry = Registry::start(None);
    let dir = tempfile::tempdir().unwrap();
    let files = component("fixture_wassette_files");
    let file = dir.path().join("files.wasm");
    std::fs::write(&file, &files).unwrap();
    let pushed = format!("{}/examples/files:0.1.0", registry.address);
    registry.wkg(&["push", &pushed, file.to_str().unwrap()]);

    let ws = Workspace::new()
        .file("data/report.txt", "quarterly numbers\n")
        .file("private/key.txt", "secret\n")
        .file(
            "policy.yaml",
            include_str!("../fixtures/wassette_files/policy.yaml"),
        );
    let reference = format!("oci://{pushed}");
    // Not on a terminal and no --yes: the grants are shown, not applied.
    let shown = ws.cordon(&["add", &reference, "--policy", "policy.yaml"]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let data = ws.path().canonicalize().unwrap().join("data");
    for line in [
        "(a Wassette policy) proposes for [plugins.files]:".to_string(),
        format!("dirs: {} at /data (ro)", data.display()),
        "http: https://api.example.com".to_string(),
        "env: FILES_GREETING".to_string(),
        "not applied (run again with --yes".to_string(),
    ] {
        assert!(
            shown.stdout.contains(&line),
            "{line:?} in:\n{}",
            shown.stdout
        );
    }
    let config = std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap();
    assert!(!config.contains("dirs"), "{config}");
    let ungranted = ws.call("read_file", r#"{"path": "/data/report.txt"}"#);
    // Not granted yet: the host refuses the read, naming it.
    assert_eq!(
        crate::support::kind(&ungranted),
        "capability_denied",
        "{ungranted}"
    );
    assert!(
        crate::support::text(&ungranted).contains("no directory is granted to this plugin"),
        "{ungranted}"
    );

    let applied = ws.cordon(&["--yes", "add", &reference, "--policy", "policy.yaml"]);
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    assert!(
        applied.stdout.contains("granted under [plugins.files]"),
        "{}",
        applied.stdout
    );
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap()).unwrap();
    let grant = &config["plugins"]["files"];
    assert_eq!(grant["dirs"][0]["host"].as_str(), Some("data"), "{grant}");
    assert_eq!(grant["dirs"][0]["mode"].as_str(), Some("ro"), "{grant}");
    assert_eq!(
        grant["http"][0]["origin"].as_str(),
        Some("https://api.example.com")
    );
    assert_eq!(grant["sha256"].as_str(), Some(sha256(&files).as_str()));
    let read = ws.call("read_file", r#"{"path": "/data/report.txt"}"#);
    assert_eq!(crate::support::text(&read), "quarterly numbers\n", "{read}");
    let private = ws.call("read_file", r#"{"path": "/private/key.txt"}"#);
    assert_eq!(
        crate::support::kind(&private),
        "capability_denied",
        "{private}"
    );
    assert!(
        !crate::support::text(&private).contains("secret"),
        "{private}"
    );
    let listing = ws.call("list_directory", r#"{"path": "/data"}"#);
    assert_eq!(
        listing["structured"]["result"][0], "[FILE] report.txt",
        "{listing}"
    );

    // A local file with a policy.yaml beside it: the policy is found without --policy.
    let beside = Workspace::new().file(
        "component/policy.yaml",
        "permissions:\n  environment:\n    allow:\n      - key: \"FILES_GREETING\"\n",
    );
    std::fs::write(beside.path().join("component/files.wasm"), &files).unwrap();
    let found = beside.cordon(&["add", "component/files.wasm"]);
    assert_eq!(found.code, 0, "{}", found.stderr);
    assert!(
        found.stdout.contains("env: FILES_GREETING"),
        "{}",
        found.stdout
    );
}

#[test]
fn a_digest_that_does_not_match_is_refused_and_nothing_is_written() {
    let registry = Registry::start(None);
    registry.oras_push(&component("fixture_probe"), "tools/probe:1.0.0", None);
    let ws = Workspace::new();
    let wrong = "0".repeat(64);
    let out = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/probe@sha256:{wrong}", registry.address),
    ]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("error"), "{}", out.stderr);
    let out = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/probe:1.0.0", registry.address),
        "--sha256",
        &wrong,
    ]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("the digest does not match"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
    std::fs::write(ws.path().join("local.wasm"), component("fixture_probe")).unwrap();
    let out = ws.cordon(&["add", "local.wasm", "--sha256", &wrong]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("the digest does not match"),
        "{}",
        out.stderr
    );
    assert!(!ws.path().join("plugins/probe.wasm").exists());
    assert!(!ws.path().join("plugins/local.wasm").exists());
    assert!(!ws.path().join("cordon.toml").exists());
    assert!(!ws.path().join("cordon.lock").exists());

    // Not a component at all: refused before anything is written.
    std::fs::write(ws.path().join("junk.wasm"), b"\0asm junk").unwrap();
    let out = ws.cordon(&["add", "junk.wasm"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("nothing was installed"),
        "{}",
        out.stderr
    );
    assert!(!ws.path().join("plugins/junk.wasm").exists());

    // A cordon.toml that does not load is said before anything is fetched, and left as it was.
    let broken = "[plugins.probe]\nlimits = { timeout = \"2s\" }\n\n[unknown_table]\nkey = 1\n";
    std::fs::write(ws.path().join("cordon.toml"), broken).unwrap();
    let out = ws.cordon(&["add", "local.wasm"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("unknown_table"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("must load before `cordon add` changes it"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap(),
        broken
    );
    assert!(!ws.path().join("plugins/local.wasm").exists());
}

#[test]
fn add_locked_and_sync_reinstall_exactly_the_locked_set() {
    let registry = Registry::start(None);
    let probe = component("fixture_probe");
    registry.oras_push(&probe, "tools/probe:stable", None);
    let ws = Workspace::new();
    let out = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/probe:stable", registry.address),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::write(ws.path().join("guard.wasm"), component("guard")).unwrap();
    let out = ws.cordon(&["add", "guard.wasm"]);
    assert_eq!(out.code, 0, "{}", out.stderr);

    // The tag moves to another component; the locked set stays what was approved.
    registry.oras_push(&component("redact"), "tools/probe:stable", None);
    std::fs::remove_dir_all(ws.path().join("plugins")).unwrap();
    let out = ws.cordon(&["add", "--locked"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read(ws.path().join("plugins/probe.wasm")).unwrap(),
        probe
    );
    assert_eq!(
        std::fs::read(ws.path().join("plugins/guard.wasm")).unwrap(),
        component("guard")
    );
    let out = ws.cordon(&["sync"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("probe: up to date"), "{}", out.stdout);

    // A locked digest the source no longer serves is an error naming the plugin.
    std::fs::write(ws.path().join("guard.wasm"), b"changed").unwrap();
    std::fs::remove_file(ws.path().join("plugins/guard.wasm")).unwrap();
    let out = ws.cordon(&["sync"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("installing guard as cordon.lock records it"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("the digest does not match"),
        "{}",
        out.stderr
    );
    assert!(!ws.path().join("plugins/guard.wasm").exists());
}

#[test]
fn cordon_push_then_cordon_add_round_trips_in_the_wasm_layout() {
    let registry = Registry::start(None);
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let reference = format!("oci://{}/published/probe:2.0", registry.address);
    let out = ws.cordon(&["push", "probe", &reference]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("install it pinned with: cordon add oci://"),
        "{}",
        out.stdout
    );
    let (manifest, _) = registry.manifest("published/probe", "2.0");
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    let config: Value = serde_json::from_slice(&registry.blob(
        "published/probe",
        manifest["config"]["digest"].as_str().unwrap(),
    ))
    .unwrap();
    assert_eq!(config["os"], "wasip2");
    assert_eq!(config["layerDigests"][0], manifest["layers"][0]["digest"]);
    let exports: Vec<&str> = config["component"]["exports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        exports
            .iter()
            .any(|e| e.starts_with("cordon:plugin/plugin@0.")),
        "{exports:?}"
    );

    let other = Workspace::new();
    let out = other.cordon(&["add", &reference]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read(other.path().join("plugins/probe.wasm")).unwrap(),
        component("fixture_probe")
    );
}

#[test]
fn registry_credentials_come_from_the_environment_or_the_docker_config_and_stay_secret() {
    let password = "s3cret-pa55";
    let htpasswd = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import crypt; print('tester:' + crypt.crypt('{password}', crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))"
            ),
        ])
        .output()
        .unwrap();
    let registry = Registry::start(Some(&String::from_utf8(htpasswd.stdout).unwrap()));
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let reference = format!("oci://{}/private/probe:1", registry.address);

    let out = ws.cordon(&["push", "probe", &reference]);
    assert_ne!(out.code, 0, "anonymous push to a private registry");
    let registry_host = reference
        .trim_start_matches("oci://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let env = [
        ("CORDON_REGISTRY", registry_host.as_str()),
        ("CORDON_REGISTRY_USERNAME", "tester"),
        ("CORDON_REGISTRY_PASSWORD", password),
    ];
    let out = ws.cordon_with_env(&["push", "probe", &reference], &env);
    assert_eq!(out.code, 0, "{}", out.stderr);

    let other = Workspace::new();
    let docker = other.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("tester:{password}"));
    std::fs::write(
        docker.join("config.json"),
        format!(
            r#"{{"auths": {{"http://{}": {{"auth": "{auth}"}}}}}}"#,
            registry.address
        ),
    )
    .unwrap();
    let out = other.cordon_with_env(
        &["add", &reference],
        &[("DOCKER_CONFIG", docker.to_str().unwrap())],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    for file in ["cordon.toml", "cordon.lock"] {
        let text = std::fs::read_to_string(other.path().join(file)).unwrap();
        assert!(
            !text.contains(password) && !text.contains(&auth),
            "{file}: {text}"
        );
    }
    assert!(!out.stdout.contains(password) && !out.stderr.contains(password));
}
