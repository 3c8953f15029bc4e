//! Which key names name a secret, and of what kind: the words of a key (`DB_PASSWORD`,
//! `clientSecret`, `X-Api-Key`), the last words that make a key a setting about a secret rather
//! than the secret (`PASSWORD_MIN_LENGTH`, `max_tokens`), and the keys that are not secrets
//! although they end in KEY (`public_key`, `primary_key`).

use crate::literal::Strength;

/// Last words of a key that make it a setting about a secret, or code around it, not the secret.
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
    "flag",
    "flags",
    "pattern",
    "regex",
    "re",
    "prefix",
    "suffix",
    "class",
    "struct",
    "enum",
    "trait",
    "fn",
    "func",
    "function",
    "method",
    "handler",
    "callback",
    "provider",
    "factory",
    "builder",
    "parser",
    "lexer",
    "stream",
    "tree",
    "iter",
    "index",
    "idx",
    "pos",
    "position",
    "offset",
    "span",
    "start",
    "end",
    "line",
    "column",
    "col",
    "list",
    "map",
    "set",
    "vec",
    "array",
    "queue",
    "store",
    "manager",
    "service",
    "client",
    "scheme",
    "source",
    "style",
    "color",
    "width",
    "char",
    "chars",
    "charset",
    "alphabet",
    "bits",
    "algorithm",
    "algo",
    "alg",
    "status",
    "state",
    "error",
    "err",
    "message",
    "msg",
    "text",
    "description",
    "desc",
    "help",
    "placeholder",
    "backend",
    "engine",
    "ref",
    "arn",
    "buffer",
    "buf",
];

/// Words before a last word `key` that name a key that is not secret.
const NOT_SECRET_KEYS: &[&str] = &[
    "public",
    "pub",
    "foreign",
    "primary",
    "sort",
    "partition",
    "hash",
    "range",
    "cache",
    "idempotency",
    "object",
    "row",
    "routing",
    "host",
    "verifying",
    "verification",
    "lookup",
    "unique",
    "index",
    "composite",
    "map",
    "dict",
    "i18n",
    "translation",
    "message",
    "group",
    "shard",
    "dedup",
    "deduplication",
    "sequence",
    "cursor",
    "page",
    "pagination",
    "next",
    "prev",
    "gpg",
    "pgp",
    "s3",
    "bucket",
    "search",
    "hot",
    "short",
    "sub",
    "parent",
    "child",
    "item",
    "entry",
    "node",
    "field",
    "column",
    "table",
    "lock",
];

/// The kind a key's words name, and how random its value must be, if they name a secret at all.
pub(crate) fn kind_of(key: &str) -> Option<(&'static str, Strength)> {
    let words = words(key);
    let last = words.last()?;
    if ABOUT_WORDS.contains(&last.as_str()) {
        return None;
    }
    let has = |word: &str| words.iter().any(|w| w == word);
    let pair = |first: &str, second: &str| {
        words.windows(2).any(|w| w[0] == first && w[1] == second)
            || words.iter().any(|w| {
                w.len() == first.len() + second.len() && w.starts_with(first) && w.ends_with(second)
            })
    };
    // `pass` and `pwd` only as the last word (`DB_PASS`, `MYSQL_PWD`, not
    // `needless_pass_by_value`), and `pwd` not alone (the shell's working directory).
    let password_word = |word: &String| {
        word.ends_with("password")
            || word.ends_with("passwd")
            || matches!(word.as_str(), "passwords" | "passphrase" | "passcode")
    };
    if has("allow") {
        // `Access-Control-Allow-Credentials`, `allow_password_login`: permissions.
        return None;
    }
    if words.iter().any(password_word) || last == "pass" || (last == "pwd" && words.len() > 1) {
        let strength = if has("passphrase") {
            Strength::Passphrase
        } else {
            Strength::Password
        };
        Some(("password", strength))
    } else if has("secret")
        || has("secrets")
        || pair("private", "key")
        || has("credential")
        || has("credentials")
        || has("creds")
    {
        Some(("secret", Strength::Generated))
    } else if has("token") {
        Some(("token", Strength::Generated))
    } else if pair("api", "key") || pair("access", "key") || pair("auth", "key") {
        Some(("api_key", Strength::Generated))
    } else if last == "auth" {
        Some(("auth", Strength::Generated))
    } else if last == "key"
        && !words
            .len()
            .checked_sub(2)
            .is_some_and(|before| NOT_SECRET_KEYS.contains(&words[before].as_str()))
    {
        Some(("key", Strength::Key))
    } else {
        None
    }
}

/// A key's words, lowercase: split at `_`, `-`, `.`, quotes and lower-to-upper case changes
/// (`clientSecret` is `client`, `secret`; `APIKey` stays `apikey`).
pub(crate) fn words(key: &str) -> Vec<String> {
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
