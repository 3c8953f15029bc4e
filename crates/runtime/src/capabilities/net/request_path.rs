//! What a request's method and path must be before a grant is compared with them: methods the
//! host never sends, and paths that read the same to every server (no `.` or `..` segment, no
//! hidden slash, backslash or NUL, raw, encoded or encoded twice), matched against a grant's
//! prefix by whole segments.

/// Methods the host never sends, whatever a grant says: `TRACE` (and IIS's `TRACK`) echo the request,
/// secret headers included, back to the guest; `CONNECT` opens a tunnel past every check.
pub const NEVER_SENT_METHODS: [&str; 3] = ["TRACE", "TRACK", "CONNECT"];

/// Whether `method` (uppercase) is one the host never sends.
pub fn is_never_sent(method: &str) -> bool {
    NEVER_SENT_METHODS.contains(&method)
}

/// Whether `path` lies under `prefix` by whole segments (`/v1` covers `/v1` and `/v1/x`, not
/// `/v1evil`), and reads the same to any server: see [`ambiguous_segment`].
pub fn path_is_under(path: &str, prefix: &str) -> bool {
    let path = path.split('?').next().unwrap_or_default();
    if path
        .split('/')
        .any(|segment| ambiguous_segment(segment).is_some())
    {
        return false;
    }
    let prefix = prefix.trim_end_matches('/');
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Why a path segment could read differently to a server than to a prefix check, if it could:
/// it is `.` or `..` once percent-decoded (also with a `;` parameter, which some servers strip),
/// or it hides a slash, a backslash or a NUL (raw or encoded, or encoded twice).
pub fn ambiguous_segment(segment: &str) -> Option<&'static str> {
    if segment.contains('\\') {
        return Some("a backslash");
    }
    let decoded = percent_decode(segment);
    let name = decoded.split(|&b| b == b';').next().unwrap_or_default();
    if name == b"." || name == b".." {
        return Some("a `.` or `..` segment");
    }
    if decoded.iter().any(|&b| b == b'/' || b == b'\\' || b == 0) {
        return Some("an encoded slash, backslash or NUL");
    }
    let twice = percent_decode(std::str::from_utf8(&decoded).unwrap_or_default());
    if twice != decoded {
        let name = twice.split(|&b| b == b';').next().unwrap_or_default();
        if name == b"." || name == b".." || twice.iter().any(|&b| matches!(b, b'/' | b'\\' | 0)) {
            return Some("a double-encoded `.`, `..`, slash or backslash");
        }
    }
    None
}

/// `%XX` sequences decoded; anything else (a malformed escape too) kept as it is.
fn percent_decode(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = bytes
                .get(i + 1..i + 3)
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_prefixes_match_whole_segments_and_refuse_ambiguous_paths() {
        let cases = [
            ("/public/", "/public/a", true),
            ("/public/", "/public", true),
            ("/public", "/public/a/b.txt", true),
            ("/v1", "/v1", true),
            ("/v1", "/v1/items?x=1", true),
            ("/v1", "/v1evil", false),
            ("/v1/", "/v1evil/x", false),
            ("/", "/anything", true),
            ("/public/", "/public/../admin", false),
            ("/public/", "/public/%2e%2e/admin", false),
            ("/public/", "/public/%2E%2e/admin", false),
            ("/public/", "/public/.%2E/admin", false),
            ("/public/", "/public/./x", false),
            ("/public/", "/public/..;/admin", false),
            ("/public/", "/public/%2e%2e;x=1/admin", false),
            ("/public/", "/public/..%2fadmin", false),
            ("/public/", "/public/a%2Fb", false),
            ("/public/", "/public/a%5cb", false),
            ("/public/", "/public/a\\b", false),
            ("/public/", "/public/%252e%252e/admin", false),
            ("/public/", "/public/%252fadmin", false),
            ("/public/", "/public/a%00b", false),
            ("/public/", "/public/...", true),
            ("/public/", "/public/a.b/c..d", true),
            ("/public/", "/public/%41", true),
            ("/public/", "/public//x", true),
            ("/public/", "//public/x", false),
            ("/public/", "/Public/x", false),
        ];
        for (prefix, path, allowed) in cases {
            assert_eq!(
                path_is_under(path, prefix),
                allowed,
                "{path} under {prefix}"
            );
        }
    }
}
