//! The bundled `finish_line` hook (stop): checks a turn's final answer against the operator's
//! output contract (its `settings`) and, when the answer breaks it, continues the turn with a
//! message naming every rule it broke, so the model fixes the answer instead of the user. The
//! host bounds the continuations (`[agent] max_continuations`); a contract that cannot be read
//! fails the hook, which stops the turn (fails closed). See the rules in contract.rs.

mod contract;

use contract::Contract;
use cordon_sdk::prelude::*;

struct FinishLine;

impl Hook for FinishLine {
    const BEFORE: bool = false;
    const AFTER: bool = false;
    const STAGES: &'static [SessionStage] = &[SessionStage::Stop];

    fn session_hook(&self, event: &SessionEvent, cx: &Context) -> SessionDecision {
        let contract = match Contract::from_settings(cx.settings_json()) {
            Ok(contract) => contract,
            // A replace at `stop` continues the turn; an unreadable contract must stop it, and a
            // block is not a decision `stop` takes, so this malformed decision fails the hook,
            // which stops the turn with the reason in the host's log.
            Err(problem) => {
                cx.log(LogLevel::Error, &problem);
                return SessionDecision {
                    block: Some(problem),
                    replace: Some(String::new()),
                    ..SessionDecision::proceed()
                };
            }
        };
        let broken = contract.broken_by(event.text("answer").unwrap_or_default());
        if broken.is_empty() {
            return SessionDecision::proceed();
        }
        cx.log(
            LogLevel::Info,
            format!("the answer broke {} rule(s); continuing", broken.len()),
        );
        SessionDecision::replace(contract.message(&broken))
    }
}

cordon_sdk::export_plugin!(hook: FinishLine);
