//! A real OCI registry for the distribution tests: the CNCF Distribution server and the `oras`
//! and `wkg` clients, installed once per run by tests/registry/install.sh, the server started per
//! test on 127.0.0.1 and stopped when dropped.

use serde_json::Value;
use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The bin dir of the registry tools, installed once per test run.
pub(crate) fn tools() -> &'static PathBuf {
    static TOOLS: OnceLock<PathBuf> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/registry/install.sh");
        let out = Command::new("bash")
            .arg(&script)
            .stderr(Stdio::inherit())
            .output()
            .expect("bash runs tests/registry/install.sh");
        assert!(out.status.success(), "tests/registry/install.sh failed");
        let stdout = String::from_utf8(out.stdout).unwrap();
        PathBuf::from(stdout.lines().last().expect("the bin dir").trim())
    })
}

/// A registry on 127.0.0.1 with its own storage; with `htpasswd`, it asks for Basic auth.
pub(crate) struct Registry {
    child: Child,
    pub(crate) address: String,
    _storage: tempfile::TempDir,
}

impl Registry {
    pub(crate) fn start(htpasswd: Option<&str>) -> Self {
        let storage = tempfile::tempdir().unwrap();
        let bin = tools();
        let mut command = Command::new(bin.join("registry"));
        command
            .arg("serve")
            .arg(bin.join("../etc/registry.yml"))
            .env("REGISTRY_HTTP_ADDR", "127.0.0.1:0")
            .env(
                "REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY",
                storage.path().join("data"),
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(lines) = htpasswd {
            let file = storage.path().join("htpasswd");
            std::fs::write(&file, lines).unwrap();
            command
                .env("REGISTRY_AUTH_HTPASSWD_REALM", "cordon-tests")
                .env("REGISTRY_AUTH_HTPASSWD_PATH", &file);
        }
        let mut child = command.spawn().expect("start the registry");
        let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let address = loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap() == 0 {
                panic!("the registry exited before listening");
            }
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest
                    .split(|c: char| c == '"' || c.is_whitespace())
                    .next()
                    .unwrap()
                    .to_string();
            }
        };
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in stderr.lines() {});
        Self {
            child,
            address,
            _storage: storage,
        }
    }

    /// `oras push` of `wasm` as a Wasm component artifact to `repository:tag`.
    pub(crate) fn oras_push(
        &self,
        wasm: &[u8],
        repository_tag: &str,
        credentials: Option<(&str, &str)>,
    ) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("plugin.wasm"), wasm).unwrap();
        std::fs::write(
            dir.path().join("config.json"),
            r#"{"created":"2026-12-01T00:00:00Z","architecture":"wasm","os":"wasip2","layerDigests":[],"component":{"exports":[],"imports":[],"target":null}}"#,
        )
        .unwrap();
        let mut command = Command::new(tools().join("oras-py"));
        command.current_dir(dir.path()).args([
            "push",
            "--plain-http",
            "--config",
            "config.json:application/vnd.wasm.config.v0+json",
            &format!("{}/{repository_tag}", self.address),
            "plugin.wasm:application/wasm",
        ]);
        if let Some((user, password)) = credentials {
            command.args(["-u", user, "-p", password]);
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "oras push failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The manifest of `repository:reference` and its digest, read over plain HTTP.
    pub(crate) fn manifest(&self, repository: &str, reference: &str) -> (Value, String) {
        let (headers, body) = http_get(
            &self.address,
            &format!("/v2/{repository}/manifests/{reference}"),
            "application/vnd.oci.image.manifest.v1+json",
        );
        let digest = headers
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("docker-content-digest")
                    .then(|| value.trim().to_string())
            })
            .expect("a Docker-Content-Digest header");
        (serde_json::from_slice(&body).unwrap(), digest)
    }

    /// `wkg oci ARGS…` against this registry (plain HTTP); returns its stdout.
    pub(crate) fn wkg(&self, args: &[&str]) -> String {
        let out = Command::new(tools().join("wkg"))
            .args(["oci", args[0], "--insecure", &self.address])
            .args(&args[1..])
            .env("DOCKER_CONFIG", tempfile::tempdir().unwrap().path())
            .output()
            .expect("run wkg");
        assert!(
            out.status.success(),
            "wkg oci {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub(crate) fn blob(&self, repository: &str, digest: &str) -> Vec<u8> {
        http_get(
            &self.address,
            &format!("/v2/{repository}/blobs/{digest}"),
            "*/*",
        )
        .1
    }
}

/// A plain HTTP/1.0 GET (the registry answers it without chunking); redirects are not followed.
pub(crate) fn http_get(address: &str, path: &str, accept: &str) -> (String, Vec<u8>) {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.0\r\nHost: {address}\r\nAccept: {accept}\r\n\r\n"
    )
    .unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP response");
    let headers = String::from_utf8_lossy(&response[..split]).into_owned();
    assert!(
        headers.starts_with("HTTP/1.1 200") || headers.starts_with("HTTP/1.0 200"),
        "{headers}"
    );
    (headers, response[split + 4..].to_vec())
}

impl Registry {
    /// Uploads `bytes` as a blob of `repository` (one monolithic POST); returns its digest.
    pub(crate) fn put_blob(&self, repository: &str, bytes: &[u8]) -> String {
        let digest = format!("sha256:{}", crate::support::hostile_http::sha256(bytes));
        let started = http_send(
            &self.address,
            "POST",
            &format!("/v2/{repository}/blobs/uploads/"),
            "application/octet-stream",
            b"",
        );
        let location = started
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("location")
                    .then(|| value.trim().to_string())
            })
            .unwrap_or_else(|| panic!("blob upload start: {started}"));
        let path = location
            .strip_prefix(&format!("http://{}", self.address))
            .unwrap_or(&location);
        let separator = if path.contains('?') { '&' } else { '?' };
        let head = http_send(
            &self.address,
            "PUT",
            &format!("{path}{separator}digest={digest}"),
            "application/octet-stream",
            bytes,
        );
        assert!(head.contains(" 201 "), "blob upload: {head}");
        digest
    }

    /// Puts `manifest` (an OCI image manifest) under `repository:tag`.
    pub(crate) fn put_manifest(&self, repository: &str, tag: &str, manifest: &Value) {
        let head = http_send(
            &self.address,
            "PUT",
            &format!("/v2/{repository}/manifests/{tag}"),
            "application/vnd.oci.image.manifest.v1+json",
            &serde_json::to_vec(manifest).unwrap(),
        );
        assert!(head.contains(" 201 "), "manifest put: {head}");
    }
}

/// One HTTP/1.0 request with a body; returns the response's head.
fn http_send(address: &str, method: &str, path: &str, content_type: &str, body: &[u8]) -> String {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {address}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    String::from_utf8_lossy(&response)
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_string()
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
