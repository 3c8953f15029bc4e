//! A hostile HTTP server for the distribution attack tests (attacks/install.rs, attacks/registry_*.rs): one request
//! per connection, answered by a closure that can lie about sizes, digests, redirects and auth, or
//! never answer; and the helpers those tests share (components, manifests, locks, credentials).

#![allow(dead_code)]

use crate::support::{Workspace, guest_dir};
use base64::Engine as _;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// A hostile HTTP server: one request per connection, answered by a closure.

#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) enum Reply {
    /// Status, headers, body (with a Content-Length).
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// Status, headers, then this many zero bytes with no Content-Length (until the connection
    /// closes), counting what the client accepted.
    Stream(u16, Vec<(String, String)>, u64),
    /// Never answer.
    Hang,
}

pub(crate) fn ok(body: impl Into<Vec<u8>>, content_type: &str) -> Reply {
    Reply::Full(
        200,
        vec![("Content-Type".into(), content_type.into())],
        body.into(),
    )
}

pub(crate) fn status(code: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    Reply::Full(
        code,
        headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body.as_bytes().to_vec(),
    )
}

pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) seen: Arc<Mutex<Vec<Seen>>>,
    pub(crate) sent: Arc<AtomicU64>,
    pub(crate) stop: Arc<AtomicBool>,
}

impl Server {
    pub(crate) fn start(
        bind: &str,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind(bind).unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sent = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let handler = Arc::new(handler);
        {
            let (seen, sent, stop) = (seen.clone(), sent.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (seen, sent, stop, handler) =
                                (seen.clone(), sent.clone(), stop.clone(), handler.clone());
                            std::thread::spawn(move || {
                                connection(stream, &*handler, &seen, &sent, &stop)
                            });
                        }
                        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(5));
                        }
                        Err(_) => break,
                    }
                }
            });
        }
        Self {
            addr,
            seen,
            sent,
            stop,
        }
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub(crate) fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

pub(crate) fn connection(
    stream: TcpStream,
    handler: &(dyn Fn(&Seen) -> Reply + Send + Sync),
    seen: &Mutex<Vec<Seen>>,
    sent: &AtomicU64,
    stop: &AtomicBool,
) {
    stream.set_nonblocking(false).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            break;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Seen {
        method,
        path,
        headers,
        body,
    };
    seen.lock().unwrap().push(request.clone());
    let mut stream = stream;
    let head = |code: u16, headers: &[(String, String)], length: Option<usize>| {
        let mut text = format!("HTTP/1.1 {code} Reply\r\nConnection: close\r\n");
        for (name, value) in headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(length) = length {
            text.push_str(&format!("Content-Length: {length}\r\n"));
        }
        text.push_str("\r\n");
        text
    };
    match handler(&request) {
        Reply::Full(code, headers, body) => {
            let _ = stream.write_all(head(code, &headers, Some(body.len())).as_bytes());
            if request.method != "HEAD" {
                let _ = stream.write_all(&body);
            }
        }
        Reply::Stream(code, headers, total) => {
            if stream
                .write_all(head(code, &headers, None).as_bytes())
                .is_err()
            {
                return;
            }
            let chunk = vec![0u8; 64 << 10];
            let mut left = total;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                if stream.write_all(&chunk[..n]).is_err() {
                    break;
                }
                sent.fetch_add(n as u64, Ordering::Relaxed);
                left -= n as u64;
            }
        }
        Reply::Hang => {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

// ---------------------------------------------------------------------------------------------
// Helpers.

pub(crate) fn component(name: &str) -> Vec<u8> {
    std::fs::read(guest_dir().join(format!("{name}.wasm"))).unwrap()
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

pub(crate) fn sha512(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha512::digest(bytes))
}

pub(crate) const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";

/// An OCI image manifest with these layers (each `(mediaType, digest, size)`).
pub(crate) fn manifest(layers: &[(&str, &str, i64)]) -> Vec<u8> {
    let layers: Vec<serde_json::Value> = layers
        .iter()
        .map(|(media_type, digest, size)| {
            serde_json::json!({ "mediaType": media_type, "digest": digest, "size": size })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": {
            "mediaType": "application/vnd.oci.empty.v1+json",
            "digest": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
            "size": 2
        },
        "layers": layers,
    }))
    .unwrap()
}

/// A registry serving `manifest` for every manifest reference and `blob` for every blob.
pub(crate) fn registry(manifest: Vec<u8>, blob: Vec<u8>) -> Server {
    Server::start("127.0.0.1:0", move |request| {
        if request.path == "/v2/" {
            ok("{}", "application/json")
        } else if request.path.contains("/manifests/") {
            ok(manifest.clone(), MANIFEST_TYPE)
        } else if request.path.contains("/blobs/") {
            ok(blob.clone(), "application/octet-stream")
        } else {
            status(404, &[], "no")
        }
    })
}

/// Nothing was installed or recorded in `ws`.
pub(crate) fn assert_nothing_written(ws: &Workspace, what: &str) {
    let plugins: Vec<_> = std::fs::read_dir(ws.path().join("plugins"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(plugins.is_empty(), "{what}: plugins/ has {plugins:?}");
    assert!(
        !ws.path().join("cordon.toml").exists(),
        "{what}: cordon.toml written"
    );
    assert!(
        !ws.path().join("cordon.lock").exists(),
        "{what}: cordon.lock written"
    );
}

/// A cordon.lock with these `[sources]` (`name`, `source`, `sha256`) and approved `[plugins]`
/// (`name`, `sha256`).
pub(crate) fn write_lock(
    ws: &Workspace,
    sources: &[(&str, &str, &str)],
    approved: &[(&str, &str)],
) {
    let mut root = toml::Table::new();
    let mut plugins = toml::Table::new();
    for (name, sha) in approved {
        let mut entry = toml::Table::new();
        entry.insert("sha256".into(), toml::Value::String(sha.to_string()));
        entry.insert("grants".into(), toml::Value::Array(vec![]));
        plugins.insert(name.to_string(), toml::Value::Table(entry));
    }
    root.insert("plugins".into(), toml::Value::Table(plugins));
    let mut table = toml::Table::new();
    for (name, source, sha) in sources {
        let mut entry = toml::Table::new();
        entry.insert("source".into(), toml::Value::String(source.to_string()));
        entry.insert("sha256".into(), toml::Value::String(sha.to_string()));
        table.insert(name.to_string(), toml::Value::Table(entry));
    }
    root.insert("sources".into(), toml::Value::Table(table));
    std::fs::write(
        ws.path().join("cordon.lock"),
        toml::to_string(&root).unwrap(),
    )
    .unwrap();
}

/// This machine's address on its default route (not loopback), to stand for "another host".
pub(crate) fn outside_ip() -> Option<IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("8.8.8.8:53").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// Runs `command`; kills it if it is still running after `limit`. Returns its exit code (None if
/// killed), its stderr and how long it ran.
pub(crate) fn run_within(mut command: Command, limit: Duration) -> (Option<i32>, String, Duration) {
    command.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), reader.join().unwrap(), start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return (None, reader.join().unwrap(), start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub(crate) fn docker_config(ws: &Workspace, registry: &str, user: &str, password: &str) -> String {
    let dir = ws.path().join("docker");
    std::fs::create_dir_all(&dir).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    std::fs::write(
        dir.join("config.json"),
        format!(r#"{{"auths": {{"{registry}": {{"auth": "{auth}"}}}}}}"#),
    )
    .unwrap();
    dir.to_str().unwrap().to_string()
}

/// `user:password` as a Basic credential carries it.
pub(crate) fn basic(user: &str, password: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
}

/// Whether any request carried these Basic credentials.
pub(crate) fn carried(requests: &[Seen], user: &str, password: &str) -> bool {
    let encoded = basic(user, password);
    requests.iter().any(|r| {
        r.header("authorization")
            .is_some_and(|v| v.contains(&encoded) || v.contains(password))
    })
}
