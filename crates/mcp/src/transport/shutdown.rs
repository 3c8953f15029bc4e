//! A graceful shutdown of the HTTP server: from the signal on it is not ready and refuses new
//! requests (`drain_gate.rs`); the requests in flight get the grace period to finish; past it the
//! calls still running are cancelled, so each ends as a `cancelled` result its client receives,
//! and those get a few seconds more to be sent.

use crate::server::in_flight_calls::InFlightCalls;
use crate::transport::lifecycle::Lifecycle;
use std::time::Duration;

/// How long cancelled calls get to end and their results to be sent (a sandbox stops within an
/// epoch tick; an after-hook may still run on the result).
const CANCEL_DEADLINE: Duration = Duration::from_secs(5);

/// Drains the server: returns once no request is in flight, or once the cancelled ones had
/// [`CANCEL_DEADLINE`] to end.
pub(crate) async fn drain(lifecycle: &Lifecycle, calls: &InFlightCalls, grace: Duration) {
    lifecycle.begin_draining();
    tracing::info!(
        requests = lifecycle.requests_in_flight(),
        "shutting down: no new requests; waiting up to {grace:?} for those in flight"
    );
    if tokio::time::timeout(grace, lifecycle.idle()).await.is_ok() {
        return;
    }
    let cancelled = calls.cancel_all();
    tracing::warn!(
        cancelled,
        requests = lifecycle.requests_in_flight(),
        "shutting down: the grace period of {grace:?} is over; cancelling the calls still running"
    );
    if tokio::time::timeout(CANCEL_DEADLINE, lifecycle.idle())
        .await
        .is_err()
    {
        tracing::warn!(
            requests = lifecycle.requests_in_flight(),
            "shutting down with requests still in flight"
        );
    }
}
