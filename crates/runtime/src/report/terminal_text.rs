//! The one sanitiser for text from outside the host (a model, a plugin, a file name, a config
//! value) that is put on a terminal line or in a log line. What could drive the terminal (C0 and C1
//! control characters: ESC, CSI, BEL, CR, DEL, …), start a line of its own (newlines, CR, the line
//! and paragraph separators U+2028/2029) or hide or reorder what is shown (bidirectional marks,
//! embeddings, overrides and isolates, zero-width and other invisible format characters) is shown
//! as an escape instead: `\n`, `\r`, `\t`, `\u{1b}`, `\u{202e}`. Nothing is dropped, so nothing is
//! silently hidden; a backslash itself is left as it is (the escapes are for reading, not for
//! parsing back).
//!
//! Three forms: [`one_line`] for a name, an id, a path or any field inside a line (nothing kept);
//! [`lines`] for prose whose line breaks are its own (a model's answer, a tool's text result, an
//! error message): newline and tab kept; [`json_text`] for serialised JSON, where the same
//! characters become JSON's own `\uXXXX` escapes, so the value is unchanged.

use std::borrow::Cow;

/// Whether `c` is shown as an escape in a terminal line: a control character (C0, DEL, C1), a line
/// or paragraph separator, or an invisible format character.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_separator(c) || is_bidi_control(c) || is_invisible_format(c)
}

/// `text` as part of one line: every character [`is_unsafe`] names shown as an escape, newline
/// and tab included, so the text cannot start a line of its own (a fake heading, a fake tool, a
/// fake result) or drive the terminal.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false)
}

/// `text` whose line breaks are its own: newline and tab kept, and the zero-width joiner and
/// non-joiner (which scripts and emoji sequences need, and which neither break nor reorder a
/// line); every other character [`is_unsafe`] names shown as an escape.
pub fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, kept_in_lines)
}

/// Whether `c`, which [`is_unsafe`] names, is kept as it is by [`lines`]: newline, tab and the
/// zero-width joiner and non-joiner.
pub fn kept_in_lines(c: char) -> bool {
    matches!(c, '\n' | '\t' | '\u{200c}' | '\u{200d}')
}

/// Serialised JSON (compact or pretty) with every character [`is_unsafe`] names, other than the
/// whitespace between tokens, written as a `\uXXXX` escape: the same JSON value, safe to show.
/// `serde_json` already escapes C0 characters inside strings, but not DEL, C1 or the format
/// characters.
pub fn json_text(json: &str) -> Cow<'_, str> {
    let is_kept = |c: char| matches!(c, ' ' | '\n' | '\r' | '\t');
    if !json.chars().any(|c| is_unsafe(c) && !is_kept(c)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) && !is_kept(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` with every unsafe character that `kept` does not keep written as an escape.
fn escaped(text: &str, kept: impl Fn(char) -> bool) -> Cow<'_, str> {
    let shown_as_escape = |c: char| is_unsafe(c) && !kept(c);
    if !text.chars().any(shown_as_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !shown_as_escape(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

/// Unicode's line separator (Zl) and paragraph separator (Zp).
fn is_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}

/// The bidirectional formatting characters: the Arabic letter mark, the left-to-right and
/// right-to-left marks, embeddings, overrides, their pop, and the isolates.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The other format characters (Cf) a terminal shows as nothing: the soft hyphen, zero-width
/// space, joiners, word joiner and invisible operators, deprecated format controls, the byte-order
/// mark, interlinear annotation, prepended concatenation marks, shorthand and musical format
/// controls, and the tag characters (which can carry a whole hidden ASCII text).
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{0600}'..='\u{0605}' | '\u{06dd}' | '\u{070f}' | '\u{0890}' | '\u{0891}'
        | '\u{08e2}' | '\u{180e}' | '\u{200b}'..='\u{200d}' | '\u{2060}'..='\u{2064}'
        | '\u{206a}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{110bd}'
        | '\u{110cd}' | '\u{13430}'..='\u{1343f}' | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}' | '\u{e0001}' | '\u{e0020}'..='\u{e007f}'
        // Shown as nothing too: the combining grapheme joiner, the Hangul and Khmer fillers and
        // inherent vowels, the Mongolian and other variation selectors (which can carry hidden
        // data).
        | '\u{034f}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}' | '\u{180b}'..='\u{180f}'
        | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{ffa0}' | '\u{e0100}'..='\u{e01ef}')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, as one line, as lines)
    const TABLE: &[(&str, &str, &str)] = &[
        (
            "plain text, ünïcødé, 中文",
            "plain text, ünïcødé, 中文",
            "plain text, ünïcødé, 中文",
        ),
        ("C:\\path\\n", "C:\\path\\n", "C:\\path\\n"),
        ("two\nlines", "two\\nlines", "two\nlines"),
        ("col\tumn", "col\\tumn", "col\tumn"),
        ("over\rwrite", "over\\rwrite", "over\\rwrite"),
        ("crlf\r\n", "crlf\\r\\n", "crlf\\r\n"),
        (
            "\u{1b}]0;title\u{7}\u{1b}[2J",
            "\\u{1b}]0;title\\u{7}\\u{1b}[2J",
            "\\u{1b}]0;title\\u{7}\\u{1b}[2J",
        ),
        (
            "nul\0del\u{7f}",
            "nul\\u{0}del\\u{7f}",
            "nul\\u{0}del\\u{7f}",
        ),
        ("c1 csi\u{9b}31m", "c1 csi\\u{9b}31m", "c1 csi\\u{9b}31m"),
        ("next\u{85}line", "next\\u{85}line", "next\\u{85}line"),
        (
            "line\u{2028}sep\u{2029}",
            "line\\u{2028}sep\\u{2029}",
            "line\\u{2028}sep\\u{2029}",
        ),
        ("exe.\u{202e}txt", "exe.\\u{202e}txt", "exe.\\u{202e}txt"),
        (
            "\u{202a}\u{202b}\u{202c}\u{202d}",
            "\\u{202a}\\u{202b}\\u{202c}\\u{202d}",
            "\\u{202a}\\u{202b}\\u{202c}\\u{202d}",
        ),
        (
            "\u{2066}\u{2067}\u{2068}\u{2069}",
            "\\u{2066}\\u{2067}\\u{2068}\\u{2069}",
            "\\u{2066}\\u{2067}\\u{2068}\\u{2069}",
        ),
        (
            "\u{200e}\u{200f}\u{61c}",
            "\\u{200e}\\u{200f}\\u{61c}",
            "\\u{200e}\\u{200f}\\u{61c}",
        ),
        (
            "zero\u{200b}width",
            "zero\\u{200b}width",
            "zero\\u{200b}width",
        ),
        ("bom\u{feff}", "bom\\u{feff}", "bom\\u{feff}"),
        (
            "tag\u{e0041}\u{e0042}",
            "tag\\u{e0041}\\u{e0042}",
            "tag\\u{e0041}\\u{e0042}",
        ),
        ("👩\u{200d}💻", "👩\\u{200d}💻", "👩\u{200d}💻"),
    ];

    #[test]
    fn every_unsafe_character_is_shown_as_an_escape() {
        for (input, as_one_line, as_lines) in TABLE {
            assert_eq!(one_line(input), *as_one_line, "one_line({input:?})");
            assert_eq!(lines(input), *as_lines, "lines({input:?})");
        }
    }

    #[test]
    fn safe_text_is_borrowed_not_copied() {
        assert!(matches!(one_line("read_file"), Cow::Borrowed(_)));
        assert!(matches!(lines("a\nb\tc"), Cow::Borrowed(_)));
        assert!(matches!(json_text("{\n  \"a\": 1\n}"), Cow::Borrowed(_)));
    }

    #[test]
    fn no_output_of_one_line_holds_an_unsafe_character() {
        let every: String = (0..=0x10ffff).filter_map(char::from_u32).collect();
        assert!(!one_line(&every).chars().any(is_unsafe));
        assert!(
            !lines(&every)
                .chars()
                .any(|c| is_unsafe(c) && !matches!(c, '\n' | '\t' | '\u{200c}' | '\u{200d}'))
        );
    }

    #[test]
    fn json_keeps_its_value_and_loses_its_unsafe_characters() {
        let value = serde_json::json!({
            "name": "evil\u{202e}txt",
            "c1": "\u{9b}2J\u{7f}",
            "tag": "\u{e0041}",
            "ok": "line\nbreak ünï",
        });
        for serialised in [
            value.to_string(),
            serde_json::to_string_pretty(&value).unwrap(),
        ] {
            let shown = json_text(&serialised);
            assert!(
                !shown
                    .chars()
                    .any(|c| is_unsafe(c) && !c.is_ascii_whitespace())
            );
            assert!(shown.contains("\\u202e") && shown.contains("\\udb40\\udc41"));
            let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
            assert_eq!(back, value);
        }
    }
}
