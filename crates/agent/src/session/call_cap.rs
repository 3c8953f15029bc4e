//! The cap on tool calls per model reply (`[agent] max_calls_per_reply`). `max_steps` counts
//! replies and the repetition stop compares replies, so without it one reply of thousands of
//! calls would run them all. A reply over the cap keeps its first `cap` calls, which run, and the
//! first call past them, which is answered with an error naming the cap and the setting; the calls
//! after it are dropped from the reply (thousands of error results would fill the transcript and
//! the next request), and that answer says how many were.

use crate::conversation::message::{Reply, ToolCall, ToolOutcome};
use cordon_runtime::report::ErrorKind;

/// What the cap took from one reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverCap {
    /// Calls the reply made.
    pub made: usize,
    /// Calls that run.
    pub cap: usize,
}

/// The reply with at most `cap + 1` calls (the last of them the one answered with the cap's
/// error), and what was over the cap, if anything.
pub fn apply(mut reply: Reply, cap: u32) -> (Reply, Option<OverCap>) {
    let cap = cap as usize;
    let made = reply.tool_calls.len();
    if made <= cap {
        return (reply, None);
    }
    reply.tool_calls.truncate(cap + 1);
    (reply, Some(OverCap { made, cap }))
}

impl OverCap {
    /// The answer to the first call past the cap.
    pub fn answer(&self, call: &ToolCall) -> ToolOutcome {
        let dropped = self.made - self.cap - 1;
        let after = match dropped {
            0 => String::new(),
            1 => " and the 1 call after it were".into(),
            n => format!(" and the {n} calls after it were"),
        };
        ToolOutcome::error(
            call,
            ErrorKind::Truncated,
            format!(
                "not run: your reply made {} tool calls, and cordon runs at most {} of one reply ([agent] max_calls_per_reply in cordon.toml); this call{} not run{}. Make the calls you still need in your next reply.",
                self.made,
                self.cap,
                if dropped == 0 { " was" } else { after.as_str() },
                if dropped == 0 {
                    ""
                } else {
                    " (dropped from the conversation)"
                }
            ),
        )
    }

    /// What the person watching is told.
    pub fn warning(&self) -> String {
        format!(
            "the model made {} tool calls in one reply; only the first {} run (raise [agent] max_calls_per_reply in cordon.toml to allow more)",
            self.made, self.cap
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::StopReason;

    fn reply(calls: usize) -> Reply {
        Reply {
            text: String::new(),
            tool_calls: (0..calls)
                .map(|i| ToolCall {
                    id: format!("c{i}"),
                    name: "echo".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            stop: StopReason::ToolCalls,
            usage: None,
            cut_short: false,
        }
    }

    #[test]
    fn a_reply_within_the_cap_is_unchanged() {
        let (kept, over) = apply(reply(3), 3);
        assert_eq!(kept.tool_calls.len(), 3);
        assert_eq!(over, None);
    }

    #[test]
    fn a_reply_over_the_cap_keeps_the_cap_and_one_answered_call() {
        let (kept, over) = apply(reply(2000), 64);
        assert_eq!(kept.tool_calls.len(), 65);
        let over = over.unwrap();
        let answer = over.answer(&kept.tool_calls[64]);
        assert!(answer.is_error);
        assert_eq!(answer.tool_call_id, "c64");
        assert!(
            answer.content.contains("made 2000 tool calls")
                && answer.content.contains("at most 64")
                && answer.content.contains("max_calls_per_reply")
                && answer
                    .content
                    .contains("the 1935 calls after it were not run"),
            "{}",
            answer.content
        );
        let (_, one_over) = apply(reply(4), 3);
        let text = one_over.unwrap().answer(&reply(4).tool_calls[3]).content;
        assert!(text.contains("this call was not run."), "{text}");
    }
}
