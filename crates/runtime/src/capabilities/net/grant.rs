//! HTTP grants: which origins a plugin may reach (scheme, host exact or `*.example.com`, port),
//! optionally only some methods and a path prefix, and which secret headers the host adds. Parsed
//! once from cordon.toml; a request is then checked with [`HttpGrant::allows`].
//!
//! A path prefix is matched by whole segments, on the path as the server will read it: a request
//! under a prefixed grant whose path has a `.` or `..` segment (raw or percent-encoded, also as
//! `..;` which some servers strip), an encoded or raw slash or backslash inside a segment, or a
//! double-encoded one, is refused before it is compared, because a server would resolve it to
//! another place than the text says (request_path.rs). `TRACE`, `TRACK` and `CONNECT` are never
//! sent.

use super::request_path::{is_never_sent, path_is_under};
use std::fmt;
use std::net::IpAddr;

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain `http://`.
    Http,
    /// `https://`, over TLS.
    Https,
}

impl Scheme {
    /// Reads `http` or `https`, in any case; `None` for any other scheme.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "http" => Some(Self::Http),
            "https" => Some(Self::Https),
            _ => None,
        }
    }

    /// 80 for `http`, 443 for `https`.
    pub fn default_port(self) -> u16 {
        match self {
            Self::Http => 80,
            Self::Https => 443,
        }
    }

    /// `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Https => "https",
        }
    }
}

/// The host part of a grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// One IP address, granted explicitly (private ranges included).
    Ip(IpAddr),
    /// One host name (lowercase).
    Name(String),
    /// Any subdomain of this suffix (`*.example.com` is stored as `.example.com`).
    Subdomains(String),
}

impl HostPattern {
    fn parse(text: &str) -> Result<Self, String> {
        let text = text
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if let Ok(ip) = text.parse::<IpAddr>() {
            return Ok(Self::Ip(ip));
        }
        if let Some(suffix) = text.strip_prefix("*.") {
            return if valid_name(suffix) {
                Ok(Self::Subdomains(format!(".{suffix}")))
            } else {
                Err(format!("{text:?} is not a host pattern"))
            };
        }
        if valid_name(&text) {
            Ok(Self::Name(text))
        } else {
            Err(format!(
                "{text:?} is not a host name, an IP address or *.domain"
            ))
        }
    }

    fn matches(&self, host: &str) -> bool {
        match self {
            Self::Ip(ip) => host
                .parse::<IpAddr>()
                .is_ok_and(|requested| requested == *ip),
            Self::Name(name) => host == name,
            Self::Subdomains(suffix) => {
                host.ends_with(suffix.as_str()) && host.len() > suffix.len()
            }
        }
    }
}

impl fmt::Display for HostPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]"),
            Self::Ip(ip) => write!(f, "{ip}"),
            Self::Name(name) => f.write_str(name),
            Self::Subdomains(suffix) => write!(f, "*{suffix}"),
        }
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// A header value the host adds to matching requests. Its value is kept out of `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretHeader {
    /// The header's name.
    pub name: http::HeaderName,
    /// The value sent, its `${env:NAME}` references filled in from the host environment at load.
    pub value: http::HeaderValue,
    /// The value as cordon.toml writes it (`Bearer ${env:TOKEN}`), which the lockfile records a
    /// digest of: the operator's choice of secret, not the secret's current value.
    pub template: String,
}

impl fmt::Debug for SecretHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: <secret>", self.name)
    }
}

/// One granted origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGrant {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// The host, or hosts, the grant covers.
    pub host: HostPattern,
    /// The port, the scheme's default when the origin names none.
    pub port: u16,
    /// Allowed methods (uppercase); `None` means any.
    pub methods: Option<Vec<String>>,
    /// Requests must have a path starting with this.
    pub path_prefix: Option<String>,
    /// Headers the host sets on matching requests, replacing the guest's.
    pub headers: Vec<SecretHeader>,
    /// Whether a host name may resolve to loopback, private, link-local or unspecified addresses.
    pub private: bool,
}

/// What a request asks for, as the gate sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestTarget {
    /// `http` or `https`.
    pub scheme: Scheme,
    /// Lowercase, without IPv6 brackets.
    pub host: String,
    /// The port, the scheme's default when the URL names none.
    pub port: u16,
    /// The method, in uppercase.
    pub method: String,
    /// The path of the request's URI, without its query.
    pub path: String,
}

impl RequestTarget {
    /// `scheme://host:port` of the request, an IPv6 host in brackets.
    pub fn origin(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{}://{host}:{}", self.scheme.as_str(), self.port)
    }
}

impl HttpGrant {
    /// Parses an origin such as `https://api.example.com`, `http://127.0.0.1:8080` or
    /// `https://*.example.com:8443`.
    pub fn parse_origin(origin: &str) -> Result<(Scheme, HostPattern, u16), String> {
        let (scheme, rest) = origin.split_once("://").ok_or_else(|| {
            format!("{origin:?} has no scheme; write e.g. \"https://api.example.com\"")
        })?;
        let scheme = Scheme::parse(scheme)
            .ok_or_else(|| format!("{origin:?}: only http and https can be granted"))?;
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains('/') || authority.contains('@') || authority.contains('?') {
            return Err(format!(
                "{origin:?} must be an origin only (scheme, host, optional port); use path_prefix for paths"
            ));
        }
        let (host, port) =
            split_host_port(authority).ok_or_else(|| format!("{origin:?} has an invalid port"))?;
        let host = HostPattern::parse(host).map_err(|err| format!("{origin:?}: {err}"))?;
        Ok((scheme, host, port.unwrap_or(scheme.default_port())))
    }

    /// `scheme://host:port` as granted.
    pub fn origin(&self) -> String {
        format!("{}://{}:{}", self.scheme.as_str(), self.host, self.port)
    }

    /// The grant as a refusal names it: `https://api.github.com:443 (GET; under /repos/)`.
    pub fn rule(&self) -> String {
        let mut parts = Vec::new();
        if let Some(methods) = &self.methods {
            parts.push(methods.join(", "));
        }
        if let Some(prefix) = &self.path_prefix {
            parts.push(format!("under {prefix}"));
        }
        if parts.is_empty() {
            self.origin()
        } else {
            format!("{} ({})", self.origin(), parts.join("; "))
        }
    }

    /// Whether the request goes to this grant's origin (whatever its method and path).
    pub(crate) fn same_origin(&self, target: &RequestTarget) -> bool {
        self.scheme == target.scheme && self.port == target.port && self.host.matches(&target.host)
    }

    /// Whether this grant covers the request.
    pub(crate) fn allows(&self, target: &RequestTarget) -> bool {
        self.same_origin(target)
            && !is_never_sent(&target.method)
            && self
                .methods
                .as_ref()
                .is_none_or(|methods| methods.iter().any(|m| m == &target.method))
            && self
                .path_prefix
                .as_ref()
                .is_none_or(|prefix| path_is_under(&target.path, prefix))
    }

    /// Whether the grant names the request's address itself (an IP grant).
    pub fn names_ip(&self, ip: IpAddr) -> bool {
        self.host == HostPattern::Ip(ip)
    }
}

/// `host:port` → (`host`, Some(port)); IPv6 in brackets.
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host, Some(port.parse().ok()?))),
        None => Some((authority, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(origin: &str) -> HttpGrant {
        let (scheme, host, port) = HttpGrant::parse_origin(origin).unwrap();
        HttpGrant {
            scheme,
            host,
            port,
            methods: None,
            path_prefix: None,
            headers: vec![],
            private: false,
        }
    }

    fn target(scheme: Scheme, host: &str, port: u16, method: &str, path: &str) -> RequestTarget {
        RequestTarget {
            scheme,
            host: host.into(),
            port,
            method: method.into(),
            path: path.into(),
        }
    }

    #[test]
    fn origins_parse_into_scheme_host_and_port() {
        assert_eq!(
            grant("https://api.example.com").origin(),
            "https://api.example.com:443"
        );
        assert_eq!(
            grant("http://127.0.0.1:8080/").origin(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            grant("https://*.Example.com:8443").origin(),
            "https://*.example.com:8443"
        );
        assert_eq!(grant("http://[::1]:9000").origin(), "http://[::1]:9000");
        for bad in [
            "api.example.com",
            "ftp://x.com",
            "https://x.com/path",
            "https://u@x.com",
            "https://x.com:99999",
            "https://bad host",
            "https://*.",
            "https://",
        ] {
            assert!(
                HttpGrant::parse_origin(bad).is_err(),
                "{bad} should be refused"
            );
        }
    }

    #[test]
    fn requests_are_allowed_only_by_a_matching_grant() {
        use Scheme::{Http, Https};
        let api = HttpGrant {
            methods: Some(vec!["GET".into()]),
            path_prefix: Some("/v1/".into()),
            ..grant("https://api.example.com")
        };
        let wildcard = grant("https://*.example.com");
        let ip = grant("http://127.0.0.1:8080");
        let cases = [
            (
                &api,
                target(Https, "api.example.com", 443, "GET", "/v1/items"),
                true,
            ),
            (
                &api,
                target(Https, "api.example.com", 443, "POST", "/v1/items"),
                false,
            ),
            (
                &api,
                target(Https, "api.example.com", 443, "GET", "/v2/items"),
                false,
            ),
            (
                &api,
                target(Http, "api.example.com", 443, "GET", "/v1/items"),
                false,
            ),
            (
                &api,
                target(Https, "api.example.com", 8443, "GET", "/v1/items"),
                false,
            ),
            (
                &api,
                target(Https, "evil.com", 443, "GET", "/v1/items"),
                false,
            ),
            (
                &wildcard,
                target(Https, "a.example.com", 443, "GET", "/"),
                true,
            ),
            (
                &wildcard,
                target(Https, "a.b.example.com", 443, "GET", "/"),
                true,
            ),
            (
                &wildcard,
                target(Https, "example.com", 443, "GET", "/"),
                false,
            ),
            (
                &wildcard,
                target(Https, "badexample.com", 443, "GET", "/"),
                false,
            ),
            (&ip, target(Http, "127.0.0.1", 8080, "GET", "/"), true),
            (&ip, target(Http, "127.0.0.1", 8081, "GET", "/"), false),
            (&ip, target(Http, "localhost", 8080, "GET", "/"), false),
        ];
        for (grant, target, allowed) in cases {
            assert_eq!(
                grant.allows(&target),
                allowed,
                "{} vs {target:?}",
                grant.origin()
            );
        }
    }

    #[test]
    fn trace_track_and_connect_are_never_allowed() {
        use Scheme::Http;
        let any = grant("http://127.0.0.1:8080");
        let listed = HttpGrant {
            methods: Some(vec!["TRACE".into(), "GET".into()]),
            ..grant("http://127.0.0.1:8080")
        };
        for method in ["TRACE", "TRACK", "CONNECT"] {
            for grant in [&any, &listed] {
                assert!(
                    !grant.allows(&target(Http, "127.0.0.1", 8080, method, "/")),
                    "{method}"
                );
            }
        }
        assert!(any.allows(&target(Http, "127.0.0.1", 8080, "PATCH", "/")));
    }

    #[test]
    fn secret_header_values_stay_out_of_debug_output() {
        let header = SecretHeader {
            name: http::header::AUTHORIZATION,
            value: http::HeaderValue::from_static("Bearer s3cret"),
            template: "Bearer s3cret".into(),
        };
        assert_eq!(format!("{header:?}"), "authorization: <secret>");
    }
}
