//! How much one sandbox may make the host record about it: HTTP attempts, opened paths, log lines
//! and progress updates each up to a count per sandbox, every recorded path, URL or message cut to a length, and
//! warnings in the host's own log up to a few per sandbox. What is past a bound is counted, and the
//! counts are reported once when the sandbox ends, so a flood costs the host a counter, not memory,
//! audit lines or stderr.

use crate::report::secrets::Secrets;
use crate::report::terminal_text;
use crate::report::text_cut::{self, CutMark};
use std::sync::atomic::{AtomicU64, Ordering};

/// Records of each kind one sandbox may produce (events, audit entries).
pub const MAX_RECORDS_PER_KIND: u64 = 1_000;
/// Progress updates one sandbox may send (a tool streaming partial output sends many).
pub const MAX_PROGRESS_UPDATES: u64 = 10_000;
/// Bytes each log line or progress update costs against the output limit besides its content, so
/// empty ones are not free.
pub const MESSAGE_OVERHEAD_BYTES: usize = 64;
/// Bytes of a recorded path or URL kept; the rest is replaced by a marker.
pub const MAX_RECORDED_PATH_BYTES: usize = 1_024;
/// Bytes of one guest log line kept.
pub const MAX_LOG_LINE_BYTES: usize = 8 * 1_024;
/// Warnings one sandbox may cause in the host's own log (refused requests and the like).
pub const MAX_HOST_WARNINGS: u64 = 10;

/// What a sandbox may still have recorded, shared by its store and its HTTP gate.
#[derive(Debug, Default)]
pub(crate) struct ReportBudget {
    http: AtomicU64,
    paths: AtomicU64,
    logs: AtomicU64,
    progress: AtomicU64,
    warnings: AtomicU64,
    /// The first thing the host refused the sandbox (a write under a read-only grant, a request no
    /// grant covers), so a plugin's own error after it can be told apart as `capability_denied`.
    first_refusal: std::sync::OnceLock<String>,
    /// The first open of a path outside every grant (outside_grants.rs): the path, and the
    /// refusal naming it and the grants. Kept apart, as runtimes probe such paths on their own
    /// (CPython's tracebacks read source files): only an error that names the path is about it.
    first_outside: std::sync::OnceLock<(String, String)>,
}

/// The kinds of record with a count of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecordKind {
    /// Outgoing HTTP requests, let through or refused.
    Http,
    /// Paths the guest asked the host to open.
    Path,
    /// Log lines.
    Log,
    /// Progress updates.
    Progress,
}

/// Records that were not kept because a bound was reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Omitted {
    /// HTTP requests past the bound.
    pub http: u64,
    /// Path opens past the bound.
    pub paths: u64,
    /// Log lines past the bound.
    pub logs: u64,
    /// Progress updates past the bound.
    pub progress: u64,
}

impl Omitted {
    /// Whether any record was left out.
    pub fn any(&self) -> bool {
        self.http + self.paths + self.logs + self.progress > 0
    }
}

impl ReportBudget {
    fn counter(&self, kind: RecordKind) -> &AtomicU64 {
        match kind {
            RecordKind::Http => &self.http,
            RecordKind::Path => &self.paths,
            RecordKind::Log => &self.logs,
            RecordKind::Progress => &self.progress,
        }
    }

    fn bound(kind: RecordKind) -> u64 {
        match kind {
            RecordKind::Progress => MAX_PROGRESS_UPDATES,
            _ => MAX_RECORDS_PER_KIND,
        }
    }

    /// Counts one record of `kind`; whether it may still be kept.
    pub fn record(&self, kind: RecordKind) -> bool {
        self.counter(kind).fetch_add(1, Ordering::Relaxed) < Self::bound(kind)
    }

    /// Counts one warning for the host's log; whether it may still be written.
    pub fn warn(&self) -> bool {
        self.warnings.fetch_add(1, Ordering::Relaxed) < MAX_HOST_WARNINGS
    }

    /// Remembers what the host refused, if it is the first refusal of this sandbox.
    pub fn refused(&self, what: impl FnOnce() -> String) {
        if self.first_refusal.get().is_none() {
            let _ = self
                .first_refusal
                .set(cut(&what(), MAX_RECORDED_PATH_BYTES));
        }
    }

    /// The first thing the host refused this sandbox, if anything.
    pub fn first_refusal(&self) -> Option<&str> {
        self.first_refusal.get().map(String::as_str)
    }

    /// Remembers an open of `path`, outside every grant, if it is the first of this sandbox.
    pub fn refused_outside(&self, path: &str, what: impl FnOnce() -> String) {
        if self.first_outside.get().is_none() {
            let _ = self.first_outside.set((
                cut(path, MAX_RECORDED_PATH_BYTES),
                cut(&what(), MAX_RECORDED_PATH_BYTES),
            ));
        }
    }

    /// The first open outside every grant: its path, and the refusal.
    pub fn first_outside(&self) -> Option<(&str, &str)> {
        self.first_outside
            .get()
            .map(|(path, what)| (path.as_str(), what.as_str()))
    }

    /// Warnings that were not written.
    pub fn warnings_dropped(&self) -> u64 {
        self.warnings
            .load(Ordering::Relaxed)
            .saturating_sub(MAX_HOST_WARNINGS)
    }

    /// The records past their bound, by kind.
    pub fn omitted(&self) -> Omitted {
        let past = |kind| {
            self.counter(kind)
                .load(Ordering::Relaxed)
                .saturating_sub(Self::bound(kind))
        };
        Omitted {
            http: past(RecordKind::Http),
            paths: past(RecordKind::Path),
            logs: past(RecordKind::Log),
            progress: past(RecordKind::Progress),
        }
    }
}

/// `text` with its own line breaks kept and every other character that could drive a terminal or
/// hide what is shown written as an escape (see [`terminal_text::lines`], the one sanitiser).
pub fn without_controls(text: &str) -> std::borrow::Cow<'_, str> {
    terminal_text::lines(text)
}

/// `text` (lines kept) made safe to print on a terminal: [`terminal_text::lines`], owned.
pub fn for_terminal(text: &str) -> String {
    terminal_text::lines(text).into_owned()
}

/// `text` as one line that cannot drive a terminal or pass for another line of what it is shown
/// in: [`terminal_text::one_line`], owned.
pub fn one_line(text: &str) -> String {
    terminal_text::one_line(text).into_owned()
}

/// `text` cut to at most `max` bytes (on a character boundary), with a marker saying how much was
/// cut when it was: how records, log lines and previews are cut ([`text_cut::cut`] with
/// [`CutMark::MoreBytes`]).
pub fn cut(text: &str, max: usize) -> String {
    text_cut::cut(text, max, CutMark::MoreBytes).into_owned()
}

/// `text` with `secrets` masked, then [`cut`]: how guest-chosen text is recorded (a cut first
/// could leave part of a secret the mask no longer recognises).
pub fn masked_cut(text: &str, max: usize, secrets: &Secrets) -> String {
    cut(&secrets.scrub(text), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_past_the_bound_are_counted_not_kept() {
        let budget = ReportBudget::default();
        for _ in 0..MAX_RECORDS_PER_KIND {
            assert!(budget.record(RecordKind::Http));
        }
        assert!(!budget.record(RecordKind::Http));
        assert!(!budget.record(RecordKind::Http));
        assert!(budget.record(RecordKind::Path));
        assert_eq!(
            budget.omitted(),
            Omitted {
                http: 2,
                paths: 0,
                logs: 0,
                progress: 0
            }
        );
        for _ in 0..MAX_HOST_WARNINGS {
            assert!(budget.warn());
        }
        assert!(!budget.warn());
        assert_eq!(budget.warnings_dropped(), 1);
    }

    #[test]
    fn control_characters_are_escaped_but_newlines_and_tabs_kept() {
        assert_eq!(without_controls("plain\ttext\n"), "plain\ttext\n");
        assert_eq!(
            without_controls("a\u{1b}]0;owned\u{7}b\u{9b}c"),
            "a\\u{1b}]0;owned\\u{7}b\\u{9b}c"
        );
    }

    #[test]
    fn long_text_is_cut_with_a_marker_on_a_character_boundary() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("abcdef", 3), "abc…[3 more bytes]");
        assert_eq!(cut("ééé", 3), "é…[4 more bytes]");
    }
}
