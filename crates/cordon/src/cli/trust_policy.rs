//! `[trust]` of cordon.toml: the keys whose signatures cordon trusts (`keys`, a name for each PEM
//! public key file), which installed plugins must be signed by one of them (`require`: "signed"
//! for all, or a list of source patterns such as "oci://ghcr.io/acme/*"), and the plugins the
//! operator lets in unsigned, by name (`unsigned`), which `cordon list` shows as such. The check
//! `cordon add`, `sync` and `verify` apply is signatures.rs; loading checks what the lock recorded.

use cordon_distribution::signature::{PublicKey, Signer, TrustedKey, read_key_file};
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
            let pem = read_key_file(&file).map_err(|err| {
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

    /// The trusted key of the signer the lock recorded (a [`Signer::lock_text`]), if any.
    ///
    /// [`Signer::lock_text`]: cordon_distribution::signature::Signer::lock_text
    pub fn key_of(&self, recorded: &str) -> Option<&TrustedKey> {
        let fingerprint = Signer::fingerprint_in(recorded)?;
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
/// (`ghcr.io/acme/*`, as OCI clients write references). Only OCI sources carry signatures, and
/// they are recorded pinned by digest, in lower case, without their tags: a pattern that could
/// never match one (another scheme, a path, a tag or digest, upper case, a trailing `/`, spaces)
/// is refused rather than left to require nothing.
fn source_pattern(pattern: &str) -> Result<String, String> {
    let refuse = |why: &str| {
        Err(format!(
            "{pattern:?} cannot match a source: {why}. A pattern names an OCI registry host and repositories in lower case: oci://ghcr.io/acme/* or ghcr.io/acme/tool (the lock records every source pinned by digest, without its tag)"
        ))
    };
    if pattern.trim() != pattern || pattern.is_empty() {
        return refuse("it has spaces around it or is empty");
    }
    let rest = match pattern.split_once("://") {
        Some(("oci", rest)) => rest,
        Some(_) => {
            return refuse("only OCI artifacts carry signatures (write no scheme, or oci://)");
        }
        None if pattern.starts_with(['/', '.', '~']) => {
            return refuse("only OCI artifacts carry signatures, not local files");
        }
        None => pattern,
    };
    let Some((_, path)) = rest.split_once('/') else {
        return refuse("it names no repository");
    };
    let last = path.rsplit('/').next().unwrap_or_default();
    if last.contains(':') || last.contains('@') {
        return refuse("it names a tag or a digest");
    }
    if path.is_empty() || path.ends_with('/') || path.contains("//") {
        return refuse("it has an empty path segment");
    }
    if path.chars().any(|c| c.is_ascii_uppercase()) {
        return refuse("OCI repository names are lower case");
    }
    Ok(canonical(&format!("oci://{rest}")))
}

/// A source or pattern as compared: an OCI one's host in lower case, its port as a number
/// (without the default HTTPS one), Docker Hub under the one name the lock records it by
/// (`index.docker.io`, official images under `library/`).
fn canonical(text: &str) -> String {
    let Some(rest) = text.strip_prefix("oci://") else {
        return text.to_string();
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.to_ascii_lowercase();
    let (name, port) = match host.rsplit_once(':') {
        Some((name, digits))
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) =>
        {
            match digits.trim_start_matches('0').parse::<u32>() {
                Ok(443) => (name.to_string(), None),
                Ok(port) => (name.to_string(), Some(port)),
                // All zeros, or more digits than any port.
                Err(_) => (name.to_string(), Some(0)),
            }
        }
        _ => (host.clone(), None),
    };
    let docker_hub = matches!(
        name.as_str(),
        "docker.io" | "registry-1.docker.io" | "index.docker.io"
    ) && port.is_none();
    let name = if docker_hub {
        "index.docker.io".to_string()
    } else {
        name
    };
    let path = if docker_hub && !path.contains('/') && !path.starts_with('*') {
        format!("library/{path}")
    } else {
        path.to_string()
    };
    match port {
        Some(port) => format!("oci://{name}:{port}/{path}"),
        None => format!("oci://{name}/{path}"),
    }
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
            "OCI://ghcr.io/acme/*",
            "oci://ghcr.io/acme/",
            "ghcr.io/ACME/*",
            " ghcr.io/acme/*",
            "https://example.com/dl/*",
            "./vendor/*",
        ] {
            let err = source_pattern(pattern).unwrap_err();
            assert!(err.contains("cannot match a source"), "{pattern}: {err}");
        }
        assert!(source_pattern("ghcr.io:5000/acme/*").is_ok());
    }

    #[test]
    fn a_port_compares_as_a_number_and_docker_hub_images_under_library() {
        let pinned = "oci://127.0.0.1:05000/acme/tool@sha256:ab";
        assert!(requiring(&["127.0.0.1:5000/acme/*"]).requires_signature("tool", pinned));
        let ghcr = "oci://ghcr.io:0443/acme/t@sha256:ab";
        assert!(requiring(&["ghcr.io/acme/*"]).requires_signature("t", ghcr));
        let alpine = "oci://index.docker.io/library/alpine@sha256:ab";
        assert!(requiring(&["docker.io/alpine"]).requires_signature("alpine", alpine));
        assert!(!requiring(&["127.0.0.1:5001/acme/*"]).requires_signature("tool", pinned));
    }
}
