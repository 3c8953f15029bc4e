//! Tool log lines as MCP `notifications/message`, at or above the level the client asked for: per
//! request in `_meta` (2026-07-28), or with `logging/setLevel` (earlier revisions; shared by all
//! clients of one HTTP server). Nothing is forwarded until a client asks. MCP logging is deprecated from the 2026-07-28 revision on
//! (SEP-2577) but older clients still use it, so this file alone allows the deprecated rmcp items.
#![allow(deprecated)]

use cordon_runtime::report::LogLevel;
use rmcp::RoleServer;
use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, RequestMetaObject, ServerCapabilities,
};
use rmcp::service::Peer;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// The server's capabilities: tools, and logging for the clients that still use it.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities::builder()
        .enable_tools()
        .enable_logging()
        .build()
}

/// The least severe level forwarded; shared by the clones of one server.
#[derive(Clone)]
pub struct LogThreshold(Arc<AtomicU8>);

/// The threshold before any client has set a level: above every level, so nothing is sent.
const OFF: u8 = u8::MAX;

impl Default for LogThreshold {
    fn default() -> Self {
        Self(Arc::new(AtomicU8::new(OFF)))
    }
}

impl LogThreshold {
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    /// The threshold for one request: its own `_meta` opt-in (`io.modelcontextprotocol/logLevel`,
    /// 2026-07-28), else the level the client set with `logging/setLevel`.
    pub fn for_request(&self, meta: &RequestMetaObject) -> Self {
        match meta.log_level() {
            Some(level) => Self(Arc::new(AtomicU8::new(rank(level)))),
            None => self.clone(),
        }
    }

    /// Whether any log line would be forwarded.
    pub fn enabled(&self) -> bool {
        self.0.load(Ordering::Relaxed) != OFF
    }

    /// The notification for a tool's log line, unless it is below the threshold.
    pub fn forward(&self, level: LogLevel, tool: &str, message: String) -> Option<LogForwarding> {
        let level = match level {
            LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Warn => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
        };
        (rank(level) >= self.0.load(Ordering::Relaxed)).then(|| {
            LogForwarding(
                LoggingMessageNotificationParam::new(level, message.into()).with_logger(tool),
            )
        })
    }
}

/// A log notification waiting to be sent.
pub struct LogForwarding(LoggingMessageNotificationParam);

impl LogForwarding {
    pub async fn send(self, peer: &Peer<RoleServer>) -> Result<(), rmcp::service::ServiceError> {
        peer.notify_logging_message(self.0).await
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}
