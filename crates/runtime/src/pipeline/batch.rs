//! Running a batch: each call prepared in call order (lookup, active set, schema, before-hooks,
//! approval), the ready ones executed concurrently up to `[agent] max_concurrency` (or one at a
//! time in call order when the batch is sequential), calls that lock an equal value one after
//! another in call order, and exactly one result per call returned in call order.

use super::audit::AuditRecorder;
use super::events::{Emitter, Event, EventSink};
use super::prepare::Prepared;
use super::result_budget;
use super::{BatchOptions, CallRequest, Pipeline};
use crate::config::Execution;
use crate::report::ToolResult;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

impl Pipeline {
    /// Runs one call as a batch of one.
    pub async fn call(&self, request: CallRequest, options: &BatchOptions) -> ToolResult {
        self.run(vec![request], options)
            .await
            .pop()
            .expect("one result per call")
    }

    /// `events` with the audit log (when there is one) following them too: one recorder per
    /// batch, or per session stage, writing a line as each call or hook ends.
    pub(crate) fn audited(&self, events: Option<EventSink>) -> Option<EventSink> {
        let Some(log) = &self.inner.audit else {
            return events;
        };
        let recorder = AuditRecorder::new(log.clone(), self.inner.registry.clone());
        Some(Arc::new(move |event: Event| {
            recorder.observe(&event);
            if let Some(user) = &events {
                user(event);
            }
        }))
    }

    /// Runs a batch; returns exactly one result per call, in call order.
    pub async fn run(&self, calls: Vec<CallRequest>, options: &BatchOptions) -> Vec<ToolResult> {
        let events = self.audited(options.events.clone());
        let span = crate::trace_spans::batch(calls.len());
        self.run_with(calls, options, Emitter::new(events))
            .instrument(span)
            .await
    }

    /// A call whose id an earlier call of the batch has: not run, so no two calls share a record.
    /// Its events (and audit line) carry the id with its position, `id#N`, or another suffix when
    /// a call of the batch already has that id (`taken` holds every id in use).
    fn refuse_duplicate(
        &self,
        index: usize,
        request: &CallRequest,
        started: Instant,
        emitter: &Emitter,
        taken: &mut std::collections::HashSet<String>,
    ) -> ToolResult {
        let result = ToolResult::error(
            &request.id,
            &request.name,
            crate::report::ErrorKind::InvalidArguments,
            format!(
                "Another call of this batch already has the id {:?}, so this one was not run; every call of a batch needs its own id. Call it again with a new id.",
                request.id
            ),
            serde_json::json!({ "duplicateId": request.id }),
        );
        let mut distinct = format!("{}#{}", request.id, index + 1);
        let mut attempt = 1;
        while taken.contains(&distinct) {
            distinct = format!("{}#{}.{attempt}", request.id, index + 1);
            attempt += 1;
        }
        taken.insert(distinct.clone());
        emitter.emit(|| Event::ToolExecutionStart {
            tool_call_id: distinct.clone(),
            tool_name: request.name.clone(),
            arguments: serde_json::Value::Null,
        });
        emitter.emit(|| Event::ToolExecutionEnd {
            tool_call_id: distinct,
            tool_name: request.name.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
            is_error: true,
            error_kind: result.error_kind,
        });
        result
    }

    async fn run_with(
        &self,
        calls: Vec<CallRequest>,
        options: &BatchOptions,
        emitter: Emitter,
    ) -> Vec<ToolResult> {
        let cancel = &options.cancel;
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut ready = Vec::new();
        let mut ids = std::collections::HashSet::new();
        let mut taken: std::collections::HashSet<String> =
            calls.iter().map(|call| call.id.clone()).collect();
        for (index, request) in calls.iter().enumerate() {
            let started = Instant::now();
            if !ids.insert(request.id.as_str()) {
                results[index] =
                    Some(self.refuse_duplicate(index, request, started, &emitter, &mut taken));
                continue;
            }
            let span = crate::trace_spans::tool_call(&request.id, &request.name, self.secrets());
            match self
                .prepare(request, options, &emitter)
                .instrument(span.clone())
                .await
            {
                Prepared::Ready(call) => ready.push((index, call, span)),
                Prepared::Done(mut result) => {
                    emitter.emit(|| Event::ToolExecutionStart {
                        tool_call_id: request.id.clone(),
                        tool_name: request.name.clone(),
                        arguments: serde_json::from_str(&request.arguments)
                            .unwrap_or_else(|_| request.arguments.clone().into()),
                    });
                    self.secrets().scrub_result(&mut result);
                    result_budget::apply(&mut result, &self.inner.settings);
                    self.end(&result, started, &emitter);
                    crate::trace_spans::record_result(&span, &result, self.secrets());
                    results[index] = Some(result);
                }
            }
        }

        let sequential = self.inner.settings.execution == Execution::Sequential
            || ready.iter().any(|(_, call, _)| call.sequential);
        // One call (or a sequential batch) runs on this task: no spawn, no slot to wait for.
        if sequential || ready.len() == 1 {
            for (index, call, span) in ready {
                results[index] = Some(self.execute(call, cancel, &emitter).instrument(span).await);
            }
        } else {
            let slots = Arc::new(Semaphore::new(self.inner.settings.max_concurrency.max(1)));
            let mut running = tokio::task::JoinSet::new();
            let mut task_index = std::collections::HashMap::new();
            let finished: Vec<CancellationToken> =
                ready.iter().map(|_| CancellationToken::new()).collect();
            // The position in `ready` of the last call that locked each value.
            let mut holders: HashMap<&str, usize> = HashMap::new();
            let lock_keys: Vec<Vec<String>> = ready
                .iter()
                .map(|(_, call, _)| call.locks.clone())
                .collect();
            for (position, (index, call, span)) in ready.into_iter().enumerate() {
                // The last earlier call holding each key (never this call itself, whatever its keys).
                let waits: BTreeSet<usize> = lock_keys[position]
                    .iter()
                    .filter_map(|key| holders.insert(key.as_str(), position))
                    .filter(|earlier| *earlier != position)
                    .collect();
                let waits: Vec<CancellationToken> = waits
                    .into_iter()
                    .map(|earlier| finished[earlier].clone())
                    .collect();
                let done = finished[position].clone().drop_guard();
                let (pipeline, cancel, emitter) = (self.clone(), cancel.clone(), emitter.clone());
                let (id, name) = (call.id.clone(), call.name.clone());
                // A call with no lock to wait for takes its slot here, in call order, so calls
                // start in the order the model gave them; one that waits takes it when its turn
                // comes (an earlier call always has a slot or waits on a yet earlier one).
                let slot = if waits.is_empty() {
                    tokio::select! {
                        slot = slots.clone().acquire_owned() => Some(slot.ok()),
                        () = cancel.cancelled() => Some(None),
                    }
                } else {
                    None
                };
                let slots = slots.clone();
                let handle = running.spawn(
                    async move {
                        let _done = done;
                        let _slot = match slot {
                            Some(slot) => slot,
                            None => {
                                for earlier in &waits {
                                    tokio::select! {
                                        () = earlier.cancelled() => {}
                                        () = cancel.cancelled() => break,
                                    }
                                }
                                tokio::select! {
                                    slot = slots.acquire_owned() => slot.ok(),
                                    () = cancel.cancelled() => None,
                                }
                            }
                        };
                        pipeline.execute(call, &cancel, &emitter).await
                    }
                    .instrument(span),
                );
                task_index.insert(handle.id(), (index, id, name));
            }
            while let Some(joined) = running.join_next_with_id().await {
                match joined {
                    Ok((task, result)) => results[task_index[&task].0] = Some(result),
                    Err(err) => {
                        let (index, id, name) = &task_index[&err.id()];
                        tracing::error!(call = %id, "a call's task failed: {err}");
                        results[*index] = Some(ToolResult::error(
                            id,
                            name,
                            crate::report::ErrorKind::Trap,
                            "The host failed while running this call; it was not completed.",
                            serde_json::json!({ "hostError": err.to_string() }),
                        ));
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|result| result.expect("every call has a result"))
            .collect()
    }
}
