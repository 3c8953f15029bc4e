//! The gate every outgoing `wasi:http` request of a call passes. It checks the request against the
//! plugin's grants before anything touches the network, resolves the host itself and refuses
//! non-public addresses that were not granted, connects to the address it checked (so DNS cannot
//! change its mind in between), forces `Host` to the granted origin, adds the grant's secret
//! headers (replacing any the guest set), and bounds time, response size and concurrency: requests
//! waiting for their response (they wait for a slot), connections open at once per call (a held
//! response body keeps its connection, and its slot, until it is read or dropped) and per process
//! (past either, a request fails at once: waiting could deadlock a guest that holds bodies). Every
//! refusal is reported (URLs cut to a length, a bounded number per call) and the first few are
//! logged with what was refused and why; secrets are never logged.

use super::address::is_non_public;
use super::body::BoundedBody;
use crate::capabilities::limits::HttpLimits;
use crate::capabilities::net::grant::{HttpGrant, RequestTarget, Scheme};
use crate::capabilities::net::request_path::{ambiguous_segment, is_never_sent};
use crate::report::budget::{MAX_RECORDED_PATH_BYTES, RecordKind, ReportBudget, masked_cut};
use crate::report::secrets::Secrets;
use crate::report::{GuestReport, HttpAttempt, ReportSink};
use http_body_util::BodyExt;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiHttpHooks};

type WasiBody = wasmtime_wasi_http::WasiBody;
type IoFuture = Box<dyn Future<Output = Result<(), Error>> + Send>;
type SendFuture =
    Box<dyn Future<Output = Result<(http::Response<WasiBody>, IoFuture), Error>> + Send>;

/// How long a connection may outlive its request's deadline before the host closes it.
const CONNECTION_GRACE: Duration = Duration::from_secs(1);

/// Outgoing connections open at once in the whole process (`[host] max_http_connections`), shared
/// by every call's gate. Cheap to clone.
#[derive(Clone)]
pub struct ConnectionPool(Arc<Semaphore>);

impl ConnectionPool {
    pub fn new(connections: usize) -> Self {
        Self(Arc::new(Semaphore::new(connections.max(1))))
    }
}

/// Everything a call's gate is built from.
pub struct GateSetup {
    pub plugin: Arc<str>,
    pub grants: Arc<[HttpGrant]>,
    pub limits: HttpLimits,
    pub connections: ConnectionPool,
    /// Where each attempt is reported (for events and the audit log), with the call's id.
    pub reports: Option<(ReportSink, String)>,
    /// The sandbox's bound on what it makes the host record.
    pub budget: Arc<ReportBudget>,
    /// The host's secrets, masked in what is recorded of a request before it is cut.
    pub secrets: Secrets,
}

/// The per-call gate (the `WasiHttpHooks` of the call's store).
#[derive(Clone)]
pub struct HttpGate {
    plugin: Arc<str>,
    grants: Arc<[HttpGrant]>,
    limits: HttpLimits,
    in_flight: Arc<Semaphore>,
    open: Arc<Semaphore>,
    connections: ConnectionPool,
    reports: Option<(ReportSink, String)>,
    budget: Arc<ReportBudget>,
    secrets: Secrets,
}

impl HttpGate {
    pub fn new(setup: GateSetup) -> Self {
        Self {
            in_flight: Arc::new(Semaphore::new(setup.limits.max_concurrent.max(1))),
            open: Arc::new(Semaphore::new(setup.limits.max_open.max(1))),
            plugin: setup.plugin,
            grants: setup.grants,
            limits: setup.limits,
            connections: setup.connections,
            reports: setup.reports,
            budget: setup.budget,
            secrets: setup.secrets,
        }
    }

    /// `text` as recorded: the host's secrets masked, then cut to `max` bytes.
    fn shown(&self, text: &str, max: usize) -> String {
        masked_cut(text, max, &self.secrets)
    }

    fn report(&self, target: &RequestTarget, allowed: bool) {
        if let Some((sink, call_id)) = &self.reports
            && self.budget.record(RecordKind::Http)
        {
            sink(GuestReport::Http(HttpAttempt {
                call_id: call_id.clone(),
                method: self.shown(&target.method, 32),
                url: self.shown(
                    &format!("{}{}", target.origin(), target.path),
                    MAX_RECORDED_PATH_BYTES,
                ),
                allowed,
            }));
        }
    }

    fn refuse(&self, target: &RequestTarget, reason: &str) -> Error {
        self.warn(target, |shown| {
            format!("refused an HTTP request to {shown}: {reason}")
        });
        self.budget.refused(|| {
            format!(
                "an HTTP request to {}: {reason}",
                self.shown(&target.origin(), MAX_RECORDED_PATH_BYTES)
            )
        });
        self.report(target, false);
        Error::HttpRequestDenied
    }

    /// A warning in the host's log about a request (`message` gets the request as shown), while
    /// the sandbox has warnings left.
    fn warn(&self, target: &RequestTarget, message: impl FnOnce(&str) -> String) {
        if self.budget.warn() {
            let shown = self.shown(
                &format!("{} {}{}", target.method, target.origin(), target.path),
                MAX_RECORDED_PATH_BYTES,
            );
            tracing::warn!(plugin = %self.plugin, "{}", message(&shown));
        }
    }

    /// Why no grant covers `target`.
    fn refusal_reason(&self, target: &RequestTarget) -> String {
        if is_never_sent(&target.method) {
            return format!("{} requests are never sent", target.method);
        }
        if self.grants.is_empty() {
            return "this plugin has no HTTP grants".to_string();
        }
        let same_origin_with_prefix = self.grants.iter().any(|grant| {
            grant.path_prefix.is_some()
                && grant.allows(&RequestTarget {
                    path: grant.path_prefix.clone().unwrap_or_default(),
                    ..target.clone()
                })
        });
        if same_origin_with_prefix
            && let Some(problem) = target.path.split('/').find_map(ambiguous_segment)
        {
            return format!(
                "its path has {problem}, which a server could resolve outside the granted path prefix"
            );
        }
        let rules = |grants: &mut dyn Iterator<Item = &HttpGrant>| -> String {
            grants.map(HttpGrant::rule).collect::<Vec<_>>().join(", ")
        };
        let same_origin: Vec<&HttpGrant> = self
            .grants
            .iter()
            .filter(|grant| grant.same_origin(target))
            .collect();
        if same_origin.is_empty() {
            return format!(
                "no grant covers its origin (granted: {})",
                rules(&mut self.grants.iter())
            );
        }
        let method_granted = same_origin.iter().any(|grant| {
            grant
                .methods
                .as_ref()
                .is_none_or(|methods| methods.contains(&target.method))
        });
        let shown_path = self.shown(&target.path, MAX_RECORDED_PATH_BYTES);
        let what = if method_granted {
            format!("its path {shown_path} is under no granted path prefix")
        } else {
            format!("{} is not a granted method", target.method)
        };
        format!(
            "{what} of {} (granted there: {})",
            target.origin(),
            rules(&mut same_origin.into_iter())
        )
    }

    /// A slot for one more open connection of this call and of the process, or the refusal.
    fn connection_slots(
        &self,
        target: &RequestTarget,
    ) -> Result<(OwnedSemaphorePermit, OwnedSemaphorePermit), Error> {
        let Ok(call) = self.open.clone().try_acquire_owned() else {
            self.warn(target, |shown| {
                format!(
                    "refused an HTTP request to {shown}: this call already has {} connections open (limits.http_connections); read or drop response bodies first",
                    self.limits.max_open
                )
            });
            self.report(target, false);
            return Err(Error::ConnectionLimitReached);
        };
        let Ok(process) = self.connections.0.clone().try_acquire_owned() else {
            self.warn(target, |shown| {
                format!(
                    "refused an HTTP request to {shown}: the host has as many outgoing connections open as it allows ([host] max_http_connections)"
                )
            });
            self.report(target, false);
            return Err(Error::ConnectionLimitReached);
        };
        Ok((call, process))
    }

    async fn send(
        self,
        mut request: http::Request<WasiBody>,
    ) -> Result<(http::Response<WasiBody>, IoFuture), Error> {
        let target = request_target(&request).ok_or(Error::HttpRequestUriInvalid)?;
        let Some(grant) = self.grants.iter().find(|grant| grant.allows(&target)) else {
            let reason = self.refusal_reason(&target);
            return Err(self.refuse(&target, &reason));
        };
        if let Some(header) = override_header(&request, grant) {
            let reason = format!(
                "it carries `{header}`, which some servers obey to use another method or path than the grant's"
            );
            return Err(self.refuse(&target, &reason));
        }
        let slots = self.connection_slots(&target)?;

        let permit = self
            .in_flight
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::ConnectionLimitReached)?;
        let deadline = Box::pin(tokio::time::sleep(self.limits.total_timeout));
        let address = match self.resolve(&target, grant).await {
            Ok(address) => address,
            Err(err) => {
                self.report(&target, false);
                return Err(err);
            }
        };
        self.report(&target, true);

        // The Host header is the granted origin, whatever the guest set; secrets replace guest values.
        let host_header = if target.port == target.scheme.default_port() {
            host_for_header(&target.host)
        } else {
            format!("{}:{}", host_for_header(&target.host), target.port)
        };
        // The method goes out as it was checked (uppercase), not as the guest spelled it.
        if let Ok(method) = http::Method::from_bytes(target.method.as_bytes()) {
            *request.method_mut() = method;
        }
        let headers = request.headers_mut();
        headers.insert(
            http::header::HOST,
            http::HeaderValue::from_str(&host_header).map_err(|_| Error::HttpRequestUriInvalid)?,
        );
        for secret in &grant.headers {
            headers.insert(secret.name.clone(), secret.value.clone());
        }
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        *request.uri_mut() = http::Uri::builder()
            .path_and_query(path)
            .build()
            .map_err(|_| Error::HttpRequestUriInvalid)?;

        let connect = self.connect(address, &target);
        let connected = tokio::time::timeout(self.limits.connect_timeout, connect)
            .await
            .map_err(|_| Error::ConnectionTimeout)??;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake::<_, WasiBody>(connected)
                .await
                .map_err(Error::from)?;
        // The connection ends when its response body is done or dropped, and at the latest a
        // moment after the request's deadline (which the request and its body report first).
        let closes_at = self.limits.total_timeout + CONNECTION_GRACE;
        tokio::spawn(async move {
            match tokio::time::timeout(closes_at, connection).await {
                Ok(Err(err)) => tracing::debug!("HTTP connection ended: {err}"),
                Err(_) => tracing::debug!("HTTP connection closed at its deadline"),
                Ok(Ok(())) => {}
            }
        });
        let response = tokio::select! {
            response = sender.send_request(request) => response.map_err(Error::from)?,
            () = tokio::time::sleep(self.limits.total_timeout) => {
                self.warn(&target, |shown| {
                    format!("HTTP request {shown} timed out after {:?}", self.limits.total_timeout)
                });
                return Err(Error::HttpResponseTimeout);
            }
        };
        tracing::debug!(plugin = %self.plugin, status = response.status().as_u16(), "HTTP {} {}", target.method, self.shown(&target.path, MAX_RECORDED_PATH_BYTES));
        // The permit bounds requests waiting for their response, not bodies: a guest may wait for
        // its responses in any order, and a body left unread holding a permit could starve the
        // very request the guest waits for. An open body holds its connection slots instead
        // (refused at once when none are left), and ends at the request's deadline.
        drop(permit);
        let limit = self.limits.max_response_bytes;
        let response = response
            .map(|incoming| BoundedBody::new(incoming, limit, deadline, slots).boxed_unsync());
        Ok((response, Box::new(async { Ok(()) })))
    }

    /// The address to connect to: resolved here, and refused when it is non-public and the grant
    /// does not name it (an IP grant) or allow it (`private = true`).
    async fn resolve(
        &self,
        target: &RequestTarget,
        grant: &HttpGrant,
    ) -> Result<SocketAddr, Error> {
        let candidates: Vec<SocketAddr> = match target.host.parse::<std::net::IpAddr>() {
            Ok(ip) => vec![SocketAddr::new(ip, target.port)],
            Err(_) => tokio::time::timeout(
                self.limits.connect_timeout,
                tokio::net::lookup_host((target.host.as_str(), target.port)),
            )
            .await
            .map_err(|_| Error::DnsTimeout)?
            .map_err(|err| Error::DnsError {
                rcode: Some(err.to_string()),
                info_code: None,
            })?
            .collect(),
        };
        let mut refused = None;
        for address in candidates {
            if is_non_public(address.ip()) && !grant.private && !grant.names_ip(address.ip()) {
                refused = Some(address);
                continue;
            }
            return Ok(address);
        }
        match refused {
            Some(address) => {
                self.warn(target, |shown| {
                    format!(
                        "refused an HTTP request to {shown}: {} resolves to the non-public address {}, which its grant does not allow (grant the IP itself, or set private = true on the grant)",
                        target.host,
                        address.ip()
                    )
                });
                Err(Error::DestinationIpProhibited)
            }
            None => Err(Error::DestinationNotFound),
        }
    }

    async fn connect(
        &self,
        address: SocketAddr,
        target: &RequestTarget,
    ) -> Result<TokioIo<Box<dyn Stream>>, Error> {
        let stream = TcpStream::connect(address)
            .await
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
                _ => Error::Connect(err),
            })?;
        let stream: Box<dyn Stream> = match target.scheme {
            Scheme::Http => Box::new(stream),
            Scheme::Https => {
                let name = match target.host.parse::<std::net::IpAddr>() {
                    Ok(ip) => rustls::pki_types::ServerName::from(ip),
                    Err(_) => rustls::pki_types::ServerName::try_from(target.host.clone())
                        .map_err(|_| Error::HttpRequestUriInvalid)?,
                };
                Box::new(
                    tls_connector()
                        .connect(name, stream)
                        .await
                        .map_err(Error::Tls)?,
                )
            }
        };
        Ok(TokioIo::new(stream))
    }
}

impl WasiHttpHooks for HttpGate {
    /// A request or response body buffers one chunk of this size (charged to the guest's memory
    /// limit when the body is made; see http/host_memory.rs), not wasmtime's 1 MiB.
    fn p2_outgoing_body_chunk_size(&mut self) -> usize {
        super::body::BODY_CHUNK_BYTES
    }

    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> SendFuture {
        Box::new(self.clone().send(request))
    }
}

/// A connection the HTTP client can run over.
pub trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Stream for T {}

fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.into(),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Arc::new(
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("ring supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    });
    tokio_rustls::TlsConnector::from(config.clone())
}

/// What the request asks for; `None` when its URI has no scheme or host.
fn request_target(request: &http::Request<WasiBody>) -> Option<RequestTarget> {
    let uri = request.uri();
    let scheme = Scheme::parse(uri.scheme_str()?)?;
    let host = uri
        .host()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    Some(RequestTarget {
        port: uri.port_u16().unwrap_or(scheme.default_port()),
        scheme,
        host,
        method: request.method().as_str().to_ascii_uppercase(),
        path: uri.path().to_string(),
    })
}

/// Headers some servers and frameworks obey to act on another method or path than the request
/// line's; refused under a grant that restricts methods or paths.
const OVERRIDE_HEADERS: [&str; 7] = [
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
    "x-original-method",
    "x-original-url",
    "x-rewrite-url",
    "x-forwarded-prefix",
];

/// The first override header of `request`, when `grant` restricts methods or paths.
fn override_header(request: &http::Request<WasiBody>, grant: &HttpGrant) -> Option<&'static str> {
    if grant.methods.is_none() && grant.path_prefix.is_none() {
        return None;
    }
    OVERRIDE_HEADERS
        .into_iter()
        .find(|name| request.headers().contains_key(*name))
}

fn host_for_header(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}
