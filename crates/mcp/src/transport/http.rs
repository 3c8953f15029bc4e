//! MCP over streamable HTTP, stateless, so replicas can sit behind an ordinary load balancer. Safe by
//! default: it binds to loopback, checks `Host` and `Origin` against allowlists (DNS rebinding), and
//! refuses a non-loopback address unless a bearer token is required. What clients can make it hold
//! is bounded: at most [`MAX_CONNECTIONS`] connections are open at once (past that a new one is
//! answered `503` and closed), a connection that does not send a request's headers within
//! [`HEADER_DEADLINE`] (a new one, or one idle between requests) is closed, a request body is at
//! most [`MAX_REQUEST_BYTES`] and must arrive within [`BODY_DEADLINE`], and at most [`MAX_REQUESTS_IN_FLIGHT`] requests holding at most
//! [`MAX_BYTES_IN_FLIGHT`] between them are served at once; past that a client gets
//! `503 Service Unavailable` with `Retry-After`.
//!
//! Beside the MCP endpoint: the health probes ([`HEALTHZ_PATH`], [`READYZ_PATH`]), the metrics
//! ([`METRICS_PATH`]) and the OAuth protected-resource metadata. A shutdown (the future given to
//! [`serve`]) drains the server: not ready, new requests refused, those in flight given
//! [`HttpOptions::shutdown_grace`] to finish before their calls are cancelled.

use crate::server::McpServer;
use crate::transport::host_check::{Allowlists, check_host_and_origin, check_origin};
use crate::transport::lifecycle::Lifecycle;
use crate::transport::metrics_route::Scraped;
use crate::transport::{accept, drain_gate, health, metrics_route, shutdown};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use crate::transport::accept::{HEADER_DEADLINE, MAX_CONNECTIONS};
pub use crate::transport::health::{HEALTHZ_PATH, READYZ_PATH};
pub use crate::transport::metrics_route::METRICS_PATH;

/// The endpoint path.
pub const MCP_PATH: &str = "/mcp";

/// The largest request body accepted (a `tools/call` with its arguments).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;
/// Requests served at once (a call waiting for a sandbox counts).
pub const MAX_REQUESTS_IN_FLIGHT: usize = 64;
/// Request body bytes held at once across the requests being served.
pub const MAX_BYTES_IN_FLIGHT: usize = 32 << 20;
/// How long a request's body may take to arrive once its headers have (its request slot is held
/// meanwhile).
pub const BODY_DEADLINE: Duration = Duration::from_secs(10);
/// The unit the body-bytes budget is counted in.
const BUDGET_UNIT_BYTES: usize = 1 << 10;

/// Slots for the requests being served and for the bytes of their bodies.
struct InFlight {
    requests: Semaphore,
    kibibytes: Semaphore,
}

/// How to listen.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// When set, every request must carry `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Extra `Host` names accepted besides loopback names and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Extra browser origins accepted besides loopback origins.
    pub allowed_origins: Vec<String>,
    /// Serve [`METRICS_PATH`] without the bearer token even when one is set (its `Host` and
    /// `Origin` are checked all the same).
    pub metrics_public: bool,
    /// How long a shutdown lets the requests in flight finish before cancelling their calls.
    pub shutdown_grace: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum HttpServeError {
    #[error(
        "refusing to listen on {0}: it is not a loopback address and no bearer token is required; set one with --token-env NAME (or bind 127.0.0.1)"
    )]
    PublicWithoutToken(SocketAddr),
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the HTTP server failed")]
    Serve(#[source] std::io::Error),
}

/// Serves until `shutdown` completes, then drains (see the module's documentation) and returns.
/// `on_listening` receives the bound address once listening.
pub async fn serve(
    server: McpServer,
    options: HttpOptions,
    on_listening: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()>,
) -> Result<(), HttpServeError> {
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        return Err(HttpServeError::PublicWithoutToken(options.addr));
    }
    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .map_err(|source| HttpServeError::Bind {
            addr: options.addr,
            source,
        })?;
    let local = listener.local_addr().map_err(HttpServeError::Serve)?;
    let allowed = Arc::new(Allowlists::new(
        local,
        &options.allowed_hosts,
        &options.allowed_origins,
    ));
    let lifecycle = Lifecycle::default();
    let calls = server.in_flight_calls();
    let app = routes(server, &options, allowed, lifecycle.clone());

    on_listening(local);
    let stop = CancellationToken::new();
    let accepting = tokio::spawn(accept::accept_until(listener, app, stop.clone()));
    shutdown.await;
    shutdown::drain(&lifecycle, &calls, options.shutdown_grace).await;
    stop.cancel();
    accepting
        .await
        .map_err(|err| HttpServeError::Serve(std::io::Error::other(err)))
}

/// The routes, each behind the checks it needs. A layer wraps only the routes added before it, so
/// each group is a router of its own: the MCP endpoint behind everything; the metrics behind the
/// `Host` and `Origin` checks and (unless public) the token, but none of the request slots or body
/// budget the MCP endpoint's callers share (they read no body); the health probes behind the
/// `Origin` check only; the resource metadata behind nothing (it must be readable without a token).
fn routes(
    server: McpServer,
    options: &HttpOptions,
    allowed: Arc<Allowlists>,
    lifecycle: Lifecycle,
) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_allowed_hosts(allowed.hosts().to_vec())
        .with_allowed_origins(allowed.origins().to_vec());
    let calls = server.in_flight_calls();
    let scraped = Scraped {
        server: server.clone(),
        lifecycle: lifecycle.clone(),
    };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let token: Arc<Option<String>> = Arc::new(options.token.clone());
    let in_flight = Arc::new(InFlight {
        requests: Semaphore::new(MAX_REQUESTS_IN_FLIGHT),
        kibibytes: Semaphore::new(MAX_BYTES_IN_FLIGHT / BUDGET_UNIT_BYTES),
    });
    let mcp = axum::Router::new()
        .nest_service(MCP_PATH, service)
        .layer(from_fn(crate::transport::forbidden::forbidden_as_json))
        .layer(from_fn_with_state(
            calls,
            crate::transport::http_cancellation::route_cancellations,
        ))
        .layer(from_fn_with_state(
            lifecycle.clone(),
            drain_gate::gate_requests,
        ))
        .layer(from_fn_with_state(in_flight, bound_in_flight))
        .layer(from_fn_with_state(token.clone(), require_token));
    let mut metrics = axum::Router::new()
        .route(METRICS_PATH, get(metrics_route::metrics))
        .with_state(scraped)
        .layer(from_fn_with_state(allowed.clone(), check_host_and_origin))
        .layer(from_fn(crate::transport::forbidden::forbidden_as_json));
    if !options.metrics_public {
        metrics = metrics.layer(from_fn_with_state(token, require_token));
    }
    let probes = axum::Router::new()
        .route(HEALTHZ_PATH, get(health::healthz))
        .route(READYZ_PATH, get(health::readyz))
        .with_state(lifecycle)
        .layer(from_fn_with_state(allowed, check_origin))
        .layer(from_fn(crate::transport::forbidden::forbidden_as_json));
    mcp.merge(metrics)
        .merge(probes)
        .route(RESOURCE_METADATA_PATH, get(protected_resource_metadata))
}

/// Where the OAuth protected-resource metadata (RFC 9728) of the MCP endpoint is served: what a
/// client reads after a 401 to learn how to present its token. It holds no secret and needs none.
const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The longest `Host` echoed back: a DNS name (253) with a port.
const MAX_ECHOED_HOST_BYTES: usize = 260;

/// The request's `Host` as given, if it is a plain host name or address with an optional port
/// (anything else is left out of what is echoed back).
fn plain_host(headers: &http::HeaderMap) -> Option<&str> {
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let plain = !host.is_empty()
        && host.len() <= MAX_ECHOED_HOST_BYTES
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'));
    plain.then_some(host)
}

/// RFC 9728 metadata: the MCP endpoint is the resource, and it takes a bearer token in the
/// `Authorization` header (issued by the operator, so no authorization server is named).
async fn protected_resource_metadata(headers: http::HeaderMap) -> Response {
    let resource = plain_host(&headers).map(|host| format!("http://{host}{MCP_PATH}"));
    let metadata = serde_json::json!({
        "resource": resource,
        "bearer_methods_supported": ["header"],
        "resource_name": "cordon",
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        metadata.to_string(),
    )
        .into_response()
}

/// Rejects requests without the right bearer token (when one is required), as the MCP
/// authorization spec asks: 401 with `WWW-Authenticate: Bearer` naming the error and where the
/// resource metadata is, and a JSON body saying the same.
async fn require_token(
    State(token): State<Arc<Option<String>>>,
    mut request: Request,
    next: Next,
) -> Response {
    if token.is_none() {
        // With no token every client is the same caller: an `Authorization` header it makes up
        // names nobody, and must not make it another caller (of approval states, cancellations).
        request.headers_mut().remove(header::AUTHORIZATION);
    }
    if let Some(expected) = token.as_ref() {
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        if !presented
            .is_some_and(|presented| same_secret(presented.as_bytes(), expected.as_bytes()))
        {
            let (error, description) = match presented {
                None => ("invalid_request", "this server needs a bearer token"),
                Some(_) => (
                    "invalid_token",
                    "the bearer token is not the one this server takes",
                ),
            };
            let mut challenge =
                format!(r#"Bearer error="{error}", error_description="{description}""#);
            if let Some(host) = plain_host(request.headers()) {
                challenge.push_str(&format!(
                    r#", resource_metadata="http://{host}{RESOURCE_METADATA_PATH}""#
                ));
            }
            let body = serde_json::json!({
                "error": error,
                "error_description": format!(
                    "{description}: send `Authorization: Bearer TOKEN` with the token the operator set (--token-env)"
                ),
            });
            return (
                StatusCode::UNAUTHORIZED,
                [
                    (header::WWW_AUTHENTICATE, challenge),
                    (header::CONTENT_TYPE, "application/json".to_string()),
                ],
                body.to_string(),
            )
                .into_response();
        }
    }
    next.run(request).await
}

/// Serves a request only within the bounds on requests and body bytes in flight, holding its
/// slots until its response is ready.
async fn bound_in_flight(
    State(in_flight): State<Arc<InFlight>>,
    request: Request,
    next: Next,
) -> Response {
    let Ok(_request_slot) = in_flight.requests.try_acquire() else {
        return busy("too many requests are being served at once");
    };
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_REQUEST_BYTES as u64) {
        return too_large();
    }
    let bytes =
        match tokio::time::timeout(BODY_DEADLINE, axum::body::to_bytes(body, MAX_REQUEST_BYTES))
            .await
        {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(_)) => return too_large(),
            Err(_) => return body_too_slow(),
        };
    let units = bytes.len().div_ceil(BUDGET_UNIT_BYTES) as u32;
    let Ok(_byte_slots) = in_flight.kibibytes.try_acquire_many(units) else {
        return busy("too many request bytes are being served at once");
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

fn busy(why: &str) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        format!("{why}; retry shortly"),
    )
        .into_response()
}

fn body_too_slow() -> Response {
    (
        StatusCode::REQUEST_TIMEOUT,
        [(header::CONNECTION, "close")],
        format!(
            "the request body did not arrive within {} s",
            BODY_DEADLINE.as_secs()
        ),
    )
        .into_response()
}

fn too_large() -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body is over {MAX_REQUEST_BYTES} bytes, the most cordon accepts; send smaller tool arguments"
        ),
    )
        .into_response()
}

/// Compares secrets in time that does not depend on where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        for other in [&b"abd"[..], b"ab", b"abcd", b""] {
            assert!(!same_secret(b"abc", other));
        }
    }
}
