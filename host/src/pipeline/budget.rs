//! The size budget: a result whose text is longer than `max_result_bytes` is cut, with a marker the
//! model can see saying how much was dropped, and `details.truncated` recording it.

use crate::result::{Content, ToolResult};
use serde_json::json;

/// Cuts the text blocks of `result` so their total stays within `max_bytes`.
pub fn apply(result: &mut ToolResult, max_bytes: u64) {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let total: usize = result.content.iter().map(text_len).sum();
    if total <= max {
        return;
    }
    let mut room = max;
    for block in &mut result.content {
        if let Content::Text { text } = block {
            if text.len() <= room {
                room -= text.len();
                continue;
            }
            let mut cut = room;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            room = 0;
        }
    }
    result
        .content
        .retain(|block| !matches!(block, Content::Text { text } if text.is_empty()));
    let kept: usize = result.content.iter().map(text_len).sum();
    result.content.push(Content::text(format!(
        "\n[output truncated: {} of {total} bytes dropped (limit {max} bytes); ask for less, e.g. with an offset, limit or narrower pattern]",
        total - kept
    )));
    if let Some(details) = result.details.as_object_mut() {
        details.insert(
            "truncated".into(),
            json!({ "totalBytes": total, "keptBytes": kept, "limitBytes": max }),
        );
    }
}

fn text_len(block: &Content) -> usize {
    match block {
        Content::Text { text } => text.len(),
        Content::Image { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn result(texts: &[&str]) -> ToolResult {
        ToolResult::success(
            "c",
            "t",
            texts.iter().map(|t| Content::text(*t)).collect(),
            Value::Null,
        )
    }

    #[test]
    fn short_results_are_untouched() {
        let mut r = result(&["hello"]);
        apply(&mut r, 5);
        assert_eq!(r, result(&["hello"]));
    }

    #[test]
    fn long_results_are_cut_with_a_marker_and_details() {
        let mut r = result(&["abcdef", "ghij"]);
        apply(&mut r, 8);
        assert_eq!(r.content[0], Content::text("abcdef"));
        assert_eq!(r.content[1], Content::text("gh"));
        let Content::Text { text } = &r.content[2] else {
            panic!()
        };
        assert!(
            text.contains("2 of 10 bytes dropped (limit 8 bytes)"),
            "{text}"
        );
        assert_eq!(
            r.details["truncated"],
            json!({ "totalBytes": 10, "keptBytes": 8, "limitBytes": 8 })
        );
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let mut r = result(&["ééé"]);
        apply(&mut r, 3);
        assert_eq!(r.content[0], Content::text("é"));
    }
}
