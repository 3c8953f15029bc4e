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
    /// Partial output the tool streamed.
    Progress(ProgressUpdate),
    /// A line the guest logged.
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
    /// The call the sandbox ran for.
    pub call_id: String,
    /// How many records of each kind were counted and not kept.
    pub omitted: Omitted,
}

/// A path a guest asked the host to open (`wasi:filesystem` `open-at`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOpen {
    /// The call the guest was running.
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
            Some("not-permitted" | "access" | "read-only" | "quota" | "outside-grants") => "denied",
            Some(_) => "failed",
        }
    }
}

/// An outgoing HTTP request a guest made. The URL has no query string (it may carry secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpAttempt {
    /// The call the guest was running.
    pub call_id: String,
    /// The request's method, in uppercase.
    pub method: String,
    /// The URL, without its query string.
    pub url: String,
    /// Whether the gate let the request through.
    pub allowed: bool,
}

/// Severity of a guest's log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// The most detailed level.
    Trace,
    /// Detail for debugging.
    Debug,
    /// Ordinary information.
    Info,
    /// Something that may be wrong.
    Warn,
    /// Something failed.
    Error,
}

/// A line a guest logged during a call.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// The call the guest was running.
    pub call_id: String,
    /// The line's severity.
    pub level: LogLevel,
    /// The line (cut past 8 KiB).
    pub message: String,
}

/// Partial output a tool streamed while running.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// The call the guest was running.
    pub call_id: String,
    /// The partial output.
    pub content: Vec<Content>,
    /// Structured data for UIs and logs, not sent to the model.
    pub details: Value,
}
