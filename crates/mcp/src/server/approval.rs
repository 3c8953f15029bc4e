//! Approval over MCP: a call that needs a person's approval (a hook's `ask`, `[approval]`) is put to
//! the client's user as a form elicitation when the client declared the capability, showing what
//! the pipeline shows a terminal (approval_text.rs).
//!
//! - Up to 2025-11-25 the server asks in the middle of the call (`elicitation/create`). Accept
//!   approves; decline, cancel, an error or no answer within 5 minutes refuses.
//! - From 2026-07-28 servers may not send requests; the call stops at the question, which goes
//!   back as an `InputRequiredResult` (multi round-trip requests) with a `requestState` only this
//!   server can issue (approval_state.rs: keyed, bound to the question and the caller, expiring,
//!   single use). The client asks its user and sends the call again with the answer; the answer
//!   approves the call only if its state is one this server issued to this caller for the
//!   question the retried call asks (same tool, plugin, final arguments, askers and reasons), not
//!   expired and not used before; else it approves nothing and the question is asked again. The
//!   first round's refusal is in the events and the audit log as `decidedBy: "client (asking)"`.
//! - A client without elicitation cannot be asked, and `[approval] unattended` decides.

use super::approval_state::{ApprovalStates, Caller};
use cordon_runtime::pipeline::{Approval, ApprovalRequest, Approver};
use cordon_runtime::report::budget::one_line;
use cordon_runtime::report::secrets::Secrets;
use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, RequestMetaObject,
};
use rmcp::service::{ElicitationMode, Peer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// How long the client's user has to answer before the call is refused.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);
/// Who decided, in events and the audit log.
const DECIDED_BY: &str = "client";
/// The first protocol revision that forbids requests from the server to the client.
const NO_SERVER_REQUESTS_FROM: &str = "2026-07-28";

/// How one request's call gets a person's approval.
pub enum Asking {
    /// Nobody can be asked: `[approval] unattended` decides.
    Nobody,
    /// In the middle of the call (up to 2025-11-25).
    Elicitation(Arc<dyn Approver>),
    /// Between rounds of the request (2026-07-28 on).
    Rounds(Arc<Rounds>),
}

impl Asking {
    /// How to ask the user of `peer`, whose request carried `params` and `meta`. A 2026-07-28
    /// request declares its client's capabilities in its own `_meta`; earlier clients declared
    /// them once, in `initialize`.
    pub fn for_request(
        peer: &Peer<RoleServer>,
        meta: &RequestMetaObject,
        params: &CallToolRequestParams,
        states: &Arc<ApprovalStates>,
        caller: Caller,
        secrets: Secrets,
    ) -> Self {
        let revision = meta
            .protocol_version()
            .or_else(|| peer.peer_info().map(|info| info.protocol_version.clone()));
        let between_rounds = revision.is_some_and(|v| v.as_str() >= NO_SERVER_REQUESTS_FROM);
        if between_rounds {
            let declared = meta
                .client_capabilities()
                .is_some_and(|capabilities| capabilities.elicitation.is_some());
            return if declared {
                Self::Rounds(Arc::new(Rounds::answered_by(
                    params,
                    states.clone(),
                    caller,
                    secrets,
                )))
            } else {
                Self::Nobody
            };
        }
        if peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            Self::Elicitation(Arc::new(Elicitation {
                peer: peer.clone(),
                secrets,
            }))
        } else {
            Self::Nobody
        }
    }

    pub fn approver(&self) -> Option<Arc<dyn Approver>> {
        match self {
            Self::Nobody => None,
            Self::Elicitation(approver) => Some(approver.clone()),
            Self::Rounds(rounds) => Some(rounds.clone()),
        }
    }

    /// The question to send back instead of a result, when this round stopped at one.
    pub fn input_required(&self) -> Option<InputRequiredResult> {
        match self {
            Self::Rounds(rounds) => rounds.pending(),
            _ => None,
        }
    }
}

/// The key of the approval question in `inputRequests` and `inputResponses`.
const QUESTION_KEY: &str = "approval";

/// Asking between rounds: the answer the retried request carries, and the question this round
/// stopped at.
pub struct Rounds {
    /// The state the answer came with, and whether the user accepted.
    answer: Option<(String, bool)>,
    /// The question to send: its state and its text.
    pending: std::sync::Mutex<Option<(String, String)>>,
    /// Where states are issued and redeemed, and who this request's caller is.
    states: Arc<ApprovalStates>,
    caller: Caller,
    /// The host's scrubber, which masks the question.
    secrets: Secrets,
}

impl Rounds {
    fn answered_by(
        params: &CallToolRequestParams,
        states: Arc<ApprovalStates>,
        caller: Caller,
        secrets: Secrets,
    ) -> Self {
        let accepted = params
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(QUESTION_KEY))
            .map(|answer| answer.get("action").and_then(|a| a.as_str()) == Some("accept"));
        let answer = params.request_state.clone().zip(accepted);
        Self {
            answer,
            pending: std::sync::Mutex::new(None),
            states,
            caller,
            secrets,
        }
    }

    fn pending(&self) -> Option<InputRequiredResult> {
        let (state, question) = self
            .pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()?;
        let schema = ElicitationSchema::builder().build().ok()?;
        let request = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: question,
            requested_schema: schema,
        });
        let mut requests = InputRequests::new();
        requests.insert(QUESTION_KEY.to_string(), InputRequest::Elicitation(request));
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

impl Approver for Rounds {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        Box::pin(async move {
            let fingerprint = fingerprint(request);
            if let Some((state, accepted)) = &self.answer {
                match self.states.redeem(state, &self.caller, &fingerprint) {
                    Ok(()) => {
                        return Some(Approval {
                            approved: *accepted,
                            decided_by: DECIDED_BY.into(),
                            reason: (!accepted).then(|| "the user declined".to_string()),
                        });
                    }
                    // An answer to a question this server did not ask (this caller, this call)
                    // approves nothing: the question is asked afresh.
                    Err(refused) => tracing::warn!(
                        tool = %one_line(&request.tool_name),
                        "an approval answer was ignored and the question asked again: its requestState {refused}"
                    ),
                }
            }
            let state = self.states.issue(&self.caller, &fingerprint);
            *self
                .pending
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) =
                Some((state, question(request, &self.secrets)));
            Some(Approval {
                approved: false,
                decided_by: "client (asking)".into(),
                reason: Some("the question went back to the client".into()),
            })
        })
    }
}

/// What identifies a question: the tool, its plugin, the final arguments and who asked why (the
/// state binds it; it is never sent).
fn fingerprint(request: &ApprovalRequest) -> String {
    use sha2::{Digest, Sha256};
    let asked: Vec<(&str, &str)> = request
        .asked_by
        .iter()
        .map(|ask| (ask.who.as_str(), ask.reason.as_str()))
        .collect();
    let text = serde_json::json!([
        request.tool_name,
        request.plugin,
        cordon_runtime::pipeline::lock_keys::canonical_json(&request.arguments),
        asked,
    ])
    .to_string();
    format!("approval:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

struct Elicitation {
    peer: Peer<RoleServer>,
    secrets: Secrets,
}

impl Approver for Elicitation {
    fn decide<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = Option<Approval>> + Send + 'a>> {
        Box::pin(async move {
            let schema = ElicitationSchema::builder().build().ok()?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: question(request, &self.secrets),
                requested_schema: schema,
            };
            let answer = self
                .peer
                .create_elicitation_with_timeout(params, Some(ANSWER_TIMEOUT))
                .await;
            // Once the question is out, anything but an acceptance is a refusal: an error or no
            // answer in time never lets the call run, whatever `[approval] unattended` says.
            let (approved, reason) = match answer {
                Ok(answer) => match answer.action {
                    ElicitationAction::Accept => (true, None),
                    ElicitationAction::Decline => (false, "the user declined".to_string().into()),
                    ElicitationAction::Cancel => (false, "the user cancelled".to_string().into()),
                    _ => (
                        false,
                        "the client gave an unknown answer".to_string().into(),
                    ),
                },
                Err(err) => (false, Some(format!("the question got no answer ({err})"))),
            };
            Some(Approval {
                approved,
                decided_by: DECIDED_BY.into(),
                reason,
            })
        })
    }
}

/// The call, what it touches, its arguments and who asked, one sanitised line each.
fn question(request: &ApprovalRequest, secrets: &Secrets) -> String {
    let mut lines = vec![format!(
        "Approve this call of {} (plugin {})?",
        one_line(&request.tool_name),
        one_line(&request.plugin)
    )];
    lines.extend(request.lines(secrets));
    // A hook's reason or a rewritten argument may quote a secret it saw.
    secrets.scrub(&lines.join("\n")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_runtime::pipeline::AskedBy;

    #[test]
    fn a_question_never_carries_a_configured_secret() {
        let secret = "SvcTok-9f8e7d6c5b4a-question";
        let secrets = Secrets::default();
        secrets.register(secret);
        let request = ApprovalRequest {
            tool_call_id: "c1".into(),
            tool_name: "word_stats".into(),
            plugin: "v2".into(),
            arguments: serde_json::json!({ "ask": format!("the hook saw {secret}") }),
            touched: Vec::new(),
            asked_by: vec![AskedBy {
                who: "hook `v2`".into(),
                reason: format!("the hook saw {secret}"),
            }],
        };
        let asked = question(&request, &secrets);
        assert!(
            asked.contains("[REDACTED:secret]") && !asked.contains("9f8e7d6c"),
            "{asked}"
        );
    }
}
