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
