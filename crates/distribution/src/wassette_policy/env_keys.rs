//! A Wassette policy's environment keys as the variable names cordon passes through, and whether
//! a deny names an allowed key, read every way the deny could be meant.

use super::{EnvRule, ProposedGrants, Rules, name_pattern};

pub(super) fn env_grants(environment: &Rules<EnvRule>, out: &mut ProposedGrants) {
    for rule in &environment.allow {
        let key = rule.key.trim_ascii().to_string();
        let name_character = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if key.is_empty()
            || !key
                .chars()
                .all(|c| name_character(c) || name_pattern::is_pattern(&c.to_string()))
        {
            out.left_out.push(format!(
                "environment key {:?}: not a variable name (letters, digits and _)",
                rule.key
            ));
        } else if name_pattern::is_pattern(&key) {
            out.left_out.push(format!(
                "environment key {key:?}: a pattern; cordon passes named variables, so list each"
            ));
        } else if let Some(denied) = environment
            .deny
            .iter()
            .find(|denied| env_deny_covers(denied.key.trim(), &key))
        {
            out.left_out.push(format!(
                "environment key {key}: the policy denies {:?}",
                denied.key
            ));
        } else if !out.env.contains(&key) {
            out.env.push(key);
        }
    }
}

/// Whether the deny `pattern` (trimmed) names `key`: exactly, or as a `*`/`?` glob, in any
/// case (a variable's name is matched without regard to case on Windows, and a deny is read
/// the widest way it could be meant); one with other glob syntax is not read and covers every
/// key. It is read every way it could be meant: as written, with glob escapes (`\_`) taken as
/// the character, with `%XX` escapes decoded, and as every name it holds: each run of name
/// characters (letters, digits, `_`, glob syntax) between anything else, so any shell's
/// reference (`$KEY`, `${KEY}`, `$(KEY)`, `$env:KEY`, `%KEY%`, `!KEY!`, `"$KEY"`, `KEY=`)
/// names the variable.
fn env_deny_covers(pattern: &str, key: &str) -> bool {
    if pattern.chars().any(char::is_control) {
        // A NUL or control character: a deny that cannot be read covers every key.
        return true;
    }
    let key = key.to_ascii_lowercase();
    let readings = env_deny_readings(pattern);
    // A reading that decodes to a control character cannot be read either.
    readings
        .iter()
        .any(|reading| reading.chars().any(char::is_control) || env_reading_covers(reading, &key))
}

/// `text` with each letter that is ASCII in another case written so (`ı` is `I`, `ſ` is `S`,
/// the Kelvin sign is `k`): a name compared without regard to case matches them.
fn ascii_case_folded(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let upper: String = c.to_uppercase().collect();
            let lower: String = c.to_lowercase().collect();
            let folded = if c.is_ascii() {
                c.to_string()
            } else if upper.is_ascii() {
                upper
            } else if lower.is_ascii() {
                lower
            } else if let Some(first) = lower.chars().next().filter(char::is_ascii) {
                // `İ` lower-cases to `i` and a combining dot: read as `i`.
                first.to_string()
            } else {
                c.to_string()
            };
            folded.chars().collect::<Vec<_>>()
        })
        .collect()
}

fn env_deny_readings(pattern: &str) -> Vec<String> {
    // Unescaping and decoding are applied to each other's results too (`API%5C_KEY` decodes to
    // `API\_KEY`, which unescapes to `API_KEY`), a bounded number of times.
    let mut readings = vec![pattern.to_string()];
    let folded = ascii_case_folded(pattern);
    if folded != pattern {
        readings.push(folded);
    }
    let mut index = 0;
    while index < readings.len() && readings.len() < 64 {
        let reading = readings[index].clone();
        index += 1;
        let mut next = Vec::new();
        if reading.contains('\\') {
            next.push(reading.replace('\\', ""));
        }
        if reading.contains('%') {
            let cmd_reference =
                reading.len() > 2 && reading.starts_with('%') && reading.ends_with('%');
            match percent_decoded(&reading) {
                Some(decoded) => next.push(decoded),
                // cmd's `%KEY%` is read below, as the name it holds.
                None if cmd_reference => {}
                // An escape that cannot be decoded is a deny that cannot be read: it covers all.
                None => next.push("*".into()),
            }
        }
        for more in next {
            if !readings.contains(&more) {
                readings.push(more);
            }
        }
    }
    if readings.len() >= 64 {
        // Escapes past what cordon reads: a deny that cannot be read covers every key.
        readings.push("*".into());
    }
    for reading in readings.clone() {
        readings.extend(
            reading
                .split(|c: char| !(c.is_ascii_alphanumeric() || "_*?[]".contains(c)))
                .filter(|name| !name.is_empty())
                .map(str::to_string),
        );
    }
    // Compared in any case, after decoding (`%41PI_KEY` is `API_KEY`).
    readings
        .iter()
        .map(|reading| reading.to_ascii_lowercase())
        .collect()
}

/// `text` with its `%XX` escapes decoded, or `None` when one is malformed or the result is not
/// UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn env_reading_covers(pattern: &str, key: &str) -> bool {
    if name_pattern::is_unreadable(pattern) {
        true
    } else if name_pattern::is_pattern(pattern) {
        name_pattern::matches(pattern, key)
    } else {
        pattern == key
    }
}
