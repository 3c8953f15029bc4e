//! The HTTP client the OTLP exporters post through: reqwest (the one cordon already uses, with its
//! rustls), in its blocking form, since the exporters run on threads of their own with no async
//! runtime. Every request has a deadline, so a collector that never answers costs an export thread
//! that long, never a call; redirects are not followed (the export headers may carry a vendor's
//! key); a response body is read to at most [`MAX_RESPONSE_BYTES`].

use bytes::Bytes;
use http::{Request, Response};
use opentelemetry_http::{HttpClient, HttpError};
use std::io::Read as _;
use std::time::Duration;

/// The most of a collector's answer read (an export answer is a few bytes).
const MAX_RESPONSE_BYTES: u64 = 64 << 10;

#[derive(Debug, Clone)]
pub struct ExportClient {
    client: reqwest::blocking::Client,
}

impl ExportClient {
    /// A client whose every request ends within `timeout`, connecting included.
    pub fn new(timeout: Duration) -> Result<Self, reqwest::Error> {
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("cordon/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self { client })
    }
}

#[async_trait::async_trait]
impl HttpClient for ExportClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let mut outgoing = self
            .client
            .request(parts.method, parts.uri.to_string())
            .body(body.to_vec());
        for (name, value) in &parts.headers {
            outgoing = outgoing.header(name, value);
        }
        let answer = outgoing.send()?;
        let status = answer.status();
        let headers = answer.headers().clone();
        let mut body = Vec::new();
        answer.take(MAX_RESPONSE_BYTES).read_to_end(&mut body)?;
        let mut response = Response::builder().status(status).body(Bytes::from(body))?;
        *response.headers_mut() = headers;
        Ok(response)
    }
}
