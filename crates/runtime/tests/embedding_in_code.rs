//! The runtime embedded with nothing on disk but the data it grants: a plugin given as bytes, its
//! grants made in code (checked as cordon.toml's are, secrets masked), arguments given as JSON
//! values. Runs against the bundled fs plugin, built for the tests (crate cordon-test-guests).

use cordon_runtime::capabilities::grant::{Access, PluginGrant};
use cordon_runtime::capabilities::net::HttpGrant;
use cordon_runtime::capabilities::net::grant::SecretHeader;
use cordon_runtime::config::{Config, ConfigError, GrantBuilder, HttpAccess};
use cordon_runtime::{CallRequest, CompileCache, ErrorKind, RuntimeBuilder};
use serde_json::json;
use std::path::PathBuf;

/// The bytes of a guest component built for the tests.
fn guest(name: &str) -> Vec<u8> {
    let path = cordon_test_guests::dir().join(format!("{name}.wasm"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display()))
}

fn builder(cache: &tempfile::TempDir) -> RuntimeBuilder {
    RuntimeBuilder::without_directory().cache(CompileCache::at(cache.path().to_path_buf()))
}

#[tokio::test]
async fn a_plugin_from_bytes_reads_only_the_directory_granted_in_code() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("notes.txt"), "granted in code\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut config = Config::default();
    config
        .grant(
            "files",
            GrantBuilder::new().dir(data.path(), "/data", Access::ReadOnly),
        )
        .unwrap();
    let pipeline = builder(&cache)
        .plugin("files", guest("fs"))
        .config(config)
        .build()
        .await
        .unwrap();
    let plugin = pipeline
        .registry()
        .plugin("files")
        .expect("loaded from bytes");
    assert_eq!(plugin.path, PathBuf::from("files.wasm (given in code)"));

    let results = pipeline
        .run(
            vec![
                CallRequest::with_value("1", "read_file", &json!({"path": "/data/notes.txt"})),
                CallRequest::with_value("2", "read_file", &json!({"path": "/etc/passwd"})),
                CallRequest::with_value(
                    "3",
                    "write_file",
                    &json!({"path": "/data/new.txt", "content": "x"}),
                ),
            ],
            &Default::default(),
        )
        .await;
    assert_eq!(results[0].error_kind, None, "{}", results[0].text());
    assert!(results[0].text().contains("granted in code"));
    assert!(results[1].error_kind.is_some(), "{}", results[1].text());
    assert!(
        !results[1].text().contains("root:"),
        "{}",
        results[1].text()
    );
    assert!(results[2].error_kind.is_some(), "{}", results[2].text());
    assert!(
        !data.path().join("new.txt").exists(),
        "the read-only grant held"
    );
}

#[test]
fn a_grant_made_in_code_is_checked_as_cordon_toml_is() {
    let data = tempfile::tempdir().unwrap();
    let refused = |grant: GrantBuilder| -> String {
        let mut config = Config::default();
        match config.grant("web", grant) {
            Err(err @ ConfigError::Invalid { .. }) => err.to_string(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    };
    for (grant, key) in [
        (
            GrantBuilder::new().dir(data.path(), "data", Access::ReadOnly),
            "plugins.web.dirs",
        ),
        (
            GrantBuilder::new().dir(data.path().join("missing"), "/data", Access::ReadOnly),
            "plugins.web.dirs",
        ),
        (
            GrantBuilder::new().http(HttpAccess::to("https://x.example.com/path")),
            "plugins.web.http[0].origin",
        ),
        (
            GrantBuilder::new().http(HttpAccess::to("https://x.example.com").methods(["TRACE"])),
            "TRACE is never sent",
        ),
        (
            GrantBuilder::new()
                .http(HttpAccess::to("https://x.example.com").header("Host", "evil.example")),
            "headers.Host",
        ),
        (
            GrantBuilder::new().limit("memory", "lots"),
            "plugins.web.limits",
        ),
        (GrantBuilder::new().limit("timeot", "5s"), "timeot"),
    ] {
        let message = refused(grant);
        assert!(message.contains(key), "{key}: {message}");
    }

    // A grant inside another plugin's read-write grant is refused as the file's is (its holder
    // could swap the directory for a link), and the config keeps what it had.
    std::fs::create_dir(data.path().join("sub")).unwrap();
    let mut config = Config::default();
    config
        .grant(
            "a",
            GrantBuilder::new().dir(data.path(), "/data", Access::ReadWrite),
        )
        .unwrap();
    let err = config
        .grant(
            "b",
            GrantBuilder::new().dir(data.path().join("sub"), "/sub", Access::ReadOnly),
        )
        .unwrap_err();
    assert!(err.to_string().contains("plugins."), "{err}");
    assert!(config.plugins.contains_key("a") && !config.plugins.contains_key("b"));
}

#[test]
fn a_secret_header_made_in_code_is_masked() {
    let token = "Bearer c0de-made-secret-4b1d";
    let mut config = Config::default();
    config
        .grant(
            "web",
            GrantBuilder::new()
                .http(HttpAccess::to("https://api.example.com").header("Authorization", token)),
        )
        .unwrap();
    assert!(
        !config
            .secrets
            .scrub(&format!("echo: {token}"))
            .contains("c0de-made-secret-4b1d"),
        "a header granted through Config::grant is masked"
    );
}

#[tokio::test]
async fn a_secret_header_built_field_by_field_is_masked_once_the_runtime_loads() {
    let secret = "field-by-field-s3cret-77aa";
    let (scheme, host, port) = HttpGrant::parse_origin("https://api.example.com").unwrap();
    let grant = PluginGrant {
        http: vec![HttpGrant {
            scheme,
            host,
            port,
            methods: None,
            path_prefix: None,
            headers: vec![SecretHeader {
                name: http::HeaderName::from_static("x-api-key"),
                value: http::HeaderValue::from_static(secret),
                template: secret.into(),
            }],
            private: false,
        }]
        .into(),
        ..PluginGrant::default()
    };
    let mut config = Config::default();
    config.plugins.insert("web".into(), grant);
    assert!(
        config.secrets.scrub(secret).contains(secret),
        "not yet registered"
    );
    let cache = tempfile::tempdir().unwrap();
    let pipeline = builder(&cache).config(config).build().await.unwrap();
    assert!(!pipeline.secrets().scrub(secret).contains(secret));
}

#[tokio::test]
async fn two_runtimes_in_one_process_keep_their_secrets_apart() {
    let mut first = Config::default();
    first
        .grant(
            "web",
            GrantBuilder::new().http(
                HttpAccess::to("https://api.example.com")
                    .header("Authorization", "Bearer first-runtime-only-9c1e"),
            ),
        )
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let first = builder(&cache).config(first).build().await.unwrap();
    let second = builder(&cache)
        .config(Config::default())
        .build()
        .await
        .unwrap();
    let echoed = "the server said: first-runtime-only-9c1e";
    assert!(!first.secrets().scrub(echoed).contains("9c1e"));
    assert_eq!(
        second.secrets().scrub(echoed),
        echoed,
        "the second runtime neither masks nor knows the first one's secret"
    );
}

#[tokio::test]
async fn bytes_that_are_no_component_or_reuse_an_id_are_refused_by_name() {
    let cache = tempfile::tempdir().unwrap();
    let pipeline = builder(&cache)
        .plugin("junk", b"not a component".to_vec())
        .plugin("files", guest("fs"))
        .plugin("files", guest("fs"))
        .build()
        .await
        .unwrap();
    let rejected = pipeline.registry().rejected();
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert_eq!(rejected[0].file, PathBuf::from("junk.wasm (given in code)"));
    assert!(rejected[0].reason.contains("WebAssembly"), "{rejected:?}");
    assert!(rejected[1].reason.contains("taken"), "{rejected:?}");
    assert!(pipeline.registry().plugin("files").is_some());
    let result = pipeline
        .call(
            CallRequest::with_value("1", "no_such_tool", &json!({})),
            &Default::default(),
        )
        .await;
    assert_eq!(result.error_kind, Some(ErrorKind::NotFound));
}
