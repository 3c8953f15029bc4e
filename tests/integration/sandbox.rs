//! Isolation and limits: traps, timeouts, memory and fuel budgets, fresh state per call, env and
//! stdio confinement. These use the library so several calls share one loaded plugin.

use crate::support::{call, kind, probe, text};
use cordon_runtime::ErrorKind;
use std::time::{Duration, Instant};

const LIMITS: &str = r#"
[plugins.probe]
limits = { timeout = "200ms", memory = "32MiB", output = "64KiB", stdio = "4KiB" }
"#;

#[tokio::test]
async fn a_trap_is_reported_and_the_next_call_to_the_plugin_succeeds() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    let crashed = call(&pipeline, "panic", r#"{"message": "the guest fell over"}"#).await;
    assert_eq!(crashed.error_kind, Some(ErrorKind::Trap));
    let message = crashed.text();
    assert!(message.contains("unreachable"), "trap reason: {message}");
    assert!(
        message.contains("the guest fell over"),
        "guest panic message from stderr: {message}"
    );
    assert!(
        !message.contains("wasm backtrace") && !message.contains("crates/runtime/src"),
        "no host backtrace: {message}"
    );

    let next = call(&pipeline, "echo", r#"{"text": "still here"}"#).await;
    assert_eq!(
        (next.is_error, next.text()),
        (false, "still here".to_string())
    );
}

#[tokio::test]
async fn an_infinite_loop_is_stopped_at_its_time_limit() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    let started = Instant::now();
    let result = call(&pipeline, "spin", "{}").await;
    let elapsed = started.elapsed();
    assert_eq!(result.error_kind, Some(ErrorKind::Timeout), "{result:?}");
    assert!(
        elapsed < Duration::from_millis(300),
        "a 200 ms limit stopped the loop after {elapsed:?}"
    );
    assert!(result.text().contains("200 ms"), "{}", result.text());
    assert_eq!(result.details["limitMs"], 200);

    let next = call(&pipeline, "counter", "{}").await;
    assert!(!next.is_error, "the plugin works after a timeout: {next:?}");
}

#[tokio::test]
async fn a_guest_blocked_in_a_host_call_is_stopped_too() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    let started = Instant::now();
    let result = call(&pipeline, "sleep", r#"{"millis": 10000}"#).await;
    let elapsed = started.elapsed();
    assert_eq!(result.error_kind, Some(ErrorKind::Timeout), "{result:?}");
    assert!(
        elapsed < Duration::from_millis(500),
        "a 200 ms limit stopped the sleep after {elapsed:?}"
    );
    let short = call(&pipeline, "sleep", r#"{"millis": 5}"#).await;
    assert_eq!(short.text(), "slept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_concurrent_calls_than_sandbox_slots_queue_and_all_finish() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let pipeline = pipeline.clone();
        tasks.spawn(async move {
            (
                i,
                call(&pipeline, "echo", &format!(r#"{{"text": "{i}"}}"#)).await,
            )
        });
    }
    let mut seen = std::collections::BTreeSet::new();
    while let Some(joined) = tasks.join_next().await {
        let (i, result) = joined.expect("call task");
        assert_eq!(result.text(), i.to_string(), "{result:?}");
        seen.insert(i);
    }
    assert_eq!(seen.len(), 200, "every call got exactly one result");
}

#[tokio::test]
async fn a_memory_bomb_is_out_of_memory() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    let result = call(&pipeline, "alloc_bomb", "{}").await;
    assert_eq!(
        result.error_kind,
        Some(ErrorKind::OutOfMemory),
        "{result:?}"
    );
    assert!(result.text().contains("32 MiB"), "{}", result.text());
    assert!(!call(&pipeline, "echo", r#"{"text": "ok"}"#).await.is_error);
}

#[tokio::test]
async fn fuel_exhaustion_is_out_of_fuel_and_small_work_fits() {
    let ws = probe().config("[plugins.probe]\nlimits = { fuel = 5000000 }\n");
    let pipeline = ws.pipeline().await;
    let burned = call(&pipeline, "burn", r#"{"iterations": 1000000000000}"#).await;
    assert_eq!(burned.error_kind, Some(ErrorKind::OutOfFuel), "{burned:?}");
    assert_eq!(burned.details["fuel"], 5_000_000);
    let small = call(&pipeline, "burn", r#"{"iterations": 1000}"#).await;
    assert!(!small.is_error, "{small:?}");
}

#[tokio::test]
async fn guest_static_memory_starts_fresh_on_every_call() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    for round in 0..5 {
        let result = call(&pipeline, "counter", "{}").await;
        assert_eq!(
            result.text(),
            "1",
            "round {round}: state leaked between calls"
        );
        if round == 2 {
            call(&pipeline, "panic", r#"{"message": "x"}"#).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_in_a_concurrent_call_does_not_disturb_the_others() {
    let ws = probe().config(LIMITS);
    let pipeline = ws.pipeline().await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..12 {
        let pipeline = pipeline.clone();
        tasks.spawn(async move {
            let result = if i % 3 == 0 {
                call(&pipeline, "panic", r#"{"message": "boom"}"#).await
            } else {
                call(&pipeline, "echo", &format!(r#"{{"text": "call {i}"}}"#)).await
            };
            (i, result)
        });
    }
    let mut finished = 0;
    while let Some(joined) = tasks.join_next().await {
        let (i, result) = joined.expect("call task");
        finished += 1;
        if i % 3 == 0 {
            assert_eq!(result.error_kind, Some(ErrorKind::Trap));
        } else {
            assert_eq!(result.text(), format!("call {i}"), "{result:?}");
        }
    }
    assert_eq!(finished, 12);
}

#[test]
fn env_vars_are_invisible_unless_granted() {
    let ws = probe().config("[plugins.probe]\nenv = [\"CORDON_TEST_GRANTED\"]\n");
    let env = [
        ("CORDON_TEST_GRANTED", "visible value"),
        ("CORDON_TEST_SECRET", "hunter2"),
    ];
    let secret = ws
        .cordon_with_env(
            &[
                "call",
                "env_get",
                r#"{"name": "CORDON_TEST_SECRET"}"#,
                "--json",
            ],
            &env,
        )
        .json();
    assert_eq!(text(&secret), "<unset>");
    assert_eq!(
        secret["details"]["visible"],
        serde_json::json!(["CORDON_TEST_GRANTED"]),
        "only the granted name is visible"
    );
    let granted = ws
        .cordon_with_env(
            &[
                "call",
                "env_get",
                r#"{"name": "CORDON_TEST_GRANTED"}"#,
                "--json",
            ],
            &env,
        )
        .json();
    assert_eq!(text(&granted), "visible value");

    let fixed = probe().config("[plugins.probe]\nenv_set = { CORDON_MODE = \"fixed value\" }\n");
    let set = fixed
        .cordon_with_env(
            &["call", "env_get", r#"{"name": "CORDON_MODE"}"#, "--json"],
            &[("CORDON_MODE", "host value")],
        )
        .json();
    assert_eq!(
        text(&set),
        "fixed value",
        "env_set gives a fixed value, not the host's"
    );

    let ungranted = probe();
    let none = ungranted
        .cordon_with_env(&["call", "env_get", r#"{"name": "HOME"}"#, "--json"], &env)
        .json();
    assert_eq!(
        (text(&none).as_str(), &none["details"]["visible"]),
        ("<unset>", &serde_json::json!([]))
    );
}

/// A passed-through variable named as a credential is a secret like a configured one: a plugin
/// that echoes it gets it masked in what cordon prints (and exports); other values are not.
#[test]
fn a_passed_through_credential_is_masked_wherever_the_plugin_echoes_it() {
    let ws = probe().config("[plugins.probe]\nenv = [\"DEPLOY_TOKEN\", \"CORDON_REGION\"]\n");
    let env = [
        ("DEPLOY_TOKEN", "tok-8c1f2e9a7b"),
        ("CORDON_REGION", "eu-central-9"),
    ];
    let token = ws.cordon_with_env(
        &["call", "env_get", r#"{"name": "DEPLOY_TOKEN"}"#, "--json"],
        &env,
    );
    assert!(!token.stdout.contains("tok-8c1f2e9a7b"), "{}", token.stdout);
    assert_eq!(text(&token.json()), "[REDACTED:secret]");
    let region = ws
        .cordon_with_env(
            &["call", "env_get", r#"{"name": "CORDON_REGION"}"#, "--json"],
            &env,
        )
        .json();
    assert_eq!(text(&region), "eu-central-9");
}

#[test]
fn guest_stdout_never_reaches_the_host_stdout_and_is_bounded() {
    let ws = probe().config(LIMITS);
    let run = ws.cordon(&["call", "noisy", r#"{"bytes": 1000000}"#]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout, "still alive\n",
        "guest output leaked into stdout"
    );
    let verbose = ws.cordon(&["-vv", "call", "noisy", r#"{"bytes": 100000}"#]);
    assert!(
        verbose.stderr.contains("dropped_bytes"),
        "captured stdio is logged with what was dropped"
    );
    assert!(
        verbose.stderr.len() < 64 * 1024,
        "captured stdio is bounded, got {} bytes",
        verbose.stderr.len()
    );
}

#[test]
fn output_over_the_plugin_output_limit_is_an_error() {
    let ws = probe().config(LIMITS);
    let result = ws.call("big_output", r#"{"bytes": 100000}"#);
    assert_eq!(kind(&result), "tool_error");
    assert!(text(&result).contains("64 KiB"), "{result}");
    let fits = ws.call("big_output", r#"{"bytes": 1000}"#);
    assert_eq!(text(&fits).len(), 1000);
}

/// A component built with stubbed-out imports traps in the stub without a word on stderr: the
/// message names the function it stopped in (from its name section), and the details list the
/// frames, innermost first (tests/fixtures_wat/stubbed_import.wat).
#[tokio::test]
async fn a_silent_trap_says_which_function_it_happened_in() {
    let component =
        wat::parse_str(include_str!("../fixtures_wat/stubbed_import.wat")).expect("assembles");
    let ws = crate::support::Workspace::new().raw_plugin("stubbed", &component);
    let pipeline = ws.pipeline().await;
    let trapped = call(&pipeline, "environment", "{}").await;
    assert_eq!(trapped.error_kind, Some(ErrorKind::Trap), "{trapped:?}");
    assert!(
        trapped
            .text()
            .contains("unreachable instruction executed) in `wasi_snapshot_preview1::environ_get`")
            || trapped
                .text()
                .contains("in `wasi_snapshot_preview1::environ_get`"),
        "{}",
        trapped.text()
    );
    assert_eq!(
        trapped.details["wasm_frames"],
        serde_json::json!(["wasi_snapshot_preview1::environ_get", "read_environment"]),
        "{:?}",
        trapped.details
    );
    let answered = call(&pipeline, "answer", "{}").await;
    assert_eq!(answered.text(), "42");
}
