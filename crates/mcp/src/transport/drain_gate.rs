//! The gate in front of the MCP endpoint: each request is counted in flight until its response
//! has been sent (the body included: a call that streams notifications answers with a stream), and
//! once the server is shutting down a new request is refused with `503` and `Retry-After`, so a
//! load balancer's client retries on another replica. A `notifications/cancelled` still passes: it
//! stops a call the shutdown is waiting for.

use crate::transport::http_cancellation::cancelled_request_id;
use crate::transport::lifecycle::{InFlight, Lifecycle};
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::pin::Pin;
use std::task::{Context, Poll};

pub(crate) async fn gate_requests(
    State(lifecycle): State<Lifecycle>,
    request: Request,
    next: Next,
) -> Response {
    let in_flight = lifecycle.track();
    let request = if lifecycle.is_draining() {
        let (parts, body) = request.into_parts();
        // The body is already in memory (`bound_in_flight` read it), so this does not wait.
        let bytes = axum::body::to_bytes(body, usize::MAX)
            .await
            .unwrap_or_default();
        if cancelled_request_id(&bytes).is_none() {
            return shutting_down();
        }
        Request::from_parts(parts, Body::from(bytes))
    } else {
        request
    };
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    Response::from_parts(
        parts,
        Body::new(Tracked {
            body,
            _in_flight: in_flight,
        }),
    )
}

fn shutting_down() -> Response {
    let body = serde_json::json!({
        "error": "shutting_down",
        "error_description": "this cordon server is shutting down and takes no new requests; send the request again (another replica answers it)",
    });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::RETRY_AFTER, "1"),
            (header::CONNECTION, "close"),
            (header::CONTENT_TYPE, "application/json"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// A response body that keeps its request counted in flight until it has been sent or dropped.
struct Tracked {
    body: Body,
    _in_flight: InFlight,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
