//! The C SDK (wit-bindgen-c bindings, Zig, wit-component), through the bundled `hash` plugin built
//! by `cordon build` in `make test`: the SHA-256 of a granted file, invalid arguments caught by
//! the host, failures as `tool_error`, nothing outside the grant; and the plugin's own native
//! test of its SHA-256 against the standard's examples.

use crate::support::{Workspace, kind, text};
use sha2::Digest;

#[test]
fn a_c_tool_hashes_granted_files_only() {
    let content = "some bytes\n".repeat(10_000);
    let ws = Workspace::new()
        .plugin("hash", "hash")
        .file("data/big.txt", &content)
        .file("data/empty.txt", "")
        .file("secret.txt", "hunter2")
        .config("[plugins.hash]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n");

    let expected = hex::encode(sha2::Sha256::digest(content.as_bytes()));
    let big = ws.call("hash", r#"{"path": "/data/big.txt"}"#);
    assert_eq!(text(&big), format!("{expected}  /data/big.txt"), "{big}");
    assert_eq!(big["details"]["sha256"], expected.as_str());
    assert_eq!(big["details"]["bytes"], content.len());
    assert_eq!(
        text(&ws.call("hash", r#"{"path": "/data/empty.txt"}"#)),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  /data/empty.txt"
    );
    let escaped = ws.call("hash", r#"{"path": "/data/sp\u00e9cial \"q\".txt"}"#);
    assert_eq!(
        text(&escaped),
        "\"/data/spécial \"q\".txt\" does not exist (or is outside the granted directories)",
        "JSON escapes in arguments are decoded"
    );

    for bad in [
        r#"{}"#,
        r#"{"path": 7}"#,
        r#"{"path": "/data/a", "mode": "x"}"#,
    ] {
        assert_eq!(kind(&ws.call("hash", bad)), "invalid_arguments", "{bad}");
    }
    let directory = ws.call("hash", r#"{"path": "/data"}"#);
    assert_eq!(kind(&directory), "tool_error", "{directory}");

    let secret = ws.path().join("secret.txt");
    for path in [
        "/data/../secret.txt",
        secret.to_str().unwrap(),
        "/etc/passwd",
    ] {
        let escape = ws.call("hash", &format!(r#"{{"path": "{path}"}}"#));
        assert_eq!(escape["isError"], true, "{path}: {escape}");
        let unwanted = hex::encode(sha2::Sha256::digest(b"hunter2"));
        assert!(!text(&escape).contains(&unwanted), "{escape}");
    }
}

#[test]
fn the_hash_plugins_native_test_passes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/hash");
    assert_eq!(
        crate::support::run_native_c_test(&root, &["test_sha256.c", "sha256.c"]),
        "ok\n"
    );
}

#[test]
fn hooks_written_in_c_block_rewrite_and_replace() {
    let ws = crate::support::probe()
        .plugin("fixture_c_hook", "c_hook")
        .config("[plugins.c_hook]\nhook = true\n");
    crate::support::assert_echo_hook_blocks(&ws, "the C hook does not allow that word (in echo)");
    let rewritten = ws.call("echo", r#"{"text": "shout hi"}"#);
    assert_eq!(text(&rewritten), "SHOUTED BY C [seen by c]");
    assert_eq!(rewritten["details"]["tagged"], true);
    assert_eq!(
        text(&ws.call("counter", "{}")),
        "1",
        "other tools are not watched"
    );
    let asked = ws.call("echo", r#"{"text": "ask first"}"#);
    assert_eq!(kind(&asked), "not_approved", "{asked}");
    assert!(
        text(&asked).contains("the C hook wants a person to see echo"),
        "{asked}"
    );
}

#[test]
fn a_c_tool_declares_contract_0_2_features() {
    let ws = Workspace::new().plugin("fixture_echo_c", "c");
    crate::support::assert_declares_word_stats(&ws, "c_stats");
}
