//! Private keys read in part: masks runs of two or more lines ending in a full PEM body line (64
//! base64 characters), and the short last line of such a run, as left by a `grep` of a key file or
//! a read from an offset that missed both the `BEGIN` and the `END` line.

use std::collections::BTreeMap;

/// Base64 characters of one line of a PEM body.
const KEY_LINE_CHARS: usize = 64;

/// The line's last token when it is base64 of at least `min` characters.
fn trailing_base64(line: &str, min: usize) -> Option<&str> {
    let token = line
        .trim_end_matches('\r')
        .rsplit([' ', ':', '\t'])
        .next()
        .unwrap_or_default();
    (token.len() >= min
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')))
    .then_some(token)
}

/// `text` with bare key bodies masked; `counts` gains one `private_key` per run.
pub fn mask(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let full = |line: &str| {
        trailing_base64(line, KEY_LINE_CHARS).is_some_and(|t| t.len() == KEY_LINE_CHARS)
    };
    let mut masked = vec![false; lines.len()];
    let mut runs = 0;
    let mut i = 0;
    while i < lines.len() {
        let start = i;
        while i < lines.len() && full(lines[i]) {
            i += 1;
        }
        if i - start >= 2 {
            runs += 1;
            masked[start..i].iter_mut().for_each(|m| *m = true);
            if i < lines.len() && trailing_base64(lines[i], 4).is_some() {
                masked[i] = true;
                i += 1;
            }
        }
        i = i.max(start + 1);
    }
    if runs == 0 {
        return text.to_string();
    }
    *counts.entry("private_key").or_default() += runs;
    lines
        .iter()
        .zip(&masked)
        .map(|(line, hide)| match (hide, trailing_base64(line, 4)) {
            (true, Some(token)) => format!(
                "{}[REDACTED:private_key]",
                &line[..line.len() - token.len() - usize::from(line.ends_with('\r'))]
            ),
            _ => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
