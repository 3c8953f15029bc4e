//! Private keys read in part: masks runs of two or more lines ending in a full PEM body line (64
//! base64 characters, capitals and small letters among them), and the short last line of such a
//! run, as left by a `grep` of a key file or a read from an offset that missed both the `BEGIN`
//! and the `END` line. A run right after a `BEGIN` or right before an `END` that does not say
//! `PRIVATE` (a certificate, a public key) stays.

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
    // A body line has capitals and small letters (64 random base64 characters without both: one
    // chance in 10^14); hex and binary test vectors have not.
    let full = |line: &str| {
        trailing_base64(line, KEY_LINE_CHARS).is_some_and(|t| {
            t.len() == KEY_LINE_CHARS
                && t.bytes().any(|b| b.is_ascii_uppercase())
                && t.bytes().any(|b| b.is_ascii_lowercase())
        })
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
            let last = i + usize::from(i < lines.len() && trailing_base64(lines[i], 4).is_some());
            // The body of a certificate or a public key, whose markers say so, is not a secret.
            let public = |line: Option<&&str>, marker: &str| {
                line.is_some_and(|line| line.contains(marker) && !line.contains("PRIVATE"))
            };
            if !public(
                start.checked_sub(1).and_then(|s| lines.get(s)),
                "-----BEGIN ",
            ) && !public(lines.get(last), "-----END ")
            {
                runs += 1;
                masked[start..last].iter_mut().for_each(|m| *m = true);
            }
            i = last;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> String {
        mask(text, &mut BTreeMap::new())
    }

    #[test]
    fn key_bodies_are_masked_and_certificates_and_test_vectors_are_not() {
        let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n\
                    VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n\
                    LxoS2tFczGkPLPgizskuemMghRniWaoLcyeh";
        assert_eq!(
            masked(body),
            "[REDACTED:private_key]\n[REDACTED:private_key]\n[REDACTED:private_key]"
        );
        let certificate = format!("-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----");
        assert_eq!(masked(&certificate), certificate);
        let vectors = "5468652064686f6c65202870726f6e6f756e6365642022646f6c652229206973\n\
                       20616c736f206b6e6f776e2061732074686520417369617469632077696c6420\n\
                       2066616d696c792043616e696461652e";
        assert_eq!(masked(vectors), vectors);
    }
}
