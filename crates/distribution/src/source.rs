//! Plugin sources as the user writes them: `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST]`,
//! `https://…` (plain `http://` only for a loopback host, as in tests), or a local path.

use crate::DistributionError;

/// Where a component comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `host/repository:tag` or `host/repository@sha256:…` (no `oci://`), as OCI clients write it.
    Oci {
        reference: String,
    },
    Url {
        url: String,
    },
    File {
        path: std::path::PathBuf,
    },
}

impl Source {
    pub fn parse(text: &str) -> Result<Self, DistributionError> {
        let bad = |reason: &str| DistributionError::BadReference {
            reference: text.to_string(),
            reason: reason.to_string(),
        };
        if let Some(rest) = text.strip_prefix("oci://") {
            let (host, repository) = rest
                .split_once('/')
                .ok_or_else(|| bad("an OCI reference needs a registry host and a repository"))?;
            if host.is_empty() || repository.is_empty() {
                return Err(bad(
                    "an OCI reference needs a registry host and a repository",
                ));
            }
            if let Some((_, digest)) = repository.split_once('@')
                && !digest.strip_prefix("sha256:").is_some_and(|hex| {
                    hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())
                })
            {
                return Err(bad("a digest is written @sha256: and 64 hex digits"));
            }
            return Ok(Self::Oci {
                reference: rest.to_string(),
            });
        }
        if text.starts_with("https://") {
            return Ok(Self::Url {
                url: text.to_string(),
            });
        }
        if let Some(rest) = text.strip_prefix("http://") {
            let host = rest.split(['/', ':']).next().unwrap_or_default();
            if !is_loopback(host) && !rest.starts_with("[::1]") {
                return Err(bad(
                    "plain http:// is accepted only for a loopback host (127.0.0.1, localhost); use https://",
                ));
            }
            return Ok(Self::Url {
                url: text.to_string(),
            });
        }
        if text.contains("://") {
            return Err(bad("the scheme is not oci://, https:// or a local path"));
        }
        Ok(Self::File { path: text.into() })
    }

    /// The source as the lock records it.
    pub fn to_text(&self) -> String {
        match self {
            Self::Oci { reference } => format!("oci://{reference}"),
            Self::Url { url } => url.clone(),
            Self::File { path } => path.display().to_string(),
        }
    }

    /// The name a plugin from here gets by default: the repository's or file's last part.
    pub fn default_name(&self) -> String {
        let last = match self {
            Self::Oci { reference } => {
                let path = reference.split('@').next().unwrap_or_default();
                let repository = match path.rsplit_once(':') {
                    Some((before, tag)) if !tag.contains('/') => before,
                    _ => path,
                };
                repository
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_string()
            }
            Self::Url { url } => url
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string(),
            Self::File { path } => path
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let stem = last.strip_suffix(".wasm").unwrap_or(&last);
        stem.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect()
    }
}

/// Whether a registry or URL host is this machine (plain HTTP is allowed only there).
pub fn is_loopback(host: &str) -> bool {
    let host = host.split(':').next().unwrap_or(host);
    host == "localhost" || host.starts_with("127.") || host == "[::1]"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_name_themselves() {
        let tag = Source::parse("oci://127.0.0.1:5000/tools/echo-tool:1.0").unwrap();
        assert_eq!(
            tag,
            Source::Oci {
                reference: "127.0.0.1:5000/tools/echo-tool:1.0".into()
            }
        );
        assert_eq!(tag.default_name(), "echo_tool");
        let digest = format!("oci://ghcr.io/acme/fs@sha256:{}", "a".repeat(64));
        assert_eq!(Source::parse(&digest).unwrap().default_name(), "fs");
        assert!(Source::parse("oci://ghcr.io/acme/fs@sha256:abc").is_err());
        assert!(Source::parse("oci://ghcr.io").is_err());
        assert_eq!(
            Source::parse("https://example.com/dl/Hash.wasm?x=1")
                .unwrap()
                .default_name(),
            "hash"
        );
        assert!(Source::parse("http://example.com/a.wasm").is_err());
        assert!(Source::parse("http://127.0.0.1:8000/a.wasm").is_ok());
        assert!(Source::parse("ftp://x/a.wasm").is_err());
        assert_eq!(Source::parse("plugins/x.wasm").unwrap().default_name(), "x");
    }
}
