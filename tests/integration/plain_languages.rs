//! Components written in Python (componentize-py) and JavaScript (componentize-js) for WIT worlds
//! of their own, with no cordon SDK (tests/fixtures_plain/): listed, described, called with good
//! and bad arguments, a hook blocking one of their calls, a grant denying a path, a trap, and the
//! conformance run. One test per component, so each large component compiles once.

use crate::support::{Workspace, kind, text};
use serde_json::json;

#[test]
fn a_componentize_py_component_with_its_own_world_is_a_plugin() {
    let ws = Workspace::new()
        .plugin("plain_py_words", "words")
        .plugin("fixture_scripted_hook", "gate")
        .file("data/poem.txt", "so much depends upon a red wheel barrow\n")
        .file("secret/diary.txt", "dear diary\n")
        .config(
            r#"
[plugins.words]
dirs = [{ host = "data", guest = "/data" }]
limits = { timeout = "10s" }

[plugins.words.tools.summarize]
examples = [{ text = "one two\nthree" }]

[plugins.gate]
hook = ["shout"]
settings = { before = "block", tag = "gate" }
"#,
        );
    let listed = ws.cordon(&["list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let listed = listed.json();
    let words: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["plugin"] == "words")
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        words,
        ["count_file", "explode", "shout", "summarize", "top_words"],
        "{listed}"
    );

    let summarize = ws.cordon(&["describe", "summarize", "--json"]).json();
    assert_eq!(summarize["parameters"]["required"], json!(["text"]));
    assert_eq!(
        summarize["outputSchema"]["required"],
        json!(["words", "lines", "longest"]),
        "{summarize}"
    );
    let top = ws.cordon(&["describe", "top_words", "--json"]).json();
    assert_eq!(top["parameters"]["properties"]["count"]["maximum"], 255);

    let summary = ws.call("summarize", r#"{"text": "the quick brown\nfox"}"#);
    assert_eq!(
        summary["structured"],
        json!({ "words": 4, "lines": 2, "longest": "quick" }),
        "{summary}"
    );
    let empty = ws.call("summarize", r#"{"text": ""}"#);
    assert_eq!(
        empty["structured"]["longest"],
        json!(null),
        "none is null: {empty}"
    );
    let top = ws.call("top_words", r#"{"text": "a b a c a b", "count": 2}"#);
    assert_eq!(
        top["structured"]["result"],
        json!([["a", 3], ["b", 2]]),
        "{top}"
    );
    let bad = ws.call("top_words", r#"{"text": "a", "count": -1}"#);
    assert_eq!(kind(&bad), "invalid_arguments", "{bad}");
    assert!(text(&bad).contains("/count"), "{}", text(&bad));

    let blocked = ws.call("shout", r#"{"text": "hi"}"#);
    assert_eq!(kind(&blocked), "blocked", "{blocked}");
    assert!(
        text(&blocked).contains("gate says no"),
        "{}",
        text(&blocked)
    );

    let counted = ws.call("count_file", r#"{"path": "/data/poem.txt"}"#);
    assert_eq!(text(&counted), "8", "{counted}");
    let denied = ws.call("count_file", r#"{"path": "/secret/diary.txt"}"#);
    assert_eq!(kind(&denied), "capability_denied", "{denied}");
    assert!(
        text(&denied).starts_with("cannot read /secret/diary.txt"),
        "{}",
        text(&denied)
    );

    let exploded = ws.call("explode", "{}");
    assert_eq!(
        kind(&exploded),
        "trap",
        "an exception is a trap: {exploded}"
    );
    assert!(
        text(&exploded).contains("exploded on purpose"),
        "{}",
        text(&exploded)
    );

    let tested = ws.cordon(&[
        "--config",
        "cordon.toml",
        "test",
        "plugins/words.wasm",
        "--json",
    ]);
    assert_eq!(tested.code, 0, "{}\n{}", tested.stdout, tested.stderr);
    assert_eq!(
        strict_forms(&tested.stdout),
        (5, 0),
        "every derived schema has an OpenAI strict form: {}",
        tested.stdout
    );
}

#[test]
fn a_componentize_js_component_with_its_own_world_is_a_plugin() {
    let ws = Workspace::new()
        .plugin("plain_js_text", "text")
        .plugin("fixture_scripted_hook", "gate")
        .file("data/a.txt", "hello from data\n")
        .file("secret/b.txt", "private\n")
        .config(
            r#"
[plugins.text]
dirs = [{ host = "data", guest = "/data" }]

[plugins.text.tools.slugify]
examples = ['{"text": "Hello, World", "options": {"separator": "-", "max_words": null}}']

[plugins.gate]
hook = ["recase"]
settings = { before = "block", tag = "gate" }
"#,
        );
    let listed = ws.cordon(&["list", "--json"]).json();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["plugin"] == "text")
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["fail_hard", "parse_count", "read_note", "recase", "slugify"],
        "{listed}"
    );

    let slugify = ws.cordon(&["describe", "slugify", "--json"]).json();
    let options = &slugify["parameters"]["properties"]["options"];
    assert_eq!(
        options["required"],
        json!(["separator", "max_words"]),
        "{slugify}"
    );
    assert_eq!(options["properties"]["separator"]["maxLength"], 1);

    let slug = ws.call(
        "slugify",
        r#"{"text": "Any Component Is A Tool", "options": {"separator": "_", "max_words": 3}}"#,
    );
    assert_eq!(text(&slug), "any_component_is", "{slug}");
    let unlimited = ws.call(
        "slugify",
        r#"{"text": "a b", "options": {"separator": ".", "max_words": null}}"#,
    );
    assert_eq!(text(&unlimited), "a.b", "{unlimited}");
    let bad = ws.call(
        "slugify",
        r#"{"text": "a", "options": {"separator": "--"}}"#,
    );
    assert_eq!(kind(&bad), "invalid_arguments", "{bad}");
    assert!(text(&bad).contains("/options"), "{}", text(&bad));

    let count = ws.call("parse_count", r#"{"text": "42"}"#);
    assert_eq!(count["structured"], json!({ "result": 42 }), "{count}");
    let not_a_number = ws.call("parse_count", r#"{"text": "forty"}"#);
    assert_eq!(kind(&not_a_number), "tool_error", "{not_a_number}");
    assert!(
        text(&not_a_number).contains("not a whole number"),
        "{}",
        text(&not_a_number)
    );

    let blocked = ws.call("recase", r#"{"text": "x", "to": "upper"}"#);
    assert_eq!(kind(&blocked), "blocked", "{blocked}");
    let trap = ws.call("fail_hard", "{}");
    assert_eq!(kind(&trap), "trap", "{trap}");

    // Its world imports wasi:filesystem: it reads what is granted, and nothing else.
    let read = ws.call("read_note", r#"{"path": "/data/a.txt"}"#);
    assert_eq!(text(&read), "hello from data\n", "{read}");
    let elsewhere = ws.call("read_note", r#"{"path": "/secret/b.txt"}"#);
    assert_eq!(kind(&elsewhere), "capability_denied", "{elsewhere}");
    let escape = ws.call("read_note", r#"{"path": "/data/../secret/b.txt"}"#);
    assert_eq!(kind(&escape), "capability_denied", "{escape}");
    assert!(!text(&escape).contains("private"), "{escape}");

    let tested = ws.cordon(&[
        "--config",
        "cordon.toml",
        "test",
        "plugins/text.wasm",
        "--json",
    ]);
    assert_eq!(tested.code, 0, "{}\n{}", tested.stdout, tested.stderr);
    assert_eq!(
        strict_forms(&tested.stdout),
        (5, 0),
        "every derived schema has an OpenAI strict form: {}",
        tested.stdout
    );
}

/// From a `cordon test --json` report: how many tools' schemas passed the OpenAI strict-mode
/// check, and how many did not.
pub fn strict_forms(report: &str) -> (usize, usize) {
    let report: serde_json::Value = serde_json::from_str(report).expect("a JSON report");
    let strict: Vec<&serde_json::Value> = report
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|plugin| plugin["findings"].as_array().into_iter().flatten())
        .filter(|finding| finding["check"] == "strict mode")
        .collect();
    let passed = strict
        .iter()
        .filter(|finding| finding["outcome"] == "pass")
        .count();
    (passed, strict.len() - passed)
}

/// A component written for Wassette reads its configuration through `wasi:config/store`: here
/// its plugin's own `settings` table, and no other plugin's.
#[test]
fn a_component_reading_wasi_config_gets_its_own_settings_and_no_other_plugins() {
    let ws = Workspace::new()
        .plugin("plain_js_forecast", "weather")
        .plugin("fixture_probe", "probe")
        .config(
            r#"
[plugins.weather]
settings = { unit = "celsius", retries = 3, region = { name = "north" } }

[plugins.probe]
settings = { unit = "kelvin", api_key = "other-plugins-key" }
"#,
        );
    let listed = ws.cordon(&["list", "--json"]);
    assert_eq!(listed.code, 0, "{}{}", listed.stdout, listed.stderr);
    let forecast = ws.call("forecast", r#"{"city": "Oslo"}"#);
    assert_eq!(
        text(&forecast),
        "Oslo: sunny, 21 degrees (celsius)",
        "{forecast}"
    );
    let settings = text(&ws.call("settings", "{}"));
    assert_eq!(
        settings, "region={\"name\":\"north\"}\nretries=3\nunit=celsius",
        "strings as written, the rest as JSON, only this plugin's"
    );
    // Without settings, a key is absent, not an error.
    let bare = Workspace::new().plugin("plain_js_forecast", "weather");
    assert_eq!(
        text(&bare.call("forecast", r#"{"city": "Oslo"}"#)),
        "Oslo: sunny, 21 degrees (unset)"
    );
    assert_eq!(text(&bare.call("settings", "{}")), "");
}

/// A secret config key (`secrets`) reaches the component through `wasi:config/store`, read from
/// the host's environment, and no output: what the component returns of it is masked. The lock
/// pins the key's template, so a rotated value is not a new approval and a changed one is.
#[test]
fn a_secret_config_key_reaches_the_component_and_no_output() {
    let config = |variable: &str| {
        format!(
            r#"
[plugins.weather]
settings = {{ unit = "celsius" }}
secrets = {{ api_key = "${{env:{variable}}}" }}

[plugins.other.tools.settings]
name = "other_settings"
[plugins.other.tools.forecast]
name = "other_forecast"
"#
        )
    };
    let ws = Workspace::new()
        .plugin("plain_js_forecast", "weather")
        .plugin("plain_js_forecast", "other")
        .config(&config("CORDON_TEST_WEATHER_KEY"));
    let key = [("CORDON_TEST_WEATHER_KEY", "wk-5f1c0a9e7b3d")];
    let listed = ws.cordon_with_env(&["list", "--json"], &key);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert!(
        !listed.stdout.contains("wk-5f1c0a9e7b3d"),
        "{}",
        listed.stdout
    );
    let own = ws.cordon_with_env(&["call", "settings", "{}", "--json"], &key);
    assert_eq!(own.code, 0, "{}", own.stderr);
    assert_eq!(
        text(&own.json()),
        "api_key=[REDACTED:secret]\nunit=celsius",
        "the component had the value (so it was masked on the way out): {}",
        own.stdout
    );
    let other = ws.cordon_with_env(&["call", "other_settings", "{}", "--json"], &key);
    assert_eq!(text(&other.json()), "", "another plugin sees none of it");

    // Unset, that plugin is refused, naming the variable; the other plugin still loads.
    let unset = ws.cordon(&["list"]);
    assert_eq!(unset.code, 1, "{}", unset.stderr);
    assert!(
        unset.stdout.contains(
            "weather.wasm: its grant in cordon.toml reads the environment variable CORDON_TEST_WEATHER_KEY, not set"
        ) && unset.stdout.contains("other_settings"),
        "{}",
        unset.stdout
    );

    // The lock pins the template: a rotated value passes, another template does not.
    assert_eq!(ws.cordon_with_env(&["lock"], &key).code, 0);
    let oslo = ["--locked", "call", "forecast", r#"{"city": "Oslo"}"#];
    let rotated = ws.cordon_with_env(&oslo, &[("CORDON_TEST_WEATHER_KEY", "wk-rotated-0042")]);
    assert_eq!(rotated.code, 0, "{}", rotated.stderr);
    let changed = ws.config(&config("CORDON_TEST_OTHER_KEY"));
    let refused = changed.cordon_with_env(&oslo, &[("CORDON_TEST_OTHER_KEY", "wk-5f1c0a9e7b3d")]);
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(refused.stderr.contains("weather"), "{}", refused.stderr);
}
