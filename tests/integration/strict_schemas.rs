//! Every bundled tool's schema survives the conversions clients make: OpenAI's strict mode (every
//! property required, no others) is answered by sending null for the fields a call leaves out,
//! so each optional field accepts null and the tool treats it as absent; no schema carries a
//! `format` outside the JSON Schema standard; an argument the schema does not declare is reported.

use crate::support::{Workspace, kind, text};
use serde_json::{Map, Value, json};

/// Values for every required argument of every bundled tool (a new required argument without a
/// sample here fails the test, so the strict-mode call stays covered).
fn sample(tool: &str, argument: &str) -> Value {
    match (tool, argument) {
        ("read_file" | "hash" | "edit_file" | "write_file", "path") => json!("/data/notes.txt"),
        ("write_file", "content") => json!("rewritten\n"),
        ("edit_file", "old_text") => json!("hello"),
        ("edit_file", "new_text") => json!("hi"),
        ("find_files", "pattern") => json!("*.txt"),
        ("grep", "pattern") => json!("hello"),
        ("csv_query", "path") => json!("/data/sample.csv"),
        ("json_query", "query") => json!("$.a"),
        ("http_fetch", "url") => json!("https://example.com/"),
        _ => panic!("no sample for {tool}'s required argument {argument}"),
    }
}

/// The formats JSON Schema 2020-12 defines.
const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn formats(schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(format)) = object.get("format") {
                found.push(format.clone());
            }
            object.values().for_each(|value| formats(value, found));
        }
        Value::Array(items) => items.iter().for_each(|item| formats(item, found)),
        _ => {}
    }
}

fn bundled() -> Workspace {
    let mut ws = Workspace::new();
    for plugin in ["fs", "csv_query", "json_query", "hash", "http_fetch"] {
        ws = ws.plugin(plugin, plugin);
    }
    ws.file("data/notes.txt", "hello world\n")
        .file("data/sample.csv", "name,price\nkettle,24.50\n")
        .config(
            "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"rw\" }]\n\
             [plugins.csv_query]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n\
             [plugins.hash]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n",
        )
}

#[test]
fn every_bundled_tool_takes_a_strict_mode_call_with_null_for_what_it_leaves_out() {
    let ws = bundled();
    let listed = ws.cordon(&["list", "--json"]).json();
    let tools = listed["tools"].as_array().unwrap();
    assert!(tools.len() >= 10, "{listed}");
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        let schema = &tool["parameters"];
        let mut found = Vec::new();
        formats(schema, &mut found);
        found.retain(|format| !STANDARD_FORMATS.contains(&format.as_str()));
        assert!(
            found.is_empty(),
            "{name} has non-standard formats {found:?}"
        );
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // What a strict-mode client sends: every property, null for the ones not needed.
        let mut arguments = Map::new();
        for property in schema["properties"].as_object().unwrap().keys() {
            let value = if required.contains(&property.as_str()) {
                sample(name, property)
            } else if name == "json_query" && property == "document" {
                json!({"a": 1}) // json_query needs one of path and document
            } else {
                Value::Null
            };
            arguments.insert(property.clone(), value);
        }
        let arguments = Value::Object(arguments);
        let result = ws.call(name, &arguments.to_string());
        match name {
            // No origin is granted: the call gets as far as the gate.
            "http_fetch" => assert_eq!(kind(&result), "capability_denied", "{result}"),
            _ => assert_eq!(kind(&result), "", "{name} {arguments}: {}", text(&result)),
        }
    }
}

#[test]
fn an_argument_the_schema_does_not_declare_is_reported_with_the_ones_it_does() {
    let ws = bundled();
    let result = ws.call("read_file", r#"{"path": "/data/notes.txt", "offest": 2}"#);
    assert_eq!(kind(&result), "invalid_arguments", "{result}");
    let message = text(&result);
    assert!(
        message.contains(
            "at /offest: \"offest\" is not an argument of this tool; its arguments are: limit, offset, path"
        ),
        "{message}"
    );
}
