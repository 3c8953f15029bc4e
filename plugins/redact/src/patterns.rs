//! What counts as a secret, and how it is masked. Each pattern keeps what identifies the secret's
//! kind (a `password=` key, a `Bearer` scheme) and replaces the secret itself with
//! `[REDACTED:kind]`. A private key is masked whole, and also in part: a `BEGIN` line without its
//! `END` (a read that stops early), an `END` without its `BEGIN` (a read from an offset), and
//! a bare run of key-body lines (64 base64 characters each, as in a `grep` of a key file).

use regex::{Captures, Regex};
use std::collections::BTreeMap;

struct Pattern {
    kind: &'static str,
    regex: Regex,
    /// Capture group holding the text kept before the secret (0 = none).
    keep_prefix_group: usize,
}

fn patterns() -> Vec<Pattern> {
    let pattern = |kind, regex: &str, keep_prefix_group| Pattern {
        kind,
        regex: Regex::new(regex).expect("built-in pattern compiles"),
        keep_prefix_group,
    };
    vec![
        pattern(
            "private_key",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
            0,
        ),
        // What is left of a key after whole blocks were masked: a BEGIN and the body lines after
        // it, or the body lines before an END.
        pattern(
            "private_key",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:\r?\n[A-Za-z0-9+/=]{4,})*",
            0,
        ),
        pattern(
            "private_key",
            r"(?m)(?:^[A-Za-z0-9+/=]{4,}\r?\n)*-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----",
            0,
        ),
        pattern(
            "aws_access_key",
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b",
            0,
        ),
        pattern(
            "github_token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
            0,
        ),
        pattern("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
        pattern(
            "bearer_token",
            r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*",
            1,
        ),
        pattern(
            "password",
            r#"(?i)(\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)["']?\s*[=:]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,;&"']+)"#,
            1,
        ),
    ]
}

/// `text` with every secret masked; `counts` gains one per masked secret, by kind.
pub fn mask(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
    let mut text = text.to_string();
    for pattern in patterns() {
        let mut found = 0;
        text = pattern
            .regex
            .replace_all(&text, |captures: &Captures| {
                found += 1;
                let prefix = captures
                    .get(pattern.keep_prefix_group)
                    .filter(|_| pattern.keep_prefix_group > 0);
                format!(
                    "{}[REDACTED:{}]",
                    prefix.map_or("", |m| m.as_str()),
                    pattern.kind
                )
            })
            .into_owned();
        if found > 0 {
            *counts.entry(pattern.kind).or_default() += found;
        }
    }
    mask_key_bodies(&text, counts)
}

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

/// Masks runs of two or more lines ending in a full PEM body line (64 base64 characters), and the
/// short last line of such a run: a key body without its BEGIN and END lines.
fn mask_key_bodies(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
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
