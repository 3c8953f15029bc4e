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

/// The JSON schema of cordon's answer (`structuredContent` of every hook tool).
pub fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "hook": {"type": "string"},
            "stage": {"type": "string"},
            "decision": {"type": "string", "enum": [
                "allow", "ask", "block", "rewrite", "keep", "replace", "proceed", "narrow",
                "add_context", "drop_calls", "failed"
            ]},
            "reason": {"type": "string"},
            "watched": {"type": "boolean"},
            "arguments": {"type": "object"},
            "result": {"type": "object"},
            "replace": {"type": "string"},
            "add_context": {"type": "string"},
            "only_tools": {"type": "array", "items": {"type": "string"}},
            "drop_calls": {"type": "array", "items": {"type": "string"}},
            "duration_ms": {"type": "integer", "minimum": 0},
        },
        "required": ["hook", "stage", "decision", "watched", "duration_ms"],
    })
}

/// The answer as a Claude Code hook's JSON output for the matching event.
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
        ("after-tool-call", "replace") => json!({
            "decision": "block",
            "reason": format!(
                "cordon hook `{}` replaced the tool's result with: {}",
                answer.hook,
                replacement_text(answer)
            ),
        }),
        ("after-tool-call" | "prompt" | "stop", "failed") => {
            json!({ "decision": "block", "reason": failed() })
        }
        ("prompt", "block") => json!({ "decision": "block", "reason": reason() }),
        // Claude Code cannot rewrite a prompt: it is refused with the rewrite as the reason.
        ("prompt", "replace") => json!({
            "decision": "block",
            "reason": format!(
                "cordon hook `{}` rewrites this prompt to: {}",
                answer.hook,
                answer.replace.clone().unwrap_or_default()
            ),
        }),
        ("prompt" | "session-start", _) => match context(answer) {
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
        (_, "block") => json!({ "continue": false, "stopReason": reason() }),
        (_, "failed") => json!({ "continue": false, "stopReason": failed() }),
        _ => json!({}),
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
        let output = claude_code(&answer("stop", "failed"));
        assert_eq!(output["decision"], "block");
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
