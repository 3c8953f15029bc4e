//! What can go wrong opening, reading, checking or writing a transcript: the error every
//! transcript path returns, naming the file and what to do.

use std::path::PathBuf;

/// A transcript could not be opened, read back, trusted or written.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot open the transcript {path}: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the transcript {path} is {kind}: a transcript must be a regular file; name a .jsonl file with --transcript or --resume"
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "the transcript {path} is {} MiB, over the {} MiB cordon reads back to resume from; start a new session (--transcript NEW.jsonl) instead",
        size.div_ceil(1 << 20),
        limit >> 20
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error(
        "the transcript {path} holds more than {limit} messages and tool calls, more than cordon reads back to resume from; start a new session (--transcript NEW.jsonl) instead"
    )]
    TooManyMessages { path: PathBuf, limit: usize },
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
