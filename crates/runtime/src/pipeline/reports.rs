//! What a running sandbox reports (progress, log lines, HTTP requests, opened paths, records past
//! their bounds) turned into events, attributed to the plugin whose sandbox made them: the tool's
//! own, or a hook's (with its stage). Reports that arrive after the sandbox ended are dropped.

use super::events::{Emitter, Event, HookStage};
use crate::report::{GuestReport, ReportSink};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whose sandbox is reporting, about which call.
#[derive(Clone)]
pub(crate) struct Reporter {
    pub tool_name: String,
    pub plugin: String,
    /// `None` for the tool itself, the hook's stage for a hook.
    pub stage: Option<HookStage>,
}

/// A report sink that emits `reporter`'s reports as events while `running` is true; `None` when
/// nobody listens to events.
pub(crate) fn sink(
    reporter: Reporter,
    emitter: &Emitter,
    running: Arc<AtomicBool>,
) -> Option<ReportSink> {
    if !emitter.is_listening() {
        return None;
    }
    let emitter = emitter.clone();
    Some(Arc::new(move |report: GuestReport| {
        if !running.load(Ordering::SeqCst) {
            return;
        }
        let Reporter {
            tool_name,
            plugin,
            stage,
        } = reporter.clone();
        emitter.emit(|| match report {
            GuestReport::Progress(update) => Event::ToolExecutionUpdate {
                tool_call_id: update.call_id,
                tool_name,
                content: update.content,
                details: update.details,
            },
            GuestReport::Log(line) => Event::ToolLog {
                tool_call_id: line.call_id,
                tool_name,
                plugin,
                stage,
                level: line.level,
                message: line.message,
            },
            GuestReport::Http(attempt) => Event::HttpRequest {
                tool_call_id: attempt.call_id,
                tool_name,
                plugin,
                stage,
                method: attempt.method,
                url: attempt.url,
                allowed: attempt.allowed,
            },
            GuestReport::PathOpen(open) => Event::PathOpen {
                outcome: open.outcome(),
                tool_call_id: open.call_id,
                tool_name,
                plugin,
                stage,
                path: open.path,
                host_path: open.host_path,
                mode: open.mode,
                error: open.error,
            },
            GuestReport::Omitted(records) => Event::RecordsOmitted {
                tool_call_id: records.call_id,
                tool_name,
                plugin,
                stage,
                omitted: records.omitted,
            },
        });
    }))
}

/// A sink for a hook's sandbox: its progress is not the tool's, so only its log lines, requests,
/// opens and omissions become events.
pub(crate) fn hook_sink(
    reporter: Reporter,
    emitter: &Emitter,
    running: Arc<AtomicBool>,
) -> Option<ReportSink> {
    let inner = sink(reporter, emitter, running)?;
    Some(Arc::new(move |report: GuestReport| {
        if !matches!(report, GuestReport::Progress(_)) {
            inner(report);
        }
    }))
}
