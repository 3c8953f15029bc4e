//! The forms a hook tool's answer takes (`hook_tools.rs`): cordon's own, whose JSON schema is the
//! tool's output schema and which is stable (fields are added, never renamed or removed), and
//! Claude Code's hook output, so an `mcp_tool` hook can hand the text straight to Claude Code's
//! decision parser. The mapping never grants more than cordon's decision: a hook's "no
//! objection" is no opinion (Claude Code's own permission rules still apply), never an
//! approval, and a failed hook denies or stops, as it fails closed in cordon.

use cordon_runtime::pipeline::HookAnswer;
use serde_json::{Value, json};

/// Which form the answer's text takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerFormat {
    Cordon,
    ClaudeCode,
}

/// The JSON schema of cordon's answer (`structuredContent` of every hook tool), derived from
/// [`HookAnswer`].
pub fn answer_schema() -> Value {
    HookAnswer::json_schema()
}

/// The answer as a Claude Code hook's JSON output for the matching event. What Claude Code's hook
/// output cannot carry (a narrowing of a request's tools, dropped calls, a replaced model reply or
/// summary) stops the session rather than letting more through than the hook decided.
pub fn claude_code(answer: &HookAnswer) -> Value {
    let reason = || {
        answer
            .reason
            .clone()
            .unwrap_or_else(|| format!("cordon hook `{}` gave no reason", answer.hook))
    };
    let failed = || {
        format!(
            "cordon hook `{}` failed, so this stops: {}",
            answer.hook,
            reason()
        )
    };
    match (answer.stage, answer.decision) {
        (_, "allow" | "keep" | "proceed") => json!({}),
        ("before-tool-call", "block" | "failed" | "ask" | "rewrite") => {
            let (permission, why) = match answer.decision {
                "block" => ("deny", reason()),
                "failed" => ("deny", failed()),
                "ask" => ("ask", reason()),
                // A rewrite is put to the user with the new arguments, not allowed outright.
                _ => (
                    "ask",
                    format!("cordon hook `{}` rewrote the arguments", answer.hook),
                ),
            };
            let mut output = json!({
                "hookEventName": "PreToolUse",
                "permissionDecision": permission,
                "permissionDecisionReason": why,
            });
            if let Some(arguments) = &answer.arguments {
                output["updatedInput"] = arguments.clone();
            }
            json!({ "hookSpecificOutput": output })
        }
        // The result is already in Claude's context: the model is told it is withdrawn, and an
        // MCP tool's output is replaced where Claude Code takes that.
        ("after-tool-call", "replace") => {
            let mut output = json!({
                "decision": "block",
                "reason": format!(
                    "cordon hook `{}` replaced the tool's result with: {}",
                    answer.hook,
                    replacement_text(answer)
                ),
            });
            if let Some(result) = &answer.result {
                output["hookSpecificOutput"] = json!({
                    "hookEventName": "PostToolUse",
                    "updatedMCPToolOutput": result.get("content").cloned().unwrap_or(Value::Null),
                });
            }
            output
        }
        ("after-tool-call", "failed") => json!({ "decision": "block", "reason": failed() }),
        ("prompt", "block") => json!({ "decision": "block", "reason": reason() }),
        ("prompt", "failed") => json!({ "decision": "block", "reason": failed() }),
        // Claude Code cannot rewrite a prompt: it is refused with the rewrite as the reason.
        ("prompt", "replace") => json!({
            "decision": "block",
            "reason": format!(
                "cordon hook `{}` rewrites this prompt to: {}",
                answer.hook,
                answer.replace.clone().unwrap_or_default()
            ),
        }),
        ("prompt" | "session-start", "add_context" | "narrow") => match context(answer) {
            Some(text) => json!({
                "hookSpecificOutput": {
                    "hookEventName": if answer.stage == "prompt" { "UserPromptSubmit" } else { "SessionStart" },
                    "additionalContext": text,
                }
            }),
            None => json!({}),
        },
        // A stop hook's continuation: Claude Code goes on with the reason as its instruction.
        ("stop", "replace") => json!({
            "decision": "block",
            "reason": answer.replace.clone().unwrap_or_default(),
        }),
        (_, "failed") => json!({ "continue": false, "stopReason": failed() }),
        (_, "block") => json!({ "continue": false, "stopReason": reason() }),
        (stage, decision) => json!({
            "continue": false,
            "stopReason": format!(
                "cordon hook `{}` decided `{decision}` at `{stage}`, which Claude Code's hook output cannot carry, so this stops; ask with format \"cordon\" to read the decision itself",
                answer.hook
            ),
        }),
    }
}

/// What a question the hook could not be asked answers in Claude Code's form: it fails closed, as
/// a hook that cannot run does in cordon (a deny before a tool call, a block of a prompt or after a
/// call, a stop elsewhere), never an error Claude Code would pass over.
pub fn claude_code_refusal(stage: Option<&str>, message: &str) -> Value {
    let why = format!("cordon could not ask the hook, so this stops: {message}");
    match stage {
        Some("before-tool-call") => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": why,
            }
        }),
        Some("after-tool-call" | "prompt") => json!({ "decision": "block", "reason": why }),
        _ => json!({ "continue": false, "stopReason": why }),
    }
}

/// The text a prompt or session-start answer adds: its context, and a narrowing said in words
/// (Claude Code has no way to narrow a turn's tools from a hook).
fn context(answer: &HookAnswer) -> Option<String> {
    let narrowing = answer.only_tools.as_ref().map(|tools| {
        if tools.is_empty() {
            "Answer without calling any tool.".to_string()
        } else {
            format!("Use only these tools: {}.", tools.join(", "))
        }
    });
    let parts: Vec<String> = answer
        .add_context
        .iter()
        .cloned()
        .chain(narrowing)
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// The text of an after-hook's replacement result.
fn replacement_text(answer: &HookAnswer) -> String {
    let Some(content) = answer.result.as_ref().and_then(|r| r["content"].as_array()) else {
        return String::new();
    };
    content
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(stage: &'static str, decision: &'static str) -> HookAnswer {
        HookAnswer {
            hook: "guard".into(),
            stage,
            decision,
            watched: true,
            ..HookAnswer::default()
        }
    }

    #[test]
    fn no_objection_is_no_opinion_not_an_approval() {
        assert_eq!(claude_code(&answer("before-tool-call", "allow")), json!({}));
        assert_eq!(claude_code(&answer("after-tool-call", "keep")), json!({}));
        assert_eq!(claude_code(&answer("prompt", "proceed")), json!({}));
    }

    #[test]
    fn a_block_denies_and_a_failure_denies_too() {
        let mut blocked = answer("before-tool-call", "block");
        blocked.reason = Some("no writes to /etc".into());
        let output = claude_code(&blocked);
        assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            output["hookSpecificOutput"]["permissionDecisionReason"],
            "no writes to /etc"
        );
        let output = claude_code(&answer("before-tool-call", "failed"));
        assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "deny");
    }

    #[test]
    fn every_failure_fails_closed_and_a_stop_is_never_turned_into_going_on() {
        for stage in [
            "before-tool-call",
            "after-tool-call",
            "session-start",
            "prompt",
            "model-request",
            "model-response",
            "compaction",
            "stop",
            "session-end",
        ] {
            let output = claude_code(&answer(stage, "failed"));
            assert_ne!(output, json!({}), "{stage}");
            let denies = output["hookSpecificOutput"]["permissionDecision"] == "deny";
            let blocks = output["decision"] == "block";
            let stops = output["continue"] == false;
            assert!(denies || blocks || stops, "{stage}: {output}");
            if matches!(stage, "stop" | "session-start") {
                assert!(
                    stops,
                    "{stage}: a failure must not continue the session: {output}"
                );
            }
        }
    }

    #[test]
    fn a_decision_claude_code_cannot_carry_stops_rather_than_lets_through() {
        let mut narrowed = answer("model-request", "narrow");
        narrowed.only_tools = Some(vec!["read_file".into()]);
        let mut dropped = answer("model-response", "drop_calls");
        dropped.drop_calls = vec!["call_1".into()];
        for output in [
            claude_code(&narrowed),
            claude_code(&dropped),
            claude_code(&answer("compaction", "replace")),
            claude_code(&answer("model-response", "replace")),
        ] {
            assert_eq!(output["continue"], false, "{output}");
            assert!(
                output["stopReason"]
                    .as_str()
                    .unwrap()
                    .contains("cannot carry")
            );
        }
    }

    #[test]
    fn a_refused_question_fails_closed_in_the_stage_form() {
        let denied = claude_code_refusal(Some("before-tool-call"), "too big");
        assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(
            claude_code_refusal(Some("prompt"), "x")["decision"],
            "block"
        );
        assert_eq!(claude_code_refusal(None, "x")["continue"], false);
    }

    #[test]
    fn a_rewrite_is_asked_with_the_new_input() {
        let mut rewritten = answer("before-tool-call", "rewrite");
        rewritten.arguments = Some(json!({"path": "safe.txt"}));
        let output = claude_code(&rewritten);
        assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "ask");
        assert_eq!(
            output["hookSpecificOutput"]["updatedInput"],
            json!({"path": "safe.txt"})
        );
    }

    #[test]
    fn prompt_context_and_routing_become_additional_context() {
        let mut routed = answer("prompt", "narrow");
        routed.only_tools = Some(vec![]);
        routed.add_context = Some("Be brief.".into());
        let output = claude_code(&routed);
        assert_eq!(
            output["hookSpecificOutput"],
            json!({"hookEventName": "UserPromptSubmit", "additionalContext": "Be brief.\nAnswer without calling any tool."})
        );
    }

    #[test]
    fn a_stop_continuation_blocks_the_stop_with_its_message() {
        let mut go_on = answer("stop", "replace");
        go_on.replace = Some("Run the tests first.".into());
        assert_eq!(
            claude_code(&go_on),
            json!({"decision": "block", "reason": "Run the tests first."})
        );
    }
}
