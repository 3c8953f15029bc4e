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

mod forms;
mod stream;
#[cfg(test)]
mod tests;

use forms::forms_of;
pub use stream::StreamScrubber;

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
#[derive(Default)]
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
        if !self.any() {
            return;
        }
        for block in &mut result.content {
            self.scrub_content(block);
        }
        if let Some(structured) = &mut result.structured {
            self.scrub_json(structured);
        }
        self.scrub_json(&mut result.details);
    }

    /// Masks every registered secret in one content block (of a result, or a prompt's message):
    /// its text, or an image whose bytes hold a secret, replaced by a note saying so.
    pub fn scrub_content(&self, block: &mut crate::report::Content) {
        use crate::report::Content;
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

    /// The longest form of any registered secret, in bytes (0 with none): how much more than its
    /// bound a cut text must keep so it can be masked before it is cut.
    pub fn longest_form(&self) -> usize {
        if !self.any() {
            return 0;
        }
        self.read_known().longest
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
