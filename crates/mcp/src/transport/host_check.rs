//! The `Host` and `Origin` allowlists (DNS-rebinding protection) of the HTTP server, built once for
//! the MCP endpoint (which rmcp's transport checks against them) and checked here for cordon's own
//! routes: `/metrics` passes both checks, as `/mcp` does; the health probes pass the `Origin` check
//! only, since they reveal nothing and a probe names the pod by its address (`Host: 10.0.3.7:8808`),
//! which no allowlist can know in advance.
//!
//! The matching is rmcp's: a host entry without a port accepts any port; an origin entry ending in
//! `:*` accepts any port, one with a port only that port; a request without `Origin` (not a
//! browser) passes the `Origin` check.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::sync::Arc;

/// What the server accepts in `Host` and `Origin`.
#[derive(Debug, Clone)]
pub(crate) struct Allowlists {
    hosts: Vec<String>,
    origins: Vec<String>,
}

impl Allowlists {
    /// Loopback names and the bound address (unless it is the unspecified one), loopback origins,
    /// and what the operator added (`--allow-host`, `--allow-origin`).
    pub fn new(local: SocketAddr, extra_hosts: &[String], extra_origins: &[String]) -> Self {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
            .map(String::from)
            .to_vec();
        if !local.ip().is_unspecified() {
            hosts.push(local.ip().to_string());
        }
        hosts.extend(extra_hosts.iter().cloned());
        let mut origins: Vec<String> = [
            "http://localhost:*",
            "http://127.0.0.1:*",
            "http://[::1]:*",
            "https://localhost:*",
        ]
        .map(String::from)
        .to_vec();
        origins.extend(extra_origins.iter().cloned());
        Self { hosts, origins }
    }

    pub fn hosts(&self) -> &[String] {
        &self.hosts
    }

    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        let Some((host, port)) = headers
            .get(header::HOST)
            .and_then(|value| value.to_str().ok())
            .and_then(authority)
        else {
            return false;
        };
        self.hosts.iter().any(|allowed| {
            let (allowed_host, allowed_port) =
                authority(allowed).unwrap_or_else(|| (normalize(allowed), None));
            allowed_host == host && allowed_port.is_none_or(|allowed| port == Some(allowed))
        })
    }

    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return true;
        };
        let Some(origin) = origin.to_str().ok().and_then(Origin::parse) else {
            return false;
        };
        self.origins.iter().any(|allowed| {
            let (allowed, any_port) = match allowed.trim().strip_suffix(":*") {
                Some(base) => (base, true),
                None => (allowed.trim(), false),
            };
            Origin::parse(allowed).is_some_and(|allowed| origin.matches(&allowed, any_port))
        })
    }
}

/// A host name as compared: without IPv6 brackets, lowercase.
fn normalize(host: &str) -> String {
    host.trim_matches(['[', ']']).to_ascii_lowercase()
}

/// The host and port of an authority (`name`, `name:port`, `[v6]:port`).
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let authority = http::uri::Authority::try_from(text.trim()).ok()?;
    Some((normalize(authority.host()), authority.port_u16()))
}

/// A browser origin: `null`, or a scheme, host and optional port.
#[derive(Debug, PartialEq)]
enum Origin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: Option<u16>,
    },
}

impl Origin {
    fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("null") {
            return Some(Self::Null);
        }
        let uri = http::Uri::try_from(text).ok()?;
        let authority = uri.authority()?;
        Some(Self::Tuple {
            scheme: uri.scheme_str()?.to_ascii_lowercase(),
            host: normalize(authority.host()),
            port: authority.port_u16(),
        })
    }

    /// Whether this (a request's origin) is `allowed`: same scheme and host, and the same port
    /// (a missing one meaning the scheme's default) unless the entry takes any port or names none.
    fn matches(&self, allowed: &Self, any_port: bool) -> bool {
        match (self, allowed) {
            (Self::Null, Self::Null) => true,
            (
                Self::Tuple { scheme, host, port },
                Self::Tuple {
                    scheme: allowed_scheme,
                    host: allowed_host,
                    port: allowed_port,
                },
            ) => {
                let default = match scheme.as_str() {
                    "http" => Some(80),
                    "https" => Some(443),
                    _ => None,
                };
                scheme == allowed_scheme
                    && host == allowed_host
                    && (any_port || allowed_port.is_none() || port.or(default) == *allowed_port)
            }
            _ => false,
        }
    }
}

/// The refusal the transport gives for the same reasons, in its words (`forbidden.rs` turns it
/// into JSON naming the flag that would allow the request).
fn refused(what: &str) -> Response {
    (
        StatusCode::FORBIDDEN,
        format!("Forbidden: {what} header is not allowed"),
    )
        .into_response()
}

/// For routes that carry data (`/metrics`): both checks, as for the MCP endpoint.
pub(crate) async fn check_host_and_origin(
    State(allowed): State<Arc<Allowlists>>,
    request: Request,
    next: Next,
) -> Response {
    if !allowed.host_allowed(request.headers()) {
        return refused("Host");
    }
    if !allowed.origin_allowed(request.headers()) {
        return refused("Origin");
    }
    next.run(request).await
}

/// For the health probes: a foreign browser page is still refused, whatever the `Host`.
pub(crate) async fn check_origin(
    State(allowed): State<Arc<Allowlists>>,
    request: Request,
    next: Next,
) -> Response {
    if !allowed.origin_allowed(request.headers()) {
        return refused("Origin");
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| (name.clone(), value.parse().unwrap()))
            .collect()
    }

    fn lists() -> Allowlists {
        Allowlists::new(
            "0.0.0.0:8808".parse().unwrap(),
            &[
                "mcp.example.com".into(),
                "10.0.3.7".into(),
                "api.example.com:443".into(),
            ],
            &["https://app.example.com".into()],
        )
    }

    #[test]
    fn hosts_match_by_name_and_by_port_when_one_is_given() {
        let lists = lists();
        let host = |value: &str| lists.host_allowed(&headers(&[(header::HOST, value)]));
        assert!(host("localhost:8808"));
        assert!(host("[::1]:8808"));
        assert!(host("MCP.example.com"));
        assert!(host("10.0.3.7:8808"));
        assert!(host("api.example.com:443"));
        assert!(!host("api.example.com:8443"));
        assert!(!host("evil.example.com"));
        assert!(
            !host("0.0.0.0:8808"),
            "the unspecified address is nobody's name"
        );
        assert!(!lists.host_allowed(&HeaderMap::new()));
    }

    #[test]
    fn origins_match_by_scheme_host_and_port() {
        let lists = lists();
        let origin = |value: &str| lists.origin_allowed(&headers(&[(header::ORIGIN, value)]));
        assert!(lists.origin_allowed(&HeaderMap::new()), "not a browser");
        assert!(origin("http://localhost:3000"));
        assert!(origin("https://app.example.com"));
        assert!(!origin("http://app.example.com"));
        assert!(!origin("https://evil.example"));
        assert!(!origin("null"));
        assert!(!origin("not an origin"));
    }
}
