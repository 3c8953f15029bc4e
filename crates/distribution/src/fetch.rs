//! Getting a component's bytes from any source and verifying every digest given for it: the
//! `--sha256` of the component (required for a URL), the manifest digest of an OCI reference
//! pinned `@sha256:`, and each blob's own digest. A mismatch writes nothing.

use crate::credentials::SecretListener;
use crate::oci;
use crate::source::Source;
use crate::transfer;
use crate::{DistributionError, MAX_COMPONENT_BYTES, sha256_hex};

/// A component fetched and verified.
#[derive(Debug)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    /// The component's sha256 (hex).
    pub sha256: String,
    /// The source to record in the lock: an OCI reference pinned by its manifest digest, or the
    /// URL or path as given.
    pub pinned: Source,
}

/// Fetches `source`; `expected` is the component's sha256 (hex) when known. Every credential
/// found on the way (and each registry token) is told to `on_secret`.
pub async fn fetch(
    source: &Source,
    expected: Option<&str>,
    on_secret: SecretListener<'_>,
) -> Result<Fetched, DistributionError> {
    let (bytes, pinned) = match source {
        Source::Oci { reference } => {
            let pulled = oci::pull(reference, on_secret).await?;
            (
                pulled.bytes,
                Source::Oci {
                    reference: pulled.pinned,
                },
            )
        }
        Source::Url { url } => {
            if expected.is_none() {
                return Err(DistributionError::BadReference {
                    reference: url.clone(),
                    reason: "a URL needs --sha256 (the component's sha256), so what arrives can be checked".into(),
                });
            }
            (download(url).await?, source.clone())
        }
        Source::File { path } => (read_file(path)?, source.clone()),
    };
    let sha256 = sha256_hex(&bytes);
    if let Some(expected) = expected
        && !expected.eq_ignore_ascii_case(&sha256)
    {
        return Err(DistributionError::DigestMismatch {
            what: format!("the component from {}", source.to_text()),
            expected: expected.to_lowercase(),
            actual: sha256,
        });
    }
    Ok(Fetched {
        bytes,
        sha256,
        pinned,
    })
}

async fn download(url: &str) -> Result<Vec<u8>, DistributionError> {
    let failed = |reason: String| DistributionError::Http {
        url: url.to_string(),
        reason,
    };
    let response = transfer::client()?
        .get(url)
        .send()
        .await
        .map_err(|err| failed(err.to_string()))?;
    if !response.status().is_success() {
        return Err(failed(format!("HTTP {}", response.status())));
    }
    transfer::read_capped(response, MAX_COMPONENT_BYTES, url).await
}

/// A local component: a regular file (not a device or a pipe) of at most the cap, read no further.
pub fn read_file(path: &std::path::Path) -> Result<Vec<u8>, DistributionError> {
    read_bounded_file(path, MAX_COMPONENT_BYTES).map_err(|source| match source.kind() {
        std::io::ErrorKind::FileTooLarge => DistributionError::TooLarge {
            what: path.display().to_string(),
            limit: MAX_COMPONENT_BYTES,
        },
        std::io::ErrorKind::InvalidInput => DistributionError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::other("not a regular file; give the path of a .wasm file"),
        },
        _ => DistributionError::Read {
            path: path.to_path_buf(),
            source,
        },
    })
}

/// The bytes of the regular file at `path`, refused when it is not one (a device or a pipe:
/// `ErrorKind::InvalidInput`) or past `limit` (`ErrorKind::FileTooLarge`), and read no further. Opened without blocking, so a FIFO named like
/// the file is refused instead of waited on.
pub fn read_bounded_file(path: &std::path::Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("over {limit} bytes"),
        )
    };
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}
