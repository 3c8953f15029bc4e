//! What a call tells the host, at the bottom of the runtime: the tool result every call ends in,
//! the records a running guest reports (log lines, progress, file opens, HTTP attempts), and the
//! bounds that keep any of them from growing without limit, and the scrubber of configured
//! secrets each host owns and every output passes through (secrets/), and the one sanitiser for
//! untrusted text put on a terminal or log line (terminal_text.rs), and the one way a text is
//! shortened (text_cut.rs). Nothing here knows about wasmtime.

pub mod budget;
mod guest_report;
pub mod json_lines;
mod result;
pub mod secrets;
pub mod terminal_text;
pub mod text_cut;
pub mod utc_time;

pub use guest_report::{
    GuestReport, HttpAttempt, LogLevel, LogLine, OmittedRecords, PathOpen, ProgressUpdate,
    ReportSink,
};
pub(crate) use result::as_object;
pub use result::{Content, ErrorKind, MAX_CONTENT_BLOCKS, ToolResult};
