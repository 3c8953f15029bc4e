//! Where cordon plugins come from, and where they go: a source (`source.rs`) is an OCI reference
//! (`oci://host/repo:tag` or `@sha256:…`), an HTTPS URL pinned by sha256, or a local file.
//! `fetch.rs` gets a component's bytes from any of them and verifies every digest it was given;
//! `oci.rs` pulls and pushes the Wasm component artifact layout that `wkg`, Wassette and Spin use
//! (`wasm_config.rs` writes its config; `sign_in.rs` signs in with credentials, so cordon decides
//! where they go); `credentials.rs` finds registry credentials in the
//! environment or the docker config file, and never shows them; `upload.rs` pushes blobs and
//! manifests with the credentials for the registry's origin only; `transfer.rs` is HTTP with
//! timeouts, a redirect policy and capped bodies; `wassette_policy.rs` reads the permission
//! policy Wassette keeps beside a component as the cordon grants that allow no more;
//! `signature/` says who signed an artifact (cosign's keyed signatures) and signs one.

mod credentials;
mod fetch;
mod oci;
mod sign_in;
pub mod signature;
mod source;
mod transfer;
mod upload;
mod wasm_config;
pub mod wassette_policy;

pub use credentials::SecretListener;
pub use fetch::{Fetched, fetch, read_bounded_file, read_file as read_component_file};
pub use oci::{Pushed, push};
pub use source::Source;
pub use wasm_config::ComponentSummary;

/// Why a plugin could not be fetched or published.
#[derive(Debug, thiserror::Error)]
pub enum DistributionError {
    #[error(
        "{reference:?} is not a plugin source: {reason}. Use oci://HOST/REPOSITORY:TAG (or @sha256:DIGEST), https://…/NAME.wasm with --sha256, or a path to a .wasm file"
    )]
    BadReference { reference: String, reason: String },
    #[error(
        "the digest does not match: {what} should be sha256:{expected} but is sha256:{actual}; nothing was written"
    )]
    DigestMismatch {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("fetching {url} failed: {reason}")]
    Http { url: String, reason: String },
    #[error("the registry refused or failed {what} for {reference}: {reason}")]
    Registry {
        what: &'static str,
        reference: String,
        reason: String,
    },
    #[error(
        "{reference} holds no Wasm component: its manifest has no layer of type application/wasm (it has: {found})"
    )]
    NotAComponent { reference: String, found: String },
    #[error("{what} is over {limit} bytes; a plugin that large is refused")]
    TooLarge { what: String, limit: u64 },
}

/// The most bytes of one component fetched.
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// `sha256` of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// `sha256` of `bytes` in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(sha256(bytes))
}
