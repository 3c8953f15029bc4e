//! HTTP as cordon fetches plugins: a client whose every request has a connect and an idle-read
//! timeout (a server that never answers cannot hang `cordon add` or `sync`), that follows redirects
//! only where a source itself could point (HTTPS, or plain HTTP to this machine, never with
//! credentials in the URL), and bodies read with a byte cap, so a server that sends more than it
//! announced is cut off instead of filling memory.

use crate::DistributionError;
use crate::source::url_allowed;
use std::time::Duration;

/// How long connecting, and waiting for the next bytes of a response, may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// The client for URLs and registry requests cordon makes itself.
pub fn client() -> Result<reqwest::Client, DistributionError> {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if !url_allowed(attempt.url()) {
            let refused = format!(
                "refused a redirect to {} (only https://, or plain http:// to this machine, without credentials)",
                crate::source::without_userinfo(attempt.url().as_str())
            );
            attempt.error(refused)
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .user_agent(concat!("cordon/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        .redirect(policy)
        .build()
        .map_err(|err| DistributionError::Http {
            url: "(client setup)".into(),
            reason: err.to_string(),
        })
}

/// The body of `response`, refused as soon as it passes `cap` bytes.
pub async fn read_capped(
    mut response: reqwest::Response,
    cap: u64,
    what: &str,
) -> Result<Vec<u8>, DistributionError> {
    let url = crate::source::without_userinfo(response.url().as_str());
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| DistributionError::Http {
            url: url.clone(),
            reason: err.to_string(),
        })?
    {
        if (bytes.len() + chunk.len()) as u64 > cap {
            return Err(DistributionError::TooLarge {
                what: what.to_string(),
                limit: cap,
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}
