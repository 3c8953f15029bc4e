//! Approval over MCP: a call that needs a person's approval (a hook's `ask`, `[approval]`) is put to
//! the client's user as a form elicitation (`elicitation/create`) when the client declared the
//! capability. Accept approves; decline or cancel refuses. A client without elicitation, or one on
//! a protocol revision that forbids server-to-client requests (2026-07-28), cannot be asked, and
//! `[approval] unattended` decides.

use cordon_runtime::pipeline::{Approval, ApprovalRequest, Approver};
use cordon_runtime::report::budget::cut;
use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// The most bytes of a call's arguments shown in the question.
const SHOWN_ARGUMENT_BYTES: usize = 2_000;
/// How long the client's user has to answer before the call is refused.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);
/// Who decided, in events and the audit log.
const DECIDED_BY: &str = "client";

/// The approver for one call from `peer`, if its client can be asked.
pub fn for_client(peer: &Peer<RoleServer>) -> Option<Arc<dyn Approver>> {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
        .then(|| Arc::new(Elicitation { peer: peer.clone() }) as _)
}

struct Elicitation {
    peer: Peer<RoleServer>,
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
                message: question(request),
                requested_schema: schema,
            };
            let answer = self
                .peer
                .create_elicitation_with_timeout(params, Some(ANSWER_TIMEOUT))
                .await;
            let answer = match answer {
                Ok(answer) => answer,
                Err(err) => {
                    tracing::info!(call = %request.tool_call_id, "the MCP client could not be asked to approve the call: {err}");
                    return None;
                }
            };
            let (approved, reason) = match answer.action {
                ElicitationAction::Accept => (true, None),
                ElicitationAction::Decline => (false, Some("the user declined".to_string())),
                ElicitationAction::Cancel => (false, Some("the user cancelled".to_string())),
                // An answer this server does not know is not an approval.
                _ => (false, Some("the client gave an unknown answer".to_string())),
            };
            Some(Approval {
                approved,
                decided_by: DECIDED_BY.into(),
                reason,
            })
        })
    }
}

/// The call, who asked and why.
fn question(request: &ApprovalRequest) -> String {
    let mut text = format!(
        "Approve the call of {} with {}?",
        request.tool_name,
        cut(&request.arguments.to_string(), SHOWN_ARGUMENT_BYTES)
    );
    for ask in &request.asked_by {
        text.push_str(&format!(
            "\nAsked by {}: {}",
            ask.who,
            cut(&ask.reason, SHOWN_ARGUMENT_BYTES)
        ));
    }
    text
}
