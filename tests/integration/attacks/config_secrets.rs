//! A plugin's `secrets` (wasi:config/store keys) attacked by a red team that had not seen the
//! defence: the secret reached another plugin's after-hook unmasked, a guest's log line was
//! escaped and cut before it was masked (a secret with a soft hyphen, or one across the 8 KiB cut,
//! showed on stderr, in `--events` and over MCP), the guest's stderr was cut at its bound before it
//! was masked (part of the secret in a trap's message), and values the mask cannot hold (too short,
//! written literally in cordon.toml) were accepted.

use crate::support::{Workspace, kind, text};

/// The secret every test here hands out; its fragments must appear nowhere.
const SECRET: &str = "wk-5f1c0a9e7b3d";

fn secret_env() -> [(&'static str, &'static str); 1] {
    [("CORDON_TEST_RED_SECRET", SECRET)]
}

/// `text` holds no run of eight bytes of [`SECRET`] (the mask covers all of it or none).
fn assert_no_fragment(text: &str) {
    for start in 0..=SECRET.len() - 8 {
        let fragment = &SECRET[start..start + 8];
        assert!(
            !text.contains(fragment),
            "{fragment:?} of the secret in:\n{text}"
        );
    }
}

#[test]
fn another_plugins_after_hook_gets_the_tool_result_masked() {
    let ws = Workspace::new()
        .plugin("plain_js_forecast", "weather")
        .plugin("fixture_scripted_hook", "spy")
        .config(
            r#"
[plugins.weather]
settings = { unit = "celsius" }
secrets = { api_key = "${env:CORDON_TEST_RED_SECRET}" }

[plugins.spy]
hook = ["settings"]
settings = { after = "reverse" }
"#,
        );
    let seen = ws.cordon_with_env(&["call", "settings", "{}", "--json"], &secret_env());
    assert_eq!(seen.code, 0, "{}", seen.stderr);
    // The hook wrote back what it was given, backwards: the host's final mask cannot recognise
    // a reversed secret, so only a hook given the masked text returns the reversed mask.
    let expected: String = "api_key=[REDACTED:secret]\nunit=celsius"
        .chars()
        .rev()
        .collect();
    assert_eq!(text(&seen.json()), expected, "{}", seen.stdout);
    let reversed: String = SECRET.chars().rev().collect();
    assert!(!seen.stdout.contains(&reversed), "{}", seen.stdout);
}

#[test]
fn an_after_hook_gets_the_replacement_of_the_hook_before_it_masked() {
    // `inject` writes the secret into its replacement (its tag); `spy`, after it, writes back
    // what it was given, backwards.
    let ws = Workspace::new()
        .plugin("plain_js_forecast", "weather")
        .plugin("fixture_scripted_hook", "inject")
        .plugin("fixture_scripted_hook", "spy")
        .config(&format!(
            r#"
[hooks]
order = ["inject", "spy"]

[plugins.weather]
secrets = {{ api_key = "${{env:CORDON_TEST_RED_SECRET}}" }}

[plugins.inject]
hook = ["forecast"]
settings = {{ after = "replace", tag = "{SECRET}" }}

[plugins.spy]
hook = ["forecast"]
settings = {{ after = "reverse" }}
"#
        ));
    let seen = ws.cordon_with_env(
        &["call", "forecast", r#"{"city": "Oslo"}"#, "--json"],
        &secret_env(),
    );
    assert_eq!(seen.code, 0, "{}", seen.stderr);
    let expected: String = "Oslo: sunny, 21 degrees (unset)|[REDACTED:secret]"
        .chars()
        .rev()
        .collect();
    assert_eq!(text(&seen.json()), expected, "{}", seen.stdout);
}

/// The async-contract fixture logs `echoing <TEXT>` for the text it echoes; the secret is
/// registered through a `secrets` key of that plugin.
fn logging_plugin(secret_variable: &str) -> Workspace {
    Workspace::new()
        .plugin("fixture_async_contract", "talker")
        .config(&format!(
            "[plugins.talker]\nsecrets = {{ k = \"${{env:{secret_variable}}}\" }}\n"
        ))
}

#[test]
fn a_secret_a_guest_logs_is_masked_before_the_line_is_escaped_or_cut() {
    // A secret with a soft hyphen in it: escaping the line first made it unrecognisable.
    let soft = "wk\u{ad}5f1c0a9e7b3d";
    let ws = logging_plugin("CORDON_TEST_SOFT_SECRET");
    let env = [("CORDON_TEST_SOFT_SECRET", soft)];
    let args = serde_json::json!({ "text": format!("see {soft} here") }).to_string();
    let run = ws.cordon_with_env(&["call", "async_echo", &args, "--events"], &env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("[REDACTED:secret]"),
        "the line was logged: {all}"
    );
    assert!(!all.contains("5f1c0a9e"), "{all}");

    // A secret across the 8 KiB cut of a log line: masked whole, not cut to a prefix.
    let ws = logging_plugin("CORDON_TEST_RED_SECRET");
    let padded = format!("{}{SECRET}", "A".repeat(8_180));
    let args = serde_json::json!({ "text": padded }).to_string();
    let run = ws.cordon_with_env(&["call", "async_echo", &args, "--events"], &secret_env());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_no_fragment(&format!("{}{}", run.stdout, run.stderr));
}

#[test]
fn a_secret_across_the_stderr_bound_is_masked_whole_in_a_trap() {
    let ws = Workspace::new().plugin("fixture_probe", "probe").config(
        "[plugins.probe]\nlimits = { stdio = \"1KiB\" }\nsecrets = { k = \"${env:CORDON_TEST_RED_SECRET}\" }\n",
    );
    // The panic message goes to stderr, whose bound (1 KiB) falls inside the secret.
    let message = format!("{}{SECRET}", "A".repeat(1_000));
    let args = serde_json::json!({ "message": message }).to_string();
    let run = ws.cordon_with_env(&["call", "panic", &args, "--json"], &secret_env());
    let result = run.json();
    assert_eq!(kind(&result), "trap", "{result}");
    assert_no_fragment(&run.stdout);
    assert_no_fragment(&run.stderr);
}

#[test]
fn a_secret_the_mask_cannot_hold_is_refused_naming_the_key() {
    for (config, env, says) in [
        (
            "secrets = { k = \"${env:CORDON_TEST_SHORT}\" }",
            ("CORDON_TEST_SHORT", "abc12"),
            "5 bytes",
        ),
        (
            "secrets = { k = \"hunter2-written-here\" }",
            ("CORDON_TEST_UNUSED", "x"),
            "not its value",
        ),
    ] {
        let ws = Workspace::new()
            .plugin("fixture_probe", "probe")
            .config(&format!("[plugins.probe]\n{config}\n"));
        let listed = ws.cordon_with_env(&["list"], &[env]);
        assert_eq!(listed.code, 2, "{config}: {}", listed.stderr);
        assert!(
            listed.stderr.contains("secrets.k") && listed.stderr.contains(says),
            "{config}: {}",
            listed.stderr
        );
        assert!(!listed.stderr.contains("hunter2"), "{}", listed.stderr);
    }
}
