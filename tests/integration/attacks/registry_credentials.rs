//! Attacks on registry credentials (`cordon add`, `cordon sync`, `cordon push`): token realms,
//! probes and redirects that try to send a password to another host, upload locations elsewhere,
//! and credentials in URLs and references that must not be printed or locked. Each test asserts
//! the safe behaviour.

use crate::support::Workspace;
use crate::support::hostile_http::*;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// A registry on loopback whose `/v2/` answers with `challenge(n)` (n = how many `/v2/` requests
/// came before), and a token service on this machine's outside address over plain HTTP. Runs
/// `cordon add` with docker-config credentials for the registry; returns whether the token service
/// received them.
fn realm_receives_password(
    challenge: impl Fn(usize, &str) -> Option<String> + Send + Sync + 'static,
) -> Option<(bool, String)> {
    let ip = outside_ip()?;
    let realm = Server::start(&SocketAddr::new(ip, 0).to_string(), |_| {
        ok(r#"{"token":"t"}"#, "application/json")
    });
    let realm_url = format!("http://{}/token", realm.addr);
    let probes = AtomicUsize::new(0);
    let registry = Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" {
            let n = probes.fetch_add(1, Ordering::SeqCst);
            match challenge(n, &realm_url) {
                Some(value) => status(401, &[("WWW-Authenticate", value.as_str())], "{}"),
                None => ok("{}", "application/json"),
            }
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
    let leaked = carried(&realm.requests(), "alice", "alice-pw-123");
    Some((
        leaked,
        format!(
            "exit {}; stderr {}; realm saw {:?}",
            out.code,
            out.stderr,
            realm.requests()
        ),
    ))
}

#[test]
fn a_lowercase_bearer_challenge_does_not_slip_past_the_realm_check() {
    // checked_auth strips the prefix "Bearer" case-sensitively; oci-client matches the scheme
    // case-insensitively (RFC 7235) and sends the password to the realm.
    let Some((leaked, detail)) = realm_receives_password(|_, realm| {
        Some(format!("bearer realm=\"{realm}\",service=\"registry\""))
    }) else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    assert!(
        !leaked,
        "the password went in clear text to another host's token service: {detail}"
    );
}

#[test]
fn a_bearer_challenge_after_another_scheme_does_not_slip_past_the_realm_check() {
    // `Basic realm="x", Bearer realm="http://elsewhere"`: checked_auth sees no leading "Bearer";
    // oci-client's parser finds the Bearer challenge in the list.
    let Some((leaked, detail)) = realm_receives_password(|_, realm| {
        Some(format!(
            "Basic realm=\"registry\", Bearer realm=\"{realm}\",service=\"registry\""
        ))
    }) else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    assert!(
        !leaked,
        "the password went in clear text to another host's token service: {detail}"
    );
}

#[test]
fn a_second_realm_parameter_does_not_slip_past_the_realm_check() {
    // checked_auth reads the first `realm="`; oci-client keeps the last realm parameter.
    let Some((leaked, detail)) = realm_receives_password(|_, realm| {
        Some(format!(
            "Bearer realm=\"https://127.0.0.1:1/token\",service=\"registry\",realm=\"{realm}\""
        ))
    }) else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    assert!(
        !leaked,
        "the password went in clear text to another host's token service: {detail}"
    );
}

#[test]
fn a_realm_hidden_in_another_parameter_name_does_not_slip_past_the_realm_check() {
    // `xrealm="https://…"` contains `realm="`: checked_auth checks that, oci-client uses `realm`.
    let Some((leaked, detail)) = realm_receives_password(|_, realm| {
        Some(format!(
            "Bearer xrealm=\"https://127.0.0.1:1/token\",realm=\"{realm}\",service=\"registry\""
        ))
    }) else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    assert!(
        !leaked,
        "the password went in clear text to another host's token service: {detail}"
    );
}

#[test]
fn the_realm_check_and_the_sign_in_see_the_same_challenge() {
    // checked_auth probes GET /v2/ itself, then oci-client's auth() probes again: a registry that
    // answers the first probe with no challenge and the second with a plain-HTTP realm elsewhere.
    let Some((leaked, detail)) = realm_receives_password(|n, realm| {
        (n > 0).then(|| format!("Bearer realm=\"{realm}\",service=\"registry\""))
    }) else {
        eprintln!("no non-loopback address: skipped");
        return;
    };
    assert!(
        !leaked,
        "the password went in clear text to another host's token service: {detail}"
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
fn a_manifest_redirect_to_another_host_drops_basic_credentials() {
    // fetch_manifest sends Basic credentials itself with cordon's client; a 307 to another
    // loopback host must not carry them.
    let probe = component("fixture_probe");
    let body = manifest(&[(
        "application/wasm",
        &format!("sha256:{}", sha256(&probe)),
        probe.len() as i64,
    )]);
    let other = {
        let body = body.clone();
        Server::start("127.0.0.2:0", move |_| ok(body.clone(), MANIFEST_TYPE))
    };
    let location = format!("http://{}/v2/tools/probe/manifests/1", other.addr);
    let registry = Server::start("127.0.0.1:0", move |request| {
        if request.header("authorization").is_none() {
            status(401, &[("WWW-Authenticate", "Basic realm=\"r\"")], "{}")
        } else if request.path == "/v2/" {
            ok("{}", "application/json")
        } else if request.path.contains("/manifests/") {
            status(307, &[("Location", location.as_str())], "")
        } else {
            ok(probe.clone(), "application/octet-stream")
        }
    });
    let ws = Workspace::new();
    let docker = docker_config(&ws, &registry.addr.to_string(), "alice", "alice-pw-123");
    let _ = ws.cordon_with_env(
        &["add", &format!("oci://{}/tools/probe:1", registry.addr)],
        &[("DOCKER_CONFIG", docker.as_str())],
    );
    assert!(
        !carried(&other.requests(), "alice", "alice-pw-123"),
        "Basic credentials followed the manifest redirect: {:?}",
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
