//! Append-only JSON-lines files, as the audit log and agent transcripts keep them: each record is
//! serialised whole, written in a single `write` and flushed, so a line is never split by a crash
//! or interleaved with another process appending to the same file. No registered secret is
//! ever written: the file masks each record with the scrubber it was opened with (see secrets.rs).

use crate::report::secrets::Secrets;
use serde::Serialize;
use std::io::Write as _;
use std::path::Path;

/// A JSON-lines file open for appending, one record per line.
pub(crate) struct JsonLinesFile {
    file: std::fs::File,
    secrets: Secrets,
}

impl JsonLinesFile {
    /// Opens `path` for appending, creating the file if needed; `secrets` masks every record.
    pub fn append_to(path: &Path, secrets: Secrets) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self { file, secrets })
    }

    /// Appends `record` as one line. Its strings are scrubbed before it is serialised, never the
    /// serialised text: a mask placed across JSON's own quotes or escapes would break the line.
    pub fn append(&mut self, record: &impl Serialize) -> std::io::Result<()> {
        let mut value = serde_json::to_value(record).map_err(std::io::Error::other)?;
        self.secrets.scrub_json(&mut value);
        let mut line = serde_json::to_vec(&value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()
    }
}
