//! The `cordon` command line: list, describe, call, JSON shapes and exit codes.

use crate::support::{Workspace, kind, probe, text};
use serde_json::json;

#[test]
fn list_shows_every_tool_with_its_plugin_label_and_description() {
    let ws = probe();
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("echo")
            && run
                .stdout
                .contains("[probe] Echo: Returns the text it is given."),
        "{}",
        run.stdout
    );

    let list = ws.cordon(&["list", "--json"]).json();
    let echo = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("echo listed");
    assert_eq!(echo["plugin"], "probe");
    assert_eq!(echo["label"], "Echo");
    assert_eq!(echo["executionMode"], "parallel");
    assert_eq!(echo["parameters"]["required"], json!(["text"]));
    assert_eq!(list["rejected"], json!([]));
    assert_eq!(list["hooks"], json!([]));
}

#[test]
fn list_shows_hooks_and_what_they_watch() {
    let ws = probe()
        .plugin("fixture_hook", "guard")
        .config("[plugins.guard]\nhook = true\n");
    let list = ws.cordon(&["list", "--json"]).json();
    assert_eq!(
        list["hooks"],
        json!([{ "plugin": "guard", "tools": ["read_*"], "before": true, "after": false, "stages": [], "granted": true, "grantedTools": [] }])
    );
    let human = ws.cordon(&["list"]).stdout;
    assert!(
        human.contains("Hooks (1):\n  guard (before) watches read_*"),
        "{human}"
    );
    let narrowed = ws.config("[plugins.guard]\nhook = [\"read_file\"]\n");
    let human = narrowed.cordon(&["list"]).stdout;
    assert!(
        human.contains("guard (before) watches read_*, as granted: read_file"),
        "{human}"
    );

    // A session hook (contract 0.3) lists its stages.
    let ws = probe().plugin("fixture_session_hook", "session").config(
        "[plugins.session]
hook = true
",
    );
    let list = ws.cordon(&["list", "--json"]).json();
    assert_eq!(
        list["hooks"][0]["stages"],
        json!([
            "session-start",
            "prompt",
            "model-request",
            "model-response",
            "compaction",
            "stop",
            "session-end"
        ])
    );
    let human = ws.cordon(&["list"]).stdout;
    assert!(
        human.contains("session (stages session-start, prompt, model-request, model-response, compaction, stop, session-end) watches the session"),
        "{human}"
    );
}

#[test]
fn describe_prints_the_schema_and_refuses_unknown_tools() {
    let ws = probe();
    let spec = ws.cordon(&["describe", "echo", "--json"]).json();
    assert_eq!(spec["parameters"]["properties"]["times"]["maximum"], 10);
    assert_eq!(spec["description"], "Returns the text it is given.");

    let human = ws.cordon(&["describe", "echo"]);
    assert!(
        human.stdout.contains("\"text\"") && human.stdout.contains("plugin: probe"),
        "{}",
        human.stdout
    );

    let unknown = ws.cordon(&["describe", "nope"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.contains("no tool named \"nope\"") && unknown.stderr.contains("echo"),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_successful_call_prints_the_result_and_exits_0() {
    let ws = probe();
    let run = ws.cordon(&[
        "call",
        "echo",
        r#"{"text": "hi", "times": 3}"#,
        "--json",
        "--id",
        "c42",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = run.json();
    assert_eq!(result["toolCallId"], "c42");
    assert_eq!(result["toolName"], "echo");
    assert_eq!(result["isError"], false);
    assert!(
        result.get("errorKind").is_none(),
        "no errorKind on success: {result}"
    );
    assert_eq!(
        result["content"],
        json!([{ "type": "text", "text": "hihihi" }])
    );
    assert_eq!(result["details"], json!({ "callId": "c42" }));

    let human = ws.cordon(&["call", "echo", r#"{"text": "plain"}"#]);
    assert_eq!((human.code, human.stdout.as_str()), (0, "plain\n"));
}

#[test]
fn arguments_can_come_from_stdin() {
    let run = probe().cordon_stdin(
        &["call", "echo", "-", "--json"],
        r#"{"text": "from stdin"}"#,
    );
    assert_eq!(text(&run.json()), "from stdin");
}

#[test]
fn invalid_arguments_list_every_violation_with_its_pointer() {
    let run = probe().cordon(&[
        "call",
        "echo",
        r#"{"times": 11, "colour": "red"}"#,
        "--json",
    ]);
    assert_eq!(run.code, 1);
    let result = run.json();
    assert_eq!(kind(&result), "invalid_arguments");
    let message = text(&result);
    assert!(
        message.contains("\"text\" is a required property"),
        "{message}"
    );
    assert!(message.contains("at /times"), "{message}");
    assert!(
        message.contains(r#"Arguments received: {"times":11,"colour":"red"}"#),
        "{message}"
    );
    let pointers: Vec<&str> = result["details"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["pointer"].as_str().unwrap())
        .collect();
    assert!(
        pointers.contains(&"/times") && pointers.contains(&""),
        "{pointers:?}"
    );
}

#[test]
fn arguments_that_are_not_a_json_object_are_invalid_arguments() {
    let ws = probe();
    for bad in ["{\"text\": ", "[1, 2]", "\"text\""] {
        let result = ws.call("echo", bad);
        assert_eq!(kind(&result), "invalid_arguments", "{bad}: {result}");
    }
}

#[test]
fn an_unknown_tool_is_not_found_and_names_the_available_ones() {
    let run = probe().cordon(&["call", "rm_rf", "{}", "--json"]);
    assert_eq!(run.code, 1);
    let result = run.json();
    assert_eq!(kind(&result), "not_found");
    assert!(
        text(&result).contains("Unknown tool \"rm_rf\"") && text(&result).contains("echo"),
        "{result}"
    );
}

#[test]
fn a_tool_error_carries_its_message_and_details() {
    let result = probe().call("fail", r#"{"message": "disk is full"}"#);
    assert_eq!(kind(&result), "tool_error");
    assert_eq!(result["isError"], true);
    assert_eq!(text(&result), "disk is full");
    assert_eq!(result["details"], json!({ "reason": "asked to" }));
}

#[test]
fn images_come_back_as_base64_content() {
    let result = probe().call("image", "{}");
    assert_eq!(
        result["content"][1],
        json!({ "type": "image", "mimeType": "image/png", "data": "iVBORw==" })
    );
}

#[test]
fn settings_from_cordon_toml_reach_the_plugin() {
    let ws = probe().config("[plugins.probe.settings]\ngreeting = \"hi\"\nretries = 3\n");
    let result = ws.call("show_settings", "{}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text(&result)).unwrap(),
        json!({ "greeting": "hi", "retries": 3 })
    );
}

#[test]
fn configuration_and_usage_errors_exit_2_with_the_reason() {
    let ws = probe().config("[plugins.probe]\nlimits = { timeout = \"soon\" }\n");
    let run = ws.cordon(&["list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("plugins.probe.limits.timeout") && run.stderr.contains("\"soon\""),
        "{}",
        run.stderr
    );

    let typo = probe().config("[plugins.probe]\ndirectories = []\n");
    let run = typo.cordon(&["list"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown field `directories`"),
        "{}",
        run.stderr
    );

    // Each crate reads its own tables; a key none of them reads is named with its file and line,
    // in a table of its own or in `[agent]`, which the runtime and the agent loop share.
    for (text, named) in [
        (
            "[host]\nlocked = false\n\n[plugns.probe]\n",
            "cordon.toml line 4: unknown key `plugns`",
        ),
        (
            "[agent]\nmax_steps = 3\nmax_stpes = 4\n",
            "cordon.toml line 3: unknown key `agent.max_stpes`",
        ),
        ("[model]\nmodle = \"m\"\n", "unknown field `modle`"),
    ] {
        let run = probe().config(text).cordon(&["list"]);
        assert_eq!(run.code, 2, "{text}: {}", run.stderr);
        assert!(run.stderr.contains(named), "{text}: {}", run.stderr);
    }

    // `[telemetry]` is read by the telemetry crate, not the runtime: still checked on every load.
    for (table, key) in [
        (
            "[telemetry]\nsampler = \"sometimes\"\n",
            "telemetry.sampler",
        ),
        (
            "[telemetry]\nendpiont = \"http://127.0.0.1:4318\"\n",
            "unknown field `endpiont`",
        ),
    ] {
        let run = probe().config(table).cordon(&["list"]);
        assert_eq!(run.code, 2, "{table}: {}", run.stderr);
        assert!(
            run.stderr.contains(key) && run.stderr.contains("cordon.toml"),
            "{table}: {}",
            run.stderr
        );
    }

    let missing = probe().cordon(&["--config", "nope.toml", "list"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("nope.toml"), "{}", missing.stderr);

    assert_eq!(probe().cordon(&["frobnicate"]).code, 2);
    assert_eq!(
        Workspace::new()
            .cordon(&["--plugins", "absent", "list"])
            .code,
        2
    );
}

#[test]
fn ctrl_c_cancels_the_running_call_and_prints_its_result() {
    let ws = probe();
    ws.cordon(&["list"]); // compile into the cache first, so the call starts at once
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cordon"))
        .args(["call", "spin", "{}", "--json", "--events"])
        .current_dir(ws.path())
        .env("XDG_CACHE_HOME", ws.cache_home())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start cordon");
    // Interrupt once the call is running (its start event is on stderr).
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("tool_execution_start") {
        line.clear();
        assert_ne!(
            std::io::BufRead::read_line(&mut stderr, &mut line).unwrap(),
            0,
            "cordon exited early"
        );
    }
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let started = std::time::Instant::now();
    let output = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "cordon took {:?} to stop",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(1));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(kind(&result), "cancelled", "{result}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert!(rest.contains("cancelling"), "{rest}");
}
