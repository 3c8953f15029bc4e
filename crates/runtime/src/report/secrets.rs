//! The one scrubber: every secret cordon is configured with is registered here as it is read (the
//! model API key, registry passwords and tokens, the values of HTTP grant headers from cordon.toml,
//! the bearer token of `cordon serve --http`), and every path by which cordon prints or writes
//! text passes it through [`scrub`] first: stderr and stdout, events, transcripts, the audit log,
//! error messages, tool results, MCP notifications and `/metrics`. Whatever a server echoes back
//! (a model API quoting the `Authorization` header in an error body, a registry or a granted
//! origin reflecting a request), the secret comes out as [`MASK`].
//!
//! A secret is matched as written, JSON-escaped and percent-encoded; a Basic credential also as
//! its base64 `user:password`. Values shorter than [`MIN_SECRET_BYTES`] are not registered: they
//! would mask ordinary words, and a secret that short is not protected by masking anyway.

use std::borrow::Cow;
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a secret is replaced with.
pub const MASK: &str = "[REDACTED:secret]";

/// The shortest value registered as a secret.
pub const MIN_SECRET_BYTES: usize = 6;

/// The most forms kept (a process has a handful of secrets; this only bounds a misuse).
const MAX_FORMS: usize = 1_024;

static FORMS: RwLock<Vec<String>> = RwLock::new(Vec::new());
static ANY: AtomicBool = AtomicBool::new(false);

/// Registers `secret`, so no output of this process shows it from now on.
pub fn register(secret: &str) {
    let secret = secret.trim();
    if secret.len() < MIN_SECRET_BYTES {
        return;
    }
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or_default()
        .to_string();
    let encoded = percent_encoded(secret);
    add([secret.to_string(), json, encoded]);
}

/// Registers the parts of a Basic credential, and its base64 form as it travels.
pub fn register_basic(user: &str, password: &str) {
    use base64::Engine as _;
    register(password);
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    register(&encoded);
}

fn add(forms: impl IntoIterator<Item = String>) {
    let mut known = FORMS
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for form in forms {
        if form.len() >= MIN_SECRET_BYTES && !known.contains(&form) && known.len() < MAX_FORMS {
            known.push(form);
        }
    }
    // Longest first, so a secret that contains another is masked whole.
    known.sort_by_key(|form| std::cmp::Reverse(form.len()));
    ANY.store(!known.is_empty(), Ordering::Release);
}

fn percent_encoded(secret: &str) -> String {
    let mut out = String::with_capacity(secret.len());
    for byte in secret.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `text` with every registered secret masked (borrowed when there was none in it).
pub fn scrub(text: &str) -> Cow<'_, str> {
    if !ANY.load(Ordering::Acquire) {
        return Cow::Borrowed(text);
    }
    let known = FORMS
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut out = Cow::Borrowed(text);
    for form in known.iter() {
        if out.contains(form.as_str()) {
            out = Cow::Owned(out.replace(form.as_str(), MASK));
        }
    }
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

/// Masks every registered secret in a result: its text, structured output and details (a tool
/// whose granted origin reflects the header cordon added hands the secret back to the guest).
pub fn scrub_result(result: &mut crate::report::ToolResult) {
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    for block in &mut result.content {
        if let crate::report::Content::Text { text } = block
            && let Cow::Owned(scrubbed) = scrub(text)
        {
            *text = scrubbed;
        }
    }
    if let Some(structured) = &mut result.structured {
        scrub_json(structured);
    }
    scrub_json(&mut result.details);
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
        assert_eq!(scrub("?p=pa%22ss%2Fword%201"), "?p=[REDACTED:secret]");
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
}
