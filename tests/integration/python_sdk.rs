//! The Python SDK, through the bundled `csv_query` plugin (componentize-py): a schema from type
//! hints, typed results, exceptions as `tool_error` with their type, and the sandbox around it.
//! One test, so the 18 MB component is compiled once.

use crate::support::{Workspace, kind, text};

const CSV: &str = "name,category,price,stock\nkettle,kitchen,24.50,12\ntoaster,kitchen,39.00,0\nlamp,living,15.75,40\nrug,living,120.00,3\n";

#[test]
fn a_python_tool_works_like_any_other() {
    let ws = Workspace::new()
        .plugin("csv_query", "csv_query")
        .file("data/shop.csv", CSV)
        .file("secret.csv", "a,b\n1,2\n")
        .config("[plugins.csv_query]\ndirs = [{ host = \"data\", guest = \"/data\" }]\n");

    let spec = ws.cordon(&["describe", "csv_query", "--json"]).json();
    let parameters = &spec["parameters"];
    assert_eq!(
        parameters["required"],
        serde_json::json!(["path"]),
        "defaults and Optional are not required"
    );
    assert_eq!(
        parameters["properties"]["operator"]["enum"][4], "gt",
        "Literal becomes an enum"
    );
    assert_eq!(
        parameters["properties"]["columns"]["items"]["type"], "string",
        "list[str] becomes an array"
    );

    let expensive = ws.call("csv_query", r#"{"path": "/data/shop.csv", "column": "price", "operator": "gt", "value": "20", "columns": ["name", "price"]}"#);
    assert_eq!(
        text(&expensive),
        "name | price\nkettle | 24.50\ntoaster | 39.00\nrug | 120.00",
        "{expensive}"
    );
    assert_eq!(expensive["details"]["matched"], 3);

    assert_eq!(
        parameters["properties"]["value"]["type"],
        serde_json::json!(["string", "number", "null"]),
        "Union[str, float, None] becomes one list of types"
    );
    let numeric = ws.call(
        "csv_query",
        r#"{"path": "/data/shop.csv", "column": "price", "operator": "lt", "value": 100, "columns": ["name"]}"#,
    );
    assert_eq!(
        text(&numeric),
        "name\nkettle\ntoaster\nlamp",
        "a number compares as a number (120.00 is not below 100): {numeric}"
    );
    let out_of_stock = ws.call(
        "csv_query",
        r#"{"path": "/data/shop.csv", "column": "stock", "value": 0, "columns": ["name"]}"#,
    );
    assert_eq!(text(&out_of_stock), "name\ntoaster", "{out_of_stock}");
    assert_eq!(
        text(&ws.call(
            "csv_query",
            r#"{"path": "/data/shop.csv", "column": "category", "operator": "gt", "value": 5, "columns": ["name"]}"#,
        )),
        "name",
        "a number matches no cell that is not a number"
    );
    for (args, given) in [
        (r#""value": "kitchen""#, "value"),
        (r#""operator": "gt", "value": 20"#, "operator and value"),
        (r#""operator": "contains""#, "operator"),
    ] {
        let unfiltered = ws.call(
            "csv_query",
            &format!(r#"{{"path": "/data/shop.csv", {args}}}"#),
        );
        assert_eq!(kind(&unfiltered), "tool_error", "{args}: {unfiltered}");
        assert_eq!(
            text(&unfiltered).lines().next().unwrap(),
            format!(
                "ValueError: {given} given without column; pass column to say which column to compare (the columns are: name, category, price, stock)"
            ),
        );
    }

    let limited = ws.call(
        "csv_query",
        r#"{"path": "/data/shop.csv", "limit": 1, "columns": ["name"]}"#,
    );
    assert_eq!(
        text(&limited),
        "name\nkettle\n[1 of 4 matching rows shown; raise limit to see more]"
    );

    let bad_column = ws.call(
        "csv_query",
        r#"{"path": "/data/shop.csv", "column": "colour", "value": "red"}"#,
    );
    assert_eq!(kind(&bad_column), "tool_error");
    assert!(
        text(&bad_column).starts_with("ValueError: no column 'colour'"),
        "{bad_column}"
    );
    assert_eq!(bad_column["details"]["exception"], "ValueError");

    let bad_operator = ws.call(
        "csv_query",
        r#"{"path": "/data/shop.csv", "column": "price", "operator": "about", "value": "1"}"#,
    );
    assert_eq!(
        kind(&bad_operator),
        "invalid_arguments",
        "the host validates against the generated schema"
    );

    let secret = ws.path().join("secret.csv");
    for path in [
        "/data/../secret.csv",
        secret.to_str().unwrap(),
        "/etc/passwd",
    ] {
        let escape = ws.call("csv_query", &format!(r#"{{"path": "{path}"}}"#));
        assert_eq!(escape["isError"], true, "{path}: {escape}");
        assert!(!text(&escape).contains("1 | 2"), "{escape}");
    }
    assert_eq!(
        text(&ws.call(
            "csv_query",
            r#"{"path": "/data/shop.csv", "limit": 0, "columns": ["name"]}"#
        )),
        "name\n[0 of 4 matching rows shown; raise limit to see more]"
    );
}

#[test]
fn hooks_written_in_python_block_rewrite_and_replace() {
    let ws = crate::support::probe()
        .plugin("fixture_py_hook", "py_hook")
        .config("[plugins.py_hook]\nhook = true\n");
    crate::support::assert_echo_hook_blocks(&ws, "the Python hook does not allow that word");
    assert_eq!(
        text(&ws.call("echo", r#"{"text": "shout hi"}"#)),
        "SHOUT HI [seen by python]"
    );
    assert_eq!(
        text(&ws.call("echo", r#"{"text": "calm"}"#)),
        "calm [seen by python]"
    );
    assert_eq!(
        text(&ws.call("counter", "{}")),
        "1",
        "other tools are not watched"
    );
}

#[test]
fn a_python_tool_declares_contract_0_2_features_in_its_own_idiom() {
    let ws = Workspace::new().plugin("fixture_py_echo", "py");
    let spec = ws.cordon(&["describe", "py_stats", "--json"]).json();
    assert_eq!(spec["contract"], "0.3.0", "{spec}");
    assert_eq!(spec["annotations"], serde_json::json!({ "readOnly": true }));
    assert_eq!(
        spec["promptGuidelines"],
        serde_json::json!(["Count words with py_stats."])
    );
    assert_eq!(spec["locks"], serde_json::json!(["/text"]));
    assert_eq!(
        spec["outputSchema"]["properties"]["words"]["type"], "integer",
        "the dataclass return annotation is the output schema: {spec}"
    );
    let result = ws.call("py_stats", r#"{"text": "three little words"}"#);
    assert_eq!(kind(&result), "", "{result}");
    assert_eq!(
        result["structured"],
        serde_json::json!({ "words": 3, "characters": 18 })
    );
    assert!(text(&result).contains("\"words\": 3"), "{result}");
}

#[test]
fn a_python_tools_schema_says_what_its_author_wrote_about_each_parameter() {
    let ws = Workspace::new().plugin("fixture_py_echo", "py");
    let spec = ws.cordon(&["describe", "py_split", "--json"]).json();
    let properties = &spec["parameters"]["properties"];
    assert_eq!(
        properties["line"]["description"], "The line to split.",
        "{spec}"
    );
    assert_eq!(
        properties["delimiter"]["description"],
        "The separator between fields, one character."
    );
    assert_eq!(properties["delimiter"]["default"], ",");
    assert_eq!(
        properties["limit"]["description"],
        "At most this many splits; 0 for no limit."
    );
    assert_eq!(properties["limit"]["default"], 0);
    assert_eq!(spec["parameters"]["required"], serde_json::json!(["line"]));
    // A default the client leaves out (or sends as null) is the author's.
    let result = ws.call("py_split", r#"{"line": "a,b,c"}"#);
    assert_eq!(text(&result), "a|b|c", "{result}");
    let result = ws.call(
        "py_split",
        r#"{"line": "a;b;c", "delimiter": ";", "limit": 1}"#,
    );
    assert_eq!(text(&result), "a|b;c", "{result}");
}

#[test]
fn a_python_tool_reports_progress_through_the_host() {
    // progress() built contract 0.2's tool-output with two of its three fields: every call that
    // reported progress ended in a TypeError.
    let ws = Workspace::new().plugin("fixture_py_echo", "py");
    let run = ws.cordon(&[
        "call",
        "py_progress",
        r#"{"steps": 2}"#,
        "--json",
        "--events",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(text(&run.json()), "done", "{}", run.stdout);
    let updates: Vec<serde_json::Value> = run
        .stderr
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["type"] == "tool_execution_update")
        .collect();
    assert_eq!(updates.len(), 2, "{}", run.stderr);
    assert_eq!(updates[1]["content"][0]["text"], "step 2 of 2");
    assert_eq!(updates[1]["details"]["step"], 2);
}

#[test]
fn python_tools_and_hooks_may_be_async() {
    let ws = Workspace::new()
        .plugin("fixture_py_async", "pyasync")
        .config("[plugins.pyasync]\nhook = [\"py_gather\"]\nlimits = { timeout = \"20s\" }\n");
    let gathered = ws.call("py_gather", r#"{"count": 5}"#);
    assert_eq!(text(&gathered), "0,2,4,6,8", "{gathered}");
    let napped = ws.call("py_nap", r#"{"millis": 30}"#);
    assert_eq!(
        napped["structured"],
        serde_json::json!({"asked_ms": 30, "at_least": true}),
        "an awaited sleep sleeps, and a dataclass result is structured output: {napped}"
    );
    let failed = ws.call("py_async_fails", "{}");
    assert_eq!(kind(&failed), "tool_error", "{failed}");
    assert!(text(&failed).contains("failed after an await"), "{failed}");
    let started = std::time::Instant::now();
    let stuck = ws.call("py_waits_forever", "{}");
    assert_eq!(kind(&stuck), "tool_error", "{stuck}");
    assert!(text(&stuck).contains("can never finish"), "{stuck}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "an error at once, not the time limit"
    );
    let blocked = ws.call("py_gather", r#"{"count": 5000}"#);
    assert_eq!(
        kind(&blocked),
        "blocked",
        "an async hook decides: {blocked}"
    );
    assert!(text(&blocked).contains("at most 1000 tasks"), "{blocked}");
}
