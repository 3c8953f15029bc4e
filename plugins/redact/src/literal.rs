//! What a value looks like, for the rules that find a secret by its name rather than its shape
//! (assignments.rs, and the command-line and file forms in formats.rs): whether it is a literal
//! at all, and if so whether it is made of words or has a random part.
//!
//! - **Not a literal**: empty, a boolean or `null`, a number, a version or semver range, a date,
//!   a reference to where the secret is kept (`${X}`, `$X`, `{{ … }}`, `<your-key>`,
//!   `os.environ[…]`, `ENC[…]`, `op://…`), a placeholder (`changeme`, `your_token_here`, `xxxx`,
//!   `sk-...`), a template or pattern (`{}`, `%s`, `\d+`), text with spaces (a message or a label),
//!   and code (`a::b`, `a->b`, `==`, an operator at the start).
//! - **Words**: every run of letters and digits is an identifier or a word in one of the usual case
//!   styles (`confirm_password`, `TokenStream`, `self.secret`, `Chacha20Poly1305`, `hunter2`,
//!   `db.internal.net`): a name in code, or a guessable value.
//! - **Random**: at least one run changes case or mixes digits in as generated strings do
//!   (`xnP4WKwi1Vek`, `5XIoZw^VdB`, a hex digest, base64), or is a long run with no vowels; or a
//!   symbol stands inside letters and digits as in a password (`P@ss1!x`).
//!
//! Generated secrets (tokens, keys, API keys) are random; a name or a word assigned to a token's
//! name is code or a label. Passwords are chosen by people, so a word is masked as a password
//! where it can only be a literal (quoted, an XML element, a `.env` line).

use regex::Regex;
use std::sync::LazyLock;

/// The shape of a value: see the module's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    NotLiteral,
    Words,
    Random,
}

/// What a value is assigned to, which sets how random it must be to be masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strength {
    /// A password: chosen by people, masked from 6 random characters, or from 4 characters,
    /// words too, where the value can only be a literal.
    Password,
    /// A passphrase: as a password, and also several words where it can only be a literal.
    Passphrase,
    /// A token, secret, API key or credential: generated, masked when random and 8 or more long.
    Generated,
    /// Only named `…KEY` (`ENCRYPTION_KEY`, `hmac_key`): `key` also names map keys, cache keys and
    /// key ids, so the value must be random, 16 or more long, with 3 bits of entropy a character.
    Key,
}

/// Whether a value assigned to a secret's name is a secret. `literal` says the value can only be
/// a literal: quoted, an XML element's text, or the whole value of a `.env` line.
pub fn is_secret(value: &str, strength: Strength, literal: bool) -> bool {
    let length = value.chars().count();
    if strength == Strength::Passphrase
        && literal
        && value.trim().contains(' ')
        && !value.contains('\n')
        && value.split_whitespace().all(|word| is_literal(word, true))
    {
        return value.split_whitespace().count() >= 2 && length >= 8 && !names_a_secret(value);
    }
    match (shape(value, literal), strength) {
        (Shape::NotLiteral, _) => false,
        (Shape::Words, Strength::Password | Strength::Passphrase) => {
            literal && length >= 4 && !names_a_secret(value)
        }
        (Shape::Words, _) => false,
        (Shape::Random, Strength::Password | Strength::Passphrase) => {
            length >= 6 || (literal && length >= 4)
        }
        (Shape::Random, Strength::Generated) => length >= 8 && entropy(value) >= 2.5,
        (Shape::Random, Strength::Key) => length >= 16 && entropy(value) >= 3.0,
    }
}

/// The shape of a value (quotes already taken off). `literal` as for [`is_secret`]: an operator
/// at the start is then part of the value, not code.
pub fn shape(value: &str, literal: bool) -> Shape {
    if !is_literal(value, literal) {
        return Shape::NotLiteral;
    }
    let random = value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|run| !run.is_empty())
        .any(|run| !run_is_words(run));
    if random || has_password_symbols(value) {
        Shape::Random
    } else {
        Shape::Words
    }
}

/// A short password's mix: a symbol inside (`P@ss1!`, `Tr0ub4dor&3`), letters and digits or
/// both cases, and not an address (`name@host.org`), percent-encoding (`a%20b`), a pattern or
/// code (brackets, slashes, quotes).
fn has_password_symbols(value: &str) -> bool {
    if value.len() < 6
        || value.contains(['/', '\\', '(', ')', '[', ']', '{', '}', '\'', '"', '`'])
        || percent_encoded(value)
    {
        return false;
    }
    let inner = value.get(1..).unwrap_or_default();
    let symbol = inner.contains(['!', '@', '#', '%', '^', '*', '~', '?', '$', '&']);
    let lower = value.bytes().any(|b| b.is_ascii_lowercase());
    let upper = value.bytes().any(|b| b.is_ascii_uppercase());
    let digit = value.bytes().any(|b| b.is_ascii_digit());
    let address = value
        .split_once('@')
        .is_some_and(|(_, host)| host.contains('.') && !host.contains(['!', '#', '%', '^', '*']));
    symbol && !address && [lower, upper, digit].iter().filter(|&&x| x).count() >= 2
}

/// `%` followed by two hex digits somewhere (`%20`, `%2F`).
fn percent_encoded(value: &str) -> bool {
    value
        .as_bytes()
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
}

/// Bits of entropy per character (Shannon, over the characters of the value; other than ASCII,
/// counted as one).
pub fn entropy(value: &str) -> f64 {
    let mut counts = [0u32; 129];
    let mut total = 0u32;
    for c in value.chars() {
        counts[(c as usize).min(128)] += 1;
        total += 1;
    }
    counts
        .iter()
        .filter(|&&n| n > 0)
        .map(|&n| {
            let p = f64::from(n) / f64::from(total);
            -p * p.log2()
        })
        .sum()
}

/// Whether the value mentions what it is assigned to: a label (`"Password"`), a name
/// (`'refresh_token'`) or a placeholder (`my_password`), not the secret.
fn names_a_secret(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    [
        "pass",
        "pwd",
        "secret",
        "token",
        "key",
        "credential",
        "auth",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

const NOT_SECRETS: &[&str] = &[
    "true",
    "false",
    "null",
    "nil",
    "none",
    "yes",
    "no",
    "on",
    "off",
    "undefined",
    "empty",
    "unset",
    "required",
    "optional",
    "string",
    "str",
    "text",
    "bytes",
    "value",
    "default",
    "secret",
    "password",
    "token",
    "test",
    "example",
    "sample",
    "dummy",
    "foo",
    "bar",
    "baz",
];

/// Substrings that make a value a placeholder wherever they stand.
const PLACEHOLDERS: &[&str] = &[
    "your",
    "changeme",
    "change_me",
    "change-me",
    "changeit",
    "placeholder",
    "replace",
    "redacted",
    "xxxx",
    "****",
    "...",
    "…",
];

/// Prefixes of a reference to where a secret is kept, or of a value that is not one.
const REFERENCES: &[&str] = &[
    "$",
    "{{",
    "{%",
    "#{",
    "<",
    "%",
    "@microsoft.keyvault",
    "os.environ",
    "os.getenv",
    "process.env",
    "import.meta.env",
    "env(",
    "env.",
    "secret(",
    "secrets.",
    "vars.",
    "enc[",
    "op://",
    "vault:",
    "ref+",
    "sm://",
    "arn:",
    "!ref",
    "!sub",
    "!getatt",
    "workspace:",
    "npm:",
    "file:",
    "link:",
    "portal:",
    "git+",
    "git:",
    "github:",
    "[redacted",
];

/// Whether a value can be a secret's literal value at all (the first item of the module's list).
fn is_literal(value: &str, literal: bool) -> bool {
    let bare = value.trim();
    if bare.is_empty() || bare.contains(char::is_whitespace) {
        return false;
    }
    let lower = bare.to_ascii_lowercase();
    if NOT_SECRETS.contains(&lower.as_str())
        || PLACEHOLDERS.iter().any(|p| lower.contains(p))
        || REFERENCES.iter().any(|p| lower.starts_with(p))
    {
        return false;
    }
    // Masks and rules: `****`, `-----`, `???`.
    if bare.chars().all(|c| !c.is_ascii_alphanumeric()) {
        return false;
    }
    if is_number_or_version(bare) {
        return false;
    }
    // Code: paths, arrows, comparisons (not base64's closing `==`), and outside a literal an
    // operator where a value would start.
    let comparison = bare
        .match_indices("==")
        .any(|(at, _)| !bare[at..].trim_start_matches('=').is_empty());
    if comparison
        || ["::", "->", "=>", "!=", "&&", "||", "?."]
            .iter()
            .any(|op| bare.contains(op))
        || (!literal
            && bare.starts_with(['=', ':', '>', '!', '&', '*', '|', '.', '?', ')', ']', '}']))
    {
        return false;
    }
    // Templates and patterns: `{}`, `{name}`, `%s`, `\d`, `(?i)`, `[^…]`, `.*`.
    if has_template(bare)
        || [
            "%s", "%d", "%(", "\\d", "\\w", "\\s", "\\b", "(?", "[^", ".*", ".+",
        ]
        .iter()
        .any(|p| bare.contains(p))
    {
        return false;
    }
    true
}

/// `{}` or `{name}` (a format string or a template).
fn has_template(value: &str) -> bool {
    let bytes = value.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| {
        b == b'{'
            && bytes[i + 1..]
                .iter()
                .position(|&c| c == b'}')
                .is_some_and(|end| {
                    bytes[i + 1..i + 1 + end]
                        .iter()
                        .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b':'))
                })
    })
}

/// A number (`16`, `0x10`, `-1.5e3`, `16u32`, `3600s`), a version or range (`1.0.1`, `^6.0.0`,
/// `~1.2`, `>=1.0`, `1.x`, `v2.3.4-beta.1`), or a date or time (`2024-01-31`, `12:30:00`).
fn is_number_or_version(value: &str) -> bool {
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^(?:[-+]?(?:0[xX][0-9a-fA-F_]{1,16}|[0-9][0-9_]*(?:\.[0-9_]+)?(?:[eE][-+]?[0-9]+)?)(?:[a-zA-Z]{1,3}[0-9]{0,3})?",
            r"|(?:[\^~]|[<>]=?|=)?[vV]?[0-9]+(?:\.(?:[0-9]+|[xX*]))+(?:[-+][0-9A-Za-z.\-]+)?",
            r"|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9:.]+Z?(?:[-+][0-9:]+)?)?|[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?)$",
        ))
        .expect("built-in pattern compiles")
    });
    value.len() <= 40 && NUMBER.is_match(value)
}

/// Whether a run of ASCII letters and digits is an identifier or a word: split at case changes
/// and between letters and digits, its letter parts average 3 or more characters (or there is one),
/// digits stand in at most one place inside it (`Chacha20Poly1305`, `sha256sum`) besides the end,
/// and no long letter part lacks vowels. Random base62 changes case or kind every two characters
/// or so; identifiers every five or more.
fn run_is_words(run: &str) -> bool {
    if run.bytes().all(|b| b.is_ascii_digit()) {
        return run.len() < 20;
    }
    // Three characters cannot show it (`SxS`, `m2m`, `VC7`).
    if run.len() <= 3 {
        return true;
    }
    let parts = split_case(run);
    let letter_parts: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| p.bytes().all(|b| b.is_ascii_alphabetic()))
        .collect();
    let inner_digit_parts = parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        .count();
    if inner_digit_parts > 1 {
        return false;
    }
    if letter_parts.len() > 1 {
        let letters: usize = letter_parts.iter().map(|p| p.len()).sum();
        if letters < 3 * letter_parts.len() {
            return false;
        }
    }
    letter_parts.iter().all(|part| !looks_random(part))
}

/// A long letter run without the vowels of a word: six consonants in a row, or under 15% vowels.
fn looks_random(part: &str) -> bool {
    let is_vowel = |c: u8| {
        matches!(
            c.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    };
    let mut consonants = 0;
    let mut longest = 0;
    let mut vowels = 0;
    for &b in part.as_bytes() {
        if is_vowel(b) {
            vowels += 1;
            consonants = 0;
        } else {
            consonants += 1;
            longest = longest.max(consonants);
        }
    }
    longest >= 6 || (part.len() >= 8 && vowels * 100 < part.len() * 15)
}

/// A run split at lower-to-upper changes, before the last capital of a capital run followed by a
/// lowercase letter (`HTTPServer`: `HTTP`, `Server`), and between letters and digits.
fn split_case(run: &str) -> Vec<&str> {
    let bytes = run.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..bytes.len() {
        let (prev, cur) = (bytes[i - 1], bytes[i]);
        let next = bytes.get(i + 1).copied();
        let split = (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
            || (prev.is_ascii_digit() != cur.is_ascii_digit())
            || (prev.is_ascii_uppercase()
                && cur.is_ascii_uppercase()
                && next.is_some_and(|n| n.is_ascii_lowercase()));
        if split {
            parts.push(&run[start..i]);
            start = i;
        }
    }
    parts.push(&run[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_words_are_not_random() {
        for value in [
            "confirm_password",
            "TokenStream",
            "createTokenAuth",
            "self.secret",
            "token.output",
            "Chacha20Poly1305",
            "hunter2",
            "admin123",
            "db.internal.net",
            "/etc/ssl/private/key.pem",
            "https://git.internal.net/org/repo",
            "https://example.com",
            "HTTPServer",
            "XMLHttpRequest",
            "IdToken",
            "__u32",
            "strftime",
            "abcdefghijklmnopqrstuvwxyz0123456789",
            "users.id",
            "postgres",
        ] {
            assert_eq!(shape(value, false), Shape::Words, "{value}");
        }
    }

    #[test]
    fn generated_strings_are_random() {
        for value in [
            "xnP4WKwi1Vek_CgP",
            "g%lsEbvZeU1E0fF!",
            "TLQUX4BuIvuwcCwIQ2q3meH17h06myuP",
            "nmSLHjJRuyyQldUa",
            "kU#IPQEbVGZv*DGm",
            "d44797f37d520c00db6143abe0605721d975a38f1a0fa369cf5348bf90e83a9c",
            "3f2504e0-4f89-41d3-9a0c-0305e82c3301",
            "kqzjxwvbhtmfplrn",
            "s3cr3t",
            "Z92NHFQ70G",
            "P@ss1!",
            "Tr0ub4dor&3",
        ] {
            assert_eq!(shape(value, false), Shape::Random, "{value}");
        }
    }

    #[test]
    fn code_references_numbers_and_placeholders_are_not_literals() {
        for value in [
            "",
            "16",
            "0x10",
            "16u32",
            "1.0.1",
            "^6.0.0",
            "~1.2",
            ">=1.0",
            "1.x",
            "v2.3.4-beta.1",
            "2024-01-31",
            "3600s",
            "${DB_PASSWORD}",
            "$TOKEN",
            "{{ .Values.x }}",
            "<your-api-key>",
            "os.environ",
            "changeme",
            "your_token_here",
            "sk-...",
            "xxxx",
            "****",
            "a::b",
            "=confirm",
            ":new",
            "{token}",
            "%s",
            "[^&]+",
            "Please enter your password",
            "true",
            "ENC[AES256_GCM,data:abc]",
        ] {
            assert_eq!(shape(value, false), Shape::NotLiteral, "{value:?}");
        }
    }

    #[test]
    fn strength_sets_how_random_a_value_must_be() {
        assert!(is_secret("hunter22", Strength::Password, true));
        assert!(!is_secret("hunter22", Strength::Password, false));
        assert!(!is_secret("Password", Strength::Password, true));
        assert!(!is_secret("refresh_token", Strength::Generated, true));
        assert!(is_secret("xnP4WKwi1Vek_CgP", Strength::Generated, false));
        assert!(!is_secret("a1B2c3D4", Strength::Key, true));
        assert!(is_secret(
            "8f3a9c2e1b7d4f6a0c5e9b2d7a4f1c8e",
            Strength::Key,
            false
        ));
        assert!(!is_secret(
            "000102030405060708090a0b0c0d0e0f",
            Strength::Key,
            false
        ));
        assert!(is_secret(
            "correct horse battery staple",
            Strength::Passphrase,
            true
        ));
        assert!(!is_secret(
            "correct horse battery staple",
            Strength::Password,
            true
        ));
        assert!(!is_secret(
            "enter your passphrase",
            Strength::Passphrase,
            true
        ));
    }
}
