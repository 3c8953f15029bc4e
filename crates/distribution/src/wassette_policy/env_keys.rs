//! A Wassette policy's environment keys as the variable names cordon passes through, and whether
//! a deny names an allowed key, read every way the deny could be meant.

use super::{EnvRule, ProposedGrants, Rules, name_pattern, storage_paths};

pub(super) fn env_grants(environment: &Rules<EnvRule>, out: &mut ProposedGrants) {
    for rule in &environment.allow {
        let key = rule.key.trim().to_string();
        if key.is_empty() || key.contains(['=', '\0']) {
            out.left_out.push(format!(
                "environment key {:?}: not a variable name",
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
/// the character, as a shell, make, PowerShell or cmd reference (`$KEY`, `$$KEY`, `${KEY}`,
/// `$(KEY)`, `$env:KEY`, `%KEY%`), and with `%XX` escapes decoded.
fn env_deny_covers(pattern: &str, key: &str) -> bool {
    if pattern.chars().any(char::is_control) {
        // A NUL or control character: a deny that cannot be read covers every key.
        return true;
    }
    let key = key.to_ascii_lowercase();
    env_deny_readings(&pattern.to_ascii_lowercase())
        .iter()
        .any(|reading| env_reading_covers(reading, &key))
}

fn env_deny_readings(pattern: &str) -> Vec<String> {
    let mut readings = vec![pattern.to_string()];
    if pattern.contains('\\') {
        readings.push(pattern.replace('\\', ""));
    }
    for reading in readings.clone() {
        if let Some(name) = variable_reference(&reading) {
            readings.push(name.to_string());
        }
    }
    for reading in readings.clone() {
        let cmd_reference = variable_reference(&reading)
            .is_some_and(|name| reading.starts_with('%') && !name.contains('%'));
        if reading.contains('%') && !cmd_reference {
            // An escape that cannot be decoded is a deny that cannot be read: it covers all.
            readings.push(storage_paths::percent_decoded(&reading).unwrap_or_else(|| "*".into()));
        }
    }
    readings
}

/// The name a variable reference (`$KEY`, `$$KEY`, `${KEY}`, `$(KEY)`, `$env:key`, `%KEY%`,
/// lower case) refers to.
fn variable_reference(text: &str) -> Option<&str> {
    if let Some(name) = text
        .strip_prefix('%')
        .and_then(|name| name.strip_suffix('%'))
        .filter(|name| !name.is_empty())
    {
        return Some(name);
    }
    let name = text.strip_prefix('$')?.trim_start_matches('$');
    let name = name.strip_prefix("env:").unwrap_or(name);
    Some(
        name.strip_prefix('{')
            .and_then(|name| name.strip_suffix('}'))
            .or_else(|| {
                name.strip_prefix('(')
                    .and_then(|name| name.strip_suffix(')'))
            })
            .unwrap_or(name),
    )
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
