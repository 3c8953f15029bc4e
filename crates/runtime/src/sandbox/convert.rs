//! Conversions between the WIT binding types and the host's own result types.

use crate::report::Content;
use crate::sandbox::bindings;
use serde_json::Value;

/// A guest's content block in host terms. An image whose mime type is not a plausible media type
/// (`type/subtype`, at most 127 bytes of letters, digits and `.+-`) becomes a text marker instead,
/// so no caller ever passes the guest's text on as a mime type.
pub fn content_from_wit(content: bindings::Content) -> Content {
    match content {
        bindings::Content::Text(text) => Content::Text { text },
        bindings::Content::Image(image) if is_media_type(&image.mime_type) => Content::Image {
            mime_type: image.mime_type,
            data: image.data,
        },
        bindings::Content::Image(image) => Content::text(format!(
            "[an image of {} bytes was dropped: its mime type is not a media type]",
            image.data.len()
        )),
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

pub fn content_to_wit(content: &Content) -> bindings::Content {
    match content {
        Content::Text { text } => bindings::Content::Text(text.clone()),
        Content::Image { mime_type, data } => bindings::Content::Image(bindings::Image {
            mime_type: mime_type.clone(),
            data: data.clone(),
        }),
    }
}

pub fn content_size(content: &bindings::Content) -> usize {
    crate::report::BLOCK_OVERHEAD_BYTES
        + match content {
            bindings::Content::Text(text) => text.len(),
            bindings::Content::Image(image) => image.mime_type.len() + image.data.len(),
        }
}

/// Guest details are JSON text; "" means none. Text that is not JSON is kept, wrapped, so nothing
/// the plugin said is lost.
pub fn details_from_wit(details: &str) -> Value {
    if details.trim().is_empty() {
        return Value::Object(Default::default());
    }
    match serde_json::from_str(details) {
        Ok(value) => crate::report::as_object(value),
        Err(_) => serde_json::json!({ "unparsedDetails": details }),
    }
}
