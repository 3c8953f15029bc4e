//! [`Context`]: what a running tool or hook can ask of the host.

use crate::Output;
use crate::bindings::cordon::plugin::host;
use serde::de::DeserializeOwned;

/// Severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// The host's services for the current call.
#[derive(Debug, Clone, Default)]
pub struct Context {
    call_id: String,
}

impl Context {
    pub(crate) fn new(call_id: String) -> Self {
        Self { call_id }
    }

    /// The model's id of the current call.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// Writes a line to the host's log.
    pub fn log(&self, level: LogLevel, message: impl AsRef<str>) {
        let level = match level {
            LogLevel::Trace => host::Level::Trace,
            LogLevel::Debug => host::Level::Debug,
            LogLevel::Info => host::Level::Info,
            LogLevel::Warn => host::Level::Warn,
            LogLevel::Error => host::Level::Error,
        };
        host::log(level, message.as_ref());
    }

    /// Streams partial output to the user interface.
    pub fn progress(&self, update: Output) {
        host::progress(&crate::runtime::to_wit_output(update));
    }

    /// Whether the call was cancelled. Long loops should check it and return early.
    pub fn cancelled(&self) -> bool {
        host::cancelled()
    }

    /// This plugin's settings from the operator's cordon.toml, as raw JSON.
    pub fn settings_json(&self) -> serde_json::Value {
        serde_json::from_str(&host::settings()).unwrap_or(serde_json::Value::Null)
    }

    /// This plugin's settings deserialized into `T`.
    pub fn settings<T: DeserializeOwned>(&self) -> Result<T, crate::ToolError> {
        serde_json::from_str(&host::settings()).map_err(|err| {
            crate::ToolError::new(format!("this plugin's settings are invalid: {err}"))
        })
    }
}
