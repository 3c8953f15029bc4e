//! The deterministic digest of older turns, written by cordon itself when the model cannot be
//! asked for a summary (or `[model] compaction = "digest"`): what the user asked, what the model
//! said, and each call it made with its arguments and how it ended, newest kept when it is long.

use super::token_count::TokenCounter;
use crate::conversation::message::Message;
use cordon_runtime::report::text_cut::{self, CutMark};

/// The digest of `folded` after the `previous` summary, in at most `allowance` raw tokens.
pub fn digest(
    previous: Option<&str>,
    folded: &[Message],
    allowance: u64,
    counter: &TokenCounter,
) -> String {
    let mut lines: Vec<String> = Vec::new();
    for message in folded {
        match message {
            Message::User { content } => {
                lines.push(format!("- The user said: {}", short(content.as_str(), 300)))
            }
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if !content.trim().is_empty() {
                    lines.push(format!("- You said: {}", short(content, 300)));
                }
                for call in tool_calls {
                    lines.push(format!(
                        "- You called {} {}",
                        call.name,
                        short(&call.arguments, 200)
                    ));
                }
            }
            Message::Tool(outcome) => {
                let how = match (outcome.is_error, outcome.error_kind) {
                    (false, _) => format!("ok, {} bytes", outcome.content.len()),
                    (true, Some(kind)) => format!("error ({kind})"),
                    (true, None) => "error".to_string(),
                };
                lines.push(format!(
                    "  → {} {how}: {}",
                    outcome.tool_name,
                    short(&outcome.content, 160)
                ));
            }
            Message::System { .. }
            | Message::Compaction { .. }
            | Message::TurnStart { .. }
            | Message::TurnEnd { .. }
            | Message::ToolsLoaded { .. }
            | Message::ToolsChanged { .. } => {}
        }
    }
    let mut text = String::new();
    if let Some(previous) = previous {
        text.push_str(&short(previous, 1200));
        text.push('\n');
    }
    // Keep the newest lines that fit, saying how many older ones were left out.
    let budget = allowance.saturating_sub(counter.raw_text(&text) + 24);
    let mut kept: Vec<&String> = Vec::new();
    let mut used = 0;
    for line in lines.iter().rev() {
        let tokens = counter.raw_text(line) + 1;
        if used + tokens > budget {
            break;
        }
        used += tokens;
        kept.push(line);
    }
    let omitted = lines.len() - kept.len();
    if omitted > 0 {
        text.push_str(&format!(
            "- ({omitted} earlier lines of this digest left out)\n"
        ));
    }
    for line in kept.into_iter().rev() {
        text.push_str(line);
        text.push('\n');
    }
    text.trim_end().to_string()
}

/// `text` on one line, at most `chars` characters.
pub fn short(text: &str, chars: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    text_cut::cut_chars(&flat, chars, CutMark::Ellipsis).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::{StopReason, ToolCall, ToolOutcome};

    #[test]
    fn calls_and_their_outcomes_are_listed_newest_kept() {
        let counter = TokenCounter::for_model("gpt-4");
        let mut folded = Vec::new();
        for n in 0..50 {
            folded.push(Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: format!("c{n}"),
                    name: "read_file".into(),
                    arguments: format!("{{\"path\": \"/data/f{n}.txt\"}}"),
                }],
                stop: StopReason::ToolCalls,
                usage: None,
            });
            folded.push(Message::Tool(ToolOutcome {
                tool_call_id: format!("c{n}"),
                tool_name: "read_file".into(),
                is_error: false,
                error_kind: None,
                content: "x".repeat(5000),
            }));
        }
        let text = digest(Some("Started on the data."), &folded, 300, &counter);
        assert!(counter.raw_text(&text) <= 300, "{text}");
        assert!(text.starts_with("Started on the data."));
        assert!(text.contains("earlier lines of this digest left out"));
        assert!(text.contains("/data/f49.txt"), "{text}");
        assert!(text.contains("→ read_file ok, 5000 bytes"), "{text}");
    }
}
