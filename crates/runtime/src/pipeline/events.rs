//! What a batch reports while it runs: each call's start, progress updates, log lines, HTTP
//! requests and file opens (of the tool and of the hooks around it, each naming the plugin whose
//! sandbox made it), records left out past their bounds, end, every hook decision and every approval. Events carry
//! the call id and are delivered as they happen, in the order they happen.

use crate::report::LogLevel;
use crate::report::budget::Omitted;
use crate::report::{Content, ErrorKind};
use crate::sandbox::plugin::SessionStage;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// Where events go: a callback, called from whichever task produced the event.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// Where a hook's sandbox ran: before or after a tool, or at a stage of the session. Written as
/// `before`, `after`, or the session stage as the contract spells it (`model-request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookStage {
    /// Before the tool runs: the hook may allow, ask about, block or rewrite the call.
    Before,
    /// After the tool ran: the hook may keep or replace the result.
    After,
    /// At a stage of the session (contract 0.3), about no tool call.
    Session(SessionStage),
}

impl HookStage {
    /// The stage as events and the audit log write it.
    pub fn as_str(self) -> &'static str {
        match self {
            HookStage::Before => "before",
            HookStage::After => "after",
            HookStage::Session(stage) => stage.as_str(),
        }
    }
}

impl Serialize for HookStage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One party that wants a person to approve a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AskedBy {
    /// A hook (`hook `guard``), or `cordon.toml` for the operator's policy.
    pub who: String,
    /// Why it wants the call approved.
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
        /// The call's id (`ID#N` for a call whose id an earlier call of the batch already has).
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The arguments the call runs with (after every before-hook); for a call that ends before
        /// it runs, those it was made with (`null` when its id was a duplicate).
        arguments: Value,
    },
    /// The running tool reported progress.
    ToolExecutionUpdate {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The partial output.
        content: Vec<Content>,
        /// Structured data for UIs and logs, not sent to the model.
        details: Value,
    },
    /// The running tool, or a hook of the call (`stage`), logged a line (cut past 8 KiB).
    ToolLog {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The plugin whose sandbox logged the line.
        plugin: String,
        /// Which hook stage logged it; `None` when the tool did.
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        /// The line's severity.
        level: LogLevel,
        /// The line, cut past 8 KiB.
        message: String,
    },
    /// The running tool, or a hook of the call (`stage`), made an outgoing HTTP request (`allowed`
    /// false: the gate refused it). The URL carries no query string and is cut past 1 KiB.
    HttpRequest {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The plugin whose sandbox made the request.
        plugin: String,
        /// Which hook stage made it; `None` when the tool did.
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        /// The request's method, in uppercase.
        method: String,
        /// The URL without its query string.
        url: String,
        /// Whether the gate let the request through.
        allowed: bool,
    },
    /// The running tool, or a hook of the call (`stage`), asked the host to open a path. `path` is
    /// the guest's view (the directory it opened from joined with the path it gave, as written, cut
    /// past 1 KiB); `outcome` is `opened`, `denied` or `failed`, with the WASI error code in `error`.
    PathOpen {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The plugin whose sandbox asked.
        plugin: String,
        /// Which hook stage asked; `None` when the tool did.
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        /// The path as the guest sees it.
        path: String,
        /// Where the opened file really is on the host, when it was opened.
        #[serde(skip_serializing_if = "Option::is_none")]
        host_path: Option<String>,
        /// What was asked for: `read`, `write`, `create`, `truncate`, `exclusive`, `directory`.
        mode: Vec<&'static str>,
        /// `opened`, `denied` (the grant does not allow it) or `failed`.
        outcome: &'static str,
        /// The WASI error code (`not-permitted`, `no-entry`, ...) when the path was not opened, or
        /// `outside-grants` for a path no grant holds (the guest got `no-entry`).
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<&'static str>,
    },
    /// A sandbox of the call (the tool's, or a hook's: `stage`) made more HTTP requests, path
    /// opens or log lines than are recorded per sandbox (1,000 of each); these were counted only.
    RecordsOmitted {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The plugin whose sandbox made the records.
        plugin: String,
        /// Which hook stage made them; `None` when the tool did.
        #[serde(skip_serializing_if = "Option::is_none")]
        stage: Option<HookStage>,
        /// How many of each kind were counted and not recorded.
        #[serde(flatten)]
        omitted: Omitted,
    },
    /// A call has its final result (after after-hooks and the size budget).
    ToolExecutionEnd {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// Time from the call's start to its final result, in milliseconds.
        duration_ms: u64,
        /// Whether the final result is an error.
        is_error: bool,
        /// The error's class, when the result is an error.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_kind: Option<ErrorKind>,
    },
    /// A session hook (contract 0.3) decided at a stage of the session: `proceed`, `block`,
    /// `replace`, `narrow`, `add_context`, `drop_calls`, or `failed` (with what went wrong in
    /// `reason`).
    SessionHook {
        /// The id the hook's sandbox ran under (`model-request-1`), which its log lines,
        /// requests and opens carry as their `tool_call_id`.
        call_id: String,
        /// The stage, as the contract spells it (`model-request`).
        stage: &'static str,
        /// The id of the plugin whose hook decided.
        hook: String,
        /// What it decided, in one word.
        decision: &'static str,
        /// The block's reason, or why the hook failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// What the decision does, field by field: `replace_bytes`, `context_bytes` (the sizes
        /// of its texts), `only_tools`, `drop_calls`; empty for `proceed` and `failed`.
        #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
        effects: serde_json::Map<String, Value>,
        /// How long the hook's sandbox ran, in milliseconds.
        duration_ms: u64,
    },
    /// A tool hook asked on its own, outside any call (`cordon serve --hooks-as-tools`),
    /// answered: `allow`, `ask`, `block`, `rewrite`, `keep`, `replace`, or `failed`.
    HookAnswered {
        /// The id its sandbox ran under, which its log lines, requests and opens carry.
        call_id: String,
        /// The id of the plugin whose hook answered.
        hook: String,
        /// `before` or `after`.
        stage: HookStage,
        /// The tool call it was asked about.
        tool_name: String,
        /// What it decided, in one word.
        decision: &'static str,
        /// The block's or the ask's reason, or why the hook failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// How long the hook's sandbox ran, in milliseconds.
        duration_ms: u64,
    },
    /// A hook decided about a call: allow, block, rewrite, keep, replace, or failed.
    HookDecision {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// The id of the plugin whose hook decided.
        hook: String,
        /// Before or after the tool ran.
        stage: HookStage,
        /// `allow`, `ask`, `block` or `rewrite` before; `keep` or `replace` after; `failed` at
        /// either.
        decision: &'static str,
        /// The reason the hook gave, or why it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A call that needed a person's approval was approved or refused, by `decided_by` (`user`,
    /// `client`, `default` when nobody could be asked, ...).
    Approval {
        /// The call's id.
        tool_call_id: String,
        /// The tool called.
        tool_name: String,
        /// Everyone who wanted the call approved, and why.
        asked_by: Vec<AskedBy>,
        /// Whether the call may run.
        approved: bool,
        /// Who decided.
        decided_by: String,
        /// Why it was refused, when a reason was given.
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl Event {
    /// The id of the call the event is about; for a session hook's decision, the id its sandbox
    /// ran under.
    pub fn tool_call_id(&self) -> &str {
        match self {
            Self::SessionHook { call_id, .. } | Self::HookAnswered { call_id, .. } => call_id,
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
