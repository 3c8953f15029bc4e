//! The ways a secret is written in output that echoes it: as written, JSON-escaped (three ways),
//! percent-encoded, every character escaped, HTML text, a JSON Pointer segment, and base64 at each
//! alignment it can have inside a longer base64 text.

use super::MIN_BASE64_CORE_BYTES;

/// The ways `secret` can be written in output that echoes it.
pub(super) fn forms_of(secret: &str) -> Vec<String> {
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
