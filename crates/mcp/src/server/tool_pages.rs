//! `tools/list` (and the lists of resources, templates and prompts) in pages: items in a stable
//! order (by name, or URI), at most a page size at a time, the next page named by an opaque cursor
//! that holds the last key given. A cursor names a place in the order, not a position, so a
//! replica or a reloaded set continues after the same item.

use base64::Engine as _;
use rmcp::model::Tool;

/// Tools per page unless `cordon serve --page-size` says otherwise.
pub const DEFAULT_PAGE_SIZE: u64 = 100;
/// The cursor format's prefix, so a cursor from elsewhere is told apart.
const PREFIX: &str = "after:";

/// Why a cursor was refused.
#[derive(Debug, thiserror::Error)]
#[error("this cursor was not given by this server; list again without a cursor")]
pub struct BadCursor;

/// The page after `cursor` (from the start without one) of `tools`, sorted by name, and the
/// cursor of the page after it, if there is one.
pub fn page(
    tools: &[Tool],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<Tool>, Option<String>), BadCursor> {
    page_by(tools, |tool| &tool.name, cursor, size)
}

/// The page after `cursor` of `items`, sorted by `key`, and the cursor of the page after it.
pub fn page_by<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> &str,
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), BadCursor> {
    let start = match cursor {
        None => 0,
        Some(cursor) => {
            let after = decode(cursor).ok_or(BadCursor)?;
            items.partition_point(|item| key(item) <= after.as_str())
        }
    };
    let end = (start + size.max(1)).min(items.len());
    let page = items[start..end].to_vec();
    let next = (end < items.len()).then(|| encode(key(&items[end - 1])));
    Ok((page, next))
}

fn encode(name: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{PREFIX}{name}"))
}

fn decode(cursor: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    text.strip_prefix(PREFIX).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tools(names: &[&str]) -> Vec<Tool> {
        names
            .iter()
            .map(|name| Tool::new(name.to_string(), "", Arc::new(Default::default())))
            .collect()
    }

    #[test]
    fn pages_cover_every_tool_once_in_order() {
        let all = tools(&["a", "b", "c", "d", "e"]);
        let mut seen = Vec::new();
        let mut cursor = None;
        loop {
            let (page, next) = page(&all, cursor.as_deref(), 2).unwrap();
            seen.extend(page.iter().map(|tool| tool.name.to_string()));
            match next {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, ["a", "b", "c", "d", "e"]);
        assert!(page(&all, Some("garbage"), 2).is_err());
        // A tool removed between pages: the next page still starts after the last one given.
        let fewer = tools(&["a", "c", "d", "e"]);
        let (_, next) = page(&all, None, 2).unwrap();
        let (rest, _) = page(&fewer, next.as_deref(), 10).unwrap();
        assert_eq!(rest[0].name, "c");
    }
}
