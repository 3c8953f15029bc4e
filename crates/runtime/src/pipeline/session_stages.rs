//! Session stages (contract 0.3): the granted hooks that declare a stage run at it one after
//! another, in `[hooks] order`, each in its own sandbox with its plugin's grants and limits, each
//! seeing the event as the hooks before it left it. What a decision may do depends on the stage
//! ([`allowed`]); a decision that does more, a trap or a timeout is a failure, and at a stage
//! that can stop the session a failure stops it (fails closed). Every configured secret is masked
//! in the event before a hook sees it, and every decision is an [`Event::SessionHook`] and a line of the audit log.

use super::Pipeline;
use super::events::{Emitter, Event, EventSink, HookStage};
use super::reports::{self, Reporter};
use crate::report::secrets::Secrets;
use crate::sandbox::plugin::{CallOptions, Plugin, SessionDecision, SessionStage};
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// The most bytes a decision's texts (a replacement, a context, a reason) and names (only-tools,
/// drop-calls) may come to together.
pub const MAX_DECISION_TEXT_BYTES: usize = 64 << 10;
/// The most tool names a decision may list (`only-tools`, `drop-calls`).
pub const MAX_DECISION_NAMES: usize = 1024;
/// How much of a hook's reason a `session_hook` event quotes.
const MAX_EVENT_REASON_BYTES: usize = 1 << 10;
/// The longest one of those names may be: as long as an event shows a name or call id (a tool
/// name is at most 64 bytes, a call id a model wrote rarely more than 100).
pub const MAX_DECISION_NAME_BYTES: usize = super::stage_payload::MAX_NAME_BYTES;

/// What the hooks at one stage decided, together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageOutcome {
    /// A hook stopped the stage: (hook, reason). A failed hook at a stage that can stop the
    /// session stops it too, its failure being the reason.
    pub blocked: Option<(String, String)>,
    /// The last replacement text, and the hook that gave it.
    pub replaced: Option<(String, String)>,
    /// Context to add to the next request: (hook, text), in hook order.
    pub context: Vec<(String, String)>,
    /// The tools that may be offered: what every narrowing hook allowed (an intersection).
    pub only_tools: Option<Vec<String>>,
    /// Ids of the reply's calls to drop.
    pub drop_calls: BTreeSet<String>,
    /// Hooks that failed where a failure cannot stop anything (`session-end`, after a
    /// compaction): (hook, what went wrong).
    pub failures: Vec<(String, String)>,
}

/// Where a stage's decisions are reported, and what stops its hooks.
#[derive(Clone, Default)]
pub struct StageOptions {
    /// Receives one [`Event::SessionHook`] per hook that ran.
    pub events: Option<EventSink>,
    /// Cancelling interrupts a running hook.
    pub cancel: CancellationToken,
}

/// Which decision fields a stage takes: block, replace, add-context, only-tools, drop-calls.
pub fn allowed(stage: SessionStage) -> [bool; 5] {
    match stage {
        SessionStage::SessionStart => [false, false, true, false, false],
        SessionStage::Prompt => [true, true, true, true, false],
        SessionStage::ModelRequest => [true, false, true, true, false],
        SessionStage::ModelResponse => [false, true, false, false, true],
        SessionStage::Compaction => [false, true, false, false, false],
        SessionStage::Stop => [false, true, false, false, false],
        SessionStage::SessionEnd => [false, false, false, false, false],
    }
}

/// Whether a failing hook at `stage` (with this payload) stops the session: everywhere but
/// where there is nothing left to stop.
fn fails_closed(stage: SessionStage, payload: &Value) -> bool {
    match stage {
        SessionStage::SessionEnd => false,
        SessionStage::Compaction => payload["phase"] != "after",
        _ => true,
    }
}

impl Pipeline {
    /// The hooks granted the session stages (`hook = true`) that watch `stage`, in order.
    pub fn session_hooks(&self, stage: SessionStage) -> impl Iterator<Item = &Arc<Plugin>> {
        self.hooks().iter().filter(move |plugin| {
            plugin.watches_session()
                && plugin
                    .hook
                    .as_ref()
                    .is_some_and(|h| h.stages.contains(&stage))
        })
    }

    /// Runs every hook watching `stage` on `payload` (a JSON object in the stage's documented
    /// form), each seeing it as the hooks before it left it; a block or a failure that stops
    /// the stage ends the chain.
    pub async fn session_stage(
        &self,
        stage: SessionStage,
        payload: Value,
        options: &StageOptions,
    ) -> StageOutcome {
        let mut outcome = StageOutcome::default();
        let mut payload = payload;
        self.secrets().scrub_json(&mut payload);
        let emitter = Emitter::new(self.audited(options.events.clone()));
        let hooks: Vec<Arc<Plugin>> = self.session_hooks(stage).cloned().collect();
        // Secrets are masked first: a secret cut in two would match no mask.
        if let Err(message) = super::stage_payload::bound(&mut payload)
            && let Some(first) = hooks.first()
        {
            outcome.blocked = Some((
                first.id.to_string(),
                format!(
                    "the {stage} hooks cannot be shown the event, so the session stops: {message}"
                ),
            ));
            return outcome;
        }
        for (index, hook) in hooks.iter().enumerate() {
            let call_id = format!("{stage}-{}", index + 1);
            let hook_id = hook.id.to_string();
            let decided = self
                .run_session_hook(hook, stage, &payload, &call_id, &emitter, &options.cancel)
                .await;
            let decision = match decided {
                Ok(decision) => decision,
                Err(message) => {
                    if fails_closed(stage, &payload) {
                        outcome.blocked = Some((
                            hook_id,
                            format!("the {stage} hook failed, so the session stops: {message}"),
                        ));
                        return outcome;
                    }
                    outcome.failures.push((hook_id, message));
                    continue;
                }
            };
            if let Some(reason) = decision.block {
                outcome.blocked = Some((hook_id, reason));
                return outcome;
            }
            if let Some(context) = decision.add_context {
                outcome.context.push((hook_id.clone(), context));
            }
            if let Some(only) = decision.only_tools {
                // Groups are expanded first, so two hooks that allow the same tool, one by its
                // group and one by its name, both allow it.
                let only = self.expand_groups(only);
                outcome.only_tools = Some(match outcome.only_tools.take() {
                    None => only,
                    Some(before) => before.into_iter().filter(|t| only.contains(t)).collect(),
                });
            }
            for id in &decision.drop_calls {
                outcome.drop_calls.insert(id.clone());
            }
            if let Some(text) = decision.replace {
                apply_replacement(stage, &mut payload, &text);
                outcome.replaced = Some((hook_id, text));
                // A supplied summary or a continuation is one hook's to give.
                if matches!(stage, SessionStage::Compaction | SessionStage::Stop) {
                    return outcome;
                }
            }
            drop_calls_from(&mut payload, &outcome.drop_calls);
        }
        outcome
    }
}

impl Pipeline {
    /// Runs one session hook at `stage` in its sandbox, under `call_id`: its decision, checked
    /// against what the stage takes and with every configured secret masked, or what went
    /// wrong. Its log lines, requests and opens, and then its decision, go to `emitter` (one
    /// [`Event::SessionHook`]).
    pub(crate) async fn run_session_hook(
        &self,
        hook: &Arc<Plugin>,
        stage: SessionStage,
        payload: &Value,
        call_id: &str,
        emitter: &Emitter,
        cancel: &CancellationToken,
    ) -> Result<SessionDecision, String> {
        let hook_id = hook.id.to_string();
        let running = Arc::new(AtomicBool::new(true));
        let reporter = Reporter {
            tool_name: String::new(),
            plugin: hook_id.clone(),
            stage: Some(HookStage::Session(stage)),
        };
        let call_options = CallOptions {
            reports: reports::hook_sink(reporter, emitter, running.clone()),
            cancel: cancel.clone(),
        };
        let started = Instant::now();
        let span = crate::trace_spans::session_hook(&hook.id, stage.as_str());
        let decided = hook
            .session_hook(call_id, stage, payload, &call_options)
            .instrument(span.clone())
            .await
            .map_err(|failure| {
                let mut message = failure.message;
                mask(&mut message, self.secrets());
                message
            })
            .and_then(|decision| checked(stage, payload, decision))
            .map(|decision| scrubbed(decision, self.secrets()));
        running.store(false, Ordering::SeqCst);
        let summary = match &decided {
            Ok(decision) => summary(decision),
            Err(_) => "failed",
        };
        crate::trace_spans::record_decision(&span, summary);
        // The event (and so the audit log and the live view) quotes at most 1 KiB of a reason;
        // the stage's error keeps it whole.
        let quoted = |text: &str| crate::report::budget::cut(text, MAX_EVENT_REASON_BYTES);
        let (reason, effects) = match &decided {
            Ok(decision) => (decision.block.as_deref().map(quoted), effects(decision)),
            Err(message) => (Some(quoted(message)), serde_json::Map::new()),
        };
        emitter.emit(|| Event::SessionHook {
            call_id: call_id.to_string(),
            stage: stage.as_str(),
            hook: hook_id,
            decision: summary,
            reason,
            effects,
            duration_ms: started.elapsed().as_millis() as u64,
        });
        decided
    }
}

impl Pipeline {
    /// `names` (tool and `[agent.groups]` group names) with every group name among them replaced
    /// by the group's tools, sorted and without repeats. A group name means the operator's group
    /// even where a plugin's tool has the same name (as in tool search): a plugin cannot take over
    /// a route by naming a tool after a group; that tool is offered only where the group holds it.
    pub fn expand_groups(&self, names: Vec<String>) -> Vec<String> {
        let mut expanded = BTreeSet::new();
        for name in names {
            match self.group_tools(&name) {
                Some(members) => expanded.extend(members),
                None => {
                    expanded.insert(name);
                }
            }
        }
        expanded.into_iter().collect()
    }
}

/// The decision, if `stage` (with this `payload`) takes everything it does and its sizes are
/// within bounds. After a compaction (`phase` `after`) a hook only watches: it replaces nothing.
pub(crate) fn checked(
    stage: SessionStage,
    payload: &Value,
    decision: SessionDecision,
) -> Result<SessionDecision, String> {
    let [block, mut replace, context, only, drop] = allowed(stage);
    if stage == SessionStage::Compaction && payload["phase"] == "after" {
        replace = false;
    }
    let refuse = |field: &str| {
        Err(format!(
            "its decision sets `{field}`, which the {stage} stage{} does not take (docs/session-hooks.md lists what each stage takes)",
            if payload["phase"] == "after" {
                " after a compaction"
            } else {
                ""
            }
        ))
    };
    if decision.block.is_some() && !block {
        return refuse("block");
    }
    if decision.replace.is_some() && !replace {
        return refuse("replace");
    }
    if decision.add_context.is_some() && !context {
        return refuse("add-context");
    }
    if decision.only_tools.is_some() && !only {
        return refuse("only-tools");
    }
    if !decision.drop_calls.is_empty() && !drop {
        return refuse("drop-calls");
    }
    // One bound for everything the decision says, names included: what it writes into events,
    // the audit log and the conversation is never more than this.
    let bytes: usize = [&decision.block, &decision.replace, &decision.add_context]
        .into_iter()
        .flatten()
        .chain(decision.only_tools.iter().flatten())
        .chain(decision.drop_calls.iter())
        .map(String::len)
        .sum();
    if bytes > MAX_DECISION_TEXT_BYTES {
        return Err(format!(
            "its decision says {bytes} bytes (texts and names together), over the {} KiB a decision may",
            MAX_DECISION_TEXT_BYTES >> 10
        ));
    }
    let names = decision.only_tools.as_ref().map_or(0, Vec::len) + decision.drop_calls.len();
    if names > MAX_DECISION_NAMES {
        return Err(format!(
            "its decision lists {names} names, over {MAX_DECISION_NAMES}"
        ));
    }
    if let Some(long) = decision
        .only_tools
        .iter()
        .flatten()
        .chain(decision.drop_calls.iter())
        .find(|name| name.len() > MAX_DECISION_NAME_BYTES)
    {
        return Err(format!(
            "its decision lists a name of {} bytes, over the {MAX_DECISION_NAME_BYTES} a tool name or call id may have",
            long.len()
        ));
    }
    Ok(decision)
}

/// The decision with every configured secret masked in its texts and names: a hook granted a secret
/// (an env var, a header it was shown) cannot pass it on to the model or the user.
fn scrubbed(mut decision: SessionDecision, secrets: &Secrets) -> SessionDecision {
    for text in [
        &mut decision.block,
        &mut decision.replace,
        &mut decision.add_context,
    ]
    .into_iter()
    .flatten()
    .chain(decision.only_tools.iter_mut().flatten())
    .chain(decision.drop_calls.iter_mut())
    {
        mask(text, secrets);
    }
    decision
}

/// `text` with every configured secret masked.
fn mask(text: &mut String, secrets: &Secrets) {
    if let std::borrow::Cow::Owned(masked) = secrets.scrub(text) {
        *text = masked;
    }
}

/// What a decision does, field by field, for events and the audit log: the sizes of its texts
/// (never the texts) and the names it lists.
fn effects(decision: &SessionDecision) -> serde_json::Map<String, Value> {
    let mut effects = serde_json::Map::new();
    if let Some(text) = &decision.replace {
        effects.insert("replace_bytes".into(), text.len().into());
    }
    if let Some(text) = &decision.add_context {
        effects.insert("context_bytes".into(), text.len().into());
    }
    if let Some(tools) = &decision.only_tools {
        effects.insert("only_tools".into(), tools.clone().into());
    }
    if !decision.drop_calls.is_empty() {
        effects.insert("drop_calls".into(), decision.drop_calls.clone().into());
    }
    effects
}

/// One word for what a hook decided, for events and logs.
pub(crate) fn summary(decision: &SessionDecision) -> &'static str {
    if decision.block.is_some() {
        "block"
    } else if decision.replace.is_some() {
        "replace"
    } else if decision.only_tools.is_some() {
        "narrow"
    } else if decision.add_context.is_some() {
        "add_context"
    } else if !decision.drop_calls.is_empty() {
        "drop_calls"
    } else {
        "proceed"
    }
}

/// The event as the next hook sees it after a replacement.
fn apply_replacement(stage: SessionStage, payload: &mut Value, text: &str) {
    let field = match stage {
        SessionStage::Prompt => "prompt",
        SessionStage::ModelResponse => "text",
        _ => return,
    };
    if let Some(object) = payload.as_object_mut() {
        object.insert(field.into(), Value::String(text.to_string()));
    }
}

/// The event as the next hook sees it after calls were dropped.
fn drop_calls_from(payload: &mut Value, dropped: &BTreeSet<String>) {
    if dropped.is_empty() {
        return;
    }
    if let Some(calls) = payload.get_mut("calls").and_then(Value::as_array_mut) {
        calls.retain(|call| !call["id"].as_str().is_some_and(|id| dropped.contains(id)));
    }
}
