//! Cutting one tool result down to a token allowance for the request, with a marker that tells
//! the model what it is missing and what to do about it (call the tool again, asking for less).
//! The transcript keeps the whole result; only what is sent is cut.

use super::token_count::TokenCounter;
use crate::conversation::message::ToolOutcome;

/// Tokens the marker itself takes, kept free when cutting.
const MARKER_TOKENS: u64 = 60;
/// No result is cut below this many tokens of content.
pub const SMALLEST_CUT: u64 = 24;

/// `outcome`, its content cut to at most `allowance` raw tokens (marker included).
pub fn cut_result(outcome: &ToolOutcome, allowance: u64, counter: &TokenCounter) -> ToolOutcome {
    let total = counter.raw_text(&outcome.content);
    if total <= allowance {
        return outcome.clone();
    }
    let keep_tokens = allowance.saturating_sub(MARKER_TOKENS).max(SMALLEST_CUT);
    let content = &outcome.content;
    let mut keep_bytes = (content.len() as u64 * keep_tokens / total.max(1)) as usize;
    let mut kept = head(content, keep_bytes);
    for _ in 0..6 {
        let tokens = counter.raw_text(kept);
        if tokens <= keep_tokens {
            break;
        }
        keep_bytes = (keep_bytes as u64 * keep_tokens / tokens) as usize * 95 / 100;
        kept = head(content, keep_bytes);
    }
    let mut cut = outcome.clone();
    cut.content = format!(
        "{kept}\n[cut to fit the context window: the first {} of {} bytes are shown. To see more, call {} again with a narrower request (a smaller range, a pattern or a limit).]",
        kept.len(),
        content.len(),
        outcome.tool_name
    );
    cut
}

/// At most `bytes` bytes from the start of `text`, ending at a char boundary, and at a line end
/// when one is near.
fn head(text: &str, bytes: usize) -> &str {
    if bytes >= text.len() {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = &text[..end];
    match kept.rfind('\n') {
        Some(line_end) if line_end >= end * 4 / 5 => &text[..line_end],
        _ => kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_result_is_cut_at_a_line_with_a_marker_naming_the_tool() {
        let counter = TokenCounter::for_model("gpt-4");
        let content: String = (0..2000)
            .map(|n| format!("line {n} of the file\n"))
            .collect();
        let outcome = ToolOutcome {
            tool_call_id: "c".into(),
            tool_name: "read_file".into(),
            is_error: false,
            error_kind: None,
            content,
        };
        let cut = cut_result(&outcome, 400, &counter);
        assert!(
            counter.raw_text(&cut.content) <= 400,
            "{}",
            cut.content.len()
        );
        assert!(cut.content.starts_with("line 0 of the file\n"));
        assert!(
            cut.content
                .contains("call read_file again with a narrower request")
        );
        assert!(
            cut.content.contains("of 42890 bytes"),
            "{}",
            &cut.content[cut.content.len() - 200..]
        );
        let short = cut_result(&outcome, 1_000_000, &counter);
        assert_eq!(short, outcome);
    }
}
