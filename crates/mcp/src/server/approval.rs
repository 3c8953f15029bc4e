//! Approval over MCP: a call that needs a person's approval (a hook's `ask`, `[approval]`) is put to
//! the client's user as a form elicitation (`elicitation/create`) when the client declared the
//! capability. Accept approves; decline, cancel, an error or no answer within 5 minutes refuses.
//! The question shows what the pipeline shows a terminal (approval_text.rs). A client without
//! elicitation, or one on
//! a protocol revision that forbids server-to-client requests (2026-07-28), cannot be asked, and
//! `[approval] unattended` decides.

use cordon_runtime::pipeline::{Approval, ApprovalRequest, Approver};
use cordon_runtime::report::budget::one_line;
use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
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

/// The approver for one call from `peer`, if its client can be asked: it declared form
/// elicitation, on a revision that lets the server send it requests.
pub fn for_client(peer: &Peer<RoleServer>) -> Option<Arc<dyn Approver>> {
    let revision_allows = peer
        .peer_info()
        .is_some_and(|info| info.protocol_version.as_str() < NO_SERVER_REQUESTS_FROM);
    (revision_allows
        && peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form))
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
fn question(request: &ApprovalRequest) -> String {
    let mut lines = vec![format!(
        "Approve this call of {} (plugin {})?",
        one_line(&request.tool_name),
        one_line(&request.plugin)
    )];
    lines.extend(request.lines());
    lines.join("\n")
}
