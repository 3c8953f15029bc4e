//! The one scrubber: every secret cordon is configured with is registered here as it is read (the
//! model API key, registry passwords and tokens, the values of HTTP grant headers from cordon.toml
//! that carry credentials, the bearer token of `cordon serve --http`), and every path by which
//! cordon prints or writes text passes it through [`scrub`] first: stderr and stdout, events,
//! transcripts, the audit log, error messages, tool results, MCP notifications and questions, and
//! `/metrics`. Whatever a server echoes back (a model API quoting the `Authorization` header in an
//! error body, a registry or a granted origin reflecting a request), the secret comes out as
//! [`MASK`].
//!
//! A secret is matched whole, as written, JSON-escaped (with or without `\/`), percent-encoded
//! (either case of hex digits) and base64-encoded (at each of the three alignments it can have
//! inside a longer base64 text), in any ASCII case; a Basic credential also as its base64
//! `user:password`. Only whole forms are masked, never a part: masking parts would let whoever
//! chooses a text (a client naming a tool, a model writing arguments) test a guess of a secret's
//! next character by whether it comes back masked. What cordon cuts itself (a result past its
//! budget, an error preview, an approval question) it masks first and cuts after, so no cut
//! leaves part of a secret. Values shorter than [`MIN_SECRET_BYTES`] are not registered (they
//! would mask ordinary words, and a secret that short is not protected by masking anyway), nor
//! longer than [`MAX_SECRET_BYTES`] (no credential is; a server handing out such a "token" would
//! only make every output slow).
//!
//! Text that arrives in pieces (a model's streamed reply) goes through a [`StreamScrubber`],
//! which holds back the end of what it has seen while it could still be the start of a secret
//! (at most the longest form, less a byte).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::borrow::Cow;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a secret is replaced with.
pub const MASK: &str = "[REDACTED:secret]";

/// The shortest value registered as a secret.
pub const MIN_SECRET_BYTES: usize = 6;

/// The longest value registered as a secret.
pub const MAX_SECRET_BYTES: usize = 16 << 10;

/// The shortest base64 text of a secret matched on its own.
const MIN_BASE64_CORE_BYTES: usize = 12;

/// Every form of every registered secret, and the automaton that finds them (built when first
/// needed after a registration, so registering many secrets costs one build).
struct Known {
    forms: Vec<String>,
    finder: Option<AhoCorasick>,
    /// The forms changed since the finder was built.
    stale: bool,
    longest: usize,
}

static KNOWN: RwLock<Known> = RwLock::new(Known {
    forms: Vec::new(),
    finder: None,
    stale: false,
    longest: 0,
});
static ANY: AtomicBool = AtomicBool::new(false);

/// Registers `secret`, so no output of this process shows it from now on.
pub fn register(secret: &str) {
    let secret = secret.trim();
    if secret.len() < MIN_SECRET_BYTES || secret.len() > MAX_SECRET_BYTES {
        return;
    }
    add(forms_of(secret));
}

/// Registers a header's value as a secret, and the credential in it after an auth scheme
/// (`Bearer TOKEN`, `Token TOKEN`): the token alone is what a tool or a client echoes back.
pub fn register_header_value(value: &str) {
    register(value);
    if let Some((scheme, credential)) = value.trim().split_once(' ')
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        register(credential);
    }
}

/// Registers the parts of a Basic credential, and its base64 form as it travels.
pub fn register_basic(user: &str, password: &str) {
    use base64::Engine as _;
    register(password);
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    register(&encoded);
}

/// The ways `secret` can be written in output that echoes it.
fn forms_of(secret: &str) -> Vec<String> {
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or_default()
        .to_string();
    // Go's encoding/json and others write `&`, `<` and `>` as \u escapes (matching ignores case,
    // so `\u003C` is the same form).
    let go_json = json
        .replace('&', "\\u0026")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e");
    let mut forms = vec![
        secret.to_string(),
        json.replace('/', "\\/"),
        go_json,
        json,
        percent_encoded(secret, false),
        percent_encoded(secret, true),
        // Every byte %XX, as some clients encode whole values.
        secret.bytes().map(|byte| format!("%{byte:02X}")).collect(),
        // Every character a \u escape, as ASCII-only JSON writers may.
        secret
            .encode_utf16()
            .map(|unit| format!("\\u{unit:04x}"))
            .collect(),
        // HTML and XML text.
        secret
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;"),
        // A JSON Pointer segment, as schema errors name an argument's path.
        secret.replace('~', "~0").replace('/', "~1"),
    ];
    forms.extend(base64_cores(secret.as_bytes()));
    forms
}

/// The base64 text `secret` always becomes inside a longer base64 text, at each of the three
/// byte offsets it can start at: the characters that depend on its bytes alone.
fn base64_cores(secret: &[u8]) -> Vec<String> {
    use base64::Engine as _;
    let engine = &base64::engine::general_purpose::STANDARD;
    (0..3)
        .filter_map(|offset| {
            let mut padded = vec![0u8; offset];
            padded.extend_from_slice(secret);
            let encoded = engine.encode(&padded);
            // Characters fed partly by the zero bytes before, or by what follows the secret.
            let skip = match offset {
                0 => 0,
                1 => 2,
                _ => 3,
            };
            let whole_groups = padded.len() / 3 * 4;
            let core = encoded.get(skip..whole_groups)?;
            (core.len() >= MIN_BASE64_CORE_BYTES).then(|| core.to_string())
        })
        .collect()
}

fn add(forms: impl IntoIterator<Item = String>) {
    let mut known = KNOWN
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for form in forms {
        if form.len() >= MIN_SECRET_BYTES && !known.forms.contains(&form) {
            known.longest = known.longest.max(form.len());
            known.forms.push(form);
            known.stale = true;
        }
    }
    if known.stale {
        ANY.store(true, Ordering::Release);
    }
}

/// The forms and their finder, built now if a registration came since the last build.
fn known() -> std::sync::RwLockReadGuard<'static, Known> {
    {
        let known = KNOWN
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !known.stale {
            return known;
        }
    }
    {
        let mut known = KNOWN
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if known.stale {
            known.finder = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .build(&known.forms)
                .ok();
            known.stale = false;
        }
    }
    KNOWN
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn percent_encoded(secret: &str, lower: bool) -> String {
    let mut out = String::with_capacity(secret.len());
    for byte in secret.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else if lower {
            out.push_str(&format!("%{byte:02x}"));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `text` with every registered secret (and every run of its bytes long enough to count)
/// masked; borrowed when there was none in it.
pub fn scrub(text: &str) -> Cow<'_, str> {
    let spans = secret_spans(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(masked(text, &spans))
}

/// Where `text` holds secrets: sorted, merged byte ranges on character boundaries.
fn secret_spans(text: &str) -> Vec<(usize, usize)> {
    if !ANY.load(Ordering::Acquire) {
        return Vec::new();
    }
    let known = known();
    let Some(finder) = &known.finder else {
        return Vec::new();
    };
    let mut found: Vec<(usize, usize)> = finder
        .find_overlapping_iter(text)
        .map(|found| {
            let (mut start, mut end) = (found.start(), found.end());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            while !text.is_char_boundary(end) {
                end += 1;
            }
            (start, end)
        })
        .collect();
    found.sort_unstable();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(found.len());
    for (start, end) in found {
        match spans.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => spans.push((start, end)),
        }
    }
    spans
}

/// `text` with each of `spans` (sorted, disjoint) replaced by [`MASK`].
fn masked(text: &str, spans: &[(usize, usize)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for &(start, end) in spans {
        out.push_str(&text[at..start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// `bytes` with every registered secret masked; bytes that are not UTF-8 are scrubbed as text
/// where they are, and kept as they are elsewhere.
pub fn scrub_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !ANY.load(Ordering::Acquire) {
        return Cow::Borrowed(bytes);
    }
    let text = String::from_utf8_lossy(bytes);
    match scrub(&text) {
        Cow::Borrowed(_) => Cow::Borrowed(bytes),
        Cow::Owned(scrubbed) => Cow::Owned(scrubbed.into_bytes()),
    }
}

/// Masks every registered secret in every string of `value` (object keys included).
pub fn scrub_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    match value {
        Value::String(text) => {
            if let Cow::Owned(scrubbed) = scrub(text) {
                *text = scrubbed;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_json),
        Value::Object(object) => {
            let entries = std::mem::take(object);
            for (key, mut item) in entries {
                scrub_json(&mut item);
                object.insert(scrub(&key).into_owned(), item);
            }
        }
        _ => {}
    }
}

/// Whether `bytes` hold a registered secret in any form (an image a tool returns, say).
pub fn found_in_bytes(bytes: &[u8]) -> bool {
    if !ANY.load(Ordering::Acquire) {
        return false;
    }
    let known = known();
    known
        .finder
        .as_ref()
        .is_some_and(|finder| finder.is_match(bytes))
}

/// Masks every registered secret in a result: its text, structured output and details (a tool
/// whose granted origin reflects the header cordon added hands the secret back to the guest). An
/// image whose bytes hold a secret is replaced by a note saying so.
pub fn scrub_result(result: &mut crate::report::ToolResult) {
    use crate::report::Content;
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    for block in &mut result.content {
        match block {
            Content::Text { text } => {
                if let Cow::Owned(scrubbed) = scrub(text) {
                    *text = scrubbed;
                }
            }
            Content::Image { data, .. } => {
                if found_in_bytes(data) {
                    *block = Content::Text {
                        text: format!(
                            "[an image was removed: its bytes hold a configured secret] {MASK}"
                        ),
                    };
                }
            }
        }
    }
    if let Some(structured) = &mut result.structured {
        scrub_json(structured);
    }
    scrub_json(&mut result.details);
}

/// Scrubs text that arrives in pieces: what [`StreamScrubber::push`] returns is safe to show at
/// once; the end of the text that could still be the start of a secret is held until the next
/// piece shows what it is, or [`StreamScrubber::finish`].
#[derive(Debug, Default)]
pub struct StreamScrubber {
    held: String,
}

impl StreamScrubber {
    /// A scrubber holding nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one piece; returns the scrubbed text that can be shown now (maybe empty).
    pub fn push(&mut self, piece: &str) -> String {
        if !ANY.load(Ordering::Acquire) && self.held.is_empty() {
            return piece.to_string();
        }
        self.held.push_str(piece);
        let spans = secret_spans(&self.held);
        let mut cut = self.held.len() - held_back(&self.held);
        while !self.held.is_char_boundary(cut) {
            cut -= 1;
        }
        // A secret found across the cut is held whole.
        if let Some(&(start, _)) = spans.iter().find(|(start, end)| *start < cut && *end > cut) {
            cut = start;
        }
        let before: Vec<(usize, usize)> =
            spans.into_iter().filter(|(_, end)| *end <= cut).collect();
        let ready = masked(&self.held[..cut], &before);
        self.held.drain(..cut);
        ready
    }

    /// Whatever is still held, scrubbed: the stream ended.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        scrub(&held).into_owned()
    }
}

/// How many bytes at the end of `text` must wait: the longest end of it that begins some form of
/// a registered secret.
fn held_back(text: &str) -> usize {
    let known = known();
    let longest = known.longest.saturating_sub(1).min(text.len());
    let bytes = text.as_bytes();
    (1..=longest)
        .rev()
        .find(|&len| {
            let tail = &bytes[bytes.len() - len..];
            known
                .forms
                .iter()
                .any(|form| form.len() > len && form.as_bytes()[..len].eq_ignore_ascii_case(tail))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_masked_in_every_form() {
        register("sk-test-scrubber-0123456789");
        register("abc"); // too short to register
        let echoed = "HTTP 401: Invalid key provided: Bearer sk-test-scrubber-0123456789 (abc)";
        assert_eq!(
            scrub(echoed),
            "HTTP 401: Invalid key provided: Bearer [REDACTED:secret] (abc)"
        );
        register("pa\"ss/word 1");
        assert_eq!(
            scrub(r#"{"v":"pa\"ss/word 1"}"#),
            r#"{"v":"[REDACTED:secret]"}"#
        );
        assert_eq!(
            scrub(r#"{"v":"pa\"ss\/word 1"}"#),
            r#"{"v":"[REDACTED:secret]"}"#
        );
        assert_eq!(scrub("?p=pa%22ss%2Fword%201"), "?p=[REDACTED:secret]");
        assert_eq!(scrub("?p=pa%22ss%2fword%201"), "?p=[REDACTED:secret]");
        register_basic("alice", "alice-pw-scrub");
        assert_eq!(
            scrub("Basic YWxpY2U6YWxpY2UtcHctc2NydWI="),
            "Basic [REDACTED:secret]"
        );
        assert!(matches!(scrub("nothing here"), Cow::Borrowed(_)));
        let mut value = serde_json::json!({"k": ["x sk-test-scrubber-0123456789"]});
        scrub_json(&mut value);
        assert_eq!(value, serde_json::json!({"k": ["x [REDACTED:secret]"]}));
    }

    #[test]
    fn escaped_forms_servers_and_validators_write_are_masked() {
        let secret = "p&ss<w>rd+/=~Sec9-long";
        register(secret);
        for (form, written) in [
            (
                "Go's encoding/json",
                r"Bearer p\u0026ss\u003cw\u003erd+/=~Sec9-long",
            ),
            (
                "the same in capitals",
                r"Bearer p\u0026ss\u003Cw\u003Erd+/=~Sec9-long",
            ),
            (
                "every character escaped",
                r"Bearer \u0070\u0026\u0073\u0073\u003c\u0077\u003e\u0072\u0064\u002b\u002f\u003d\u007e\u0053\u0065\u0063\u0039\u002d\u006c\u006f\u006e\u0067",
            ),
            (
                "every byte percent-encoded",
                "Bearer %70%26%73%73%3C%77%3E%72%64%2B%2F%3D%7E%53%65%63%39%2D%6C%6F%6E%67",
            ),
            ("HTML text", "Bearer p&amp;ss&lt;w&gt;rd+/=~Sec9-long"),
            ("a JSON Pointer", "at /p&ss<w>rd+~1=~0Sec9-long: expected"),
        ] {
            let scrubbed = scrub(written);
            assert!(
                scrubbed.contains("[REDACTED:secret]") && !scrubbed.contains("Sec9"),
                "{form}: {scrubbed}"
            );
        }
    }

    #[test]
    fn a_secret_in_another_case_or_base64_is_masked_but_no_part_of_it_is() {
        let secret = "ghp_R2mT5vLk9WpYc3NfHs7GdJ4uAeQZq8XbTy01";
        register(secret);
        assert_eq!(
            scrub(&secret.to_ascii_uppercase()),
            "[REDACTED:secret]",
            "any ASCII case"
        );
        use base64::Engine as _;
        for prefix in ["", "x", "xy"] {
            let encoded = base64::engine::general_purpose::STANDARD
                .encode(format!("{prefix}token={secret}&more"));
            let scrubbed = scrub(&encoded);
            assert!(
                scrubbed.contains(MASK),
                "{prefix:?}: {encoded} -> {scrubbed}"
            );
        }
        // A part is never masked: whoever chooses a text could otherwise test guesses of the
        // next character by whether it comes back masked.
        for guess in [
            &secret[..5],
            &secret[..20],
            &secret[..secret.len() - 1],
            &secret[10..],
        ] {
            let text = format!("Unknown tool \"{guess}\"");
            assert_eq!(scrub(&text), text);
        }
    }

    #[test]
    fn a_bearer_headers_token_is_masked_alone_and_its_scheme_word_is_not() {
        register_header_value("Bearer hdr-token-5be1c0a9d2");
        assert_eq!(
            scrub("id req-hdr-token-5be1c0a9d2"),
            "id req-[REDACTED:secret]"
        );
        assert_eq!(scrub("a Bearer token"), "a Bearer token");
    }

    #[test]
    fn a_secret_streamed_in_pieces_never_shows() {
        let secret = "sk-ant-stream-0123456789abcdef";
        register(secret);
        let text = format!("Your configured key is {secret} as requested.");
        for size in [1, 3, 7, 11, 64] {
            let mut stream = StreamScrubber::new();
            let mut shown = Vec::new();
            for piece in text.as_bytes().chunks(size) {
                shown.push(stream.push(std::str::from_utf8(piece).unwrap()));
            }
            shown.push(stream.finish());
            let joined = shown.concat();
            assert_eq!(
                joined, "Your configured key is [REDACTED:secret] as requested.",
                "pieces of {size}: {shown:?}"
            );
            for piece in &shown {
                assert!(!piece.contains("0123456"), "{piece:?}");
            }
        }
        // Text with nothing like a secret is not held.
        let mut stream = StreamScrubber::new();
        assert_eq!(stream.push("plain words "), "plain words ");
    }
}
