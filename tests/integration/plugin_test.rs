//! `cordon test`, the conformance run for plugin authors: every bundled plugin passes; the
//! misbehaving fixtures fail with a report that names the tool, the check and what happened
//! (refused at load, trap, out of memory, output over its limit, a hook that crashes or hangs);
//! `--json` and `--deny-warnings` work; grants come only from an explicit `--config`.

use crate::support::{Workspace, guest_dir};

/// The bundled plugins, as `make test` built them.
const BUNDLED: &[&str] = &[
    "fs",
    "guard",
    "redact",
    "http_fetch",
    "csv_query",
    "json_query",
    "hash",
];

fn wasm(component: &str) -> String {
    guest_dir()
        .join(format!("{component}.wasm"))
        .display()
        .to_string()
}

#[test]
fn a_tool_over_the_prompt_size_budget_is_a_warning_and_the_bundled_ones_are_within_it() {
    let long = "Measures a shape. ".repeat(120);
    let ws = Workspace::new()
        .plugin("fixture_plain_geometry", "geometry")
        .config(&format!(
            "[plugins.geometry.tools.measure]\ndescription = \"{long}\"\n"
        ));
    let run = ws.cordon(&["--config", "cordon.toml", "test", "plugins/geometry.wasm"]);
    assert_eq!(run.code, 0, "a warning is not a failure: {}", run.stdout);
    assert!(
        run.stdout.contains(
            "warn  measure · prompt size: what a model is sent of it (name, description, schema) is"
        ),
        "{}",
        run.stdout
    );
    let files: Vec<String> = BUNDLED.iter().map(|name| wasm(name)).collect();
    let mut args = vec!["test"];
    args.extend(files.iter().map(String::as_str));
    let bundled = Workspace::new().cordon(&args);
    assert!(
        !bundled
            .stdout
            .contains("prompt size: what a model is sent of it (name"),
        "{}",
        bundled.stdout
    );
    assert!(
        bundled.stdout.contains("ok    grep · prompt size"),
        "{}",
        bundled.stdout
    );
}

#[test]
fn every_bundled_plugin_passes() {
    let ws = Workspace::new();
    let files: Vec<String> = BUNDLED.iter().map(|name| wasm(name)).collect();
    let mut args = vec!["test"];
    args.extend(files.iter().map(String::as_str));
    let run = ws.cordon(&args);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("7 plugin(s) tested: 7 passed, 0 failed"),
        "{}",
        run.stdout
    );
    // The JavaScript plugin's example needs no grant, so it runs and answers.
    assert!(
        run.stdout
            .contains("ok    json_query · example 1: answered in"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Dune"), "{}", run.stdout);
    // A schema strict clients cannot use is a warning that says where and why.
    assert!(
        run.stdout.contains(
            "warn  json_query · strict mode: strict clients (OpenAI's strict function calling, agent SDKs that make MCP tools strict) cannot use its parameters schema: at /properties/document: has no type"
        ),
        "{}",
        run.stdout
    );
    // Hooks run over a sample call: guard watches writes, redact rewrites results.
    assert!(
        run.stdout.contains("hook · before-tool-call"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("hook · after-tool-call"),
        "{}",
        run.stdout
    );
    // Without --config nothing is granted: the fs examples answer with errors, as warnings.
    assert!(
        run.stdout.contains("warn  read_file · example 1:"),
        "{}",
        run.stdout
    );
}

#[test]
fn examples_run_with_the_grants_of_an_explicit_config_only() {
    let ws = Workspace::new()
        .file("data/README.md", "# Notes\nTODO: water the plants\n")
        .file(
            "test.toml",
            "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"rw\" }]\n\n[plugins.other]\nlimits = { timeout = \"2s\" }\n",
        );
    let fs = wasm("fs");
    let run = ws.cordon(&["--config", "test.toml", "test", &fs]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // The other plugin's grant is not this test's business: no warning about its missing file.
    assert!(!run.stderr.contains("other.wasm"), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("ok    read_file · example 1: answered in"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("water the plants"), "{}", run.stdout);
    assert!(
        ws.path().join("data/notes/todo.txt").is_file(),
        "write_file's example wrote inside the grant"
    );

    // A cordon.toml in the directory is not used: `cordon test` grants nothing unless told.
    let ws = ws.file(
        "cordon.toml",
        "[plugins.fs]\ndirs = [{ host = \"data\", guest = \"/data\", mode = \"rw\" }]\n",
    );
    let run = ws.cordon(&["test", &fs]);
    assert!(
        run.stdout.contains("warn  read_file · example 1:"),
        "{}",
        run.stdout
    );
    // --deny-warnings turns those warnings into a failing exit status.
    let strict = ws.cordon(&["test", "--deny-warnings", &fs]);
    assert_eq!(strict.code, 1, "{}", strict.stdout);
}

#[test]
fn a_hostile_plugin_fails_with_a_report_naming_each_misbehaviour() {
    let ws = Workspace::new().file(
        "test.toml",
        "[plugins.fixture_hostile]\nlimits = { timeout = \"2s\" }\n",
    );
    let run = ws.cordon(&["--config", "test.toml", "test", &wasm("fixture_hostile")]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    for expected in [
        "FAIL  recurse · example 1: trap after",
        "FAIL  huge_result · example 1: out_of_memory after",
        // 100 MB: refused while it is copied out, before the output limit could count it.
        "FAIL  huge_result · example 2: `huge_result` handed the host more data at once",
        "FAIL  exit · example 1: trap after",
        "FAIL  handle_flood · example 1:",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?} in:\n{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("  FAILED: "), "{}", run.stdout);

    // The same as JSON, for CI.
    let json = ws.cordon(&[
        "--config",
        "test.toml",
        "test",
        "--json",
        &wasm("fixture_hostile"),
    ]);
    assert_eq!(json.code, 1);
    let reports: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON reports");
    let findings = reports[0]["findings"].as_array().expect("findings");
    assert!(
        findings
            .iter()
            .any(|finding| finding["subject"] == "recurse"
                && finding["check"] == "example 1"
                && finding["outcome"] == "fail"),
        "{json:?}",
        json = json.stdout
    );
}

#[test]
fn a_plugin_that_does_not_load_fails_with_the_reason() {
    let ws = Workspace::new();
    let run = ws.cordon(&["test", &wasm("fixture_bad_schema")]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("FAIL  plugin · load: refused: "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("schema"), "{}", run.stdout);

    let missing = ws.cordon(&["test", "nowhere.wasm"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("nowhere.wasm is not a file"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_hook_that_crashes_or_hangs_fails() {
    let ws = Workspace::new()
        .plugin("fixture_scripted_hook", "crashing")
        .plugin("fixture_scripted_hook", "hanging")
        .plugin("fixture_scripted_hook", "fragile")
        .config(
            "[plugins.crashing]\nsettings = { before = \"trap\", after = \"keep\", tag = \"c\" }\n\
             [plugins.hanging]\nlimits = { timeout = \"1s\" }\nsettings = { before = \"allow\", after = \"spin\", tag = \"h\" }\n\
             [plugins.fragile]\nsettings = { before = \"allow\", after = \"trap_on_error\", tag = \"f\" }\n",
        );
    let fragile = ws.path().join("plugins/fragile.wasm").display().to_string();
    let crashing = ws
        .path()
        .join("plugins/crashing.wasm")
        .display()
        .to_string();
    let hanging = ws.path().join("plugins/hanging.wasm").display().to_string();
    let run = ws.cordon(&[
        "--config",
        "cordon.toml",
        "test",
        &crashing,
        &hanging,
        &fragile,
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("FAIL  hook · before-tool-call: trap on the sample call"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("FAIL  hook · after-tool-call: timeout on the sample result"),
        "{}",
        run.stdout
    );
    // A hook that handles successes but crashes on a failed call's result.
    assert!(
        run.stdout
            .contains("ok    hook · after-tool-call: kept the sample result"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "FAIL  hook · after-tool-call (error result): trap on the sample error result"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("3 plugin(s) tested: 0 passed, 3 failed"),
        "{}",
        run.stdout
    );
}

#[test]
fn with_no_file_every_plugin_in_the_plugins_directory_is_tested() {
    let ws = Workspace::new()
        .plugin("json_query", "json_query")
        .plugin("fixture_echo", "echo");
    let run = ws.cordon(&["test"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("2 plugin(s) tested: 2 passed, 0 failed"),
        "{}",
        run.stdout
    );
}

#[test]
fn every_session_stage_a_hook_declares_is_run_over_a_sample_event() {
    let ws = Workspace::new()
        .plugin("fixture_session_hook", "steady")
        .plugin("fixture_session_hook", "shaky")
        .config(
            "[plugins.steady.settings]\nprompt = { add_context = \"be brief\" }\nstop = { replace = \"run the tests\" }\n\
             [plugins.shaky.settings]\nmodel-request = { trap = true }\nmodel-response = { block = \"not a decision this stage takes\" }\n",
        );
    let steady = ws.path().join("plugins/steady.wasm").display().to_string();
    let shaky = ws.path().join("plugins/shaky.wasm").display().to_string();
    let run = ws.cordon(&["--config", "cordon.toml", "test", &steady, &shaky]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    for line in [
        "ok    session hook · session-start: proceeds on the sample event",
        "ok    session hook · prompt: on the sample event, adds context: be brief",
        "ok    session hook · stop: on the sample event, replaces with: run the tests",
        "a hook (session stages session-start, prompt, model-request, model-response, compaction, stop, session-end)",
        "ok    session hook · session-end: proceeds on the sample event",
        "FAIL  session hook · model-request: trap on the sample event",
        "FAIL  session hook · model-response: its decision sets `block`, which the model-response stage does not take",
        "2 plugin(s) tested: 1 passed, 1 failed",
    ] {
        assert!(run.stdout.contains(line), "{line}\n{}", run.stdout);
    }
}
