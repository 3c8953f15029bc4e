//! What counts as a secret, and how it is masked. Each pattern keeps what identifies the secret's
//! kind (a `password=` key, a `Bearer` scheme) and replaces the secret itself with
//! `[REDACTED:kind]`.

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
    text
}
