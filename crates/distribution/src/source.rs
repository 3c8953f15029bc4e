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
            reference: without_userinfo(text),
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
            if host.contains('@') {
                return Err(bad(CREDENTIALS_IN_REFERENCE));
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
        if text.starts_with("https://") || text.starts_with("http://") {
            let url = reqwest::Url::parse(text).map_err(|err| bad(&err.to_string()))?;
            if !url.username().is_empty() || url.password().is_some() {
                return Err(bad(CREDENTIALS_IN_REFERENCE));
            }
            if !url_allowed(&url) {
                return Err(bad(
                    "plain http:// is accepted only for this machine (127.0.0.1, [::1], localhost); use https://",
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

const CREDENTIALS_IN_REFERENCE: &str = "credentials do not go in a reference (they would be written to cordon.lock and shown): give them in CORDON_REGISTRY, CORDON_REGISTRY_USERNAME and CORDON_REGISTRY_PASSWORD, or the docker config";

/// Whether a registry (`host[:port]`) is this machine: a loopback IP address, or `localhost`.
/// Plain HTTP is used only there.
pub fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => registry.split(':').next().unwrap_or_default(),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether cordon may fetch from `url` (or follow a redirect there): HTTPS anywhere, plain HTTP only
/// to this machine, and never with credentials in the URL.
pub fn url_allowed(url: &reqwest::Url) -> bool {
    if !url.username().is_empty() || url.password().is_some() {
        return false;
    }
    match url.scheme() {
        "https" => true,
        "http" => url.host_str().is_some_and(is_loopback),
        _ => false,
    }
}

/// `text` with any `user:password@` before its host removed, for messages.
pub fn without_userinfo(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => text.to_string(),
    }
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
        assert!(Source::parse("http://[::1]:8000/a.wasm").is_ok());
        assert!(Source::parse("http://127.0.0.1:x@192.0.2.2/a.wasm").is_err());
        assert!(Source::parse("http://127.example.com/a.wasm").is_err());
        assert!(Source::parse("https://user:pw@example.com/a.wasm").is_err());
        assert!(Source::parse("oci://user:pw@ghcr.io/acme/fs:1").is_err());
        let refused = Source::parse("https://user:secret@example.com/a.wasm").unwrap_err();
        assert!(!refused.to_string().contains("secret"), "{refused}");
        assert!(
            is_loopback("127.0.0.1:5000") && is_loopback("localhost") && is_loopback("[::1]:5000")
        );
        assert!(!is_loopback("127.attacker.invalid:5000") && !is_loopback("localhost.example.com"));
        assert!(Source::parse("ftp://x/a.wasm").is_err());
        assert_eq!(Source::parse("plugins/x.wasm").unwrap().default_name(), "x");
    }
}
