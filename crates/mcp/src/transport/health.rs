//! The probes a load balancer or Kubernetes asks: `GET /healthz` (liveness: `200 ok` while the
//! process serves HTTP) and `GET /readyz` (readiness: `200 ready` once the plugins are loaded and
//! calls are accepted, `503 shutting down` from the moment a shutdown begins). They need no token
//! and reveal nothing; they pass the `Origin` check but not the `Host` one (`host_check.rs`).

use crate::transport::lifecycle::Lifecycle;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// Liveness.
pub const HEALTHZ_PATH: &str = "/healthz";
/// Readiness.
pub const READYZ_PATH: &str = "/readyz";

/// Probes are never cached on the way.
const NO_STORE: (header::HeaderName, &str) = (header::CACHE_CONTROL, "no-store");

pub(crate) async fn healthz() -> Response {
    (StatusCode::OK, [NO_STORE], "ok\n").into_response()
}

pub(crate) async fn readyz(State(lifecycle): State<Lifecycle>) -> Response {
    if lifecycle.is_ready() {
        (StatusCode::OK, [NO_STORE], "ready\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [NO_STORE],
            "shutting down\n",
        )
            .into_response()
    }
}
