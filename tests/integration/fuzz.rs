//! Property tests over the parsers that take untrusted input: cordon.toml, batches of tool calls,
//! argument validation against arbitrary schemas, and arguments converted to the WIT values of a
//! plain component's functions. None may panic, whatever the input. CI runs a short fixed number of
//! cases; `make fuzz` runs many more (PROPTEST_CASES).

use cordon_runtime::config::Config;
use cordon_runtime::pipeline::parse_batch;
use cordon_runtime::schema::ArgumentSchema;
use proptest::prelude::*;
use serde_json::Value;
use std::path::Path;
use std::sync::OnceLock;

/// The plain geometry component loaded once for the whole property run.
struct PlainHost {
    runtime: tokio::runtime::Runtime,
    pipeline: cordon_runtime::Pipeline,
    _workspace: crate::support::Workspace,
}

fn plain_host() -> &'static PlainHost {
    static HOST: OnceLock<PlainHost> = OnceLock::new();
    HOST.get_or_init(|| {
        let workspace =
            crate::support::Workspace::new().plugin("fixture_plain_geometry", "geometry");
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
        let pipeline = runtime.block_on(workspace.pipeline());
        PlainHost {
            runtime,
            pipeline,
            _workspace: workspace,
        }
    })
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300)
}

/// Arbitrary JSON, nested a few levels.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z$#/_ -]{0,12}".prop_map(Value::String),
        prop_oneof![
            Just("type"),
            Just("object"),
            Just("properties"),
            Just("required"),
            Just("$ref"),
            Just("string"),
            Just("items"),
            Just("enum"),
            Just("minimum"),
            Just("pattern"),
            Just("#/$defs/x")
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("type".to_string()),
                    Just("properties".to_string()),
                    Just("required".to_string()),
                    Just("items".to_string()),
                    Just("$ref".to_string()),
                    Just("pattern".to_string()),
                    Just("enum".to_string()),
                    "[a-z]{1,6}"
                ],
                inner,
                0..6
            )
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// TOML-looking text built from cordon.toml's own vocabulary, so the parser is exercised past the
/// first syntax error.
fn config_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("[plugins.fs]".to_string()),
        Just("[agent]".to_string()),
        Just("[hooks]".to_string()),
        Just("[defaults.limits]".to_string()),
        Just("[host]".to_string()),
        "(timeout|memory|fuel|output|stdio|execution|max_concurrency|tools|order|locked|env|sha256) = (\"[0-9a-zA-Z]{0,8}\"|[0-9]{1,12}|true|\\[\\])",
        "dirs = \\[\\{ host = \"[./a-z]{0,6}\", guest = \"[/a-z.]{0,6}\", mode = \"(ro|rw|x)\" \\}\\]",
        "http = \\[\\{ origin = \"(https?|ftp)://[a-z*.0-9:]{0,12}\" \\}\\]",
        "limits = \\{ timeout = \"[0-9]{0,4}(ms|s|m|h)?\", memory = \"[0-9]{0,5}(KiB|MiB|GiB|B)?\" \\}",
        "[ -~]{0,30}",
    ];
    prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn config_parsing_never_panics(text in config_text()) {
        let _ = Config::parse(&text, Path::new("fuzz.toml"), Path::new("."));
    }

    #[test]
    fn config_parsing_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = Config::parse(&text, Path::new("fuzz.toml"), Path::new("."));
    }

    #[test]
    fn batch_parsing_never_panics(text in "\\PC{0,200}") {
        let _ = parse_batch(&text);
    }

    #[test]
    fn batch_parsing_never_panics_on_arbitrary_json(value in json_value()) {
        let _ = parse_batch(&value.to_string());
        let _ = parse_batch(&Value::Array(vec![value]).to_string());
    }

    #[test]
    fn argument_validation_never_panics(schema in json_value(), arguments in json_value()) {
        let mut object_schema = schema.clone();
        if let Value::Object(map) = &mut object_schema {
            map.insert("type".into(), Value::String("object".into()));
        }
        for candidate in [schema, object_schema] {
            if let Ok(compiled) = ArgumentSchema::compile(candidate) {
                let _ = compiled.check(&arguments);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 3, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn plain_component_arguments_never_panic_the_host(
        tool in prop_oneof![
            Just("measure"), Just("style_names"), Just("lengths"),
            Just("checksum"), Just("repeat"), Just("add_small"), Just("centroid")
        ],
        arguments in json_value(),
        wrapped in any::<bool>(),
    ) {
        // Bare values, and values under each tool's real parameter names, so some get past the
        // schema into the conversion.
        let arguments = match (wrapped, tool) {
            (false, _) => arguments,
            (true, "measure") => serde_json::json!({ "shape": arguments, "unit": "metres" }),
            (true, "style_names") => serde_json::json!({ "style": arguments }),
            (true, "lengths") => serde_json::json!({ "text": "a bb", "limit": arguments }),
            (true, "checksum") => serde_json::json!({ "data": arguments }),
            (true, "repeat") => serde_json::json!({ "c": arguments, "times": 2 }),
            (true, "add_small") => serde_json::json!({ "a": arguments, "b": 1 }),
            (true, _) => serde_json::json!({ "points": arguments }),
        };
        let host = plain_host();
        let result = host
            .runtime
            .block_on(crate::support::call(&host.pipeline, tool, &arguments.to_string()));
        let kind = result.error_kind.map(|kind| kind.as_str()).unwrap_or("");
        prop_assert!(
            matches!(kind, "" | "invalid_arguments" | "tool_error"),
            "{tool} {arguments}: {result:?}"
        );
    }
}
