//! The notifications one `tools/call` sends while it runs: the tool's progress as
//! `notifications/progress` and its log lines as `notifications/message`, in order, by one task;
//! for a tool whose results an after-hook reviews, a heartbeat on the host's clock instead.

use super::logging::{LogForwarding, LogThreshold};
use cordon_runtime::pipeline::Event;
use cordon_runtime::pipeline::events::EventSink;
use cordon_runtime::report::secrets::Secrets;
use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use std::sync::{Arc, Mutex};

/// A notification for the client, in the order the call produced it.
enum Outgoing {
    Progress(ProgressNotificationParam),
    Log(LogForwarding),
}

/// Notifications waiting to be sent for one call at most; past it (a client that does not read, a
/// tool that floods progress) further ones are dropped.
const QUEUED_NOTIFICATIONS: usize = 1_024;

/// How often a call whose results an after-hook reviews reports progress: on the host's clock,
/// whatever the tool does, so a client that resets its timeout on progress keeps waiting.
const REVIEWED_HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(1);

/// Turns a call's events into notifications, sent in order by one task: progress updates become
/// `notifications/progress` (when the request has a progress token; a tool's progress details may
/// carry `progress` and `total` numbers, otherwise each update counts one step), and the tool's log
/// lines at or above the client's level become `notifications/message`. When an after-hook reviews
/// the tool's results (`reviewed`), nothing the tool chose reaches the client before that review,
/// not even when or how often it reports: its progress and log lines stay in the host, and the
/// client gets a heartbeat every [`REVIEWED_HEARTBEAT`] while the call runs instead. The task
/// ends once every clone of the returned sink is dropped.
pub(super) fn forwarder(
    peer: Peer<RoleServer>,
    token: Option<ProgressToken>,
    log_level: LogThreshold,
    reviewed: bool,
    secrets: Secrets,
) -> (EventSink, tokio::task::JoinHandle<()>) {
    let (sender, mut outgoing) = tokio::sync::mpsc::channel::<Outgoing>(QUEUED_NOTIFICATIONS);
    let sending = tokio::spawn(async move {
        while let Some(message) = outgoing.recv().await {
            let sent = match message {
                Outgoing::Progress(progress) => peer.notify_progress(progress).await,
                Outgoing::Log(line) => line.send(&peer).await,
            };
            if sent.is_err() {
                break;
            }
        }
    });
    if reviewed {
        return reviewed_forwarder(sender, token, sending);
    }
    let steps = Mutex::new(0.0_f64);
    let sink: EventSink = Arc::new(move |event: Event| match event {
        Event::ToolExecutionUpdate {
            content, details, ..
        } => {
            let Some(token) = &token else { return };
            let mut step = steps
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            *step = details
                .get("progress")
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(*step + 1.0);
            let mut progress = ProgressNotificationParam::new(token.clone(), *step);
            if let Some(total) = details.get("total").and_then(serde_json::Value::as_f64) {
                progress = progress.with_total(total);
            }
            let message = secrets.scrub(&text_of(&content)).into_owned();
            if !message.is_empty() {
                progress = progress.with_message(message);
            }
            let _ = sender.try_send(Outgoing::Progress(progress));
        }
        Event::ToolLog {
            tool_name,
            level,
            message,
            ..
        } => {
            let message = secrets.scrub(&message).into_owned();
            if let Some(line) = log_level.forward(level, &tool_name, message) {
                let _ = sender.try_send(Outgoing::Log(line));
            }
        }
        _ => {}
    });
    (sink, sending)
}

fn text_of(content: &[cordon_runtime::report::Content]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            cordon_runtime::report::Content::Text { text } => Some(text.as_str()),
            cordon_runtime::report::Content::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The sink for a reviewed call: it keeps the tool's events in the host and, with a progress
/// token, sends a heartbeat every [`REVIEWED_HEARTBEAT`] until the sink is dropped.
fn reviewed_forwarder(
    sender: tokio::sync::mpsc::Sender<Outgoing>,
    token: Option<ProgressToken>,
    sending: tokio::task::JoinHandle<()>,
) -> (EventSink, tokio::task::JoinHandle<()>) {
    let alive = Arc::new(());
    let running = Arc::downgrade(&alive);
    if let Some(token) = token {
        tokio::spawn(async move {
            let mut beats = 0.0_f64;
            let mut ticks = tokio::time::interval(REVIEWED_HEARTBEAT);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if running.upgrade().is_none() {
                    break;
                }
                beats += 1.0;
                let beat = ProgressNotificationParam::new(token.clone(), beats);
                if sender.send(Outgoing::Progress(beat)).await.is_err() {
                    break;
                }
            }
        });
    }
    let sink: EventSink = Arc::new(move |_event: Event| {
        let _alive = &alive;
    });
    (sink, sending)
}
