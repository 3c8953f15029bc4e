//! Pushing blobs and a manifest to a registry, done by cordon itself so it decides where the
//! credentials go: requests to the registry's own origin (scheme, host and port, as the reference
//! names it) carry them; an upload `Location` on any other origin is sent the bytes without
//! `Authorization`, and a redirect that leaves the origin drops it too (reqwest removes it from
//! every cross-host redirect). A `Location` cordon would not fetch from (plain HTTP to another
//! machine, credentials in the URL) is refused.

use crate::source::{url_allowed, without_userinfo};
use oci_client::secrets::RegistryAuth;
use reqwest::{RequestBuilder, StatusCode, Url};

/// How much of a registry's error body is quoted in an error.
const QUOTED_BODY_CHARS: usize = 200;

/// One repository of one registry, with the credentials for that registry only.
pub struct Upload<'a> {
    client: reqwest::Client,
    origin: Url,
    repository: &'a str,
    auth: &'a RegistryAuth,
}

impl<'a> Upload<'a> {
    /// Uploads to `repository` at `scheme://registry`.
    pub fn new(
        registry: &str,
        scheme: &str,
        repository: &'a str,
        auth: &'a RegistryAuth,
    ) -> Result<Self, String> {
        let origin = Url::parse(&format!("{scheme}://{registry}/"))
            .map_err(|err| format!("{registry} is not a registry address: {err}"))?;
        let client = crate::transfer::client().map_err(|err| err.to_string())?;
        Ok(Self {
            client,
            origin,
            repository,
            auth,
        })
    }

    /// `request` to `url`, with the credentials only when `url` is on the registry's origin.
    fn authorized(&self, request: RequestBuilder, url: &Url) -> RequestBuilder {
        if !same_origin(url, &self.origin) {
            return request;
        }
        match self.auth {
            RegistryAuth::Basic(user, password) => request.basic_auth(user, Some(password)),
            RegistryAuth::Bearer(token) => request.bearer_auth(token),
            RegistryAuth::Anonymous => request,
        }
    }

    fn url(&self, path: &str) -> Result<Url, String> {
        self.origin
            .join(&format!("v2/{}/{path}", self.repository))
            .map_err(|err| err.to_string())
    }

    /// Uploads `bytes` as the blob `digest` (`sha256:…`) in one request.
    pub async fn blob(&self, bytes: &[u8], digest: &str) -> Result<(), String> {
        let start = self.url("blobs/uploads/")?;
        let response = self
            .authorized(self.client.post(start.clone()), &start)
            .header(reqwest::header::CONTENT_LENGTH, 0)
            .send()
            .await
            .map_err(|err| err.to_string())?;
        let response = expect(response, StatusCode::ACCEPTED, "starting the upload").await?;
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|value| value.to_str().ok())
            .ok_or("the registry started an upload without a Location to send it to")?;
        // A relative Location is on the URL that answered (after any redirect).
        let mut target = response
            .url()
            .join(location)
            .map_err(|err| format!("the upload Location {location:?} is not a URL: {err}"))?;
        if !url_allowed(&target) {
            return Err(format!(
                "refused the upload Location {} (only https://, or plain http:// to this machine, without credentials)",
                without_userinfo(target.as_str())
            ));
        }
        target.query_pairs_mut().append_pair("digest", digest);
        let response = self
            .authorized(self.client.put(target.clone()), &target)
            .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
            .body(bytes.to_vec())
            .send()
            .await
            .map_err(|err| err.to_string())?;
        expect(response, StatusCode::CREATED, "the upload").await?;
        Ok(())
    }

    /// Puts `body` (of `media_type`) as the manifest for `tag`.
    pub async fn manifest(&self, tag: &str, body: Vec<u8>, media_type: &str) -> Result<(), String> {
        let url = self.url(&format!("manifests/{tag}"))?;
        let response = self
            .authorized(self.client.put(url.clone()), &url)
            .header(reqwest::header::CONTENT_TYPE, media_type)
            .body(body)
            .send()
            .await
            .map_err(|err| err.to_string())?;
        expect(response, StatusCode::CREATED, "the manifest push").await?;
        Ok(())
    }
}

/// Whether two URLs have the same scheme, host and port (a missing port is the scheme's).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `response` when it has the status wanted (or another success for a status the spec fixes but
/// registries vary on), else an error quoting the start of its body.
async fn expect(
    response: reqwest::Response,
    wanted: StatusCode,
    what: &str,
) -> Result<reqwest::Response, String> {
    let status = response.status();
    if status == wanted || (status.is_success() && wanted.is_success()) {
        return Ok(response);
    }
    let body = response.text().await.unwrap_or_default();
    let quoted: String = body
        .chars()
        .filter(|c| !c.is_control())
        .take(QUOTED_BODY_CHARS)
        .collect();
    Err(format!("{what} answered HTTP {status}: {quoted}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let url = |text: &str| Url::parse(text).unwrap();
        assert!(same_origin(
            &url("https://r.example/v2/x"),
            &url("https://r.example:443/upload")
        ));
        assert!(!same_origin(
            &url("http://127.0.0.1:5000/"),
            &url("http://127.0.0.1:5001/")
        ));
        assert!(!same_origin(
            &url("http://127.0.0.1:5000/"),
            &url("http://localhost:5000/")
        ));
        assert!(!same_origin(
            &url("https://r.example/"),
            &url("http://r.example:443/")
        ));
    }
}
