//! The size budget of one result, whoever made it (the tool, or an after-hook's replacement):
//! text longer than `max_result_bytes` is cut, with a marker the model can see saying how much was
//! dropped; details larger than `max_result_bytes` are replaced by a note of their size; images
//! past `max_image_bytes` in total are dropped, each leaving a marker; structured output larger
//! than `max_result_bytes` is dropped with a marker. `details.truncated` records what was cut.

use crate::config::BatchSettings;
use crate::report::{Content, ToolResult};
use serde_json::{Value, json};

/// Applies the budget of `settings` to `result`.
pub fn apply(result: &mut ToolResult, settings: &BatchSettings) {
    let mut notes = serde_json::Map::new();
    if let Some(text) = cut_text(result, settings.max_result_bytes) {
        notes.insert("text".into(), text);
    }
    if let Some(images) = drop_images(result, settings.max_image_bytes) {
        notes.insert("images".into(), images);
    }
    let max_structured = usize::try_from(settings.max_result_bytes).unwrap_or(usize::MAX);
    let structured_bytes = result
        .structured
        .as_ref()
        .map_or(0, |s| s.to_string().len());
    if structured_bytes > max_structured {
        // Clients read structured output as they read the text: it is held to the same budget.
        result.structured = None;
        result.content.push(Content::text(format!(
            "[structured output dropped: {structured_bytes} bytes, over the limit of {max_structured} bytes]"
        )));
        notes.insert(
            "structured".into(),
            json!({ "bytes": structured_bytes, "limitBytes": max_structured }),
        );
    }
    let max_details = usize::try_from(settings.max_result_bytes).unwrap_or(usize::MAX);
    let details_bytes = result.details.to_string().len();
    if details_bytes > max_details {
        result.details =
            json!({ "detailsDropped": { "bytes": details_bytes, "limitBytes": max_details } });
    }
    if notes.is_empty() {
        return;
    }
    if let Some(details) = result.details.as_object_mut() {
        // The text note keeps the shape `truncated` always had; images get their own key.
        let mut truncated = notes.remove("text").unwrap_or_else(|| json!({}));
        if let Some(object) = truncated.as_object_mut() {
            object.extend(notes);
        }
        details.insert("truncated".into(), truncated);
    }
}

/// Cuts the text blocks so their total stays within `max_bytes`; what was cut, if anything.
fn cut_text(result: &mut ToolResult, max_bytes: u64) -> Option<Value> {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let total: usize = result.content.iter().map(text_len).sum();
    if total <= max {
        return None;
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
    Some(json!({ "totalBytes": total, "keptBytes": kept, "limitBytes": max }))
}

/// Drops the images past `max_bytes` in total (in order), each replaced by a marker; what was
/// dropped, if anything.
fn drop_images(result: &mut ToolResult, max_bytes: u64) -> Option<Value> {
    let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut room = max;
    let mut dropped = 0usize;
    for block in &mut result.content {
        if let Content::Image { mime_type, data } = block {
            let size = mime_type.len() + data.len();
            if size <= room {
                room -= size;
                continue;
            }
            dropped += 1;
            *block = Content::text(format!(
                "[image {mime_type} of {} bytes dropped: over this result's image budget of {max} bytes]",
                data.len()
            ));
        }
    }
    (dropped > 0).then(|| json!({ "dropped": dropped, "limitBytes": max }))
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

    fn settings(max_result_bytes: u64, max_image_bytes: u64) -> BatchSettings {
        BatchSettings {
            max_result_bytes,
            max_image_bytes,
            ..BatchSettings::default()
        }
    }

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
        apply(&mut r, &settings(5, 5));
        assert_eq!(r, result(&["hello"]));
    }

    #[test]
    fn long_results_are_cut_with_a_marker_and_details() {
        let mut r = result(&["abcdef", "ghij"]);
        apply(&mut r, &settings(8, 100));
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
        apply(&mut r, &settings(3, 3));
        assert_eq!(r.content[0], Content::text("é"));
    }

    #[test]
    fn images_past_their_budget_and_oversized_details_are_dropped() {
        let image = |n: usize| Content::Image {
            mime_type: "image/png".into(),
            data: vec![0; n],
        };
        let mut r = ToolResult::success(
            "c",
            "t",
            vec![image(60), image(60), Content::text("ok")],
            json!({ "big": "x".repeat(200) }),
        );
        apply(&mut r, &settings(100, 100));
        assert_eq!(r.content[0], image(60));
        assert!(
            matches!(&r.content[1], Content::Text { text } if text.contains("image image/png of 60 bytes dropped"))
        );
        assert_eq!(r.details["detailsDropped"]["limitBytes"], 100);
        assert_eq!(r.details["truncated"]["images"]["dropped"], 1);
    }
}
