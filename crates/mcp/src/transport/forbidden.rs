//! A `403 Forbidden` as JSON. The transport refuses a request whose `Host` or `Origin` is not
//! allowed (DNS-rebinding protection) with a plain-text 403; clients show such a body as an opaque
//! failure. This middleware answers the same refusal as `{"error": "forbidden",
//! "error_description": ...}`, the shape of the MCP authorization spec's error bodies, saying which
//! flag allows the name.

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The most bytes of the transport's own message carried over.
const MAX_MESSAGE_BYTES: usize = 1 << 10;

pub(crate) async fn forbidden_as_json(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    if response.status() != StatusCode::FORBIDDEN {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if is_json {
        return response;
    }
    let body = axum::body::to_bytes(response.into_body(), MAX_MESSAGE_BYTES)
        .await
        .unwrap_or_default();
    let message = String::from_utf8_lossy(&body);
    let message = message.trim();
    let hint = if message.contains("Origin") {
        "start cordon serve with --allow-origin ORIGIN to accept this browser origin"
    } else if message.contains("Host") {
        "start cordon serve with --allow-host NAME to accept this host name (the name clients use to reach it)"
    } else {
        "the request is not allowed"
    };
    let description = if message.is_empty() {
        hint.to_string()
    } else {
        format!("{message}; {hint}")
    };
    let body = serde_json::json!({ "error": "forbidden", "error_description": description });
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
