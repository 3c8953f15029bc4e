//! What a running guest reports to the host, as the pipeline, the audit log and the front ends
//! receive it: progress updates, log lines, HTTP requests made or refused, paths opened or refused,
//! and the count of records past their bounds. The vocabulary sits below the sandbox that produces
//! it and everything that consumes it.

use crate::report::Content;
use crate::report::budget::Omitted;
use serde_json::Value;
use std::sync::Arc;

/// Receives what a running call reports: progress updates and log lines.
pub type ReportSink = Arc<dyn Fn(GuestReport) + Send + Sync>;

/// Something a running guest reported through its host imports.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestReport {
    Progress(ProgressUpdate),
    Log(LogLine),
    /// An outgoing HTTP request, let through or refused by the gate.
    Http(HttpAttempt),
    /// A path the guest asked the host to open, opened or refused.
    PathOpen(PathOpen),
    /// Records the sandbox made past their bounds (sent once, when it ends, if any).
    Omitted(OmittedRecords),
}

/// What one sandbox reported too much of, counted instead of kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmittedRecords {
    pub call_id: String,
    pub omitted: Omitted,
}

/// A path a guest asked the host to open (`wasi:filesystem` `open-at`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOpen {
    pub call_id: String,
    /// As the guest sees it: the directory it opened from joined with the path it gave, as written.
    pub path: String,
    /// Where the opened file really is on the host (`None` when the open failed).
    pub host_path: Option<String>,
    /// What it asked for: `read`, `write`, `create`, `truncate`, `exclusive`, `directory`.
    pub mode: Vec<&'static str>,
    /// `None` when the host opened it; otherwise the WASI error code (`not-permitted`, `no-entry`,
    /// `read-only`, ...).
    pub error: Option<&'static str>,
}

impl PathOpen {
    /// `opened`, `denied` (the grant does not allow it) or `failed` (anything else, such as a
    /// missing file).
    pub fn outcome(&self) -> &'static str {
        match self.error {
            None => "opened",
            Some("not-permitted" | "access" | "read-only" | "quota") => "denied",
            Some(_) => "failed",
        }
    }
}

/// An outgoing HTTP request a guest made. The URL has no query string (it may carry secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAttempt {
    pub call_id: String,
    pub method: String,
    pub url: String,
    pub allowed: bool,
}

/// Severity of a guest's log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// A line a guest logged during a call.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    pub call_id: String,
    pub level: LogLevel,
    pub message: String,
}

/// Partial output a tool streamed while running.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    pub call_id: String,
    pub content: Vec<Content>,
    pub details: Value,
}
