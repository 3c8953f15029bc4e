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
}

#[derive(Debug, Default, Clone)]
enum Require {
    /// Signatures are checked when there are keys, and recorded, but none is required.
    #[default]
    Nothing,
    /// Every installed plugin.
    All,
    /// Plugins whose source matches one of these patterns (`*` is any run of characters).
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
        for (name, path) in raw.keys {
            let file = document.base().join(&path);
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
            Some(RawRequire::Sources(patterns)) => Require::Sources(patterns),
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
                // The source as recorded (pinned by digest) or as written without its pin.
                let unpinned = source.split_once('@').map_or(source, |(base, _)| base);
                patterns.iter().any(|pattern| {
                    [source, unpinned]
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

    /// The trusted key with the fingerprint `fingerprint`, if any.
    pub fn key_with(&self, fingerprint: &str) -> Option<&TrustedKey> {
        self.keys
            .iter()
            .find(|trusted| trusted.key.fingerprint() == fingerprint)
    }
}

/// `[trust]` of the config file at `path` (the default policy when there is no file), for the
/// commands that install without loading every plugin.
pub fn read(path: &std::path::Path) -> anyhow::Result<TrustPolicy> {
    if !path.exists() {
        return Ok(TrustPolicy::default());
    }
    let document = ConfigDocument::load(path, super::host_secrets::host_secrets())?;
    Ok(TrustPolicy::from_document(&document)?)
}
