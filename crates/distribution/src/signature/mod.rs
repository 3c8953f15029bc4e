//! Who published a plugin: signatures checked against the keys the operator trusts. Keyed
//! signatures of OCI artifacts in cosign's layout (simple_signing.rs, oci_signatures.rs), made
//! and checked with the keys of keys.rs. The policy that says which plugins must be signed, and
//! by which keys, is cordon.toml's `[trust]`, read by the binary; the lock records the signer.

mod keys;
pub mod oci_signatures;
mod simple_signing;

pub use keys::{KeyError, PublicKey, SigningKey, read_key_file};
pub use simple_signing::signature_tag;

/// A key the operator trusts, under the name `[trust.keys]` gives it.
#[derive(Clone, Debug)]
pub struct TrustedKey {
    pub name: String,
    pub key: PublicKey,
}

/// What [`Signer::lock_text`] writes before a key's fingerprint.
const KEY_PREFIX: &str = "key ";

/// Who signed an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Signer {
    /// A trusted key, by its `[trust.keys]` name and its fingerprint.
    Key { name: String, fingerprint: String },
}

impl Signer {
    /// How the lock records the signer: what stays the same while the signer does (a key's
    /// fingerprint, not the name the config gives it).
    pub fn lock_text(&self) -> String {
        match self {
            Signer::Key { fingerprint, .. } => format!("{KEY_PREFIX}{fingerprint}"),
        }
    }

    /// The key fingerprint in a signer the lock recorded ([`Signer::lock_text`]), if it names one.
    pub fn fingerprint_in(lock_text: &str) -> Option<&str> {
        lock_text.strip_prefix(KEY_PREFIX)
    }
}

impl std::fmt::Display for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Signer::Key { name, fingerprint } => write!(f, "the key `{name}` ({fingerprint})"),
        }
    }
}
