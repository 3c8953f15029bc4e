//! Components built with today's toolchains (the component model's async ABI and WASI 0.3):
//! `async func` exports from wit-bindgen (Rust), componentize-py (`async def`) and
//! componentize-qjs, and a `wasip3` command, offered as tools and called through `cordon call`,
//! `cordon run` and `cordon serve` with the results their sync twins give; async guests that never
//! answer, spawn without end, stream for ever or break a future end in results within their
//! limits, and the plugin answers the next call.

use crate::support::agent_runs::{call as model_call, openai_tool_messages, run};
use crate::support::model_server::ScriptedModel;
use crate::support::stdio_server::Server;
use crate::support::{Workspace, kind, text};
use serde_json::json;

/// The three `async-greet` components, under one plugin each; the Python and JavaScript ones'
/// tools renamed so the names stay apart.
fn greeters() -> Workspace {
    Workspace::new()
        .plugin("fixture_plain_async_greet", "rust_greet")
        .plugin("plain_py_async_greet", "py_greet")
        .plugin("plain_qjs_async_greet", "js_greet")
        .config(
            r#"
[plugins.py_greet.tools.greet]
name = "py_greet"
[plugins.py_greet.tools.greet_with]
name = "py_greet_with"
[plugins.js_greet.tools.greet]
name = "js_greet"
[plugins.js_greet.tools.greet_with]
name = "js_greet_with"
"#,
        )
}

const GREETS: [(&str, &str); 3] = [
    ("greet", "greet_with"),
    ("py_greet", "py_greet_with"),
    ("js_greet", "js_greet_with"),
];

#[test]
fn async_exports_from_three_toolchains_are_tools_in_call_run_and_serve() {
    let ws = greeters();
    let listed = ws.cordon(&["list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let mut names: Vec<String> = listed.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "greet",
            "greet_with",
            "js_greet",
            "js_greet_with",
            "py_greet",
            "py_greet_with"
        ],
        "each async func is a tool, and the toolchains' own init exports are not"
    );
    let described = ws.cordon(&["describe", "js_greet_with", "--json"]).json();
    assert_eq!(
        described["parameters"]["properties"]["req"]["required"],
        json!(["name", "salutation", "shout"]),
        "{described}"
    );

    for (greet, greet_with) in GREETS {
        let hello = ws.call(greet, r#"{"name": "World"}"#);
        assert_eq!(text(&hello), "Hello, World!", "{greet}: {hello}");
        let shouted = ws.call(
            greet_with,
            r#"{"req": {"name": "ada", "salutation": "Hi", "shout": true}}"#,
        );
        assert_eq!(text(&shouted), "HI, ADA!", "{greet_with}: {shouted}");
        let refused = ws.call(
            greet_with,
            r#"{"req": {"name": " ", "salutation": "", "shout": false}}"#,
        );
        assert_eq!(kind(&refused), "tool_error", "{greet_with}: {refused}");
        assert!(
            text(&refused).contains("name must not be empty"),
            "{greet_with}: {refused}"
        );
        let invalid = ws.call(greet, r#"{"name": 5}"#);
        assert_eq!(kind(&invalid), "invalid_arguments", "{greet}: {invalid}");
    }

    // The agent loop: one batch with a call of each, results in the model's order.
    let model = ScriptedModel::start(json!([
        { "tool_calls": [
            model_call("r", "greet", json!({"name": "Rust"})),
            model_call("p", "py_greet", json!({"name": "Python"})),
            model_call("j", "js_greet_with", json!({"req": {"name": "JS", "salutation": "Hey", "shout": false}})),
        ]},
        { "text": "Greeted." }
    ]));
    let ran = run(&ws, &model, &["Greet everyone."], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let results = openai_tool_messages(&model.body(1));
    assert_eq!(
        results,
        [
            ("r".to_string(), "Hello, Rust!".to_string()),
            ("p".to_string(), "Hello, Python!".to_string()),
            ("j".to_string(), "Hey, JS!".to_string()),
        ]
    );

    // An MCP client.
    let mut server = Server::start(&ws);
    server.call(1, "greet", json!({"name": "MCP"}));
    server.call(
        2,
        "py_greet_with",
        json!({"req": {"name": "", "salutation": "", "shout": false}}),
    );
    server.call(3, "js_greet", json!({"name": "MCP"}));
    let answers = server.answers(&[1, 2, 3]);
    assert_eq!(
        answers[0]["result"]["content"][0]["text"], "Hello, MCP!",
        "{}",
        answers[0]
    );
    assert_eq!(answers[1]["result"]["isError"], true, "{}", answers[1]);
    assert!(
        answers[1]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("name must not be empty"),
        "{}",
        answers[1]
    );
    assert_eq!(
        answers[2]["result"]["content"][0]["text"], "Hello, MCP!",
        "{}",
        answers[2]
    );
}

#[test]
fn a_wasi_0_3_command_keeps_its_arguments_stdio_and_exit_status() {
    let ws = Workspace::new()
        .plugin("fixture_p3_command", "p3echo")
        .config("[plugins.p3echo.tools.p3echo]\nok_exit_codes = [0]\n");
    let listed = ws.cordon(&["list", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let spec = ws.cordon(&["describe", "p3echo", "--json"]).json();
    assert!(
        spec["parameters"]["properties"]["args"].is_object(),
        "a command's tool takes args: {spec}"
    );

    let echoed = ws.call(
        "p3echo",
        r#"{"args": ["one", "two"], "stdin": "from stdin"}"#,
    );
    assert_eq!(kind(&echoed), "", "{echoed}");
    assert_eq!(
        echoed["structured"],
        json!({"exit_code": 0, "stdout": "one two\n", "stderr": "from stdin"}),
        "{echoed}"
    );
    let failed = ws.call("p3echo", r#"{"args": ["fail", "loudly"]}"#);
    assert_eq!(kind(&failed), "tool_error", "{failed}");
    assert_eq!(failed["details"]["exit_code"], 3, "{failed}");
    assert!(
        text(&failed).contains("exited with status 3") && text(&failed).contains("fail loudly"),
        "its status and what it printed: {failed}"
    );

    // The agent loop: the model calls it, and the result it reads is the command's stdout.
    let model = ScriptedModel::start(json!([
        { "tool_calls": [model_call("c", "p3echo", json!({"args": ["from", "the", "loop"]}))] },
        { "text": "Ran it." }
    ]));
    let ran = run(&ws, &model, &["Run the command."], &[]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(
        openai_tool_messages(&model.body(1)),
        [("c".to_string(), "from the loop\n".to_string())]
    );

    let mut server = Server::start(&ws);
    server.call(1, "p3echo", json!({"args": ["over", "mcp"]}));
    let answer = &server.answers(&[1])[0];
    assert_eq!(
        answer["result"]["structuredContent"]["stdout"], "over mcp\n",
        "{answer}"
    );
}

/// Leaves out the functions whose signatures hold a stream or a future.
const SKIP_HANDLES: &str = "[plugins.hostile.tools.endless_stream]\nskip = true\n[plugins.hostile.tools.future_handout]\nskip = true\n";

/// The hostile async component, with a time limit short enough for a test.
fn hostile(extra: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_async_hostile", "hostile")
        .config(&format!(
            "[plugins.hostile]\nlimits = {{ timeout = \"2s\", memory = \"64MiB\" }}\n{extra}"
        ))
}

#[test]
fn a_function_with_a_stream_in_its_signature_is_refused_by_name_unless_skipped() {
    let refused = hostile("");
    let listed = refused.cordon(&["list"]);
    assert_ne!(listed.code, 0, "{}", listed.stdout);
    assert!(
        listed.stderr.contains("`endless-stream`")
            && listed.stderr.contains("a stream")
            && listed.stderr.contains("`future-handout`")
            && listed.stderr.contains("a future"),
        "the refusal names the function and the type: {}",
        listed.stderr
    );
    assert!(listed.stderr.contains("skip = true"), "{}", listed.stderr);
}

#[test]
fn hostile_async_guests_end_within_their_limits_and_the_plugin_answers_after() {
    let ws = hostile(SKIP_HANDLES);
    // (tool, arguments, how it ends, what the message says)
    for (tool, args, ending, says) in [
        ("hang", "{}", "trap", "can never happen"),
        ("hang_pending", "{}", "trap", "can never happen"),
        (
            "inner_endless_stream",
            r#"{"chunk": 4096}"#,
            "timeout",
            "time limit of 2 s",
        ),
        (
            "spawn_storm",
            r#"{"per_turn": 1000}"#,
            "timeout",
            "time limit of 2 s",
        ),
        (
            "drop_future_writer",
            "{}",
            "trap",
            "without first writing a value",
        ),
    ] {
        let started = std::time::Instant::now();
        let ended = ws.call(tool, args);
        let elapsed = started.elapsed();
        assert_eq!(kind(&ended), ending, "{tool}: {ended}");
        assert!(text(&ended).contains(says), "{tool}: {ended}");
        assert!(
            elapsed < std::time::Duration::from_secs(20),
            "{tool} took {elapsed:?}: {ended}"
        );
        if says == "can never happen" {
            assert_eq!(ended["details"]["deadlock"], true, "{tool}: {ended}");
            assert!(
                elapsed < std::time::Duration::from_secs(2),
                "stopped at once, not at its time limit: {elapsed:?}"
            );
        }
    }
    let written = ws.call("drop_own_reader", "{}");
    assert_eq!(text(&written), "reader-dropped", "{written}");
    let alive = ws.call("ping", "{}");
    assert_eq!(text(&alive), "pong", "{alive}");
}

#[test]
fn wasi_0_3_filesystem_sockets_and_http_are_refused_by_name_never_linked_ungated() {
    let component = wat::parse_str(
        r#"(component
            (import "wasi:filesystem/types@0.3.0" (instance (export "open" (func))))
            (import "wasi:sockets/types@0.3.0" (instance (export "connect" (func))))
            (import "wasi:http/handler@0.3.0" (instance (export "handle" (func))))
            (import "wasi:clocks/monotonic-clock@0.3.0" (instance))
            (import "wasi:random/random@0.3.0" (instance))
            (core module $m (func (export "f") (result i32) i32.const 1))
            (core instance $i (instantiate $m))
            (func (export "answer") (result u32) (canon lift (core func $i "f")))
        )"#,
    )
    .unwrap();
    let ws = Workspace::new().raw_plugin("p3io", &component);
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "{}", listed.stderr);
    let refusal = &listed.stderr;
    for import in [
        "wasi:filesystem/types@0.3.0",
        "wasi:sockets/types@0.3.0",
        "wasi:http/handler@0.3.0",
    ] {
        assert!(refusal.contains(import), "{import}: {refusal}");
    }
    assert!(
        !refusal.contains("monotonic-clock") && !refusal.contains("random/random"),
        "0.3 clocks and random are provided: {refusal}"
    );
    assert!(
        refusal.contains("WASI 0.3 cli, clocks and random"),
        "{refusal}"
    );
}

#[test]
fn pending_subtasks_and_futures_a_call_keeps_are_bounded_by_its_memory_limit() {
    // 64 MiB: a quarter of it at 1 KiB a handle is 16,384, so the per-call cap of 10,000 holds.
    let ws = hostile(SKIP_HANDLES);
    for tool in ["hoard_subtasks", "hoard_futures"] {
        let few = ws.call(tool, r#"{"count": 500}"#);
        assert_eq!(text(&few), "500", "{tool}: a few are fine: {few}");
        let flood = ws.call(tool, r#"{"count": 60000}"#);
        assert_eq!(kind(&flood), "trap", "{tool}: {flood}");
        assert!(text(&flood).contains("handle limit"), "{tool}: {flood}");
    }
    // 16 MiB: 4,096 handles, so 6,000 pending subtasks are already too many.
    let small = Workspace::new()
        .plugin("fixture_async_hostile", "hostile")
        .config(&format!(
            "[plugins.hostile]\nlimits = {{ timeout = \"5s\", memory = \"16MiB\" }}\n{SKIP_HANDLES}"
        ));
    let flood = small.call("hoard_subtasks", r#"{"count": 6000}"#);
    assert_eq!(kind(&flood), "trap", "{flood}");
    let fits = small.call("hoard_subtasks", r#"{"count": 3000}"#);
    assert_eq!(text(&fits), "3000", "{fits}");
}

#[test]
fn with_the_async_abi_turned_off_async_components_are_refused_saying_how_to_turn_it_on() {
    let ws = Workspace::new()
        .plugin("fixture_plain_async_greet", "greeter")
        .plugin("fixture_echo", "echo")
        .config("[host]\ncomponent_model_async = false\n");
    let listed = ws.cordon(&["list"]);
    assert_eq!(listed.code, 1, "{}", listed.stderr);
    assert!(
        listed.stderr.contains("greeter.wasm")
            && listed.stderr.contains("async ABI")
            && listed.stderr.contains("component_model_async = false"),
        "{}",
        listed.stderr
    );
    let echoed = ws.call("echo", r#"{"text": "still here"}"#);
    assert_eq!(text(&echoed), "still here", "sync plugins run: {echoed}");
}

#[tokio::test]
async fn the_async_abi_is_on_only_when_a_plugin_needs_it() {
    let sync_only = Workspace::new().plugin("fixture_echo", "echo");
    let pipeline = sync_only.pipeline().await;
    assert!(
        !pipeline.registry().component_model_async(),
        "no plugin needs it: every call takes the synchronous path"
    );
    let mixed = Workspace::new()
        .plugin("fixture_echo", "echo")
        .plugin("fixture_plain_async_greet", "greeter");
    let pipeline = mixed.pipeline().await;
    assert!(pipeline.registry().component_model_async());
    assert!(pipeline.registry().rejected().is_empty(), "both load");
    let greeted = crate::support::call(&pipeline, "greet", r#"{"name": "auto"}"#).await;
    assert_eq!(greeted.text(), "Hello, auto!");
    let echoed = crate::support::call(&pipeline, "echo", r#"{"text": "sync"}"#).await;
    assert_eq!(echoed.text(), "sync");
}

/// A cordon 0.3 plugin whose contract exports are `async func` (tests/fixtures/async_contract).
fn async_contract() -> Workspace {
    Workspace::new()
        .plugin("fixture_async_contract", "asyncplug")
        .config(
            "[plugins.asyncplug]\nhook = true\nlimits = { timeout = \"3s\" }\nsettings = { greeting = \"hi\" }\n",
        )
}

#[test]
fn a_plugin_whose_contract_exports_are_async_runs_tools_and_hooks_as_a_sync_one_does() {
    let ws = async_contract();
    let echoed = ws.call("async_echo", r#"{"text": "over the async ABI"}"#);
    assert_eq!(
        text(&echoed),
        "over the async ABI (seen by the async after-hook)",
        "{echoed}"
    );
    let blocked = ws.call("async_echo", r#"{"text": "forbidden words"}"#);
    assert_eq!(kind(&blocked), "blocked", "{blocked}");
    assert!(text(&blocked).contains("async before-hook"), "{blocked}");
    let settings = ws.call("async_settings", "{}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text(&settings)).unwrap(),
        json!({"greeting": "hi"}),
        "{settings}"
    );
    let refused = ws.call("async_refuse", "{}");
    assert_eq!(kind(&refused), "tool_error", "{refused}");

    let mut server = Server::start(&ws);
    server.call(1, "async_echo", json!({"text": "mcp"}));
    let answer = &server.answers(&[1])[0];
    assert_eq!(
        answer["result"]["content"][0]["text"], "mcp (seen by the async after-hook)",
        "{answer}"
    );
}

#[test]
fn an_async_contract_export_that_never_answers_ends_as_a_trap_and_the_host_goes_on() {
    let ws = async_contract();
    let started = std::time::Instant::now();
    let hung = ws.call("async_never", "{}");
    assert_eq!(kind(&hung), "trap", "{hung}");
    // A release build (what users run) reports the deadlock. In a debug build wasmtime 48 checks
    // a bookkeeping assertion of its own on the way out, which fails here: the host's panic guard
    // ends the call as a trap flagged `host_panic` instead of losing the process.
    assert!(
        text(&hung).contains("can never happen") || hung["details"]["host_panic"] == true,
        "{hung}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));

    // Over MCP the server answers it, and the next request.
    let mut server = Server::start(&ws);
    server.call(1, "async_never", json!({}));
    server.call(2, "async_echo", json!({"text": "after"}));
    let answers = server.answers(&[1, 2]);
    assert_eq!(answers[0]["result"]["isError"], true, "{}", answers[0]);
    assert_eq!(
        answers[1]["result"]["content"][0]["text"], "after (seen by the async after-hook)",
        "{}",
        answers[1]
    );
}

#[test]
fn the_async_contract_fixture_is_the_contract_with_async_exports() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let contract = std::fs::read_to_string(root.join("wit/plugin-0.3.0/plugin.wit")).unwrap();
    let fixture =
        std::fs::read_to_string(root.join("tests/fixtures/async_contract/wit/plugin.wit")).unwrap();
    let fixture: String = fixture
        .lines()
        .filter(|line| !line.starts_with("// "))
        .map(|line| line.replace(": async func(", ": func(") + "\n")
        .collect();
    assert_eq!(
        fixture, contract,
        "copy wit/plugin-0.3.0/plugin.wit again, with the plugin interface's exports `async func`"
    );
}

#[tokio::test]
async fn rust_sdk_tools_may_await_with_block_on_and_a_future_nothing_finishes_says_so() {
    let ws = Workspace::new().plugin("fixture_rust_async", "naps");
    // The short nap, started second, ends first: the two sleeps overlap.
    let raced = ws.call("nap_race", r#"{"long_ms": 300}"#);
    assert_eq!(text(&raced), "short,long", "{raced}");
    // A block_on inside another leaves the outer one's waits in place.
    let nested = ws.call("nested", r#"{"long_ms": 300}"#);
    assert_eq!(text(&nested), "helper,long", "{nested}");
    assert!(
        !ws.pipeline().await.registry().component_model_async(),
        "block_on keeps the plugin on the synchronous path"
    );
    let stuck = ws.call("wait_on_nothing", "{}");
    assert_eq!(kind(&stuck), "trap", "{stuck}");
    assert!(
        text(&stuck).contains("waits for something that can never happen"),
        "{stuck}"
    );
}
