//! Telling text from binary content, and cutting text to a size budget.

/// Whether bytes look like text a model can read: UTF-8 with no NUL in the first 8 KiB.
pub fn is_text(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    !head.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// Cuts a string to at most `max` bytes on a character boundary.
pub fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
