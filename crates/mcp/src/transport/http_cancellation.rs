//! `notifications/cancelled` over stateless HTTP. The stateless transport answers a notification
//! with `202 Accepted` and drops it, since no session ties it to the request it names; clients of
//! the 2025-11-25 revision cancel exactly that way. This middleware reads each small POST body
//! (already buffered and bounded by `http.rs`) and, for a cancellation the transport accepts (its
//! Host and Origin checks passed), stops the call with that id sent with the same credentials
//! (`server/in_flight_calls.rs`).

use crate::server::in_flight_calls::{InFlightCalls, credentials};
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::Value;

/// Bodies larger than this are not looked at: a cancellation is a few hundred bytes.
const MAX_CANCELLATION_BYTES: usize = 16 << 10;

pub(crate) async fn route_cancellations(
    State(calls): State<InFlightCalls>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The body is already in memory (see `bound_in_flight`), so this does not wait on the client.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return next
            .run(Request::from_parts(parts, axum::body::Body::empty()))
            .await;
    };
    let cancelled =
        cancelled_request_id(&bytes).map(|id| (id, credentials(&parts.headers).to_string()));
    let response = next
        .run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await;
    // Only a notification the transport accepted (Host, Origin and protocol checked: 202) stops a
    // call; a refused one, from a foreign page say, stops nothing.
    if let Some((id, credentials)) = cancelled
        && response.status() == axum::http::StatusCode::ACCEPTED
    {
        let stopped = calls.cancel(&credentials, &id);
        tracing::debug!(request = %id, stopped, "notifications/cancelled");
    }
    response
}

/// The `requestId` of a `notifications/cancelled` message, as text.
pub(crate) fn cancelled_request_id(body: &[u8]) -> Option<String> {
    if body.len() > MAX_CANCELLATION_BYTES {
        return None;
    }
    let message: Value = serde_json::from_slice(body).ok()?;
    if message.get("method")? != "notifications/cancelled" || message.get("id").is_some() {
        return None;
    }
    match message.pointer("/params/requestId")? {
        Value::String(id) => Some(id.clone()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_cancellation_notification_names_a_request() {
        let cancel = |body: &str| cancelled_request_id(body.as_bytes());
        assert_eq!(
            cancel(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#
            ),
            Some("7".into())
        );
        assert_eq!(
            cancel(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}"#
            ),
            Some("a".into())
        );
        assert_eq!(
            cancel(
                r#"{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":7}}"#
            ),
            None
        );
        assert_eq!(
            cancel(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"requestId":7}}"#),
            None
        );
        assert_eq!(cancel("not json"), None);
    }
}
