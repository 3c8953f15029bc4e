//! MCP over streamable HTTP, stateless, so replicas can sit behind an ordinary load balancer. Safe by
//! default: it binds to loopback, checks `Host` and `Origin` against allowlists (DNS rebinding), and
//! refuses a non-loopback address unless a bearer token is required. What clients can make it hold
//! is bounded: at most [`MAX_CONNECTIONS`] connections are open at once (past that a new one is
//! answered `503` and closed), a connection that does not send a request's headers within
//! [`HEADER_DEADLINE`] (a new one, or one idle between requests) is closed, a request body is at
//! most [`MAX_REQUEST_BYTES`] and must arrive within [`BODY_DEADLINE`], and at most [`MAX_REQUESTS_IN_FLIGHT`] requests holding at most
//! [`MAX_BYTES_IN_FLIGHT`] between them are served at once; past that a client gets
//! `503 Service Unavailable` with `Retry-After`.

use crate::server::McpServer;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The endpoint path.
pub const MCP_PATH: &str = "/mcp";

/// The largest request body accepted (a `tools/call` with its arguments).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;
/// Requests served at once (a call waiting for a sandbox counts).
pub const MAX_REQUESTS_IN_FLIGHT: usize = 64;
/// Request body bytes held at once across the requests being served.
pub const MAX_BYTES_IN_FLIGHT: usize = 32 << 20;
/// Connections open at once; each holds a file descriptor.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a connection may take to send a request's headers, and stay idle between requests.
pub const HEADER_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);
/// How long a request's body may take to arrive once its headers have (its request slot is held
/// meanwhile).
pub const BODY_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);
/// What a connection past [`MAX_CONNECTIONS`] is told before it is closed.
const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
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

/// Serves until the process ends. `on_listening` receives the bound address once listening.
pub async fn serve(
    server: McpServer,
    options: HttpOptions,
    on_listening: impl FnOnce(SocketAddr),
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

    let mut hosts = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "[::1]".to_string(),
    ];
    if !local.ip().is_unspecified() {
        hosts.push(local.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = [
        "http://localhost:*",
        "http://127.0.0.1:*",
        "http://[::1]:*",
        "https://localhost:*",
    ]
    .map(String::from)
    .to_vec();
    origins.extend(options.allowed_origins.iter().cloned());

    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    let calls = server.in_flight_calls();
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
    // The layers wrap only the routes added before them: the metadata route, added after, needs
    // no token and takes none of the request slots or body budget the MCP endpoint's callers share
    // (it reads no body).
    let app = axum::Router::new()
        .nest_service(MCP_PATH, service)
        .layer(axum::middleware::from_fn(
            crate::transport::forbidden::forbidden_as_json,
        ))
        .layer(axum::middleware::from_fn_with_state(
            calls,
            crate::transport::http_cancellation::route_cancellations,
        ))
        .layer(axum::middleware::from_fn_with_state(
            in_flight,
            bound_in_flight,
        ))
        .layer(axum::middleware::from_fn_with_state(token, require_token))
        .route(
            RESOURCE_METADATA_PATH,
            axum::routing::get(protected_resource_metadata),
        );

    on_listening(local);
    accept_connections(listener, app).await
}

/// Serves each accepted connection (HTTP/1.1) on its own task, at most [`MAX_CONNECTIONS`] at once.
async fn accept_connections(listener: tokio::net::TcpListener, app: axum::Router) -> ! {
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(err) => {
                // Out of file descriptors or a connection reset before it was accepted: wait a
                // little rather than spin.
                tracing::warn!("accepting an MCP HTTP connection failed: {err}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = open.clone().try_acquire_owned() else {
            // A fresh socket's send buffer takes these few bytes at once; then it is closed.
            let _ = stream.try_write(TOO_MANY_CONNECTIONS);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_DEADLINE);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let _ = connection.await;
        });
    }
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
    request: Request,
    next: Next,
) -> Response {
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
