//! Noticing a model that repeats itself: the same tool with the same arguments (compared as JSON,
//! key order aside) in consecutive replies. At the limit (3 by default) the call still runs and
//! its result carries a note saying so; past it the turn stops with an error.

pub use crate::conversation::call_signature::signature_of;
use crate::conversation::message::ToolCall;
use std::collections::HashMap;

/// What a call's repetition means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    Fresh,
    /// The `n`th identical call in a row, at the limit: run it and tell the model.
    AtLimit(u32),
    /// Past the limit: stop.
    Past(u32),
}

pub struct RepetitionGuard {
    limit: u32,
    /// Each call of the previous reply, and how many replies in a row made it.
    previous: HashMap<String, u32>,
}

impl RepetitionGuard {
    /// `limit` 0 never objects.
    pub fn new(limit: u32) -> Self {
        Self {
            limit,
            previous: HashMap::new(),
        }
    }

    /// Looks at one reply's calls.
    pub fn observe(&mut self, calls: &[ToolCall]) -> Vec<Repeat> {
        let mut current = HashMap::new();
        let verdicts = calls
            .iter()
            .map(|call| {
                let key = signature(call);
                let count = self.previous.get(&key).copied().unwrap_or(0) + 1;
                current.insert(key, count);
                match count {
                    _ if self.limit == 0 => Repeat::Fresh,
                    n if n == self.limit => Repeat::AtLimit(n),
                    n if n > self.limit => Repeat::Past(n),
                    _ => Repeat::Fresh,
                }
            })
            .collect();
        self.previous = current;
        verdicts
    }
}

/// The note added to a result at the limit.
pub fn note(tool: &str, count: u32) -> String {
    format!(
        "\n\n[note from cordon: this is call number {count} in a row of {tool} with exactly these arguments; the result will not change. Use the result you have, or do something different: the same call once more stops the session.]"
    )
}

fn signature(call: &ToolCall) -> String {
    signature_of(&call.name, &call.arguments)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(arguments: &str) -> ToolCall {
        ToolCall {
            id: "x".into(),
            name: "read_file".into(),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn the_same_call_in_a_row_is_noted_then_stopped_and_a_change_resets() {
        let mut guard = RepetitionGuard::new(3);
        let a = call(r#"{"path": "a", "limit": 3}"#);
        let same = call(r#"{"limit":3,"path":"a"}"#);
        assert_eq!(guard.observe(std::slice::from_ref(&a)), [Repeat::Fresh]);
        assert_eq!(guard.observe(std::slice::from_ref(&same)), [Repeat::Fresh]);
        assert_eq!(
            guard.observe(std::slice::from_ref(&a)),
            [Repeat::AtLimit(3)]
        );
        assert_eq!(guard.observe(std::slice::from_ref(&a)), [Repeat::Past(4)]);
        assert_eq!(guard.observe(&[call(r#"{"path": "b"}"#)]), [Repeat::Fresh]);
        assert_eq!(guard.observe(std::slice::from_ref(&a)), [Repeat::Fresh]);
        let mut off = RepetitionGuard::new(0);
        for _ in 0..5 {
            assert_eq!(off.observe(std::slice::from_ref(&a)), [Repeat::Fresh]);
        }
    }
}
