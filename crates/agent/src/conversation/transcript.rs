//! Transcripts: the conversation as JSON lines, one [`Message`] per line, each appended and
//! handed to the OS as it happens, so a crash or Ctrl-C loses nothing already said. Loading one
//! to resume tolerates a last line cut off mid-write and answers the last step's tool calls left
//! without results (the session stopped while they ran); a transcript cordon did not write that
//! way (transcript_shape.rs) is refused.

use crate::conversation::message::{Message, ToolCall, ToolOutcome};
use cordon_runtime::report::ErrorKind;
use cordon_runtime::report::json_lines::JsonLinesFile;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot open the transcript {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write to the transcript {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} line {line} is not a transcript message ({reason}); fix or remove that line")]
    BadLine {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "{path} line {line} is not a transcript cordon wrote: {reason}. It was edited (by a plugin with write access, or by hand); resume from a transcript kept outside every plugin's read-write grant"
    )]
    NotWritten {
        path: PathBuf,
        line: usize,
        reason: String,
    },
}

/// Appends messages to a transcript file.
pub struct TranscriptWriter {
    file: JsonLinesFile,
    path: PathBuf,
}

impl TranscriptWriter {
    /// Opens (creating if needed) `path` for appending.
    pub fn append_to(path: &Path) -> Result<Self, TranscriptError> {
        let file = JsonLinesFile::append_to(path).map_err(|source| TranscriptError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Writes one message as one line, in one write, and flushes it.
    pub fn append(&mut self, message: &Message) -> Result<(), TranscriptError> {
        self.file
            .append(message)
            .map_err(|source| TranscriptError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

/// A transcript read back.
pub struct Loaded {
    pub messages: Vec<Message>,
    /// Results added for tool calls that had none (the session stopped while they ran); they
    /// belong at the end of the transcript.
    pub repairs: Vec<Message>,
    /// A last line that was cut off mid-write and skipped.
    pub skipped_partial_line: bool,
}

/// Reads a transcript to resume from.
pub fn load(path: &Path) -> Result<Loaded, TranscriptError> {
    let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .collect();
    let mut numbered = Vec::new();
    let mut skipped_partial_line = false;
    for (position, (number, line)) in lines.iter().enumerate() {
        match serde_json::from_str::<Message>(line) {
            Ok(message) => numbered.push((number + 1, message)),
            Err(_) if position + 1 == lines.len() && !text.ends_with('\n') => {
                skipped_partial_line = true;
            }
            Err(err) => {
                return Err(TranscriptError::BadLine {
                    path: path.to_path_buf(),
                    line: number + 1,
                    reason: err.to_string(),
                });
            }
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

/// The last assistant message's calls that no tool message answers.
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
    let answered: HashSet<&str> = messages[position + 1..]
        .iter()
        .filter_map(|m| match m {
            Message::Tool(outcome) => Some(outcome.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    tool_calls
        .iter()
        .filter(|call| !answered.contains(call.id.as_str()))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::message::StopReason;
    use std::io::Write as _;

    #[test]
    fn written_messages_load_back_and_missing_results_are_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let messages = [
            Message::User {
                content: "hi".into(),
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
        let mut writer = TranscriptWriter::append_to(&path).unwrap();
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
    fn a_bad_line_in_the_middle_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, "{\"role\":\"user\",\"content\":\"a\"}\nnonsense\n{\"role\":\"user\",\"content\":\"b\"}\n").unwrap();
        let err = load(&path).err().unwrap().to_string();
        assert!(err.contains("line 2"), "{err}");
    }
}
