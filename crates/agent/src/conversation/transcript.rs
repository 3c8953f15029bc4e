//! Transcripts: the conversation as JSON lines, one [`Message`] per line, each appended and
//! handed to the OS as it happens, so a crash or Ctrl-C loses nothing already said. Loading one
//! to resume tolerates a last line cut off mid-write and answers the last step's tool calls left
//! without results (the session stopped while they ran); a transcript cordon did not write that
//! way (transcript_shape.rs) is refused. Its path must name a regular file
//! (transcript_file.rs: a FIFO, device, socket or directory is refused, and nothing blocks).

use crate::conversation::message::{Message, ToolCall, ToolOutcome};
pub use crate::conversation::transcript_error::TranscriptError;
use crate::conversation::transcript_file;
use cordon_runtime::report::ErrorKind;
use cordon_runtime::report::secrets::Secrets;
use std::collections::HashMap;
use std::io::{BufRead as _, Write as _};
use std::path::{Path, PathBuf};

/// Appends messages to a transcript file.
pub struct TranscriptWriter {
    file: std::fs::File,
    path: PathBuf,
    secrets: Secrets,
}

impl TranscriptWriter {
    /// Opens (creating if needed) `path` for appending; it must be a regular file. `secrets`
    /// (the host's scrubber) masks every line written.
    pub fn append_to(path: &Path, secrets: Secrets) -> Result<Self, TranscriptError> {
        Ok(Self {
            file: transcript_file::append_to(path)?,
            path: path.to_path_buf(),
            secrets,
        })
    }

    /// Writes one message as one line, in one write, and flushes it, as the audit log's
    /// JSON-lines files do: its strings are scrubbed of registered secrets before it is
    /// serialised.
    pub fn append(&mut self, message: &Message) -> Result<(), TranscriptError> {
        let secrets = &self.secrets;
        let write = |file: &mut std::fs::File| -> std::io::Result<()> {
            let mut value = serde_json::to_value(message).map_err(std::io::Error::other)?;
            secrets.scrub_json(&mut value);
            let mut line = serde_json::to_vec(&value).map_err(std::io::Error::other)?;
            line.push(b'\n');
            file.write_all(&line)?;
            file.flush()
        };
        write(&mut self.file).map_err(|source| TranscriptError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

/// A transcript read back.
#[derive(Debug)]
pub struct Loaded {
    pub messages: Vec<Message>,
    /// Results added for tool calls that had none (the session stopped while they ran); they
    /// belong at the end of the transcript.
    pub repairs: Vec<Message>,
    /// A last line that was cut off mid-write and skipped.
    pub skipped_partial_line: bool,
}

/// The most messages and tool calls a transcript read back may hold, together.
pub use crate::conversation::transcript_items::MAX_TRANSCRIPT_ITEMS as MAX_TRANSCRIPT_MESSAGES;

/// Reads a transcript to resume from, a line at a time (a line cut off mid-write at the end is
/// skipped).
pub fn load(path: &Path) -> Result<Loaded, TranscriptError> {
    let mut reader = transcript_file::open_to_read(path)?;
    let mut numbered = Vec::new();
    let mut skipped_partial_line = false;
    let mut line = Vec::new();
    let mut number = 0;
    let mut read = 0u64;
    let mut items = 0usize;
    loop {
        line.clear();
        let length = reader
            .read_until(b'\n', &mut line)
            .map_err(|err| transcript_file::open_error(path, err))?;
        if length == 0 {
            break;
        }
        number += 1;
        read += length as u64;
        transcript_file::check_size(path, read)?;
        // Only the last line can lack its newline: one a crash cut off.
        let cut_off = !line.ends_with(b"\n");
        let bad_line = |reason: String| TranscriptError::BadLine {
            path: path.to_path_buf(),
            line: number,
            reason,
        };
        let text = match std::str::from_utf8(&line) {
            Ok(text) => text,
            Err(_) if cut_off => {
                skipped_partial_line = true;
                break;
            }
            Err(_) => return Err(bad_line("it is not UTF-8 text".into())),
        };
        if text.trim().is_empty() {
            continue;
        }
        // Counted before the line is parsed: parsing costs many times a line's size.
        let too_many = || TranscriptError::TooManyMessages {
            path: path.to_path_buf(),
            limit: MAX_TRANSCRIPT_MESSAGES,
        };
        let room = MAX_TRANSCRIPT_MESSAGES - items;
        match crate::conversation::transcript_items::items_in_line(text, room + 1) {
            Ok(Some(count)) => items += count,
            Ok(None) => items += 1,
            Err(_) => return Err(too_many()),
        }
        if items > MAX_TRANSCRIPT_MESSAGES {
            return Err(too_many());
        }
        match serde_json::from_str::<Message>(text) {
            Ok(message) => numbered.push((number, message)),
            Err(_) if cut_off => skipped_partial_line = true,
            Err(err) => return Err(bad_line(err.to_string())),
        }
    }
    if let Some((line, reason)) = crate::conversation::transcript_shape::first_problem(&numbered) {
        return Err(TranscriptError::NotWritten {
            path: path.to_path_buf(),
            line,
            reason,
        });
    }
    let messages: Vec<Message> = numbered.into_iter().map(|(_, message)| message).collect();
    let repairs = unanswered_calls(&messages)
        .into_iter()
        .map(|call| {
            Message::Tool(ToolOutcome::error(
                &call,
                ErrorKind::Cancelled,
                "not run: the session stopped before this call finished",
            ))
        })
        .collect();
    Ok(Loaded {
        messages,
        repairs,
        skipped_partial_line,
    })
}

/// The last assistant message's calls that no tool message answers. Calls are told apart by
/// position: two calls sharing an id (a model may send that) need a result each.
fn unanswered_calls(messages: &[Message]) -> Vec<ToolCall> {
    let Some(position) = messages
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))
    else {
        return Vec::new();
    };
    let Message::Assistant { tool_calls, .. } = &messages[position] else {
        unreachable!()
    };
    // How many results each (id, tool) has; each answers one call, in call order.
    let mut answers: HashMap<(&str, &str), usize> = HashMap::new();
    for message in &messages[position + 1..] {
        if let Message::Tool(outcome) = message {
            *answers
                .entry((outcome.tool_call_id.as_str(), outcome.tool_name.as_str()))
                .or_default() += 1;
        }
    }
    tool_calls
        .iter()
        .filter(
            |call| match answers.get_mut(&(call.id.as_str(), call.name.as_str())) {
                Some(left) if *left > 0 => {
                    *left -= 1;
                    false
                }
                _ => true,
            },
        )
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::StopReason;

    #[test]
    fn tool_calls_inside_a_message_count_toward_what_resume_reads() {
        // Red team, round 8: one assistant line of 820,000 tiny calls (32 MiB) resumed at
        // 880 MB, each call buffered by serde and then answered with a repair.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calls.jsonl");
        let call = r#"{"id":"c","name":"e","arguments":""}"#;
        let calls = vec![call; MAX_TRANSCRIPT_MESSAGES].join(",");
        std::fs::write(
            &path,
            format!(
                "{{\"role\":\"user\",\"content\":\"hi\"}}\n{{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{calls}],\"stop\":\"tool_calls\"}}\n"
            ),
        )
        .unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("messages and tool calls"), "{err}");
    }

    #[test]
    fn a_transcript_of_more_messages_than_resume_reads_is_refused_by_count() {
        // Red team, round 6: 9 million empty messages (256 MiB) resumed at 2.8 GB.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.jsonl");
        let line = "{\"role\":\"user\",\"content\":\"\"}\n";
        std::fs::write(&path, line.repeat(MAX_TRANSCRIPT_MESSAGES)).unwrap();
        assert_eq!(load(&path).unwrap().messages.len(), MAX_TRANSCRIPT_MESSAGES);
        std::fs::write(&path, line.repeat(MAX_TRANSCRIPT_MESSAGES + 1)).unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(
            err.contains("holds more than 200000 messages")
                && err.contains("--transcript NEW.jsonl"),
            "{err}"
        );
    }

    #[test]
    fn a_last_line_cut_mid_character_is_skipped_and_bad_text_elsewhere_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut text = b"{\"role\":\"user\",\"content\":\"hi\"}\n".to_vec();
        text.extend_from_slice("{\"role\":\"user\",\"content\":\"\u{e9}".as_bytes());
        text.pop();
        std::fs::write(&path, &text).unwrap();
        let loaded = load(&path).unwrap();
        assert!(loaded.skipped_partial_line);
        assert_eq!(loaded.messages.len(), 1);
        text.extend_from_slice(b"\n");
        std::fs::write(&path, &text).unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn written_messages_load_back_and_missing_results_are_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let messages = [
            Message::User {
                content: crate::conversation::user_text::UserText::typed("hi"),
            },
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "a".into(),
                        name: "x".into(),
                        arguments: "{}".into(),
                    },
                    ToolCall {
                        id: "b".into(),
                        name: "y".into(),
                        arguments: "{}".into(),
                    },
                ],
                stop: StopReason::ToolCalls,
                usage: None,
            },
            Message::Tool(ToolOutcome {
                tool_call_id: "a".into(),
                tool_name: "x".into(),
                is_error: false,
                error_kind: None,
                content: "done".into(),
            }),
        ];
        let mut writer = TranscriptWriter::append_to(&path, Secrets::default()).unwrap();
        for message in &messages {
            writer.append(message).unwrap();
        }
        // A crash mid-write leaves half a line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"role\":\"tool\",\"tool_ca")
            .unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.messages, messages);
        assert!(loaded.skipped_partial_line);
        let [Message::Tool(repair)] = loaded.repairs.as_slice() else {
            panic!("one repair expected: {:?}", loaded.repairs);
        };
        assert_eq!(repair.tool_call_id, "b");
        assert_eq!(repair.error_kind, Some(ErrorKind::Cancelled));
    }

    #[test]
    fn calls_sharing_an_id_are_each_repaired() {
        let call = |name: &str| ToolCall {
            id: "a".into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        let messages = [
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("read_file"), call("hash"), call("hash")],
                stop: StopReason::ToolCalls,
                usage: None,
            },
            Message::Tool(ToolOutcome::error(
                &call("hash"),
                ErrorKind::ToolError,
                "done",
            )),
        ];
        let names: Vec<String> = unanswered_calls(&messages)
            .into_iter()
            .map(|call| call.name)
            .collect();
        assert_eq!(names, ["read_file", "hash"]);
    }

    #[test]
    fn a_bad_line_in_the_middle_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"role\":\"user\",\"content\":\"a\"}\nnonsense\n{\"role\":\"user\",\"content\":\"b\"}\n").unwrap();
        let err = load(&path).err().unwrap().to_string();
        assert!(err.contains("line 2"), "{err}");
    }
}
