//! `GET /metrics`: the server's metrics (`crate::metrics`) in the Prometheus text format, with the
//! gauges read as the scrape arrives. Which checks it passes is decided where the routes are put
//! together (`http.rs`): the `Host` and `Origin` checks always, the bearer token when one is set
//! unless the operator made the metrics public.

use crate::metrics::{CONTENT_TYPE, Gauges};
use crate::server::McpServer;
use crate::transport::lifecycle::Lifecycle;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The path Prometheus scrapes by default.
pub const METRICS_PATH: &str = "/metrics";

/// What a scrape reads.
#[derive(Clone)]
pub(crate) struct Scraped {
    pub server: McpServer,
    pub lifecycle: Lifecycle,
}

pub(crate) async fn metrics(State(scraped): State<Scraped>) -> Response {
    let (sandboxes_in_use, max_sandboxes) = scraped.server.sandboxes();
    let gauges = Gauges {
        sandboxes_in_use,
        max_sandboxes,
        requests_in_flight: scraped.lifecycle.requests_in_flight(),
        ready: scraped.lifecycle.is_ready(),
    };
    (
        [
            (header::CONTENT_TYPE, CONTENT_TYPE),
            (header::CACHE_CONTROL, "no-store"),
        ],
        scraped
            .server
            .secrets()
            .scrub(&scraped.server.metrics().render(gauges))
            .into_owned(),
    )
        .into_response()
}
