//! Tests of parsing and validating `cordon.toml`, section by section.

use super::*;
use crate::report::secrets::Secrets;
use std::time::Duration;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(
        text,
        Path::new("cordon.toml"),
        Path::new(env!("CARGO_MANIFEST_DIR")),
    )
}

#[test]
fn full_grant_is_parsed_into_typed_values() {
    let config = parse(
        r#"
        [defaults.limits]
        timeout = "5s"

        [plugins.fs]
        dirs = [{ host = "src", guest = "/src" }, { host = "../../wit", guest = "/wit", mode = "rw" }]
        env = ["HOME"]
        sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
        settings = { max_lines = 10 }
        limits = { memory = "64MiB", fuel = 1000 }
        "#,
    )
    .unwrap();
    let fs = config.grant_for("fs");
    assert_eq!(fs.dirs.len(), 2);
    assert_eq!(fs.dirs[0].access, Access::ReadOnly);
    assert_eq!(fs.dirs[1].access, Access::ReadWrite);
    assert!(fs.dirs[0].host.is_absolute());
    assert_eq!(
        fs.limits.timeout,
        Duration::from_secs(5),
        "defaults apply under plugin limits"
    );
    assert_eq!(fs.limits.memory_bytes, 64 << 20);
    assert_eq!(fs.limits.fuel, Some(1000));
    assert_eq!(fs.settings, serde_json::json!({ "max_lines": 10 }));
    assert_eq!(fs.sha256, Some([0; 32]));
    assert!(config.uses_fuel());
    let other = config.grant_for("other");
    assert!(other.dirs.is_empty() && other.env.is_empty());
    assert_eq!(other.limits.timeout, Duration::from_secs(5));
}

#[test]
fn mistakes_name_their_key() {
    let cases = [
        ("[plugins.fs]\ndirz = []", "dirz"),
        (
            "[plugins.fs]\ndirs = [{ host = \"no/such/dir\", guest = \"/x\" }]",
            "plugins.fs.dirs[0].host",
        ),
        (
            "[plugins.fs]\ndirs = [{ host = \".\", guest = \"relative\" }]",
            "plugins.fs.dirs[0].guest",
        ),
        (
            "[plugins.fs]\ndirs = [{ host = \".\", guest = \"/a/../b\" }]",
            "plugins.fs.dirs[0].guest",
        ),
        (
            "[plugins.fs]\ndirs = [{ host = \".\", guest = \"/data//\" }]",
            "plugins.fs.dirs[0].guest",
        ),
        (
            "[plugins.fs]\ndirs = [{ host = \".\", guest = \"/data/./x\" }]",
            "plugins.fs.dirs[0].guest",
        ),
        (
            "[plugins.fs]\ndirs = [{ host = \".\", guest = \"/x\", mode = \"rwx\" }]",
            "mode",
        ),
        (
            "[plugins.fs]\nlimits = { timeout = \"10 parsecs\" }",
            "plugins.fs.limits.timeout",
        ),
        (
            "[plugins.fs]\nlimits = { memory = \"lots\" }",
            "plugins.fs.limits.memory",
        ),
        (
            "[plugins.fs]\nlimits = { memory = \"5GiB\" }",
            "plugins.fs.limits.memory",
        ),
        (
            "[plugins.fs]\nlimits = { fuel = 0 }",
            "plugins.fs.limits.fuel",
        ),
        ("[plugins.fs]\nsha256 = \"abc\"", "plugins.fs.sha256"),
        ("[plugins.fs]\nenv = [\"A=B\"]", "plugins.fs.env[0]"),
        ("[defaults.limits]\nstdio = \"0\"", "defaults.limits.stdio"),
        ("[plugin.fs]", "plugin"),
    ];
    for (text, key) in cases {
        let err = parse(text).expect_err(text).to_string();
        assert!(
            err.contains(key),
            "error for {text:?} should name {key:?}: {err}"
        );
    }
}

#[test]
fn agent_and_hook_settings() {
    let config = parse(
        "[agent]\nexecution = \"sequential\"\ntools = [\"a\"]\nmax_concurrency = 2\nmax_result_bytes = \"1KiB\"\n[hooks]\norder = [\"redact\", \"guard\"]\n",
    )
    .unwrap();
    assert_eq!(
        config.batches,
        BatchSettings {
            execution: Execution::Sequential,
            tools: Some(vec!["a".into()]),
            groups: Default::default(),
            max_concurrency: 2,
            max_result_bytes: 1024,
            max_image_bytes: 4 << 20,
            approval: Default::default(),
        }
    );
    assert_eq!(config.hook_order, ["redact", "guard"]);
    let passes = parse("[plugins.cut]\nhook = true\nunreviewed_progress = true\n").unwrap();
    let grant = passes.grant_for("cut");
    assert!(grant.hook.as_ref().unwrap().unreviewed_progress);
    assert!(
        crate::capabilities::lock::capabilities(&grant)
            .contains(&"hook (progress unreviewed)".to_string())
    );
    assert_eq!(parse("").unwrap().batches, BatchSettings::default());
    for (text, key) in [
        ("[agent]\nexecution = \"random\"", "execution"),
        ("[agent]\nmax_concurrency = 0", "agent.max_concurrency"),
        ("[agent.groups]\nfiles = []", "agent.groups.files"),
        (
            "[agent.groups]\nfiles = [\"read file\"]",
            "agent.groups.files",
        ),
        ("[hooks]\nsequence = []", "sequence"),
        // Letting progress pass a hook needs a hook.
        (
            "[plugins.redact]\nunreviewed_progress = true",
            "plugins.redact.unreviewed_progress",
        ),
        // Routes of their own: a group may not take `none` or `all`, in any case.
        ("[agent.groups]\nnone = [\"echo\"]", "agent.groups.none"),
        ("[agent.groups]\nALL = [\"echo\"]", "agent.groups.ALL"),
    ] {
        let err = parse(text).expect_err(text).to_string();
        assert!(err.contains(key), "{err}");
    }
}

#[test]
fn the_runtime_reads_its_tables_and_a_table_nobody_reads_is_named_with_its_line() {
    let err = document_error("[host]\nlocked = false\n\n[plugns.fs]\n");
    assert!(
        err.contains("cordon.toml line 4: unknown key `plugns`")
            && err.contains("`plugins`")
            && err.contains("`host`"),
        "{err}"
    );
    let err = document_error("[agent]\nexecution = \"parallel\"\nexecutoin = 1\n");
    assert!(
        err.contains("line 3: unknown key `agent.executoin`") && err.contains("`execution`"),
        "{err}"
    );
    // `[model]` is the agent crate's: the runtime does not read it, and alone it refuses it.
    let document = ConfigDocument::new(
        "[model]\nmodel = \"m\"\n",
        Path::new("c.toml"),
        Path::new("."),
        &Secrets::default(),
    )
    .unwrap();
    Config::from_document(&document).unwrap();
    assert!(
        parse("[model]\nmodel = \"m\"\n")
            .unwrap_err()
            .to_string()
            .contains("`model`")
    );
}

fn document_error(text: &str) -> String {
    let document = ConfigDocument::new(
        text,
        Path::new("cordon.toml"),
        Path::new("."),
        &Secrets::default(),
    )
    .unwrap();
    Config::from_document(&document).unwrap();
    document.check_all_read().unwrap_err().to_string()
}

#[test]
fn http_grants_and_secret_headers() {
    // SAFETY: this test is the only one reading or writing this variable.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("CORDON_CONFIG_TEST_TOKEN", "t0ken")
    };
    let config = parse(
        r#"
        [plugins.web]
        env_set = { MODE = "test" }
        http = [
            { origin = "https://api.example.com", methods = ["get"], path_prefix = "/v1/", headers = { Authorization = "Bearer ${env:CORDON_CONFIG_TEST_TOKEN}" } },
            { origin = "http://localhost:8080", private = true },
        ]
        limits = { http_timeout = "5s", http_response = "1MiB", http_requests = 2 }
        "#,
    )
    .unwrap();
    let web = config.grant_for("web");
    assert_eq!(web.env_set, [("MODE".to_string(), "test".to_string())]);
    assert_eq!(web.http.len(), 2);
    assert_eq!(web.http[0].methods, Some(vec!["GET".to_string()]));
    assert_eq!(web.http[0].headers[0].value, "Bearer t0ken");
    assert!(web.http[1].private);
    assert_eq!(web.limits.http.total_timeout, Duration::from_secs(5));
    assert_eq!(web.limits.http.max_response_bytes, 1 << 20);
    assert_eq!(web.limits.http.max_concurrent, 2);
    for (text, key) in [
        (
            "[plugins.w]\nhttp = [{ origin = \"ftp://x.com\" }]",
            "plugins.w.http[0].origin",
        ),
        (
            "[plugins.w]\nhttp = [{ origin = \"https://x.com/path\" }]",
            "plugins.w.http[0].origin",
        ),
        (
            "[plugins.w]\nhttp = [{ origin = \"https://x.com\", path_prefix = \"v1\" }]",
            "path_prefix",
        ),
        (
            "[plugins.w]\nhttp = [{ origin = \"https://x.com\", headers = { Host = \"evil.com\" } }]",
            "headers.Host",
        ),
        (
            "[plugins.w]\nhttp = [{ origin = \"https://x.com\", port = 1 }]",
            "unknown field `port`",
        ),
        (
            "[plugins.w]\nlimits = { http_requests = 0 }",
            "http_requests",
        ),
        (
            "[plugins.w]\nhttp = [{ origin = \"https://x.com\", methods = [\"get\", \"trace\"] }]",
            "TRACE is never sent",
        ),
        (
            "[plugins.w]\nhttp = [{ origin = \"https://x.com\", path_prefix = \"/a/../b\" }]",
            "path_prefix",
        ),
    ] {
        let err = parse(text).expect_err(text).to_string();
        assert!(err.contains(key), "{text}: {err}");
    }
    // A variable that is not set leaves the config whole: that plugin alone is unavailable,
    // saying which variable, and nothing of the header is registered or sent.
    let unset = parse(
        "[plugins.w]\nhttp = [{ origin = \"https://x.com\", headers = { X = \"${env:CORDON_SURELY_UNSET}\" } }]\n\n[plugins.other]\nenv = [\"LANG\"]\n",
    )
    .unwrap();
    let why = unset.grant_for("w").unavailable.expect("unavailable");
    assert!(why.contains("CORDON_SURELY_UNSET, not set"), "{why}");
    assert_eq!(unset.grant_for("other").unavailable, None);
}

#[test]
fn empty_config_grants_nothing() {
    let config = parse("").unwrap();
    assert!(config.plugins.is_empty());
    assert!(!config.uses_fuel());
    assert_eq!(config.grant_for("fs").limits, Limits::default());
}
