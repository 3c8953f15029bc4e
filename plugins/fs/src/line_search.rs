//! The lines of a file that match a pattern, each line judged on its own (as grep judges them),
//! found by searching the file as one buffer, as ripgrep does: a search for the pattern in
//! multi-line mode finds where the next candidate line is, that line alone is checked, and the
//! search goes on from the line after it. Lines without a match cost nothing beyond the search;
//! a file with a match on most lines costs one check per matching line, not one per line.
//!
//! Patterns whose meaning depends on the whole buffer (`\A`, `\z`, turning multi-line mode off)
//! are checked line by line instead.

use regex::bytes::{Regex, RegexBuilder};

pub struct LineMatcher {
    /// The pattern as the user wrote it, matched against one line (without its line ending).
    line: Regex,
    /// The same pattern with `^` and `$` at every line boundary, to find candidate lines in a
    /// whole buffer; `None` when only a line-by-line check is exact.
    buffer: Option<Regex>,
}

impl LineMatcher {
    pub fn new(pattern: &str, ignore_case: bool) -> Result<Self, regex::Error> {
        let line = RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .build()?;
        let whole_buffer_only = ["\\A", "\\z", "-m"]
            .iter()
            .any(|marker| pattern.contains(marker));
        let buffer = match whole_buffer_only {
            true => None,
            false => Some(
                RegexBuilder::new(pattern)
                    .case_insensitive(ignore_case)
                    .multi_line(true)
                    .crlf(true)
                    .build()?,
            ),
        };
        Ok(Self { line, buffer })
    }

    /// Calls `found` with the number (from 1) and text (without `\n` or `\r\n`) of each matching
    /// line of `text`, in order. A final line ending does not start another line.
    pub fn each_match(&self, text: &[u8], mut found: impl FnMut(usize, &[u8])) {
        let Some(buffer) = &self.buffer else {
            for (index, line) in lines(text).enumerate() {
                if self.line.is_match(line) {
                    found(index + 1, line);
                }
            }
            return;
        };
        let (mut from, mut line_number, mut counted_to) = (0, 1, 0);
        while from < text.len() {
            let Some(candidate) = buffer.find_at(text, from) else {
                break;
            };
            let start = candidate.start().min(text.len().saturating_sub(1));
            let line_start =
                memchr::memrchr(b'\n', &text[from..start]).map_or(from, |i| from + i + 1);
            let line_end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
            line_number += memchr::memchr_iter(b'\n', &text[counted_to..line_start]).count();
            counted_to = line_start;
            let line = without_cr(&text[line_start..line_end]);
            if self.line.is_match(line) {
                found(line_number, line);
            }
            from = line_end + 1;
        }
    }
}

/// The lines of `text` without their endings; a final `\n` does not start another line.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let empty = text.is_empty();
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    text.split(|&byte| byte == b'\n')
        .filter(move |_| !empty)
        .map(without_cr)
}

fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> Vec<(usize, String)> {
        let matcher = LineMatcher::new(pattern, false).unwrap();
        let mut out = Vec::new();
        matcher.each_match(text.as_bytes(), |n, line| {
            out.push((n, String::from_utf8_lossy(line).into_owned()))
        });
        // The line-by-line check must agree.
        let slow = LineMatcher {
            buffer: None,
            ..LineMatcher::new(pattern, false).unwrap()
        };
        let mut expected = Vec::new();
        slow.each_match(text.as_bytes(), |n, line| {
            expected.push((n, String::from_utf8_lossy(line).into_owned()))
        });
        assert_eq!(out, expected, "{pattern:?} over {text:?}");
        out
    }

    #[test]
    fn anchors_work_on_every_line() {
        let text = "use a;\nfn x() {}\nuse b;\r\nlet use_c;\n";
        assert_eq!(
            matches("^use ", text),
            vec![(1, "use a;".into()), (3, "use b;".into())]
        );
        assert_eq!(
            matches(";$", text),
            vec![
                (1, "use a;".into()),
                (3, "use b;".into()),
                (4, "let use_c;".into())
            ]
        );
    }

    #[test]
    fn matches_that_would_span_lines_are_judged_per_line() {
        let text = "a\nb\na b\n";
        assert_eq!(matches(r"a\sb", text), vec![(3, "a b".into())]);
        assert_eq!(matches(r"a[^x]b", text), vec![(3, "a b".into())]);
        assert_eq!(matches(r"(?s)a.b", text), vec![(3, "a b".into())]);
    }

    #[test]
    fn empty_lines_and_the_last_line() {
        assert_eq!(matches("^$", "x\n\ny\n"), vec![(2, "".into())]);
        assert_eq!(matches("^$", ""), vec![]);
        assert_eq!(matches("^$", "\n"), vec![(1, "".into())]);
        assert_eq!(matches("y", "x\ny"), vec![(2, "y".into())]);
        assert_eq!(
            matches("x*", "a\nb"),
            vec![(1, "a".into()), (2, "b".into())]
        );
    }

    #[test]
    fn whole_buffer_assertions_are_checked_line_by_line() {
        assert_eq!(matches(r"\Ab", "a\nb\n"), vec![(2, "b".into())]);
        assert_eq!(matches(r"(?-m)^b", "a\nb\n"), vec![(2, "b".into())]);
    }
}
