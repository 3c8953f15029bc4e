//! Secrets recognised by the name they are assigned to: `KEY=value`, `export KEY=value`,
//! `KEY: value` (YAML, with `|` and `>` blocks), `"key": "value"` (JSON), `KEY := value`,
//! `key => value`, `<password>value</password>`, `key="Password" value="…"` and a plist's
//! `<key>Password</key><string>…</string>`, where the key has a word naming a secret (PASSWORD,
//! PASSWD, PASSPHRASE, PASSCODE, PASS, PWD, SECRET, TOKEN, API KEY, ACCESS KEY, PRIVATE KEY,
//! CREDENTIAL, AUTH, or a last word KEY) with any prefix or suffix: `DB_PASSWORD`,
//! `aws_secret_access_key`, `clientSecret`, `X-Api-Key`, `ENCRYPTION_KEY`. The key and the
//! operator are kept, the value becomes `[REDACTED:kind]`.
//!
//! The value must look like a literal secret (literal.rs): random enough for what the name says
//! (a token or key is generated; a password may be a word, masked where it can only be a literal:
//! quoted, an XML element or a `.env` line). So code stays as it is: `use crate::token::{Id}`,
//! `if password == confirm_password`, `def f(password: str)`, `const TOKEN_FLAG = 16;`,
//! `let secret = secret.trim();`, `"@octokit/auth-token": "^6.0.0"`.
//!
//! What else stays, because it is not a secret: a key whose last word says it is about the secret
//! rather than the secret (`PASSWORD_MIN_LENGTH`, `token_count`, `SECRET_NAME`, `TOKEN_URL`,
//! `max_tokens`: the list is in secret_names.rs; `public_key`, `primary_key` too),
//! and a value that is a boolean, `null`, empty, a number or version, a placeholder or a reference
//! to where the secret is kept (`${DB_PASSWORD}`, `$TOKEN`, `{{ .Values.x }}`, `<password>`,
//! `os.environ[...]`).

use crate::literal;
use crate::secret_names::kind_of;
use regex::{Captures, Regex};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The word a key must contain to be looked at (the words are then checked by [`kind_of`]).
macro_rules! secret_word {
    () => {
        "(?:pass|secret|token|key|credential|pwd|auth)"
    };
}

/// Four forms, tried in this order at each position: an XML attribute pair (`key="Password"
/// value="…"`), a plist pair, an XML element (`<password>…</password>`), and a key (possibly
/// quoted, possibly an index: `environ["API_TOKEN"] =`) with an operator, whose value is read by
/// [`read_value`]. A key must not continue a longer word on its left.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?i)(?P<alead>^|[^A-Za-z0-9_.\-])(?:key|name)[ \t]*=[ \t]*"(?P<akey>[^"\n]{1,100})"[ \t]+value[ \t]*=[ \t]*"(?P<avalue>[^"\n]*)""#,
        r#"|<key>(?P<pkey>[^<\n]{1,100})</key>\s*<string>(?P<pvalue>[^<\n]*)</string>"#,
        r#"|<(?P<tag>[A-Za-z0-9_.:\-]*"#,
        secret_word!(),
        r#"[A-Za-z0-9_.:\-]*)(?:[ \t][^<>\n]*)?>(?P<text>[^<\n]*)</(?P<close>[A-Za-z0-9_.:\-]+)>"#,
        r#"|(?P<lead>^|[^A-Za-z0-9_.\-])(?P<key>["'`]?[A-Za-z0-9_.\-]*"#,
        secret_word!(),
        r#"[A-Za-z0-9_.\-]*["'`]?\]?)(?P<op>[ \t]*(?::=|=>|=|:)[ \t]*)"#,
    ))
    .expect("built-in pattern compiles")
});

/// What may stand before a key on a `.env`, shell or properties line: a `grep` result's
/// `path:line: `, indentation, and `export`, `set`, `ENV`, `ARG`, `readonly`, `declare -x`, or a
/// YAML list's `- `.
static LINE_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\S+:[0-9]+: )?[ \t]*(?:(?:export|set|setx|ENV|ARG|readonly|local|declare[ \t]+-x)[ \t]+|-[ \t]+)?$")
        .expect("built-in pattern compiles")
});

/// A value found after an operator: the span to mask, and whether it can only be a literal.
struct Value {
    start: usize,
    end: usize,
    /// Where to look again after it.
    after: usize,
    literal: bool,
}

/// What follows an operator: a value, a YAML block, or nothing to look at (code, no value).
enum Found {
    Value(Value),
    /// A YAML block scalar (`password: |`): the lines after the key's line, indented deeper.
    Block {
        from: usize,
    },
    Nothing,
}

/// Characters that end an unquoted value.
fn ends_value(c: char) -> bool {
    c.is_whitespace() || ",;&\"'<>()[]{}`".contains(c)
}

/// How far a quoted value is read, and a line's start looked for: a longer value or line prefix
/// is not one of the forms here, and the bound keeps a long line (minified code) linear.
const WINDOW: usize = 4096;

/// How far an unquoted value is read past a character that ends a value in code (`(`, `,`, `&`)
/// to see if it is the whole value of a `.env` line.
const LINE_VALUE: usize = 256;

/// The length of the longest prefix of `text`, at most `max` bytes, whose characters pass `keep`.
fn run_len(text: &str, max: usize, keep: impl Fn(char) -> bool) -> usize {
    text.char_indices()
        .find(|&(i, c)| i >= max || !keep(c))
        .map_or(text.len(), |(i, _)| i)
}

/// Where the line holding `at` starts, if it is at most [`WINDOW`] bytes before.
fn line_start(text: &str, at: usize) -> Option<usize> {
    let mut from = at.saturating_sub(WINDOW);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    match text[from..at].rfind('\n') {
        Some(i) => Some(from + i + 1),
        None => (from == 0).then_some(0),
    }
}

/// Whether nothing but blanks and a `#` comment follows on the line.
fn ends_line(rest: &str) -> bool {
    let after = rest.trim_start_matches([' ', '\t']);
    after.is_empty() || after.starts_with(['\n', '\r', '#'])
}

/// Whether code goes on after a quoted string (`"username" in options`, `"a" + b`, `"x" if c`):
/// the string is then an operand, not the value assigned. What may follow a value: a separator,
/// a closing bracket, a comment, the end of the line, a `.to_string()`-like call.
fn continues_expression(rest: &str) -> bool {
    let after = rest.trim_start_matches([' ', '\t']);
    let Some(next) = after.chars().next() else {
        return false;
    };
    !(matches!(
        next,
        ',' | ';' | ')' | ']' | '}' | '\n' | '\r' | '#' | '>' | '<' | '/' | ':'
    ) || after.starts_with(".to_")
        || after.starts_with(".into(")
        || after.starts_with(".as_")
        || after.starts_with(".encode(")
        || after.starts_with(".freeze("))
}

/// Whether a query parameter (`name=`, `amp;`) starts `text`.
fn starts_parameter(text: &str) -> bool {
    let name = run_len(text, 64, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
    });
    name > 0 && text[name..].starts_with(['=', ';', '[']) || text.starts_with("amp;")
}

/// Reads the value after the operator of the key at `key_start`..`at`. Reads at most
/// [`WINDOW`] bytes, so a match costs at most that much.
fn read_value(text: &str, key_start: usize, key_quoted: bool, op: &str, at: usize) -> Found {
    let rest = &text[at..];
    let op_trimmed = op.trim();
    // `a::b`, `a == b`, `a =~ b`: code, not an assignment.
    if (op_trimmed == ":" && rest.starts_with(':'))
        || (op_trimmed == "=" && rest.starts_with(['=', '~']))
    {
        return Found::Nothing;
    }
    // Quoted, with Python's `r"…"`, `b'…'` and `f"…"` prefixes; on one line.
    let prefix = run_len(rest, 3, |c| "rRbBfFuU".contains(c));
    if prefix <= 2
        && let Some(quote) = rest[prefix..]
            .chars()
            .next()
            .filter(|c| "\"'`".contains(*c))
    {
        let open = at + prefix + 1;
        let mut escaped = false;
        for (i, c) in text[open..].char_indices() {
            if i > WINDOW || c == '\n' {
                break;
            }
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == quote {
                let after = open + i + 1;
                return Found::Value(Value {
                    start: open,
                    end: open + i,
                    after,
                    literal: !continues_expression(&text[after..]),
                });
            }
        }
        return Found::Nothing;
    }
    // A YAML block scalar: `|` or `>`, a chomping indicator, nothing else but a comment.
    if op_trimmed == ":" && rest.starts_with(['|', '>']) {
        let header = run_len(rest, 4, |c| matches!(c, '|' | '>' | '+' | '-' | '1'..='9'));
        if header <= 3 && ends_line(&rest[header..]) {
            let line_end = rest.find('\n').map_or(text.len(), |i| at + i);
            return Found::Block {
                from: (line_end + 1).min(text.len()),
            };
        }
    }
    let mut token_len = run_len(rest, WINDOW, |c| !ends_value(c));
    // `&` separates a query's parameters (`a=1&b=2`); otherwise it is part of the value
    // (`Tr0ub4dor&3`).
    while token_len < WINDOW
        && rest[token_len..].starts_with('&')
        && !starts_parameter(&rest[token_len + 1..])
    {
        let more = run_len(&rest[token_len + 1..], WINDOW, |c| !ends_value(c));
        if more == 0 {
            break;
        }
        token_len += 1 + more;
    }
    // Inside a string literal, an escaped line break ends the value (`"KEY=v\r\nNext: …"`).
    if let Some(escape) = ["\\n", "\\r", "\\t"]
        .iter()
        .filter_map(|e| rest[..token_len].find(e))
        .min()
    {
        token_len = escape;
    }
    // A `.env`, shell or properties line: `KEY=value` at the start of a line, the value up to the
    // next blank (`VAR=value command` in shell, `key=value text` in a properties file). The
    // value can only be a literal. Not a form body (`client_secret=…&grant_type=…`: parameters),
    // and not when the value ends like code (`password=password,`, `token=get()`).
    if op == "=" && !key_quoted {
        let blank_after = |n: usize| rest[n..].chars().next().is_none_or(char::is_whitespace);
        let whole = if blank_after(token_len) {
            token_len
        } else if rest[token_len..].starts_with('&') {
            0
        } else {
            Some(run_len(rest, LINE_VALUE, |c| !c.is_whitespace()))
                .filter(|&n| n < LINE_VALUE)
                .unwrap_or(0)
        };
        let strict = whole > 0
            && !rest[..whole].ends_with([',', ';', '(', ')', '[', '{'])
            && line_start(text, key_start)
                .is_some_and(|start| LINE_PREFIX.is_match(&text[start..key_start]));
        if strict {
            return Found::Value(Value {
                start: at,
                end: at + whole,
                after: at + whole,
                literal: true,
            });
        }
    }
    if token_len == 0 {
        return Found::Nothing;
    }
    // A call, an index, a generic or a block after the value, or `= …` after a type
    // (`key: Pkcs8Der = …`): code.
    let after = rest[token_len..].trim_start_matches([' ', '\t']);
    if rest[token_len..].starts_with(['(', '[', '<', '{'])
        || (op_trimmed == ":" && after.starts_with('=') && !after.starts_with("=="))
    {
        return Found::Nothing;
    }
    Found::Value(Value {
        start: at,
        end: at + token_len,
        after: at + token_len,
        literal: false,
    })
}

/// The lines of a YAML block scalar starting at `from`, indented deeper than the key's line (at
/// `key_start`): the span of each line's text.
fn block_lines(text: &str, key_start: usize, from: usize) -> Vec<(usize, usize)> {
    let Some(line_start) = line_start(text, key_start) else {
        return Vec::new();
    };
    let indent = |line: &str| line.len() - line.trim_start_matches([' ', '\t']).len();
    let key_indent = indent(&text[line_start..key_start]);
    let mut lines = Vec::new();
    let mut at = from;
    while at < text.len() {
        let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let line = text[at..end].trim_end_matches('\r');
        if !line.trim().is_empty() {
            let own = indent(line);
            if own <= key_indent {
                break;
            }
            lines.push((at + own, at + line.len()));
        }
        at = end + 1;
    }
    lines
}

/// The kind of secret `value` is, when it is the whole value of a JSON member named `key`
/// (`{"password": "hunter22"}` in structured output, where name and value are two strings).
pub fn named_secret(key: &str, value: &str) -> Option<&'static str> {
    let (kind, strength) = kind_of(key)?;
    literal::is_secret(value.trim(), strength, true).then_some(kind)
}

/// `text` with every secret assigned to a secret's name masked; `counts` gains one per value.
pub fn mask(text: &str, counts: &mut BTreeMap<&'static str, usize>) -> String {
    let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
    let mut search_from = 0;
    while search_from <= text.len() {
        let Some(found) = ASSIGNMENT.captures_at(text, search_from) else {
            break;
        };
        let whole = found.get(0).expect("the match");
        let (next, masked) = assess(text, &found);
        if let Some((kind, lines)) = masked {
            *counts.entry(kind).or_default() += 1;
            spans.extend(lines.into_iter().map(|(start, end)| (start, end, kind)));
        }
        // Always move on, at least past the match's first character.
        search_from = next.max(whole.start() + 1);
        while !text.is_char_boundary(search_from.min(text.len())) {
            search_from += 1;
        }
    }
    if spans.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end, kind) in spans {
        out.push_str(&text[copied..start]);
        out.push_str("[REDACTED:");
        out.push_str(kind);
        out.push(']');
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Spans to mask, one or more (a YAML block's lines).
type Masked = Option<(&'static str, Vec<(usize, usize)>)>;

/// For one match: where to search next, and what to mask.
fn assess(text: &str, found: &Captures) -> (usize, Masked) {
    let whole = found.get(0).expect("the match");
    let pair = |key: &str, value: regex::Match| -> Masked {
        let (kind, strength) = kind_of(key)?;
        let trimmed = value.as_str().trim();
        let start = value.start() + value.as_str().find(trimmed).unwrap_or(0);
        literal::is_secret(trimmed, strength, true)
            .then(|| (kind, vec![(start, start + trimmed.len())]))
    };
    if let (Some(key), Some(value)) = (found.name("akey"), found.name("avalue")) {
        return (whole.end(), pair(key.as_str(), value));
    }
    if let (Some(key), Some(value)) = (found.name("pkey"), found.name("pvalue")) {
        return (whole.end(), pair(key.as_str(), value));
    }
    if let (Some(tag), Some(value), Some(close)) =
        (found.name("tag"), found.name("text"), found.name("close"))
    {
        if tag.as_str() != close.as_str() {
            return (value.start(), None);
        }
        return (whole.end(), pair(tag.as_str(), value));
    }
    let key = found.name("key").expect("the key is matched");
    let op = found.name("op").expect("the operator is matched");
    let Some((kind, strength)) = kind_of(key.as_str()) else {
        return (key.end(), None);
    };
    let key_quoted = key.as_str().starts_with(['"', '\'', '`']);
    match read_value(text, key.start(), key_quoted, op.as_str(), op.end()) {
        Found::Value(value) => {
            let bare = &text[value.start..value.end];
            if literal::is_secret(bare, strength, value.literal) {
                (value.after, Some((kind, vec![(value.start, value.end)])))
            } else if bare.len() > LINE_VALUE {
                // Not read again from inside: a match costs at most a window once.
                (value.after, None)
            } else {
                (key.end(), None)
            }
        }
        Found::Block { from } => {
            let lines = block_lines(text, key.start(), from);
            let joined: String = lines.iter().map(|&(s, e)| text[s..e].trim()).collect();
            if !lines.is_empty() && literal::is_secret(&joined, strength, true) {
                let after = lines.last().map_or(from, |&(_, end)| end);
                (after, Some((kind, lines)))
            } else {
                (key.end(), None)
            }
        }
        Found::Nothing => (key.end(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret_names::words;

    #[test]
    fn keys_split_into_words_in_every_case_style() {
        assert_eq!(words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(words("clientSecret"), ["client", "secret"]);
        assert_eq!(words("\"X-Api-Key\""), ["x", "api", "key"]);
        assert_eq!(words("APIKey"), ["apikey"]);
        assert_eq!(
            kind_of("aws_secret_access_key").map(|k| k.0),
            Some("secret")
        );
        assert_eq!(kind_of("PGPASSWORD").map(|k| k.0), Some("password"));
        assert_eq!(kind_of("DB_PWD").map(|k| k.0), Some("password"));
        assert_eq!(kind_of("ENCRYPTION_KEY").map(|k| k.0), Some("key"));
        assert_eq!(kind_of("PASSWORD_MIN_LENGTH"), None);
        assert_eq!(kind_of("max_tokens"), None);
        assert_eq!(kind_of("tokenizer"), None);
        assert_eq!(kind_of("monkey"), None);
        assert_eq!(kind_of("PWD"), None);
        assert_eq!(kind_of("public_key"), None);
        assert_eq!(kind_of("TOKEN_FLAG"), None);
        assert_eq!(kind_of("passthrough"), None);
    }

    fn masked(text: &str) -> String {
        mask(text, &mut BTreeMap::new())
    }

    #[test]
    fn code_is_left_as_it_is() {
        for text in [
            "use crate::token::{Id, Span};",
            "TokenStream::new();",
            "if password == confirm_password {",
            "def check_password(password: str) -> bool:",
            "const TOKEN_FLAG = 16;",
            "let secret = secret.trim();",
            "\"@octokit/auth-token\": \"^6.0.0\",",
            "docker_credential = \"1.0.1\"",
            "hash_password::<sha2::Sha256>(\"my_password\", \"abcd\", &mut buf1);",
            "    password=password,",
            "token: Token<'a>,",
            "refresh_token_key = 'refresh_token'",
        ] {
            assert_eq!(masked(text), text);
        }
    }

    #[test]
    fn config_values_are_masked() {
        assert_eq!(
            masked("smtp_pass = Tr0ub4dor&3"),
            "smtp_pass = [REDACTED:password]"
        );
        assert_eq!(
            masked("client_secret=TQtFVfY4UecTUUPetA42erqCRUoTnI&grant_type=client_credentials"),
            "client_secret=[REDACTED:secret]&grant_type=client_credentials"
        );
        assert_eq!(
            masked("DB_PASSWORD=hunter22"),
            "DB_PASSWORD=[REDACTED:password]"
        );
        assert_eq!(
            masked("src/.env:3: DB_PASSWORD=hunter22"),
            "src/.env:3: DB_PASSWORD=[REDACTED:password]"
        );
        assert_eq!(masked("password: hunter22"), "password: hunter22");
        assert_eq!(
            masked("password=hunter2 and more"),
            "password=[REDACTED:password] and more"
        );
        assert_eq!(
            masked("PGPASSWORD=hunter22 psql -U app"),
            "PGPASSWORD=[REDACTED:password] psql -U app"
        );
        assert_eq!(
            masked("password: \"hunter22\""),
            "password: \"[REDACTED:password]\""
        );
        assert_eq!(
            masked("db:\n  password: |\n    Xk9#mQ2vLp\n    line2\nnext: 1"),
            "db:\n  password: |\n    [REDACTED:password]\n    [REDACTED:password]\nnext: 1"
        );
        assert_eq!(
            masked("<add key=\"Password\" value=\"JDCq4hipowmLqLZK\"/>"),
            "<add key=\"Password\" value=\"[REDACTED:password]\"/>"
        );
        assert_eq!(
            masked("<db><password>hunter22</password></db>"),
            "<db><password>[REDACTED:password]</password></db>"
        );
    }
}
