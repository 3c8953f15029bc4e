//! `[trust]` of cordon.toml: the keys whose signatures cordon trusts (`keys`, a name for each PEM
//! public key file), which installed plugins must be signed by one of them (`require`: "signed"
//! for all, or a list of source patterns such as "oci://ghcr.io/acme/*"), and the plugins the
//! operator lets in unsigned, by name (`unsigned`), which `cordon list` shows as such. The check
//! `cordon add`, `sync` and `verify` apply is signatures.rs; loading checks what the lock recorded.

use cordon_distribution::signature::{PublicKey, TrustedKey};
use cordon_runtime::capabilities::tool_glob;
use cordon_runtime::config::{ConfigDocument, ConfigError};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// The operator's trust policy.
#[derive(Debug, Default, Clone)]
pub struct TrustPolicy {
    /// The trusted keys, by name.
    pub keys: Vec<TrustedKey>,
    require: Require,
    /// Plugins let in unsigned whatever `require` says.
    unsigned: BTreeSet<String>,
    /// The key files, which no grant may reach (the host's own files, like the lock).
    key_files: Vec<std::path::PathBuf>,
}

#[derive(Debug, Default, Clone)]
enum Require {
    /// Signatures are checked when there are keys, and recorded, but none is required.
    #[default]
    Nothing,
    /// Every installed plugin.
    All,
    /// Plugins whose source matches one of these patterns (`*` is any run of characters), both
    /// in [`canonical`] form.
    Sources(Vec<String>),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTrust {
    #[serde(default)]
    keys: BTreeMap<String, String>,
    require: Option<RawRequire>,
    #[serde(default)]
    unsigned: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawRequire {
    Word(String),
    Sources(Vec<String>),
}

impl TrustPolicy {
    /// `[trust]` of `document`, its key files read (relative to the config file's directory).
    pub fn from_document(document: &ConfigDocument) -> Result<Self, ConfigError> {
        let raw = document.table::<RawTrust>("trust")?;
        let mut keys = Vec::new();
        let mut key_files = Vec::new();
        for (name, path) in raw.keys {
            let file = document.base().join(&path);
            key_files.push(file.clone());
            let pem = std::fs::read(&file).map_err(|err| {
                document.invalid(
                    format!("trust.keys.{name}"),
                    format!(
                        "cannot read the public key {} ({err}); give the path of a PEM public key file, relative to the config file",
                        file.display()
                    ),
                )
            })?;
            let key = PublicKey::from_pem(&pem, &file.display().to_string())
                .map_err(|err| document.invalid(format!("trust.keys.{name}"), err.to_string()))?;
            keys.push(TrustedKey { name, key });
        }
        let require = match raw.require {
            None => Require::Nothing,
            Some(RawRequire::Word(word)) if word == "signed" => Require::All,
            Some(RawRequire::Word(word)) if word == "any" => Require::Nothing,
            Some(RawRequire::Word(word)) => {
                return Err(document.invalid(
                    "trust.require",
                    format!(
                        "{word:?} is not a requirement: write \"signed\" (every plugin), \"any\" (none), or a list of source patterns such as [\"oci://ghcr.io/acme/*\"]"
                    ),
                ));
            }
            Some(RawRequire::Sources(patterns)) => {
                let mut canonical_patterns = Vec::new();
                for pattern in patterns {
                    canonical_patterns.push(
                        source_pattern(&pattern)
                            .map_err(|message| document.invalid("trust.require", message))?,
                    );
                }
                Require::Sources(canonical_patterns)
            }
        };
        if !matches!(require, Require::Nothing) && keys.is_empty() {
            return Err(document.invalid(
                "trust.require",
                "requires signatures but [trust.keys] names no key to check them with; add one (e.g. release = \"keys/release.pub\")",
            ));
        }
        Ok(Self {
            keys,
            require,
            unsigned: raw.unsigned.into_iter().collect(),
            key_files,
        })
    }

    /// Whether the plugin `name` from `source` must be signed by a trusted key.
    pub fn requires_signature(&self, name: &str, source: &str) -> bool {
        if self.unsigned.contains(name) {
            return false;
        }
        match &self.require {
            Require::Nothing => false,
            Require::All => true,
            Require::Sources(patterns) => {
                // The source as recorded (pinned by digest) or without its pin.
                let unpinned = source.split_once('@').map_or(source, |(base, _)| base);
                let forms = [canonical(source), canonical(unpinned)];
                patterns.iter().any(|pattern| {
                    forms
                        .iter()
                        .any(|text| tool_glob::matches(pattern.as_bytes(), text.as_bytes()))
                })
            }
        }
    }

    /// Whether any plugin must be signed.
    pub fn requires_any(&self) -> bool {
        !matches!(self.require, Require::Nothing)
    }

    /// Whether `[trust] unsigned` lets `name` in unsigned.
    pub fn waives(&self, name: &str) -> bool {
        self.unsigned.contains(name)
    }

    /// The key files, each named for the own-files check.
    pub fn key_files(&self) -> impl Iterator<Item = (&'static str, &std::path::Path)> {
        self.key_files
            .iter()
            .map(|file| ("a [trust.keys] key file", file.as_path()))
    }

    /// The trusted key with the fingerprint `fingerprint`, if any.
    pub fn key_with(&self, fingerprint: &str) -> Option<&TrustedKey> {
        self.keys
            .iter()
            .find(|trusted| trusted.key.fingerprint() == fingerprint)
    }
}

/// `[trust]` of the config file at `path` (the default policy when there is no file), for the
/// commands that install without loading every plugin; its key files are checked to be out of
/// every grant's reach, as at every load.
pub fn read(path: &std::path::Path) -> anyhow::Result<TrustPolicy> {
    if !path.exists() {
        return Ok(TrustPolicy::default());
    }
    let document = ConfigDocument::load(path, super::host_secrets::host_secrets())?;
    let trust = TrustPolicy::from_document(&document)?;
    let runtime = cordon_runtime::config::Config::from_document(&document)?;
    runtime.check_own_files(&trust.key_files().collect::<Vec<_>>())?;
    Ok(trust)
}

/// A `require` pattern as written, in [`canonical`] form: one without a scheme is an OCI one
/// (`ghcr.io/acme/*`, as OCI clients write references). Sources are recorded pinned by digest,
/// without their tags, so a pattern naming a tag or a digest could never match: refused.
fn source_pattern(pattern: &str) -> Result<String, String> {
    let written = if pattern.contains("://") || pattern.starts_with(['/', '.']) {
        pattern.to_string()
    } else {
        format!("oci://{pattern}")
    };
    if let Some(rest) = written.strip_prefix("oci://") {
        let last = rest.rsplit('/').next().unwrap_or_default();
        if !rest.contains('/') || last.contains(':') || last.contains('@') {
            return Err(format!(
                "{pattern:?} cannot match a source: a pattern names a registry host and repositories (oci://ghcr.io/acme/*, or oci://ghcr.io/acme/tool), not a tag or a digest (the lock records every source pinned by digest)"
            ));
        }
    }
    Ok(canonical(&written))
}

/// A source or pattern as compared: an OCI one's host in lower case, without the default HTTPS
/// port, Docker Hub under the one name the lock records it by (`index.docker.io`).
fn canonical(text: &str) -> String {
    let Some(rest) = text.strip_prefix("oci://") else {
        return text.to_string();
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut host = host.to_ascii_lowercase();
    if let Some(bare) = host.strip_suffix(":443") {
        host = bare.to_string();
    }
    if matches!(host.as_str(), "docker.io" | "registry-1.docker.io") {
        host = "index.docker.io".to_string();
    }
    format!("oci://{host}/{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requiring(patterns: &[&str]) -> TrustPolicy {
        TrustPolicy {
            require: Require::Sources(
                patterns
                    .iter()
                    .map(|pattern| source_pattern(pattern).unwrap())
                    .collect(),
            ),
            ..TrustPolicy::default()
        }
    }

    #[test]
    fn a_pattern_matches_every_spelling_of_the_source_it_names() {
        let pinned = "oci://index.docker.io/acme/tool@sha256:ab";
        for pattern in [
            "oci://docker.io/acme/*",
            "docker.io/acme/*",
            "oci://Docker.IO/acme/tool",
            "index.docker.io/acme/tool",
        ] {
            assert!(
                requiring(&[pattern]).requires_signature("tool", pinned),
                "{pattern}"
            );
        }
        let ghcr = "oci://ghcr.io/acme/tool@sha256:ab";
        assert!(requiring(&["oci://GHCR.io:443/acme/*"]).requires_signature("tool", ghcr));
        assert!(!requiring(&["oci://ghcr.io/other/*"]).requires_signature("tool", ghcr));
        assert!(
            !requiring(&["oci://ghcr.io/acme/*"])
                .requires_signature("tool", "plugins/tool.wasm (installed by hand)")
        );
    }

    #[test]
    fn a_pattern_that_could_never_match_is_refused() {
        for pattern in [
            "oci://ghcr.io/acme/tool:1",
            "ghcr.io/acme/tool:*",
            "ghcr.io/acme/tool@sha256:ab",
            "ghcr.io",
        ] {
            let err = source_pattern(pattern).unwrap_err();
            assert!(err.contains("not a tag or a digest"), "{pattern}: {err}");
        }
        assert!(source_pattern("ghcr.io:5000/acme/*").is_ok());
    }
}
