//! Signed plugins against a real OCI registry: a cosign keyed signature (written here in cosign's
//! layout with `openssl`, not by cordon) is accepted with its key in `[trust.keys]` and refused
//! with another key or for another artifact; `require = "signed"` refuses an unsigned artifact and
//! a plugin copied in by hand, `[trust] unsigned` lets one in by name and `cordon list` says so;
//! `cordon push --sign` writes a signature `openssl` verifies and `cordon verify` reports; a key
//! dropped from `[trust.keys]` refuses the plugin at load; a signer other than the one the lock
//! recorded is refused by `cordon add` (without --force) and by `cordon sync`; what would undo the
//! policy (a pattern that cannot match, a key file a plugin could rewrite, `cordon lock` dropping
//! a refused plugin's record, `cordon test` with the config's grants) is refused.

use crate::support::Workspace;
use crate::support::hostile_http::{component, sha256};
use crate::support::real_registry::Registry;
use base64::Engine as _;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A P-256 key pair made by openssl in `dir`: (private key file, public key PEM, fingerprint as
/// the lock records it).
fn key_pair(dir: &Path, name: &str) -> (PathBuf, String, String) {
    let private = dir.join(format!("{name}.pem"));
    let ok = Command::new("openssl")
        .args([
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-out",
        ])
        .arg(&private)
        .output()
        .expect("openssl is installed");
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let public = |form: &str| {
        let out = Command::new("openssl")
            .args(["pkey", "-pubout", "-outform", form, "-in"])
            .arg(&private)
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    let pem = String::from_utf8(public("PEM")).unwrap();
    let fingerprint = format!("key sha256:{}", sha256(&public("DER")));
    (private, pem, fingerprint)
}

/// Signs the manifest `digest` of `repository` with `key` as cosign does (the simple-signing
/// payload, ECDSA over its bytes, under the tag `sha256-<hex>.sig`), with openssl and plain
/// HTTP: nothing of cordon's.
fn cosign_sign(registry: &Registry, repository: &str, digest: &str, key: &Path) {
    cosign_sign_by(registry, repository, digest, &[key]);
}

/// [`cosign_sign`] by several keys, their signatures in this order.
fn cosign_sign_by(registry: &Registry, repository: &str, digest: &str, keys: &[&Path]) {
    let payload = serde_json::to_vec(&json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{repository}", registry.address)},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature",
        },
        "optional": null,
    }))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("payload"), &payload).unwrap();
    let signatures: Vec<String> = keys
        .iter()
        .map(|key| {
            let out = Command::new("openssl")
                .args(["dgst", "-sha256", "-sign"])
                .arg(key)
                .arg(dir.path().join("payload"))
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            base64::engine::general_purpose::STANDARD.encode(&out.stdout)
        })
        .collect();
    let config =
        br#"{"architecture":"","config":{},"os":"","rootfs":{"type":"layers","diff_ids":[]}}"#;
    let config_digest = registry.put_blob(repository, config);
    let payload_digest = registry.put_blob(repository, &payload);
    registry.put_manifest(
        repository,
        &format!("{}.sig", digest.replacen(':', "-", 1)),
        &json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
            "layers": signatures.iter().map(|signature| json!({
                "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                "digest": payload_digest,
                "size": payload.len(),
                "annotations": {"dev.cosignproject.cosign/signature": signature},
            })).collect::<Vec<_>>(),
        }),
    );
}

/// A workspace whose `[trust]` trusts the keys `keys` (name, public PEM) with `require`.
fn trusting(keys: &[(&str, &str)], rest: &str) -> Workspace {
    let mut ws = Workspace::new();
    let mut config = String::from("[trust]\n") + rest + "\n[trust.keys]\n";
    for (name, pem) in keys {
        ws = ws.file(&format!("keys/{name}.pub"), pem);
        config.push_str(&format!("{name} = \"keys/{name}.pub\"\n"));
    }
    ws.config(&config)
}

fn locked_signer(ws: &Workspace, name: &str) -> Option<String> {
    let lock: toml::Value =
        toml::from_str(&std::fs::read_to_string(ws.path().join("cordon.lock")).unwrap()).unwrap();
    lock["sources"][name]
        .get("signer")
        .and_then(|signer| signer.as_str())
        .map(str::to_string)
}

#[test]
fn a_cosign_keyed_signature_is_accepted_with_its_key_and_refused_with_another() {
    let keys = tempfile::tempdir().unwrap();
    let (release, release_pub, release_fingerprint) = key_pair(keys.path(), "release");
    let (_, other_pub, _) = key_pair(keys.path(), "other");
    let registry = Registry::start(None);
    registry.oras_push(&component("fixture_probe"), "tools/probe:1.0.0", None);
    let (_, digest) = registry.manifest("tools/probe", "1.0.0");
    cosign_sign(&registry, "tools/probe", &digest, &release);
    let reference = format!("oci://{}/tools/probe:1.0.0", registry.address);

    let ws = trusting(&[("release", &release_pub)], "require = \"signed\"");
    let added = ws.cordon(&["add", &reference]);
    assert_eq!(added.code, 0, "{}{}", added.stdout, added.stderr);
    assert!(
        added.stdout.contains("signed by the key `release`"),
        "{}",
        added.stdout
    );
    assert_eq!(locked_signer(&ws, "probe"), Some(release_fingerprint));
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 0, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed.stdout.contains("(signed by the key `release`)"),
        "{}",
        listed.stdout
    );

    // Trusting another key only: refused, and nothing written.
    let ws = trusting(&[("other", &other_pub)], "require = \"signed\"");
    let refused = ws.cordon(&["add", &reference]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("requires")
            && refused.stderr.contains("signed by no key in [trust.keys]"),
        "{}",
        refused.stderr
    );
    assert!(!ws.plugin_path("probe").exists());
    assert!(!ws.path().join("cordon.lock").exists());

    // The same signature beside another artifact vouches for nothing there.
    registry.oras_push(&component("fixture_many_tools"), "tools/many:1.0.0", None);
    let (_, many) = registry.manifest("tools/many", "1.0.0");
    let (signature_manifest, _) = registry.manifest(
        "tools/probe",
        &format!("{}.sig", digest.replacen(':', "-", 1)),
    );
    for layer in signature_manifest["layers"].as_array().unwrap() {
        let bytes = registry.blob("tools/probe", layer["digest"].as_str().unwrap());
        registry.put_blob("tools/many", &bytes);
    }
    let config = registry.blob(
        "tools/probe",
        signature_manifest["config"]["digest"].as_str().unwrap(),
    );
    registry.put_blob("tools/many", &config);
    registry.put_manifest(
        "tools/many",
        &format!("{}.sig", many.replacen(':', "-", 1)),
        &signature_manifest,
    );
    let ws = trusting(&[("release", &release_pub)], "require = \"signed\"");
    let moved = ws.cordon(&[
        "add",
        &format!("oci://{}/tools/many:1.0.0", registry.address),
    ]);
    assert_ne!(moved.code, 0);
    assert!(
        moved.stderr.contains(&format!(
            "the payload signs the manifest {digest}, not {many}"
        )),
        "{}",
        moved.stderr
    );
}

#[test]
fn require_signed_refuses_unsigned_plugins_and_unsigned_lets_one_in_by_name() {
    let keys = tempfile::tempdir().unwrap();
    let (_, release_pub, _) = key_pair(keys.path(), "release");
    let registry = Registry::start(None);
    registry.oras_push(&component("fixture_probe"), "tools/probe:1.0.0", None);
    let reference = format!("oci://{}/tools/probe:1.0.0", registry.address);

    let ws = trusting(&[("release", &release_pub)], "require = \"signed\"");
    let refused = ws.cordon(&["add", &reference]);
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stderr
            .contains("no signature (cosign keeps them under")
            && refused.stderr.contains("[trust] unsigned = [\"probe\"]"),
        "{}",
        refused.stderr
    );
    assert!(!ws.plugin_path("probe").exists());

    let ws = trusting(
        &[("release", &release_pub)],
        "require = \"signed\"\nunsigned = [\"probe\"]",
    )
    .plugin("fixture_many_tools", "handmade");
    let added = ws.cordon(&["add", &reference]);
    assert_eq!(added.code, 0, "{}{}", added.stdout, added.stderr);
    assert_eq!(locked_signer(&ws, "probe"), None);
    // A plugin copied in by hand has no signed install on record: refused at load, by name.
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed
            .stdout
            .contains("(unsigned, let in by [trust] unsigned)"),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains("handmade")
            && listed
                .stdout
                .contains("cordon.lock records no signed install"),
        "{}",
        listed.stdout
    );
    // Required only for the sources named: the hand-copied plugin is not one of them.
    let ws = ws.config(&format!(
        "[trust]\nrequire = [\"oci://{}/tools/*\"]\nunsigned = [\"probe\"]\n[trust.keys]\nrelease = \"keys/release.pub\"\n[plugins.probe]\nsha256 = \"{}\"\n",
        registry.address,
        sha256(&component("fixture_probe"))
    ));
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 0, "{}{}", listed.stdout, listed.stderr);
}

#[test]
fn cordon_push_sign_writes_what_openssl_verifies_and_a_dropped_key_refuses_the_plugin() {
    let keys = tempfile::tempdir().unwrap();
    let (release, release_pub, release_fingerprint) = key_pair(keys.path(), "release");
    let (_, other_pub, _) = key_pair(keys.path(), "other");
    let registry = Registry::start(None);
    let publisher = Workspace::new().plugin("fixture_probe", "probe");
    let reference = format!("oci://{}/tools/probe:2.0.0", registry.address);
    let pushed = publisher.cordon(&[
        "push",
        "probe",
        &reference,
        "--sign",
        release.to_str().unwrap(),
    ]);
    assert_eq!(pushed.code, 0, "{}{}", pushed.stdout, pushed.stderr);
    assert!(pushed.stdout.contains("signed oci://"), "{}", pushed.stdout);

    // An independent verifier accepts what cordon signed.
    let (_, digest) = registry.manifest("tools/probe", "2.0.0");
    let (signatures, _) = registry.manifest(
        "tools/probe",
        &format!("{}.sig", digest.replacen(':', "-", 1)),
    );
    let layer = &signatures["layers"][0];
    let payload = registry.blob("tools/probe", layer["digest"].as_str().unwrap());
    let payload_json: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(
        payload_json["critical"]["image"]["docker-manifest-digest"],
        digest
    );
    let signature = base64::engine::general_purpose::STANDARD
        .decode(
            layer["annotations"]["dev.cosignproject.cosign/signature"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("payload"), &payload).unwrap();
    std::fs::write(dir.path().join("signature"), &signature).unwrap();
    std::fs::write(dir.path().join("release.pub"), &release_pub).unwrap();
    let verified = Command::new("openssl")
        .args([
            "dgst",
            "-sha256",
            "-verify",
            "release.pub",
            "-signature",
            "signature",
            "payload",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&verified.stdout).trim(),
        "Verified OK"
    );

    let ws = trusting(&[("release", &release_pub)], "require = \"signed\"");
    let checked = ws.cordon(&["verify", &reference]);
    assert_eq!(checked.code, 0, "{}{}", checked.stdout, checked.stderr);
    assert!(
        checked.stdout.contains("signed by the key `release`")
            && checked.stdout.contains("[trust]: accepted"),
        "{}",
        checked.stdout
    );
    assert_eq!(ws.cordon(&["add", &reference]).code, 0);
    assert_eq!(
        locked_signer(&ws, "probe"),
        Some(release_fingerprint.clone())
    );

    // The key is no longer trusted: the plugin is refused at load, and `verify` says why.
    let pinned = sha256(&component("fixture_probe"));
    let ws = ws.file("keys/other.pub", &other_pub).config(&format!(
        "[trust]\nrequire = \"signed\"\n[trust.keys]\nother = \"keys/other.pub\"\n[plugins.probe]\nsha256 = \"{pinned}\"\n"
    ));
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed.stdout.contains(&format!(
            "signed by {release_fingerprint}, which [trust.keys] does not name"
        )),
        "{}",
        listed.stdout
    );
    let checked = ws.cordon(&["verify", "probe"]);
    assert_eq!(checked.code, 1, "{}{}", checked.stdout, checked.stderr);
    assert!(
        checked.stdout.contains("[trust]: refused"),
        "{}",
        checked.stdout
    );
}

#[test]
fn a_signer_other_than_the_locked_one_is_a_new_decision() {
    let keys = tempfile::tempdir().unwrap();
    let (alice, alice_pub, alice_fingerprint) = key_pair(keys.path(), "alice");
    let (bob, bob_pub, bob_fingerprint) = key_pair(keys.path(), "bob");
    let registry = Registry::start(None);
    registry.oras_push(&component("fixture_probe"), "tools/probe:1", None);
    let (_, first) = registry.manifest("tools/probe", "1");
    cosign_sign(&registry, "tools/probe", &first, &alice);
    registry.oras_push(&component("fixture_many_tools"), "tools/probe:2", None);
    let (_, second) = registry.manifest("tools/probe", "2");
    cosign_sign(&registry, "tools/probe", &second, &bob);

    let ws = trusting(&[("alice", &alice_pub), ("bob", &bob_pub)], "");
    let added = ws.cordon(&["add", &format!("oci://{}/tools/probe:1", registry.address)]);
    assert_eq!(added.code, 0, "{}{}", added.stdout, added.stderr);
    assert_eq!(locked_signer(&ws, "probe"), Some(alice_fingerprint.clone()));
    let update = format!("oci://{}/tools/probe:2", registry.address);
    let refused = ws.cordon(&["add", &update]);
    assert_ne!(refused.code, 0);
    assert!(
        refused
            .stderr
            .contains(&format!("records it as signed by {alice_fingerprint}"))
            && refused.stderr.contains("--force"),
        "{}",
        refused.stderr
    );
    let forced = ws.cordon(&["add", &update, "--force"]);
    assert_eq!(forced.code, 0, "{}{}", forced.stdout, forced.stderr);
    assert_eq!(locked_signer(&ws, "probe"), Some(bob_fingerprint));

    // The lock says bob; trust only alice, and sync refuses to install it again.
    let ws = ws.config("[trust]\n[trust.keys]\nalice = \"keys/alice.pub\"\n");
    std::fs::remove_file(ws.plugin_path("probe")).unwrap();
    let synced = ws.cordon(&["sync"]);
    assert_ne!(synced.code, 0);
    assert!(
        synced.stderr.contains("records it as signed by"),
        "{}",
        synced.stderr
    );
    assert!(!ws.plugin_path("probe").exists());
}

#[test]
fn the_recorded_signer_is_found_among_others_and_a_refused_plugin_keeps_its_record() {
    let keys = tempfile::tempdir().unwrap();
    let (release, release_pub, release_fingerprint) = key_pair(keys.path(), "release");
    let (partner, partner_pub, _) = key_pair(keys.path(), "partner");
    let registry = Registry::start(None);
    registry.oras_push(&component("fixture_probe"), "acme/probe:1", None);
    let (_, digest) = registry.manifest("acme/probe", "1");
    cosign_sign(&registry, "acme/probe", &digest, &release);
    let pattern = format!("require = [\"{}/acme/*\"]", registry.address);
    let ws = trusting(
        &[("release", &release_pub), ("partner", &partner_pub)],
        &pattern,
    );
    let added = ws.cordon(&["add", &format!("oci://{}/acme/probe:1", registry.address)]);
    assert_eq!(added.code, 0, "{}{}", added.stdout, added.stderr);
    assert_eq!(
        locked_signer(&ws, "probe"),
        Some(release_fingerprint.clone())
    );

    // Another trusted signature put first does not change who the lock says signed it.
    cosign_sign_by(&registry, "acme/probe", &digest, &[&partner, &release]);
    std::fs::remove_file(ws.plugin_path("probe")).unwrap();
    let synced = ws.cordon(&["sync"]);
    assert_eq!(synced.code, 0, "{}{}", synced.stdout, synced.stderr);

    // The key is dropped: refused at load; `cordon lock` keeps the record, so it stays refused.
    let pinned = sha256(&component("fixture_probe"));
    let ws = ws.config(&format!(
        "[trust]\n{pattern}\n[trust.keys]\npartner = \"keys/partner.pub\"\n[plugins.probe]\nsha256 = \"{pinned}\"\n"
    ));
    assert_eq!(ws.cordon(&["list"]).code, 1);
    ws.cordon(&["lock"]);
    assert_eq!(locked_signer(&ws, "probe"), Some(release_fingerprint));
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "{}{}", listed.stdout, listed.stderr);
    assert!(
        listed.stdout.contains("which [trust.keys] does not name"),
        "{}",
        listed.stdout
    );
}

#[test]
fn the_policy_refuses_what_would_undo_it_and_cordon_test_applies_it() {
    let keys = tempfile::tempdir().unwrap();
    let (_, release_pub, _) = key_pair(keys.path(), "release");
    // A pattern naming a tag could never match a recorded source.
    let ws = trusting(
        &[("release", &release_pub)],
        "require = [\"ghcr.io/acme/tool:1\"]",
    );
    let refused = ws.cordon(&["list"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("names a tag or a digest"),
        "{}",
        refused.stderr
    );
    // A key file a plugin could rewrite would let that plugin choose whose signatures count.
    let ws = trusting(&[("release", &release_pub)], "").config(
        "[trust]\nrequire = \"signed\"\nunsigned = [\"probe\"]\n[trust.keys]\nrelease = \"keys/release.pub\"\n[plugins.probe]\ndirs = [{ host = \"keys\", guest = \"/keys\", mode = \"rw\" }]\n",
    );
    let refused = ws.cordon(&["list"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("[trust.keys] key file"),
        "{}",
        refused.stderr
    );
    // `cordon test` with the config refuses, as loading does, a plugin [trust] would refuse.
    let ws = trusting(&[("release", &release_pub)], "require = \"signed\"")
        .plugin("fixture_probe", "probe");
    let tested = ws.cordon(&["--config", "cordon.toml", "test", "plugins/probe.wasm"]);
    assert_ne!(tested.code, 0, "{}{}", tested.stdout, tested.stderr);
    assert!(
        format!("{}{}", tested.stdout, tested.stderr)
            .contains("cordon.lock records no signed install"),
        "{}{}",
        tested.stdout,
        tested.stderr
    );
}

#[test]
fn a_pattern_holds_for_every_spelling_of_the_registry_port() {
    let keys = tempfile::tempdir().unwrap();
    let (_, release_pub, _) = key_pair(keys.path(), "release");
    let registry = Registry::start(None);
    registry.oras_push(&component("fixture_probe"), "acme/probe:1", None);
    let ws = trusting(
        &[("release", &release_pub)],
        &format!("require = [\"{}/acme/*\"]", registry.address),
    );
    let (host, port) = registry.address.rsplit_once(':').unwrap();
    let refused = ws.cordon(&["add", &format!("oci://{host}:0{port}/acme/probe:1")]);
    assert_ne!(refused.code, 0, "{}{}", refused.stdout, refused.stderr);
    assert!(refused.stderr.contains("requires"), "{}", refused.stderr);
    assert!(!ws.plugin_path("probe").exists());
}

#[test]
fn a_running_server_stops_serving_plugins_whose_key_was_revoked() {
    let keys = tempfile::tempdir().unwrap();
    let (release, release_pub, _) = key_pair(keys.path(), "release");
    let (_, other_pub, _) = key_pair(keys.path(), "other");
    let registry = Registry::start(None);
    for (fixture, repository) in [("fixture_probe", "acme/probe"), ("guard", "acme/guard")] {
        registry.oras_push(&component(fixture), &format!("{repository}:1"), None);
        let (_, digest) = registry.manifest(repository, "1");
        cosign_sign(&registry, repository, &digest, &release);
    }
    let ws = trusting(
        &[("release", &release_pub), ("other", &other_pub)],
        "require = \"signed\"",
    );
    for repository in ["acme/probe", "acme/guard"] {
        let added = ws.cordon(&["add", &format!("oci://{}/{repository}:1", registry.address)]);
        assert_eq!(added.code, 0, "{}{}", added.stdout, added.stderr);
    }
    let pins = format!(
        "[plugins.probe]\nsha256 = \"{}\"\n[plugins.guard]\nsha256 = \"{}\"\nhook = true\n",
        sha256(&component("fixture_probe")),
        sha256(&component("guard"))
    );
    let ws = ws.config(&format!(
        "[trust]\nrequire = \"signed\"\n[trust.keys]\nrelease = \"keys/release.pub\"\nother = \"keys/other.pub\"\n{pins}"
    ));
    let mut server = crate::support::stdio_server::Server::start(&ws);
    let tools = |server: &mut crate::support::stdio_server::Server, id: i64| {
        server.send(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        server.answers(&[id])[0]["result"]["tools"]
            .as_array()
            .unwrap()
            .len()
    };
    assert!(tools(&mut server, 1) > 0);
    // The key is revoked: the reload fails (the granted hook is refused), and what it signed
    // stops serving rather than running on.
    let ws = ws.config(&format!(
        "[trust]\nrequire = \"signed\"\n[trust.keys]\nother = \"keys/other.pub\"\n{pins}"
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut id = 2;
    while tools(&mut server, id) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the revoked plugins still serve"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        id += 1;
    }
    drop(ws);
}
