//! Guest content and details in host terms, for every contract version: an image whose mime type
//! is not a media type becomes a text marker, and details text becomes a JSON object.

use crate::report::Content;
use serde_json::Value;

/// A guest's image block in host terms. An image whose mime type is not a plausible media type
/// (`type/subtype`, at most 127 bytes of letters, digits and `.+-`) becomes a text marker instead,
/// so no caller ever passes the guest's text on as a mime type.
pub fn image(mime_type: String, data: Vec<u8>) -> Content {
    if is_media_type(&mime_type) {
        Content::Image { mime_type, data }
    } else {
        Content::text(format!(
            "[an image of {} bytes was dropped: its mime type is not a media type]",
            data.len()
        ))
    }
}

/// Whether `text` is a media type with optional parameters (`text/plain; charset=utf-8`): at
/// most 127 bytes, the type as [`is_media_type`] says, parameters of letters, digits, `.+-_=` and
/// spaces, nothing a terminal or a client would read as anything but a name.
pub(crate) fn is_media_type_with_parameters(text: &str) -> bool {
    let mut parts = text.split(';');
    let base = parts.next().unwrap_or_default().trim();
    text.len() <= 127
        && is_media_type(base)
        && parts.all(|parameter| {
            parameter
                .trim()
                .split_once('=')
                .is_some_and(|(name, value)| !name.is_empty() && !value.is_empty())
                && parameter.bytes().all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'.' | b'+' | b'-' | b'_' | b'=' | b' ')
                })
        })
}

fn is_media_type(text: &str) -> bool {
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
    };
    text.len() <= 127
        && text
            .split_once('/')
            .is_some_and(|(kind, subtype)| valid(kind) && valid(subtype))
}

/// Guest details are JSON text; "" means none. Text that is not JSON is kept, wrapped, so nothing
/// the plugin said is lost.
pub fn details(details: &str) -> Value {
    if details.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str(details) {
        Ok(value) => crate::report::as_object(value),
        Err(_) => serde_json::json!({ "unparsedDetails": details }),
    }
}
