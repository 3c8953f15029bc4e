//! The bundled `guard` and `redact` hooks on real `fs` results.

use crate::support::{Workspace, kind, text};

const SECRETS: &str = "\
aws_key = AKIAIOSFODNN7EXAMPLE
github: ghp_abcdefghijklmnopqrstuvwxyz0123456789
slack: xoxb-123456789012-abcdefghijkl
Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig
password=hunter2 and more
-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEA7
-----END RSA PRIVATE KEY-----
nothing secret here
";

fn workspace(guard_settings: &str) -> Workspace {
    Workspace::new()
        .plugin("fs", "fs")
        .plugin("guard", "guard")
        .plugin("redact", "redact")
        .file("repo/config.txt", SECRETS)
        .file("repo/.git/config", "[core]\n")
        .file("repo/src/main.rs", "fn main() {}\n")
        .config(&format!(
            "[plugins.fs]\ndirs = [{{ host = \"repo\", guest = \"/repo\", mode = \"rw\" }}]\n[plugins.redact]\nhook = true\n[plugins.guard]\nhook = true\n{guard_settings}"
        ))
}

#[test]
fn redact_masks_secrets_in_fs_results_and_counts_them() {
    let ws = workspace("");
    let result = ws.call("read_file", r#"{"path": "/repo/config.txt"}"#);
    let body = text(&result);
    for secret in [
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_abcdef",
        "xoxb-1234",
        "eyJhbGci",
        "hunter2",
        "MIIEowIBAAKCAQEA7",
    ] {
        assert!(!body.contains(secret), "{secret} leaked:\n{body}");
    }
    for marker in [
        "aws_key = [REDACTED:aws_access_key]",
        "[REDACTED:github_token]",
        "[REDACTED:slack_token]",
        "Authorization: Bearer [REDACTED:bearer_token]",
        "password=[REDACTED:password] and more",
        "[REDACTED:private_key]",
        "nothing secret here",
    ] {
        assert!(body.contains(marker), "missing {marker:?}:\n{body}");
    }
    let counts = &result["details"]["redacted"];
    assert_eq!(counts["aws_access_key"], 1);
    assert_eq!(counts["private_key"], 1);
    assert_eq!(
        result["details"]["path"], "/repo/config.txt",
        "the tool's own details are kept"
    );

    let grep = text(&ws.call("grep", r#"{"pattern": "AKIA"}"#));
    assert!(
        grep.contains("[REDACTED:aws_access_key]") && !grep.contains("IOSFODNN7"),
        "{grep}"
    );
    let clean = ws.call("read_file", r#"{"path": "/repo/src/main.rs"}"#);
    assert!(clean["details"].get("redacted").is_none());
}

/// A PEM key of four full body lines and a short last one.
const KEY: &str = "\
-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj
MZ9Vx3Rj4Xz8Yq2qYlT6gH1dL0m8c9fE3kB2aW5pQ7rS1tU4vX6yZ0aB3cD5eF7g
H9iJ2kL4mN6oP8qR0sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2oP4qR6sT8uV0wA
X2yZ4aB6cD8eF0gH2iJ4kL6mN8oP0qR2sT4uV6wX8yZ0aB2cD4eF6gH8iJ0kL2mA
N4oP6qR8sT0uV2wX4yZ6aB8cD0eF2g==
-----END PRIVATE KEY-----
";

#[test]
fn redact_masks_a_key_read_in_part_from_an_offset_with_a_limit_or_by_grep() {
    let ws = workspace("").file("repo/server.pem", KEY);
    for args in [
        r#"{"path": "/repo/server.pem", "offset": 2}"#,
        r#"{"path": "/repo/server.pem", "limit": 3}"#,
        r#"{"path": "/repo/server.pem", "offset": 3, "limit": 2}"#,
    ] {
        let body = text(&ws.call("read_file", args));
        assert!(body.contains("[REDACTED:private_key]"), "{args}:\n{body}");
        for line in KEY.lines().skip(1).take(5) {
            assert!(!body.contains(line), "{args} leaked {line}:\n{body}");
        }
    }
    let grep = text(&ws.call(
        "grep",
        r#"{"pattern": "[A-Za-z0-9]{20}", "include_ignored": true}"#,
    ));
    assert!(!grep.contains("MZ9Vx3Rj4Xz8"), "{grep}");
}

#[test]
fn guard_protects_files_from_the_write_tools() {
    let ws = workspace("");
    for (tool, args) in [
        ("write_file", r#"{"path": "/repo/.env", "content": "X=1"}"#),
        (
            "write_file",
            r#"{"path": "/repo/./keys/server.pem", "content": "x"}"#,
        ),
        (
            "edit_file",
            r#"{"path": "/repo/.git/config", "old_text": "[core]", "new_text": "[evil]"}"#,
        ),
        ("write_file", r#"{"path": "deploy.key", "content": "x"}"#),
        // A `..` after the protected name resolves back to it (found by the red team).
        (
            "write_file",
            r#"{"path": "/repo/.env/x/..", "content": "X=1"}"#,
        ),
        (
            "write_file",
            r#"{"path": "/repo/src/../deploy.key/q/..", "content": "x"}"#,
        ),
    ] {
        let result = ws.call(tool, args);
        assert_eq!(kind(&result), "blocked", "{tool} {args}: {result}");
        assert!(
            text(&result).contains("protected pattern")
                && text(&result).contains("choose another path"),
            "{result}"
        );
    }
    assert!(!ws.path().join("repo/.env").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("repo/.git/config")).unwrap(),
        "[core]\n"
    );
    let allowed = ws.call(
        "write_file",
        r#"{"path": "/repo/notes.md", "content": "ok"}"#,
    );
    assert_eq!(allowed["isError"], false, "{allowed}");
    let reading = ws.call("read_file", r#"{"path": "/repo/.git/config"}"#);
    assert_eq!(
        reading["isError"], false,
        "reading protected files is not writing them: {reading}"
    );
}

#[test]
fn guard_settings_replace_the_defaults_and_add_deny_patterns() {
    let ws = workspace(
        "[plugins.guard.settings]\nprotected = [\"src/**\"]\ndeny = [{ pattern = \"(?i)drop\\\\s+table\", reason = \"no destructive SQL\" }]\n",
    );
    let src = ws.call(
        "edit_file",
        r#"{"path": "/repo/src/main.rs", "old_text": "main", "new_text": "start"}"#,
    );
    assert_eq!(kind(&src), "blocked");
    assert!(text(&src).contains("`src/**`"), "{src}");
    let env = ws.call(
        "write_file",
        r#"{"path": "/repo/.env", "content": "ok now"}"#,
    );
    assert_eq!(env["isError"], false, "defaults replaced: {env}");
    let sql = ws.call(
        "write_file",
        r#"{"path": "/repo/q.sql", "content": "DROP TABLE users;"}"#,
    );
    assert_eq!(kind(&sql), "blocked");
    assert!(text(&sql).contains("no destructive SQL"), "{sql}");

    let broken = workspace("[plugins.guard.settings]\nprotected = [\"[\"]\n");
    let result = broken.call("read_file", r#"{"path": "/repo/src/main.rs"}"#);
    assert_eq!(
        kind(&result),
        "blocked",
        "a guard with broken rules fails closed: {result}"
    );
    assert!(text(&result).contains("settings are invalid"), "{result}");
}

/// An ordinary `.env`, as the red team read it through `fs`: every secret in it is masked, the
/// settings around them are not.
const DOT_ENV: &str = "\
DB_PASSWORD=Zq8-fT2r!kLm
POSTGRES_PASSWORD=\"pg-L0ng-Pa55\"
AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
aws_secret_access_key = Je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY
STRIPE_API_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc
OPENAI_API_KEY=sk-proj-Xa1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t
export SECRET_KEY_BASE=9f2c1e0d8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e
DATABASE_URL=postgres://app:s3cr3t-in-url@db.internal:5432/app
PASSWORD_MIN_LENGTH=8
DEBUG=true
";

#[test]
fn redact_masks_every_secret_of_an_ordinary_dot_env() {
    let ws = workspace("").file("repo/app.env", DOT_ENV);
    let body = text(&ws.call("read_file", r#"{"path": "/repo/app.env"}"#));
    for secret in [
        "Zq8-fT2r!kLm",
        "pg-L0ng-Pa55",
        "wJalrXUtnFEMI",
        "Je7MtGbClwBF",
        "sk_live_4eC39",
        "sk-proj-Xa1b",
        "9f2c1e0d8b7a",
        "s3cr3t-in-url",
    ] {
        assert!(!body.contains(secret), "{secret} leaked:\n{body}");
    }
    for kept in [
        "PASSWORD_MIN_LENGTH=8",
        "DEBUG=true",
        "postgres://app:[REDACTED:url_password]@db.internal:5432/app",
    ] {
        assert!(body.contains(kept), "missing {kept:?}:\n{body}");
    }
}
