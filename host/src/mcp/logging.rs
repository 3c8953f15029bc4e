//! Tool log lines as MCP `notifications/message`, at or above the level a client set with
//! `logging/setLevel` (default info). MCP logging is deprecated from the 2026-07-28 revision on
//! (SEP-2577) but older clients still use it, so this file alone allows the deprecated rmcp items.
#![allow(deprecated)]

use crate::call_state::LogLevel;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ServerCapabilities};
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

impl Default for LogThreshold {
    fn default() -> Self {
        Self(Arc::new(AtomicU8::new(rank(LoggingLevel::Info))))
    }
}

impl LogThreshold {
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
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
