//! Hooks around calls: order, rewrite, block, re-validation, fail-closed before and after, the
//! after-hook replacement chain. The scripted-hook fixture plays each hook under its own plugin id,
//! its behaviour set through its settings; both hooks are granted (`hook = true`) unless a test
//! says otherwise (attacks/hooks.rs has the ungranted and adversarial cases).

use crate::support::{Workspace, event_trail, kind, probe, run_with_events, text};
use cordon_runtime::pipeline::CallRequest;
use tokio_util::sync::CancellationToken;

/// The probe plus scripted hooks `hook_a`, `hook_b` (granted), configured by `config`.
fn with_hooks(config: &str) -> Workspace {
    probe()
        .plugin("fixture_scripted_hook", "hook_a")
        .plugin("fixture_scripted_hook", "hook_b")
        .file("out/.keep", "")
        .config(&format!("[plugins.probe]\ndirs = [{{ host = \"out\", guest = \"/out\", mode = \"rw\" }}]\n{config}"))
}

/// Settings for both scripted hooks, each granted: `[plugins.hook_a]` with `a` (inline-table
/// fields) and `[plugins.hook_b]` with `b`.
fn scripts(a: &str, b: &str) -> String {
    format!("[plugins.hook_a]\nhook = true\n{a}\n[plugins.hook_b]\nhook = true\n{b}\n")
}

#[test]
fn before_hooks_rewrite_in_file_name_order_or_the_configured_order() {
    let ws = with_hooks(&scripts(
        r#"settings = { before = "rewrite", tag = "A" }"#,
        r#"settings = { before = "rewrite", tag = "B" }"#,
    ));
    assert_eq!(
        text(&ws.call("echo", r#"{"text": "x"}"#)),
        "x+A+B",
        "each hook sees the previous rewrite"
    );
    let reordered = ws.config(&format!(
        "[hooks]\norder = [\"hook_b\"]\n{}",
        scripts(
            r#"settings = { before = "rewrite", tag = "A" }"#,
            r#"settings = { before = "rewrite", tag = "B" }"#,
        )
    ));
    assert_eq!(
        text(&reordered.call("echo", r#"{"text": "x"}"#)),
        "x+B+A",
        "listed hooks first, the rest after"
    );
    let listed = reordered.cordon(&["list"]).stdout;
    assert!(
        listed.find("hook_b (before + after)").unwrap()
            < listed.find("hook_a (before + after)").unwrap(),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_stops_the_chain_and_names_the_hook() {
    let ws = with_hooks(&scripts(
        r#"settings = { before = "block", tag = "A" }"#,
        r#"settings = { before = "rewrite", tag = "B" }"#,
    ));
    let pipeline = ws.pipeline().await;
    let calls = vec![CallRequest::new(
        "w",
        "write_path",
        r#"{"path": "/out/blocked.txt", "content": "x"}"#,
    )];
    let (results, events) = run_with_events(&pipeline, calls, CancellationToken::new()).await;
    assert_eq!(
        results[0].error_kind,
        Some(cordon_runtime::ErrorKind::Blocked)
    );
    assert_eq!(
        results[0].text(),
        "The call was blocked by hook `hook_a`: A says no"
    );
    assert_eq!(results[0].details["hook"], "hook_a");
    assert!(
        !ws.path().join("out/blocked.txt").exists(),
        "a blocked call does not run"
    );
    let decisions: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| matches!(e, cordon_runtime::Event::HookDecision { .. }))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(decisions.len(), 1, "hook_b is never asked: {decisions:?}");
    assert_eq!(
        (
            decisions[0]["hook"].as_str(),
            decisions[0]["decision"].as_str()
        ),
        (Some("hook_a"), Some("block"))
    );
    assert_eq!(decisions[0]["reason"], "A says no");
    assert_eq!(event_trail(&events).last().unwrap().0, "tool_execution_end");
}

#[test]
fn rewritten_arguments_are_validated_again() {
    let ws = with_hooks(&scripts(r#"settings = { before = "rewrite_invalid" }"#, ""));
    let result = ws.call("echo", r#"{"text": "fine"}"#);
    assert_eq!(kind(&result), "invalid_arguments");
    assert!(
        text(&result).contains("as rewritten by hook `hook_a` are invalid"),
        "{result}"
    );
    assert_eq!(result["details"]["rewrittenBy"], "hook_a");
}

#[test]
fn a_failing_before_hook_fails_closed() {
    for (script, expected) in [
        ("trap", "before-hook A crashed"),
        ("spin", "time limit"),
        ("rewrite_garbage", "not a JSON object"),
    ] {
        let ws = with_hooks(&scripts(
            &format!(
                "limits = {{ timeout = \"200ms\" }}\nsettings = {{ before = \"{script}\", tag = \"A\" }}"
            ),
            "",
        ));
        let result = ws.call(
            "write_path",
            r#"{"path": "/out/should-not-exist.txt", "content": "x"}"#,
        );
        assert_eq!(kind(&result), "hook_failed", "{script}: {result}");
        assert!(
            text(&result).contains("The call was not run: the before-hook `hook_a` failed"),
            "{result}"
        );
        assert!(text(&result).contains(expected), "{script}: {result}");
        assert!(
            !ws.path().join("out/should-not-exist.txt").exists(),
            "{script}: the call ran"
        );
    }
}

#[test]
fn after_hooks_replace_in_a_chain_and_see_error_results() {
    let ws = with_hooks(&scripts(
        r#"settings = { after = "replace", tag = "A" }"#,
        r#"settings = { after = "replace", tag = "B" }"#,
    ));
    let result = ws.call("echo", r#"{"text": "out"}"#);
    assert_eq!(text(&result), "out|A|B");
    assert_eq!(result["details"]["replacedBy"], "B");
    let failed = ws.call("fail", r#"{"message": "boom"}"#);
    assert_eq!(
        (kind(&failed), text(&failed).as_str()),
        ("tool_error", "boom|A|B")
    );
}

#[test]
fn a_failing_after_hook_withholds_the_result() {
    for script in ["trap", "spin"] {
        let ws = with_hooks(&scripts(
            &format!(
                "limits = {{ timeout = \"200ms\" }}\nsettings = {{ after = \"{script}\", tag = \"A\" }}"
            ),
            "",
        ));
        let result = ws.call("echo", r#"{"text": "sensitive output"}"#);
        assert_eq!(kind(&result), "hook_failed", "{script}: {result}");
        assert!(
            text(&result).contains("result is withheld: the after-hook `hook_a` failed"),
            "{result}"
        );
        assert!(
            !text(&result).contains("sensitive output"),
            "{script}: the original content leaked: {result}"
        );
    }
}
