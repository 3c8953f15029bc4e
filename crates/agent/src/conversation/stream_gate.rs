//! Holding back streamed text that may be a tool call written as text, so that a recovered call
//! is never shown as the answer. Each line is passed on as soon as its first visible character
//! shows it is prose; a line that starts like a call (`{`, `[`, a ``` fence or `<tool_call>`) and
//! everything after it wait for the end of the reply, and are shown then only if no call was
//! recovered from them.

use crate::conversation::observer::AgentObserver;
use std::sync::Mutex;
use std::time::Duration;

pub struct StreamGate<'a> {
    inner: &'a dyn AgentObserver,
    /// Off: text passes straight through.
    enabled: bool,
    state: Mutex<GateState>,
}

#[derive(Default)]
struct GateState {
    /// The current line, not yet known to be prose.
    pending: String,
    /// The current line is prose: the rest of it passes straight through.
    prose_line: bool,
    /// Everything from the first line that looked like a call.
    held: Option<String>,
}

impl<'a> StreamGate<'a> {
    pub fn new(inner: &'a dyn AgentObserver, enabled: bool) -> Self {
        Self {
            inner,
            enabled,
            state: Mutex::new(GateState::default()),
        }
    }

    /// The reply is complete: shows what was held unless calls were recovered from it.
    pub fn finish(&self, calls_recovered: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let held = state.held.take().unwrap_or_default();
        let pending = std::mem::take(&mut state.pending);
        drop(state);
        if !calls_recovered {
            let rest = held + &pending;
            if !rest.is_empty() {
                self.inner.text_delta(&rest);
            }
        }
    }
}

/// Whether a line that starts this way may be a call.
fn may_be_call(start: &str) -> Option<bool> {
    let visible = start.trim_start();
    let first = visible.chars().next()?;
    let starts_as = |marker: &str| {
        if visible.len() < marker.len() {
            // Still a prefix of the marker: undecided.
            if marker.starts_with(visible) {
                None
            } else {
                Some(false)
            }
        } else {
            Some(visible.starts_with(marker))
        }
    };
    match first {
        '{' | '[' => Some(true),
        '`' => starts_as("```"),
        '<' => starts_as("<tool_call>"),
        _ => Some(false),
    }
}

impl AgentObserver for StreamGate<'_> {
    fn text_delta(&self, text: &str) {
        if !self.enabled {
            self.inner.text_delta(text);
            return;
        }
        let mut shown = String::new();
        {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let mut rest = text;
            while !rest.is_empty() {
                if let Some(held) = state.held.as_mut() {
                    held.push_str(rest);
                    break;
                }
                let (piece, after, line_ends) = match rest.find('\n') {
                    Some(n) => (&rest[..=n], &rest[n + 1..], true),
                    None => (rest, "", false),
                };
                rest = after;
                if state.prose_line {
                    shown.push_str(piece);
                } else {
                    state.pending.push_str(piece);
                    match may_be_call(&state.pending) {
                        Some(true) => {
                            let pending = std::mem::take(&mut state.pending);
                            state.held = Some(pending);
                        }
                        Some(false) => {
                            shown.push_str(&std::mem::take(&mut state.pending));
                            state.prose_line = true;
                        }
                        // Blank so far, or a prefix of a call marker: wait for more.
                        None if line_ends => shown.push_str(&std::mem::take(&mut state.pending)),
                        None => {}
                    }
                }
                if line_ends {
                    state.prose_line = false;
                }
            }
        }
        if !shown.is_empty() {
            self.inner.text_delta(&shown);
        }
    }

    fn retry(&self, retry: u32, delay: Duration, reason: &str) {
        self.inner.retry(retry, delay, reason);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Screen(Mutex<String>);

    impl AgentObserver for Screen {
        fn text_delta(&self, text: &str) {
            self.0.lock().unwrap().push_str(text);
        }
    }

    fn stream(pieces: &[&str], recovered: bool) -> (String, String) {
        let screen = Screen::default();
        let gate = StreamGate::new(&screen, true);
        let mut before_end = String::new();
        for piece in pieces {
            gate.text_delta(piece);
        }
        before_end.push_str(&screen.0.lock().unwrap());
        gate.finish(recovered);
        let at_end = screen.0.lock().unwrap().clone();
        (before_end, at_end)
    }

    #[test]
    fn prose_streams_at_once_and_calls_are_never_shown() {
        let (early, end) = stream(
            &["Let me ", "look.\n", "{\"name\": \"read", "_file\"}\n"],
            true,
        );
        assert_eq!(early, "Let me look.\n");
        assert_eq!(end, "Let me look.\n");
        let (early, end) = stream(&["<tool", "_call>{}</tool_call>"], true);
        assert_eq!((early.as_str(), end.as_str()), ("", ""));
        let (early, end) = stream(&["  <b>bold</b>"], false);
        assert_eq!(early, "  <b>bold</b>");
        assert_eq!(end, "  <b>bold</b>");
        let (early, end) = stream(&["[1, 2] is a list\n", "done"], false);
        assert_eq!(early, "");
        assert_eq!(
            end, "[1, 2] is a list\ndone",
            "held text is shown when it held no call"
        );
    }
}
