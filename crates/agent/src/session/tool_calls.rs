//! Running one reply's tool calls: validated and capped, as one batch through the pipeline
//! (hooks, approval, the sandbox), the results appended in the model's call order.

use super::*;
use crate::conversation::message::{ToolCall, ToolOutcome};
use crate::conversation::observer::AgentObserver;
use contract::Verdict;
use cordon_runtime::pipeline::{BatchOptions, CallRequest, Event};
use cordon_runtime::report::ErrorKind;
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Agent {
    /// Runs a reply's calls: `final_result` against the contract, `search_tools` against the
    /// tool index, the skill tools against the skills, the rest as one pipeline batch. Returns the outcomes in call order, the
    /// accepted answer if there is one, and the tools searches loaded.
    pub(super) async fn run_calls(
        &mut self,
        calls: &[ToolCall],
        observer: &Arc<dyn AgentObserver>,
        cancel: &CancellationToken,
    ) -> (Vec<ToolOutcome>, Option<Value>, Vec<String>) {
        let mut outcomes: Vec<Option<ToolOutcome>> = vec![None; calls.len()];
        let mut answer = None;
        let mut loaded = Vec::new();
        let mut batch = Vec::new();
        let mut batch_positions = Vec::new();
        let mut skill_calls = Vec::new();
        for (position, call) in calls.iter().enumerate() {
            // Narrowed tools are a boundary, not a hint: a call of a tool the request did not
            // offer never runs, whatever the model names.
            if let Some(offered) = &self.narrowed_offer
                && !offered.contains(&call.name)
            {
                outcomes[position] = Some(ToolOutcome::error(
                    call,
                    ErrorKind::NotActive,
                    format!(
                        "not run: `{}` was not offered in this request (a session hook or intent routing narrowed the tools to: {}). Use an offered tool, or answer without one.",
                        call.name,
                        if offered.is_empty() {
                            "none".to_string()
                        } else {
                            offered.iter().cloned().collect::<Vec<_>>().join(", ")
                        }
                    ),
                ));
                continue;
            }
            if let Some(offer) = self.offer.as_mut().filter(|offer| offer.answers(call)) {
                let (outcome, newly) = offer.search(&self.pipeline, call);
                loaded.extend(newly);
                outcomes[position] = Some(outcome);
                continue;
            }
            if super::skill_tools::is_skill_tool(&call.name)
                && !self.pipeline.offers().skills().is_empty()
            {
                skill_calls.push(position);
                continue;
            }
            match &self.options.contract {
                Some(contract) if call.name == contract::FINAL_RESULT => {
                    let outcome = match contract.check(&call.arguments) {
                        Verdict::Accepted(value) if answer.is_none() => {
                            answer = Some(value);
                            ToolOutcome {
                                tool_call_id: call.id.clone(),
                                tool_name: call.name.clone(),
                                is_error: false,
                                error_kind: None,
                                content: "accepted".into(),
                            }
                        }
                        Verdict::Accepted(_) => ToolOutcome::error(
                            call,
                            ErrorKind::InvalidArguments,
                            "a final result was already accepted in this reply",
                        ),
                        Verdict::Rejected(problems) => {
                            self.contract_failures += 1;
                            ToolOutcome::error(
                                call,
                                ErrorKind::InvalidArguments,
                                format!(
                                    "final_result does not match the output schema: {}. Call final_result again with corrected arguments.",
                                    problems.join("; ")
                                ),
                            )
                        }
                    };
                    outcomes[position] = Some(outcome);
                }
                _ => {
                    batch.push(CallRequest::new(&call.id, &call.name, &call.arguments));
                    batch_positions.push(position);
                }
            }
        }
        for position in skill_calls {
            let outcome =
                super::skill_tools::answer(&self.pipeline, &calls[position], cancel).await;
            outcomes[position] = Some(outcome);
        }
        if !batch.is_empty() {
            let watcher = observer.clone();
            let options = BatchOptions {
                cancel: cancel.clone(),
                events: Some(Arc::new(move |event: Event| watcher.tool_event(&event))),
                approver: self.options.approver.clone(),
            };
            let results = self.pipeline.run(batch, &options).await;
            for (position, result) in batch_positions.into_iter().zip(results) {
                let mut outcome = ToolOutcome::from_result(&result);
                // A name no tool has, while searching: the pipeline answered it (events, audit,
                // trace) and its answer becomes a search for the name instead of every tool's.
                if let Some(offer) = self
                    .offer
                    .as_mut()
                    .filter(|offer| offer.is_guess(&self.pipeline, &calls[position]))
                    && matches!(
                        outcome.error_kind,
                        Some(ErrorKind::NotFound | ErrorKind::NotActive)
                    )
                {
                    let (content, newly) = offer.answer_guess(&self.pipeline, &calls[position]);
                    outcome.content = content;
                    loaded.extend(newly);
                }
                outcomes[position] = Some(outcome);
            }
        }
        let outcomes = outcomes
            .into_iter()
            .map(|outcome| outcome.expect("every call has an outcome"))
            .collect();
        (outcomes, answer, loaded)
    }
}
