//! Approval: a call that a before-hook asked about (`ask`), or that `[approval]` names, runs only
//! when a person approves it. The embedder supplies the person (an [`Approver`]: a terminal
//! prompt, an MCP client's elicitation); without one, `[approval] unattended` decides. Every
//! decision is an event saying who made it, and a denied call's result tells the model why.

use super::Pipeline;
pub use super::events::AskedBy;
use super::events::{Emitter, Event};
pub use super::lock_keys::Touched;
use crate::capabilities::tool_glob;
use crate::config::{ApprovalPolicy, Unattended};
use crate::report::{ErrorKind, ToolResult};
use crate::sandbox::plugin::ToolInfo;
use serde_json::{Value, json};
use std::future::Future;
use std::pin::Pin;

/// What a person is asked to approve.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool it calls.
    pub tool_name: String,
    /// The plugin that provides the tool.
    pub plugin: String,
    /// The arguments the call would run with (after every before-hook).
    pub arguments: Value,
    /// What the call touches: the values at the tool's lock pointers (see lock_keys.rs).
    pub touched: Vec<Touched>,
    /// Who asked and why: a hook's id or `cordon.toml`, with its reason.
    pub asked_by: Vec<AskedBy>,
}

/// A person's (or a default's) answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// Whether the call may run.
    pub approved: bool,
    /// Who decided: `user`, `user (always for this tool)`, `client`, `--yes`, `default`, ...
    pub decided_by: String,
    /// Why, when it was refused and a reason was given.
    pub reason: Option<String>,
}

/// Asks a person. Called once per call that needs approval, in call order, before the batch runs.
/// `None`: nobody could be asked after all (the MCP client could not take the question), and
/// `[approval] unattended` decides.
pub trait Approver: Send + Sync {
    /// The answer to `request`; `None` when nobody could be asked after all.
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>>;
}

/// Why the operator's policy asks before a call of `tool`, if it does. A tool counts as
/// destructive unless it says it is read-only or not destructive (MCP's defaults for unsaid hints).
pub(crate) fn policy_asks(policy: &ApprovalPolicy, tool: &ToolInfo) -> Option<String> {
    if !policy.tools.is_empty() && tool_glob::any_matches(&policy.tools, &tool.name) {
        return Some(format!(
            "cordon.toml asks before every call of `{}`",
            tool.name
        ));
    }
    let destructive =
        tool.annotations.read_only != Some(true) && tool.annotations.destructive != Some(false);
    (policy.destructive && destructive).then(|| {
        format!(
            "cordon.toml asks before every call of a destructive tool, and `{}` is one",
            tool.name
        )
    })
}

/// Who answered when nobody could be asked.
pub(crate) const DECIDED_BY_DEFAULT: &str = "default";

impl Pipeline {
    /// Asks for approval of a call if anyone wants it; `None` when it may run, else its result.
    pub(crate) async fn approve(
        &self,
        request: &ApprovalRequest,
        approver: Option<&dyn Approver>,
        emitter: &Emitter,
    ) -> Option<ToolResult> {
        if request.asked_by.is_empty() {
            return None;
        }
        let asked = match approver {
            Some(approver) => approver.decide(request).await,
            None => None,
        };
        let approval = asked.unwrap_or_else(|| Approval {
            approved: self.inner.settings.approval.unattended == Unattended::Allow,
            decided_by: DECIDED_BY_DEFAULT.into(),
            reason: None,
        });
        emitter.emit(|| Event::Approval {
            tool_call_id: request.tool_call_id.clone(),
            tool_name: request.tool_name.clone(),
            asked_by: request.asked_by.clone(),
            approved: approval.approved,
            decided_by: approval.decided_by.clone(),
            reason: approval.reason.clone(),
        });
        if approval.approved {
            return None;
        }
        let asked: Vec<String> = request
            .asked_by
            .iter()
            .map(|ask| format!("{} ({})", ask.reason, ask.who))
            .collect();
        let why = if approval.decided_by == DECIDED_BY_DEFAULT {
            "nobody could be asked here, and without a person's approval such calls are not run (the operator can set `[approval] unattended = \"allow\"` or pass `--yes`)".to_string()
        } else {
            match &approval.reason {
                Some(reason) => format!("{} said no: {reason}", approval.decided_by),
                None => format!("{} said no", approval.decided_by),
            }
        };
        Some(ToolResult::error(
            &request.tool_call_id,
            &request.tool_name,
            ErrorKind::NotApproved,
            format!(
                "The call was not run: it needs a person's approval ({}), and {why}. Do not repeat it; ask the user how to go on.",
                asked.join("; ")
            ),
            json!({
                "askedBy": request.asked_by,
                "decidedBy": approval.decided_by,
                "reason": approval.reason,
            }),
        ))
    }
}
