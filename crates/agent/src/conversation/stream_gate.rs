//! Holding back streamed text that may be a tool call written as text, so that a recovered call
//! is never shown as the answer. Each line is passed on as soon as its first visible character
//! shows it is prose; a line that starts like a call (`{`, `[`, a ``` fence or `<tool_call>`) and
//! everything after it wait for the end of the reply, and are shown then only if no call was
//! recovered from them.
//!
//! The text is also searched, as the held part grows, for calls that repeat: a small model stuck
//! in a loop writes one call (or a cycle of a few) over and over until its output limit, and a
//! repeated call runs once anyway, so the rest of such a reply need not be read
//! ([`StreamGate::enough_at`]). The search reads the same text the session's recovery reads (the
//! prose before the held part too), and ends at the line where the second copy is complete.

use crate::conversation::call_signature::signature_of;
use crate::conversation::observer::AgentObserver;
use crate::conversation::text_calls::{self, TextCall};
use std::sync::Mutex;
use std::time::Duration;

/// Up to this much text, the search runs at every line end of the held part, so a cut falls right
/// after the second copy; past it, once the held part has grown by a quarter, so the searching
/// costs a small multiple of the text's length.
const EVERY_LINE_BYTES: usize = 8 << 10;
/// Past this much text a reply is no longer searched (a loop shows far earlier).
const SEARCH_LIMIT_BYTES: usize = 256 << 10;
/// The longest cycle of calls recognised as a loop.
const LONGEST_CYCLE: usize = 8;

pub struct StreamGate<'a> {
    inner: &'a dyn AgentObserver,
    /// Off: text passes straight through.
    enabled: bool,
    /// The tools offered, to recognise calls in held text.
    offered: Vec<String>,
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
    /// The text passed on before `held` began (nothing is passed on after).
    shown: String,
    /// The end of the last complete line in `held`.
    held_line_end: usize,
    /// `held_line_end` at the last search.
    searched: usize,
    /// The reply's text up to this byte ends in calls that repeat.
    enough_at: Option<usize>,
}

impl GateState {
    /// Appends to the held part, noting where its last complete line ends.
    fn hold(&mut self, text: &str) {
        let held = self.held.get_or_insert_with(String::new);
        let before = held.len();
        held.push_str(text);
        if let Some(newline) = text.rfind('\n') {
            self.held_line_end = before + newline + 1;
        }
    }

    /// Searches the text up to the held part's last complete line for calls that repeat, when
    /// that line is new and the text has grown enough since the last search.
    fn search_for_repeat(&mut self, offered: &[String]) {
        let (Some(held), None) = (self.held.as_deref(), self.enough_at) else {
            return;
        };
        let end = self.held_line_end;
        let total = self.shown.len() + end;
        if end == self.searched
            || total > SEARCH_LIMIT_BYTES
            || (total > EVERY_LINE_BYTES && end < self.searched + self.searched / 4)
        {
            return;
        }
        self.searched = end;
        let text = format!("{}{}", self.shown, &held[..end]);
        let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
        if let Some((_, calls)) = text_calls::recover(&text, &offered)
            && ends_in_a_repeat(&calls)
        {
            self.enough_at = Some(total);
        }
    }
}

/// Whether the calls end with a block of one to [`LONGEST_CYCLE`] calls written twice in a row
/// (A A, or A B A B): a loop, whose copies run once anyway.
fn ends_in_a_repeat(calls: &[TextCall]) -> bool {
    let signatures: Vec<String> = calls
        .iter()
        .rev()
        .take(2 * LONGEST_CYCLE)
        .map(|call| signature_of(&call.name, &call.arguments))
        .collect();
    (1..=signatures.len() / 2).any(|cycle| signatures[..cycle] == signatures[cycle..2 * cycle])
}

impl<'a> StreamGate<'a> {
    /// `offered`: the names of the tools offered with the request.
    pub fn new(inner: &'a dyn AgentObserver, enabled: bool, offered: Vec<String>) -> Self {
        Self {
            inner,
            enabled,
            offered,
            state: Mutex::new(GateState::default()),
        }
    }

    /// `Some(n)` once the reply's first `n` bytes of text hold a complete call written twice:
    /// the rest of the reply need not be read.
    pub fn enough_at(&self) -> Option<usize> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .enough_at
    }

    /// The reply is complete: shows what was held unless calls were recovered from it.
    pub fn finish(&self, calls_recovered: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let held = state.held.take().unwrap_or_default();
        let pending = std::mem::take(&mut state.pending);
        drop(state);
        if !calls_recovered {
            let rest = held + pending.as_str();
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
                if state.held.is_some() {
                    state.hold(rest);
                    state.search_for_repeat(&self.offered);
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
                            state.shown.push_str(&shown);
                            state.hold(&pending);
                            state.search_for_repeat(&self.offered);
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
            if state.held.is_none() {
                state.shown.push_str(&shown);
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
        let gate = StreamGate::new(&screen, true, vec!["echo".into()]);
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

    /// Feeds `text` in 7-byte pieces, as servers stream; returns the gate's verdict and what was shown.
    fn feed(text: &str) -> (Option<usize>, String) {
        let screen = Screen::default();
        let gate = StreamGate::new(&screen, true, vec!["echo".into(), "read_file".into()]);
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + 7).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            gate.text_delta(&text[start..end]);
            start = end;
        }
        let shown = screen.0.lock().unwrap().clone();
        (gate.enough_at(), shown)
    }

    #[test]
    fn a_call_written_twice_is_enough_and_the_rest_is_dropped() {
        let call = "{\"name\": \"echo\", \"arguments\": {\"text\": \"loop\"}}\n";
        let text = format!("Let me echo that.\n{}", call.repeat(40));
        let (enough, shown) = feed(&text);
        let enough = enough.expect("a repeated call was noticed");
        assert_eq!(shown, "Let me echo that.\n");
        assert!(text[..enough].ends_with('\n'), "cut at a line end");
        assert_eq!(
            &text[..enough],
            format!("Let me echo that.\n{call}{call}"),
            "cut right after the second copy"
        );

        // The same in <tool_call> tags, arguments in another key order.
        let tagged = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\", \"limit\": 2}}\n</tool_call>\n<tool_call>\n{\"arguments\": {\"limit\": 2, \"path\": \"a\"}, \"name\": \"read_file\"}\n</tool_call>\n";
        let (enough, shown) = feed(&tagged.repeat(10));
        assert!(enough.is_some());
        assert_eq!(shown, "");
    }

    #[test]
    fn a_cycle_of_calls_is_a_loop_but_a_call_met_again_later_is_not() {
        let call = |text: &str| {
            format!("{{\"name\": \"echo\", \"arguments\": {{\"text\": \"{text}\"}}}}\n")
        };
        let (a, b, c) = (call("a"), call("b"), call("c"));
        let cycle = format!("{a}{b}").repeat(5);
        let (enough, _) = feed(&cycle);
        assert_eq!(enough, Some(2 * (a.len() + b.len())), "A B A B");
        // A B A C: A comes back, but nothing repeats as a block, and C would be lost.
        let (enough, _) = feed(&format!("{a}{b}{a}{c}{}", call("d")));
        assert_eq!(enough, None);
        // Prose that mentions the tag makes recovery read only tagged blocks, as the session's
        // recovery of the whole text would: no cut it could not follow.
        let (enough, _) = feed(&format!("I'll use a <tool_call> now.\n{}", a.repeat(10)));
        assert_eq!(enough, None);
    }

    #[test]
    fn different_calls_and_prose_are_read_to_the_end() {
        let calls: String = (0..40)
            .map(|n| format!("{{\"name\": \"echo\", \"arguments\": {{\"text\": \"{n}\"}}}}\n"))
            .collect();
        assert_eq!(feed(&calls).0, None);
        let prose = "The same sentence, again and again.\n".repeat(100);
        let (enough, shown) = feed(&prose);
        assert_eq!(enough, None);
        assert_eq!(shown, prose);
        // A half-written second copy is not a repeat yet.
        let call = "{\"name\": \"echo\", \"arguments\": {\"text\": \"one\"}}\n";
        let text = format!("{call}{}{}", "\n".repeat(300), &call[..30]);
        assert_eq!(feed(&text).0, None);
    }
}
