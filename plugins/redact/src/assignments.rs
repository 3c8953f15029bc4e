//! Secrets recognised by the name they are assigned to: `KEY=value`, `export KEY=value`,
//! `KEY: value` (YAML), `"key": "value"` (JSON), `KEY := value`, `key => value`, quoted or not,
//! where the key has a word naming a secret (PASSWORD, PASSWD, PASSPHRASE, SECRET, TOKEN,
//! API KEY, ACCESS KEY, PRIVATE KEY, CREDENTIAL) with any prefix or suffix: `DB_PASSWORD`,
//! `aws_secret_access_key`, `clientSecret`, `X-Api-Key`. The key and the operator are kept, the
//! value becomes `[REDACTED:kind]`.
//!
//! What stays, because it is not a secret: a key whose last word says it is about the secret
//! rather than the secret (`PASSWORD_MIN_LENGTH`, `token_count`, `SECRET_NAME`, `TOKEN_URL`,
//! `max_tokens`: the list is [`ABOUT_WORDS`]), a value that is a boolean, `null`, empty, or a
//! reference to where the secret is kept (`${DB_PASSWORD}`, `$TOKEN`, `{{ .Values.x }}`,
//! `<password>`, `os.environ[...]`), and after a colon, an unquoted value of several words (prose
//! such as `password: must be 8 characters`, read as text, not YAML).

use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// A key (possibly quoted), an operator, and a value (quoted, or up to a separator). The key must
/// not continue a longer word on its left.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)(?P<lead>^|[^A-Za-z0-9_.\-])"#,
        r#"(?P<key>["']?[A-Za-z0-9_.\-]*(?:pass|secret|token|key|credential)[A-Za-z0-9_.\-]*["']?)"#,
        r#"(?P<op>[ \t]*(?::=|=>|=|:)[ \t]*)"#,
        r#"(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;&"'<>()\[\]{}`]+(?:[ \t]+[^\s,;&"'<>()\[\]{}`]+)*)"#,
    ))
    .expect("built-in pattern compiles")
});

/// Last words of a key that make it a setting about a secret, not the secret.
const ABOUT_WORDS: &[&str] = &[
    "length",
    "len",
    "min",
    "max",
    "count",
    "size",
    "limit",
    "file",
    "path",
    "dir",
    "enabled",
    "enable",
    "disabled",
    "required",
    "expiry",
    "expires",
    "expiration",
    "ttl",
    "timeout",
    "lifetime",
    "policy",
    "rules",
    "prompt",
    "field",
    "label",
    "hint",
    "type",
    "url",
    "uri",
    "endpoint",
    "name",
    "header",
    "param",
    "env",
    "var",
    "format",
    "version",
    "kind",
    "mode",
    "strength",
    "rotation",
    "reset",
    "changed",
    "updated",
    "created",
    "at",
    "tokens",
    "days",
    "hours",
    "minutes",
    "seconds",
    "interval",
    "period",
];

/// The kind a key's words name, if they name a secret at all.
fn kind_of(key: &str) -> Option<&'static str> {
    let words = words(key);
    let last = words.last()?;
    if ABOUT_WORDS.contains(&last.as_str()) {
        return None;
    }
    let has = |word: &str| words.iter().any(|w| w == word);
    let pair = |first: &str, second: &str| {
        words.windows(2).any(|w| w[0] == first && w[1] == second)
            || has(&format!("{first}{second}"))
    };
    if has("password") || has("passwd") || has("passphrase") || has("passwords") {
        Some("password")
    } else if has("secret")
        || has("secrets")
        || pair("private", "key")
        || has("credential")
        || has("credentials")
        || has("creds")
    {
        Some("secret")
    } else if has("token") {
        Some("token")
    } else if pair("api", "key") || pair("access", "key") || pair("auth", "key") {
        Some("api_key")
    } else {
        None
    }
}

/// A key's words, lowercase: split at `_`, `-`, `.`, quotes and lower-to-upper case changes
/// (`clientSecret` is `client`, `secret`; `APIKey` stays `apikey`).
fn words(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in key.chars() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Whether an assigned value is not a secret itself (see the module's list).
fn is_not_a_secret(value: &str, after_colon: bool) -> bool {
    let quoted = value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\'')));
    let inner = if quoted {
        &value[1..value.len() - 1]
    } else {
        value
    };
    let bare = inner.trim();
    if bare.is_empty() || bare.starts_with("[REDACTED") {
        return true;
    }
    if !quoted && after_colon && bare.contains([' ', '\t']) {
        return true;
    }
    let lower = bare.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "true" | "false" | "null" | "nil" | "none" | "yes" | "no" | "on" | "off" | "undefined"
    ) {
        return true;
    }
    bare.starts_with('$')
        || bare.starts_with("{{")
        || bare.starts_with('<')
        || bare.starts_with('%')
        || lower.starts_with("os.environ")
        || lower.starts_with("os.getenv")
        || lower.starts_with("process.env")
        || lower.starts_with("env(")
        || lower.starts_with("secret(")
        || bare
            .chars()
            .all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
}

/// `text` with every secret assigned to a secret's name masked; `counts` gains one per value.
pub fn mask(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
    let mut masked = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search_from = 0;
    while let Some(found) = ASSIGNMENT.captures_at(text, search_from) {
        let key = found.name("key").expect("the key is matched");
        let op = found.name("op").expect("the operator is matched");
        let value = found.name("value").expect("the value is matched");
        let mut value_text = value.as_str();
        let after_colon = op.as_str().trim() == ":";
        // An unquoted value ends at the first blank unless it follows a colon (YAML, where a
        // ` #` starts a comment).
        if after_colon && let Some(comment) = value_text.find(" #") {
            value_text = &value_text[..comment];
        }
        if !after_colon
            && !value_text.starts_with(['"', '\''])
            && let Some(end) = value_text.find([' ', '\t'])
        {
            value_text = &value_text[..end];
        }
        let kind = kind_of(key.as_str());
        match kind {
            Some(kind) if !is_not_a_secret(value_text, after_colon) => {
                let (start, end) = (value.start(), value.start() + value_text.len());
                masked.push_str(&text[copied..start]);
                let (open, close) = match value_text.as_bytes()[0] {
                    quote @ (b'"' | b'\'') if value_text.len() >= 2 => {
                        let quote = (quote as char).to_string();
                        (quote.clone(), quote)
                    }
                    _ => (String::new(), String::new()),
                };
                masked.push_str(&format!("{open}[REDACTED:{kind}]{close}"));
                copied = end;
                search_from = end;
                *counts.entry(kind).or_default() += 1;
            }
            // Not a secret: look again from just after the key, so `a_token: b, password=c`
            // still finds the second pair.
            _ => search_from = key.end(),
        }
    }
    masked.push_str(&text[copied..]);
    masked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_words_in_every_case_style() {
        assert_eq!(words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(words("clientSecret"), ["client", "secret"]);
        assert_eq!(words("\"X-Api-Key\""), ["x", "api", "key"]);
        assert_eq!(words("APIKey"), ["apikey"]);
        assert_eq!(kind_of("aws_secret_access_key"), Some("secret"));
        assert_eq!(kind_of("PASSWORD_MIN_LENGTH"), None);
        assert_eq!(kind_of("max_tokens"), None);
        assert_eq!(kind_of("tokenizer"), None);
        assert_eq!(kind_of("monkey"), None);
    }
}
