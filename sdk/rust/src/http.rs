//! Outgoing HTTP from a plugin, over standard `wasi:http`. The host lets a request through only if
//! the operator granted its origin; a refusal comes back as a `capability_denied` [`ToolError`].
//! This is a small blocking client for tools; redirects are not followed (each hop is a request of
//! its own, checked by the host).

use crate::ToolError;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingBody, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

/// A response: status, headers (names lowercase) and the whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of a header (name in any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// `GET url`.
pub fn get(url: &str) -> Result<Response, ToolError> {
    request("GET", url, &[], None)
}

/// Sends a request and reads the whole response.
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Result<Response, ToolError> {
    let target = Url::parse(url)?;
    let entries: Vec<(String, Vec<u8>)> = headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
        .collect();
    let fields = Fields::from_list(&entries)
        .map_err(|err| ToolError::new(format!("invalid request header: {err:?}")))?;
    let outgoing = OutgoingRequest::new(fields);
    let method = match method.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "PATCH" => Method::Patch,
        "OPTIONS" => Method::Options,
        other => Method::Other(other.to_string()),
    };
    let invalid = |what: &str| ToolError::new(format!("invalid request {what} in {url:?}"));
    outgoing
        .set_method(&method)
        .map_err(|()| invalid("method"))?;
    outgoing
        .set_scheme(Some(&target.scheme))
        .map_err(|()| invalid("scheme"))?;
    outgoing
        .set_authority(Some(&target.authority))
        .map_err(|()| invalid("host"))?;
    outgoing
        .set_path_with_query(Some(&target.path))
        .map_err(|()| invalid("path"))?;
    let outgoing_body = outgoing
        .body()
        .map_err(|()| ToolError::new("the request body is unavailable"))?;
    if let Some(bytes) = body {
        let stream = outgoing_body
            .write()
            .map_err(|()| ToolError::new("the request body is unavailable"))?;
        for chunk in bytes.chunks(4096) {
            stream.blocking_write_and_flush(chunk).map_err(|err| {
                ToolError::new(format!("sending the request body failed: {err:?}"))
            })?;
        }
    }
    OutgoingBody::finish(outgoing_body, None).map_err(|err| failure(url, err))?;

    let pending = outgoing_handler::handle(outgoing, None).map_err(|err| failure(url, err))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(err))) => return Err(failure(url, err)),
        _ => {
            return Err(ToolError::new(format!(
                "the request to {url} did not complete"
            )));
        }
    };
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| {
            (
                name.to_ascii_lowercase(),
                String::from_utf8_lossy(&value).into_owned(),
            )
        })
        .collect();
    let incoming = response
        .consume()
        .map_err(|()| ToolError::new("the response body is unavailable"))?;
    let stream = incoming
        .stream()
        .map_err(|()| ToolError::new("the response body is unavailable"))?;
    let mut body = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => body.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(err)) => {
                return Err(match wasip2::http::types::http_error_code(&err) {
                    Some(code) => failure(url, code),
                    None => ToolError::new(format!(
                        "reading the response from {url} failed: {}",
                        err.to_debug_string()
                    )),
                });
            }
        }
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// A wasi:http error as a tool error; refusals by the host are `capability_denied`.
fn failure(url: &str, code: ErrorCode) -> ToolError {
    match code {
        ErrorCode::HttpRequestDenied => ToolError::denied(format!(
            "the request to {url} was refused: this plugin's grants in cordon.toml do not cover that origin, method or path"
        )),
        ErrorCode::DestinationIpProhibited => ToolError::denied(format!(
            "the request to {url} was refused: its host resolves to a private or local address that is not granted"
        )),
        ErrorCode::HttpResponseBodySize(limit) => ToolError::new(format!(
            "the response from {url} is larger than this plugin may receive ({} bytes); ask for less",
            limit.map_or_else(|| "?".to_string(), |l| l.to_string())
        )),
        ErrorCode::HttpResponseTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionTimeout => ToolError::new(format!("the request to {url} timed out")),
        ErrorCode::ConnectionRefused => {
            ToolError::new(format!("the connection to {url} was refused"))
        }
        other => ToolError::new(format!("the request to {url} failed: {other:?}")),
    }
}

/// The parts of an absolute http(s) URL that wasi:http needs.
struct Url {
    scheme: Scheme,
    authority: String,
    path: String,
}

impl Url {
    fn parse(url: &str) -> Result<Self, ToolError> {
        let (scheme, rest) = url.split_once("://").ok_or_else(|| {
            ToolError::new(format!(
                "{url:?} is not an absolute URL; write e.g. https://example.com/page"
            ))
        })?;
        let scheme = match scheme.to_ascii_lowercase().as_str() {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => {
                return Err(ToolError::new(format!(
                    "unsupported URL scheme {other:?}; use http or https"
                )));
            }
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let path = path.split('#').next().unwrap_or("/");
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        if authority.is_empty() {
            return Err(ToolError::new(format!("{url:?} has no host")));
        }
        Ok(Self {
            scheme,
            authority: authority.to_string(),
            path,
        })
    }
}
