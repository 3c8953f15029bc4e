//! Append-only JSON-lines files, as the audit log and agent transcripts keep them: each record is
//! serialised whole, written in a single `write` and flushed, so a line is never split by a crash
//! or interleaved with another process appending to the same file. No registered secret is
//! ever written (see secrets.rs).

use serde::Serialize;
use std::io::Write as _;
use std::path::Path;

pub struct JsonLinesFile {
    file: std::fs::File,
}

impl JsonLinesFile {
    /// Opens `path` for appending, creating the file if needed.
    pub fn append_to(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self { file })
    }

    /// Appends `record` as one line.
    pub fn append(&mut self, record: &impl Serialize) -> std::io::Result<()> {
        let line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
        let mut line = crate::report::secrets::scrub_bytes(&line).into_owned();
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()
    }
}
