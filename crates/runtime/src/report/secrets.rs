//! The scrubber a host owns: [`Secrets`]. Every secret a host is configured with is registered
//! with its `Secrets` as it is read (the model API key, registry passwords and tokens, the values
//! of HTTP grant headers from cordon.toml that carry credentials, the bearer token of `cordon
//! serve --http`), and every path by which the host prints or writes text passes it through
//! [`Secrets::scrub`] first: stderr and stdout, events,
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
//! A `Secrets` is a handle: clones share one set of secrets. The config document a host reads
//! holds the one its secrets are registered with, the [`crate::config::Config`] read from it and
//! the pipeline built from that keep it, and every crate on top scrubs through the pipeline's.
//! Two hosts in one process (two runtimes an embedder builds from two configs) each have their
//! own: neither masks, nor learns, the other's secrets.
//!
//! Text that arrives in pieces (a model's streamed reply) goes through a [`StreamScrubber`],
//! which holds back the end of what it has seen while it could still be the start of a secret
//! (at most the longest form, less a byte).

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard};

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

/// The secrets one host masks in its output. Clones share them; [`Secrets::default`] starts a
/// new, empty set.
#[derive(Clone, Default)]
pub struct Secrets {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    known: RwLock<Known>,
    /// Whether any secret is registered: output is not searched until one is.
    any: AtomicBool,
}

impl Default for Known {
    fn default() -> Self {
        Self {
            forms: Vec::new(),
            finder: None,
            stale: false,
            longest: 0,
        }
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The forms are the secrets: only how many there are is shown.
        let forms = self.read_known().forms.len();
        f.debug_struct("Secrets").field("forms", &forms).finish()
    }
}

impl Secrets {
    /// Registers `secret`, so no output scrubbed by this host shows it from now on.
    pub fn register(&self, secret: &str) {
        let secret = secret.trim();
        if secret.len() < MIN_SECRET_BYTES || secret.len() > MAX_SECRET_BYTES {
            return;
        }
        self.add(forms_of(secret));
    }

    /// Registers a header's value as a secret, and the credential in it after an auth scheme
    /// (`Bearer TOKEN`, `Token TOKEN`): the token alone is what a tool or a client echoes back.
    pub fn register_header_value(&self, value: &str) {
        self.register(value);
        if let Some((scheme, credential)) = value.trim().split_once(' ')
            && !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            self.register(credential);
        }
    }

    /// Registers the parts of a Basic credential, and its base64 form as it travels.
    pub fn register_basic(&self, user: &str, password: &str) {
        use base64::Engine as _;
        self.register(password);
        let encoded =
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        self.register(&encoded);
    }

    /// `text` with every registered secret (and every run of its bytes long enough to count)
    /// masked; borrowed when there was none in it.
    pub fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let spans = self.secret_spans(text);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        Cow::Owned(masked(text, &spans))
    }

    /// `bytes` with every registered secret masked; bytes that are not UTF-8 are scrubbed as text
    /// where they are, and kept as they are elsewhere.
    pub fn scrub_bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        if !self.any() {
            return Cow::Borrowed(bytes);
        }
        let text = String::from_utf8_lossy(bytes);
        match self.scrub(&text) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(scrubbed) => Cow::Owned(scrubbed.into_bytes()),
        }
    }

    /// Masks every registered secret in every string of `value` (object keys included).
    pub fn scrub_json(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        if !self.any() {
            return;
        }
        match value {
            Value::String(text) => {
                if let Cow::Owned(scrubbed) = self.scrub(text) {
                    *text = scrubbed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub_json(item)),
            Value::Object(object) => {
                let entries = std::mem::take(object);
                for (key, mut item) in entries {
                    self.scrub_json(&mut item);
                    object.insert(self.scrub(&key).into_owned(), item);
                }
            }
            _ => {}
        }
    }

    /// Whether `bytes` hold a registered secret in any form (an image a tool returns, say).
    pub fn found_in_bytes(&self, bytes: &[u8]) -> bool {
        if !self.any() {
            return false;
        }
        let known = self.known();
        known
            .finder
            .as_ref()
            .is_some_and(|finder| finder.is_match(bytes))
    }

    /// Masks every registered secret in a result: its text, structured output and details (a tool
    /// whose granted origin reflects the header cordon added hands the secret back to the guest). An
    /// image whose bytes hold a secret is replaced by a note saying so.
    pub fn scrub_result(&self, result: &mut crate::report::ToolResult) {
        use crate::report::Content;
        if !self.any() {
            return;
        }
        for block in &mut result.content {
            match block {
                Content::Text { text } => {
                    if let Cow::Owned(scrubbed) = self.scrub(text) {
                        *text = scrubbed;
                    }
                }
                Content::Image { data, .. } => {
                    if self.found_in_bytes(data) {
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
            self.scrub_json(structured);
        }
        self.scrub_json(&mut result.details);
    }

    /// A scrubber for text that arrives in pieces, masking these secrets.
    pub fn stream(&self) -> StreamScrubber {
        StreamScrubber {
            secrets: self.clone(),
            held: String::new(),
        }
    }

    fn add(&self, forms: impl IntoIterator<Item = String>) {
        let mut known = self
            .shared
            .known
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
            self.shared.any.store(true, Ordering::Release);
        }
    }

    /// The forms and their finder, built now if a registration came since the last build.
    fn known(&self) -> RwLockReadGuard<'_, Known> {
        {
            let known = self.read_known();
            if !known.stale {
                return known;
            }
        }
        {
            let mut known = self
                .shared
                .known
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
        self.read_known()
    }

    fn read_known(&self) -> RwLockReadGuard<'_, Known> {
        self.shared
            .known
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether any secret is registered.
    fn any(&self) -> bool {
        self.shared.any.load(Ordering::Acquire)
    }

    /// Where `text` holds secrets: sorted, merged byte ranges on character boundaries.
    fn secret_spans(&self, text: &str) -> Vec<(usize, usize)> {
        if !self.any() {
            return Vec::new();
        }
        let known = self.known();
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

    /// How many bytes at the end of `text` must wait: the longest end of it that begins some form of
    /// a registered secret.
    fn held_back(&self, text: &str) -> usize {
        let known = self.known();
        let longest = known.longest.saturating_sub(1).min(text.len());
        let bytes = text.as_bytes();
        (1..=longest)
            .rev()
            .find(|&len| {
                let tail = &bytes[bytes.len() - len..];
                known.forms.iter().any(|form| {
                    form.len() > len && form.as_bytes()[..len].eq_ignore_ascii_case(tail)
                })
            })
            .unwrap_or(0)
    }
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

/// Scrubs text that arrives in pieces: what [`StreamScrubber::push`] returns is safe to show at
/// once; the end of the text that could still be the start of a secret is held until the next
/// piece shows what it is, or [`StreamScrubber::finish`].
#[derive(Debug)]
pub struct StreamScrubber {
    secrets: Secrets,
    held: String,
}

impl StreamScrubber {
    /// Takes one piece; returns the scrubbed text that can be shown now (maybe empty).
    pub fn push(&mut self, piece: &str) -> String {
        if !self.secrets.any() && self.held.is_empty() {
            return piece.to_string();
        }
        self.held.push_str(piece);
        let spans = self.secrets.secret_spans(&self.held);
        let mut cut = self.held.len() - self.secrets.held_back(&self.held);
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
        self.secrets.scrub(&held).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_masked_in_every_form() {
        let secrets = Secrets::default();
        secrets.register("sk-test-scrubber-0123456789");
        secrets.register("abc"); // too short to register
        let echoed = "HTTP 401: Invalid key provided: Bearer sk-test-scrubber-0123456789 (abc)";
        assert_eq!(
            secrets.scrub(echoed),
            "HTTP 401: Invalid key provided: Bearer [REDACTED:secret] (abc)"
        );
        secrets.register("pa\"ss/word 1");
        assert_eq!(
            secrets.scrub(r#"{"v":"pa\"ss/word 1"}"#),
            r#"{"v":"[REDACTED:secret]"}"#
        );
        assert_eq!(
            secrets.scrub(r#"{"v":"pa\"ss\/word 1"}"#),
            r#"{"v":"[REDACTED:secret]"}"#
        );
        assert_eq!(
            secrets.scrub("?p=pa%22ss%2Fword%201"),
            "?p=[REDACTED:secret]"
        );
        assert_eq!(
            secrets.scrub("?p=pa%22ss%2fword%201"),
            "?p=[REDACTED:secret]"
        );
        secrets.register_basic("alice", "alice-pw-scrub");
        assert_eq!(
            secrets.scrub("Basic YWxpY2U6YWxpY2UtcHctc2NydWI="),
            "Basic [REDACTED:secret]"
        );
        assert!(matches!(secrets.scrub("nothing here"), Cow::Borrowed(_)));
        let mut value = serde_json::json!({"k": ["x sk-test-scrubber-0123456789"]});
        secrets.scrub_json(&mut value);
        assert_eq!(value, serde_json::json!({"k": ["x [REDACTED:secret]"]}));
    }

    #[test]
    fn escaped_forms_servers_and_validators_write_are_masked() {
        let secrets = Secrets::default();
        let secret = "p&ss<w>rd+/=~Sec9-long";
        secrets.register(secret);
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
            let scrubbed = secrets.scrub(written);
            assert!(
                scrubbed.contains("[REDACTED:secret]") && !scrubbed.contains("Sec9"),
                "{form}: {scrubbed}"
            );
        }
    }

    #[test]
    fn a_secret_in_another_case_or_base64_is_masked_but_no_part_of_it_is() {
        let secrets = Secrets::default();
        let secret = "ghp_R2mT5vLk9WpYc3NfHs7GdJ4uAeQZq8XbTy01";
        secrets.register(secret);
        assert_eq!(
            secrets.scrub(&secret.to_ascii_uppercase()),
            "[REDACTED:secret]",
            "any ASCII case"
        );
        use base64::Engine as _;
        for prefix in ["", "x", "xy"] {
            let encoded = base64::engine::general_purpose::STANDARD
                .encode(format!("{prefix}token={secret}&more"));
            let scrubbed = secrets.scrub(&encoded);
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
            assert_eq!(secrets.scrub(&text), text);
        }
    }

    #[test]
    fn a_bearer_headers_token_is_masked_alone_and_its_scheme_word_is_not() {
        let secrets = Secrets::default();
        secrets.register_header_value("Bearer hdr-token-5be1c0a9d2");
        assert_eq!(
            secrets.scrub("id req-hdr-token-5be1c0a9d2"),
            "id req-[REDACTED:secret]"
        );
        assert_eq!(secrets.scrub("a Bearer token"), "a Bearer token");
    }

    #[test]
    fn a_secret_streamed_in_pieces_never_shows() {
        let secrets = Secrets::default();
        let secret = "sk-ant-stream-0123456789abcdef";
        secrets.register(secret);
        let text = format!("Your configured key is {secret} as requested.");
        for size in [1, 3, 7, 11, 64] {
            let mut stream = secrets.stream();
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
        let mut stream = secrets.stream();
        assert_eq!(stream.push("plain words "), "plain words ");
    }

    #[test]
    fn two_hosts_in_one_process_keep_their_secrets_apart() {
        let first = Secrets::default();
        let second = Secrets::default();
        first.register("first-host-secret-77aa");
        assert_eq!(
            first.scrub("x first-host-secret-77aa"),
            "x [REDACTED:secret]"
        );
        assert_eq!(
            second.scrub("x first-host-secret-77aa"),
            "x first-host-secret-77aa",
            "another host's scrubber neither masks nor learns it"
        );
        let shared = first.clone();
        shared.register("registered-through-a-clone");
        assert_eq!(first.scrub("registered-through-a-clone"), MASK);
        assert!(
            !format!("{first:?}").contains("first-host"),
            "Debug shows no secret"
        );
    }
}
