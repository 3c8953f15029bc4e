//! What a batch reports while it runs: each call's start, progress updates, log lines, HTTP
//! requests and file opens (of the tool and of the hooks around it, each naming the plugin whose
//! sandbox made it), records left out past their bounds, end, every hook decision and every approval. Events carry
//! the call id and are delivered as they happen, in the order they happen.

use crate::report::LogLevel;
use crate::report::budget::Omitted;
use crate::report::{Content, ErrorKind};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// Where events go: a callback, called from whichever task produced the event.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// Before or after the tool ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookStage {
    Before,
    After,
}

/// One party that wants a person to approve a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskedBy {
    /// A hook (`hook `guard``), or `cordon.toml` for the operator's policy.
    pub who: String,
    pub reason: String,
}

/// One thing that happened in a batch.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// A prepared call starts executing.
    ToolExecutionStart {
        tool_call_id: String,
        tool_name: String,
        arguments: Value,
    },
    /// The running tool reported progress.
    ToolExecutionUpdate {
        tool_call_id: String,
        tool_name: String,
        content: Vec<Content>,
        details: Value,
    },
    /// The running tool, or a hook of the call (`stage`), logged a line (cut past 8 KiB).
    ToolLog {
        tool_call_id: String,
        tool_name: String,
        plugin: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        level: LogLevel,
        message: String,
    },
    /// The running tool, or a hook of the call (`stage`), made an outgoing HTTP request (`allowed`
    /// false: the gate refused it). The URL carries no query string and is cut past 1 KiB.
    HttpRequest {
        tool_call_id: String,
        tool_name: String,
        plugin: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        method: String,
        url: String,
        allowed: bool,
    },
    /// The running tool, or a hook of the call (`stage`), asked the host to open a path. `path` is
    /// the guest's view (the directory it opened from joined with the path it gave, as written, cut
    /// past 1 KiB); `outcome` is `opened`, `denied` or `failed`, with the WASI error code in `error`.
    PathOpen {
        tool_call_id: String,
        tool_name: String,
        plugin: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        path: String,
        /// Where the opened file really is on the host, when it was opened.
        #[serde(skip_serializing_if = "Option::is_none")]
        host_path: Option<String>,
        mode: Vec<&'static str>,
        outcome: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'static str>,
    },
    /// A sandbox of the call (the tool's, or a hook's: `stage`) made more HTTP requests, path
    /// opens or log lines than are recorded per sandbox (1,000 of each); these were counted only.
    RecordsOmitted {
        tool_call_id: String,
        tool_name: String,
        plugin: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        #[serde(flatten)]
        omitted: Omitted,
    },
    /// A call has its final result (after after-hooks and the size budget).
    ToolExecutionEnd {
        tool_call_id: String,
        tool_name: String,
        duration_ms: u64,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_kind: Option<ErrorKind>,
    },
    /// A session hook (contract 0.3) decided at a stage of the session: `proceed`, `block`,
    /// `replace`, `narrow`, `add_context`, `drop_calls`, or `failed` (with what went wrong in
    /// `reason`).
    SessionHook {
        stage: &'static str,
        hook: String,
        decision: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        duration_ms: u64,
    },
    /// A hook decided about a call: allow, block, rewrite, keep, replace, or failed.
    HookDecision {
        tool_call_id: String,
        tool_name: String,
        hook: String,
        stage: HookStage,
        decision: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A call that needed a person's approval was approved or refused, by `decided_by` (`user`,
    /// `client`, `default` when nobody could be asked, ...).
    Approval {
        tool_call_id: String,
        tool_name: String,
        asked_by: Vec<AskedBy>,
        approved: bool,
        decided_by: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl Event {
    /// The call the event is about; "" for a session hook's, which is about no call.
    pub fn tool_call_id(&self) -> &str {
        match self {
            Self::SessionHook { .. } => "",
            Self::ToolExecutionStart { tool_call_id, .. }
            | Self::ToolExecutionUpdate { tool_call_id, .. }
            | Self::ToolLog { tool_call_id, .. }
            | Self::HttpRequest { tool_call_id, .. }
            | Self::PathOpen { tool_call_id, .. }
            | Self::RecordsOmitted { tool_call_id, .. }
            | Self::ToolExecutionEnd { tool_call_id, .. }
            | Self::HookDecision { tool_call_id, .. }
            | Self::Approval { tool_call_id, .. } => tool_call_id,
        }
    }
}

/// Sends to an optional sink.
#[derive(Clone, Default)]
pub(crate) struct Emitter(Option<EventSink>);

impl Emitter {
    pub fn new(sink: Option<EventSink>) -> Self {
        Self(sink)
    }

    /// Whether anyone receives events.
    pub fn is_listening(&self) -> bool {
        self.0.is_some()
    }

    /// Builds and sends an event, only when someone listens.
    pub fn emit(&self, event: impl FnOnce() -> Event) {
        if let Some(sink) = &self.0 {
            sink(event());
        }
    }
}
