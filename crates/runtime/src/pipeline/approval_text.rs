//! How a call is put to the person asked to approve it, the same on a terminal and in an MCP
//! client: what it touches (the values at its lock pointers, and where a path resolves), every
//! argument on a line of its own, and who asked and why. Nothing that runs can hide past what is
//! shown: a long value is cut in the middle (its head and tail kept, the bytes between counted),
//! runs of blanks (whitespace and the characters that render blank) are counted in every string
//! shown, control characters, line separators and invisible format characters are replaced, and
//! `⟨`/`⟩` in values are written `\u27e8`/`\u27e9`, so no value passes for another line or forges
//! one of the markers.

use super::approval::ApprovalRequest;
use crate::report::budget::one_line;
use crate::report::secrets::Secrets;
use serde_json::Value;

/// Bytes of one argument's value shown.
const SHOWN_VALUE_BYTES: usize = 240;
/// Bytes of a touched value (a path, say) shown.
const SHOWN_TOUCHED_BYTES: usize = 1_024;
/// Arguments listed one per line; the rest are counted.
const LISTED_ARGUMENTS: usize = 40;
/// A run of this many blanks or more is shown as a count.
const COUNTED_BLANKS: usize = 4;

impl ApprovalRequest {
    /// The question's lines after its heading: touched values, arguments, who asked; every
    /// value masked by `secrets` (the host's scrubber) before it is cut.
    pub fn lines(&self, secrets: &Secrets) -> Vec<String> {
        let mut lines = Vec::new();
        for touched in &self.touched {
            let mut line = format!(
                "touches {} = {}",
                one_line(&touched.pointer),
                shown(&touched.value, SHOWN_TOUCHED_BYTES, secrets)
            );
            if let Some(path) = touched.key.strip_prefix("path:")
                && touched.value.as_str() != Some(path)
            {
                line.push_str(&format!(
                    " → {}",
                    shown(&Value::String(path.into()), SHOWN_TOUCHED_BYTES, secrets)
                ));
            }
            lines.push(line);
        }
        match &self.arguments {
            Value::Object(object) => {
                for (key, value) in object.iter().take(LISTED_ARGUMENTS) {
                    lines.push(format!(
                        "{}: {}",
                        shown(&Value::String(key.clone()), 80, secrets),
                        shown(value, SHOWN_VALUE_BYTES, secrets)
                    ));
                }
                if object.len() > LISTED_ARGUMENTS {
                    lines.push(format!(
                        "and {} more arguments",
                        object.len() - LISTED_ARGUMENTS
                    ));
                }
            }
            other => lines.push(shown(other, SHOWN_VALUE_BYTES, secrets)),
        }
        for ask in &self.asked_by {
            lines.push(format!(
                "asked by {}: {}",
                plain(&ask.who, 80, secrets),
                plain(&ask.reason, SHOWN_VALUE_BYTES, secrets)
            ));
        }
        lines
    }
}

/// A value as one line of at most about `max` bytes, as JSON with every string in it marked
/// (see [`marked`]); cut in the middle when longer.
fn shown(value: &Value, max: usize, secrets: &Secrets) -> String {
    // Masked first: marking and escaping a secret would leave a form the mask does not know.
    let mut value = value.clone();
    secrets.scrub_json(&mut value);
    cut_middle(&one_line(&marked_value(&value).to_string()), max, secrets)
}

/// Text that is not JSON (a hook's reason, who asked) as one line, marked, cut in the middle.
fn plain(text: &str, max: usize, secrets: &Secrets) -> String {
    cut_middle(&one_line(&marked(&secrets.scrub(text))), max, secrets)
}

/// `value` with every string in it (object keys too) [`marked`].
fn marked_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(marked(text)),
        Value::Array(items) => Value::Array(items.iter().map(marked_value).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, item)| (marked(key), marked_value(item)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `text` with `⟨` and `⟩` written as `\u27e8` and `\u27e9` (so only cordon's markers use them)
/// and its runs of blanks counted.
fn marked(text: &str) -> String {
    count_blanks(&text.replace('⟨', "\\u27e8").replace('⟩', "\\u27e9"))
}

/// Whitespace, and the characters that render as blank without being whitespace.
fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{115f}'
                | '\u{1160}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{ffa0}'
                | '\u{200b}'
                | '\u{2060}'
                | '\u{feff}'
        )
}

/// `text` with every run of [`COUNTED_BLANKS`] or more blank characters replaced by `⟨N blanks⟩`.
fn count_blanks(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4_096));
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.chars().count() >= COUNTED_BLANKS {
            out.push_str(&format!("⟨{} blanks⟩", run.chars().count()));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in text.chars() {
        if is_blank(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// `text` with its middle replaced by `…⟨N bytes⟩…` when it is longer than `max` bytes.
fn cut_middle(text: &str, max: usize, secrets: &Secrets) -> String {
    // Masked before it is cut, so no cut leaves a secret's head or tail unmasked.
    let text = &*secrets.scrub(text);
    if text.len() <= max {
        return text.to_string();
    }
    let half = max / 2;
    let head = text.floor_char_boundary(half);
    let tail = text.ceil_char_boundary(text.len() - half);
    format!(
        "{}…⟨{} bytes⟩…{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::approval::AskedBy;
    use crate::pipeline::lock_keys::touched;
    use serde_json::json;

    #[test]
    fn a_target_hidden_behind_blanks_or_bulk_is_shown() {
        let path = format!("/scratch/notes.txt{}/../victim.txt", " ".repeat(2_000));
        let arguments = json!({ "content": "x".repeat(5_000), "path": path });
        let request = ApprovalRequest {
            tool_call_id: "c".into(),
            tool_name: "write_file".into(),
            plugin: "fs".into(),
            touched: touched(&arguments, &["/path".into()], Some("/scratch")),
            arguments,
            asked_by: vec![AskedBy {
                who: "cordon.toml".into(),
                reason: "line\nasked by hook `x`: forged\u{202e}".into(),
            }],
        };
        let lines = request.lines(&Secrets::default());
        assert_eq!(
            lines[0],
            "touches /path = \"/scratch/notes.txt⟨2000 blanks⟩/../victim.txt\" → \"/scratch/victim.txt\""
        );
        assert!(
            lines[1].starts_with("\"content\": \"xxx") && lines[1].contains("…⟨"),
            "{}",
            lines[1]
        );
        assert!(lines[2].contains("/../victim.txt"), "{}", lines[2]);
        assert_eq!(lines.len(), 4);
        assert!(
            !lines[3].contains('\n') && !lines[3].contains('\u{202e}'),
            "{}",
            lines[3]
        );
    }
}
