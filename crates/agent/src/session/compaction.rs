//! Keeping each request inside the context window: plan the request (`context::fit`), and when
//! the plan says older turns must go, fold them into a summary, written by the model in a
//! separate request that offers no tools, or as cordon's digest when the model cannot be asked
//! (or `[model] compaction = "digest"`), unless a `compaction` hook supplies it. The summary is a
//! transcript line, so a resumed session
//! starts from it; the messages it stands in for stay in the transcript.

use super::{Agent, AgentError, TurnTally};
use crate::context::digest::digest;
use crate::context::fit::{Plan, summary_allowance};
use crate::context::summary;
use crate::context::window::Window;
use crate::conversation::message::Message;
use crate::conversation::observer::{AgentObserver, CompactionReport, Unobserved};
use crate::model::client::{ModelError, read_whole};
use crate::model::provider::ToolSpec;
use crate::settings::Compaction;
use cordon_runtime::report::text_cut::{self, CutMark};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

impl Agent {
    /// The messages of the next request and their raw token count (tools included), compacting
    /// the history first when it does not fit (or when `force`: the server refused it).
    pub(super) async fn fitted(
        &mut self,
        window: Window,
        tools: &[ToolSpec],
        force: bool,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<(Vec<Message>, u64), AgentError> {
        let mut force = force;
        for _ in 0..3 {
            match self.context.plan(window, &self.messages, tools, force)? {
                Plan::Send {
                    messages,
                    raw_tokens,
                } => return Ok((messages, raw_tokens)),
                Plan::Compact {
                    from,
                    through,
                    raw_before,
                } => {
                    let span = tracing::info_span!(
                        target: "cordon_otel",
                        "compaction",
                        otel.name = "cordon.compaction",
                        cordon.compaction.folded_from = from as i64,
                        cordon.compaction.folded_through = through as i64,
                        cordon.compaction.tokens_before = raw_before as i64,
                    );
                    self.compact(from, through, raw_before, window, observer, cancel, tally)
                        .instrument(span)
                        .await?;
                    force = false;
                }
            }
        }
        match self.context.plan(window, &self.messages, tools, false)? {
            Plan::Send {
                messages,
                raw_tokens,
            } => Ok((messages, raw_tokens)),
            Plan::Compact { .. } => unreachable!("a fresh summary leaves room for the newest turn"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn compact(
        &mut self,
        from: usize,
        through: usize,
        raw_before: u64,
        window: Window,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<(), AgentError> {
        let previous = self.messages.iter().rev().find_map(|m| match m {
            Message::Compaction { summary, .. } => Some(summary.clone()),
            _ => None,
        });
        let folded: Vec<Message> = self.messages[from..through]
            .iter()
            .filter(|m| m.is_conversation())
            .cloned()
            .collect();
        let reply_tokens = self.context.reply_tokens(window);
        let allowance = summary_allowance(self.context.raw_request_budget(window, reply_tokens));
        let supplied = self
            .compaction_stage(previous.as_deref(), &folded, observer, cancel)
            .await?;
        let written = match (supplied, self.context.compaction()) {
            (Some(summary), _) => Some((summary, "hook")),
            (None, Compaction::Model) => self
                .summarise(
                    previous.as_deref(),
                    &folded,
                    window,
                    observer,
                    cancel,
                    tally,
                )
                .await?
                .map(|summary| (summary, "model")),
            (None, Compaction::Digest) => None,
        };
        let counter = self.context.counter();
        let (summary, method) = match written {
            Some(written) => written,
            None => (
                digest(previous.as_deref(), &folded, allowance, counter),
                "digest",
            ),
        };
        let summary = within(&summary, allowance, counter);
        let folded_raw: u64 = folded.iter().map(|m| counter.raw_message(m)).sum();
        let previous_raw = previous.as_deref().map_or(0, |s| counter.raw_text(s));
        let raw_after =
            (raw_before + counter.raw_text(&summary)).saturating_sub(folded_raw + previous_raw);
        let report = CompactionReport {
            method: method.to_string(),
            folded_messages: folded.len(),
            tokens_before: counter.calibrated(raw_before),
            tokens_after: counter.calibrated(raw_after),
            window: window.tokens,
        };
        tracing::info!(?report, "compacted the history");
        self.push(Message::Compaction {
            summary,
            through,
            method: report.method.clone(),
            tokens_before: report.tokens_before,
            tokens_after: report.tokens_after,
        })?;
        observer.compaction(&report);
        self.compacted_stage(&report, observer, cancel).await;
        Ok(())
    }

    /// Asks the model for a summary (of at most the allowance `window` leaves one); `None` when
    /// it cannot be asked or gives nothing usable.
    async fn summarise(
        &self,
        previous: Option<&str>,
        folded: &[Message],
        window: Window,
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
        tally: &mut TurnTally,
    ) -> Result<Option<String>, AgentError> {
        let counter = self.context.counter();
        let allowance = summary_allowance(
            self.context
                .raw_request_budget(window, self.context.reply_tokens(window)),
        );
        let reply_tokens = counter
            .calibrated(allowance)
            .min(u64::from(window.tokens / 4)) as u32;
        let budget = self.context.raw_request_budget(window, reply_tokens);
        let Some(mut messages) = summary::request(previous, folded, budget, counter) else {
            return Ok(None);
        };
        // The summary request sends the folded turns: the hooks see it as a model request.
        self.side_request_stage("compaction", &mut messages, observer, cancel)
            .await?;
        match self
            .client
            .complete(
                &messages,
                &[],
                Some(reply_tokens),
                &Unobserved,
                &read_whole,
                cancel,
            )
            .await
        {
            Ok(reply) => {
                tally.count(reply.usage);
                let text = reply.text.trim();
                Ok((!text.is_empty() && reply.tool_calls.is_empty()).then(|| text.to_string()))
            }
            Err(ModelError::Cancelled) => Err(AgentError::Cancelled),
            Err(err) => {
                tally.requests += 1;
                tracing::warn!(%err, "the summary request failed; using the digest");
                Ok(None)
            }
        }
    }
}

/// `text` cut to at most `allowance` raw tokens.
fn within(
    text: &str,
    allowance: u64,
    counter: &crate::context::token_count::TokenCounter,
) -> String {
    let tokens = counter.raw_text(text);
    if tokens <= allowance {
        return text.to_string();
    }
    let end = (text.len() as u64 * allowance / tokens) as usize * 9 / 10;
    text_cut::cut(text, end, CutMark::Ellipsis).into_owned()
}
