//! OCI registries: pulling a component pushed in the Wasm artifact layout (one
//! `application/wasm` layer; the config is not needed, so artifacts pushed by `oras push` without
//! one install too) and pushing one with the layout's config. A reference given by digest is
//! checked against the manifest's own digest; every blob is checked against its descriptor.
//! Plain HTTP is used only for a loopback registry.

use crate::source::is_loopback;
use crate::wasm_config::{self, CONFIG_MEDIA_TYPE, ComponentSummary, LAYER_MEDIA_TYPE};
use crate::{DistributionError, MAX_COMPONENT_BYTES, credentials, sha256_hex};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciImageManifest, OciManifest};
use oci_client::{Client, Reference};

/// A component pulled from a registry.
pub struct Pulled {
    pub bytes: Vec<u8>,
    /// `host/repository@sha256:…`: the manifest pinned by its digest.
    pub pinned: String,
}

/// A component published.
#[derive(Debug)]
pub struct Pushed {
    /// `host/repository:tag@sha256:…` of the manifest.
    pub manifest_digest: String,
    pub component_sha256: String,
}

fn parse(reference: &str) -> Result<Reference, DistributionError> {
    reference
        .parse::<Reference>()
        .map_err(|err| DistributionError::BadReference {
            reference: format!("oci://{reference}"),
            reason: err.to_string(),
        })
}

fn client_for(reference: &Reference) -> Client {
    let registry = reference.resolve_registry().to_string();
    let protocol = if is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        ..Default::default()
    })
}

fn registry_error(
    what: &'static str,
    reference: &str,
    err: impl std::fmt::Display,
) -> DistributionError {
    DistributionError::Registry {
        what,
        reference: format!("oci://{reference}"),
        reason: err.to_string(),
    }
}

/// Pulls the component at `reference` (`host/repository:tag` or `…@sha256:…`).
pub async fn pull(reference_text: &str) -> Result<Pulled, DistributionError> {
    let reference = parse(reference_text)?;
    let auth = credentials::for_registry(reference.resolve_registry());
    let client = client_for(&reference);
    let (raw, digest) = client
        .pull_manifest_raw(
            &reference,
            &auth,
            &[
                OCI_IMAGE_MEDIA_TYPE,
                "application/vnd.docker.distribution.manifest.v2+json",
            ],
        )
        .await
        .map_err(|err| registry_error("the manifest pull", reference_text, err))?;
    let actual = format!("sha256:{}", sha256_hex(&raw));
    if let Some(wanted) = reference.digest()
        && wanted != actual
    {
        return Err(DistributionError::DigestMismatch {
            what: format!("the manifest of oci://{reference_text}"),
            expected: wanted.trim_start_matches("sha256:").to_string(),
            actual: actual.trim_start_matches("sha256:").to_string(),
        });
    }
    if digest != actual {
        tracing::debug!(%digest, %actual, "the registry's digest header differs from the manifest's");
    }
    let manifest = match serde_json::from_slice::<OciManifest>(&raw) {
        Ok(OciManifest::Image(manifest)) => manifest,
        Ok(OciManifest::ImageIndex(_)) => {
            return Err(DistributionError::NotAComponent {
                reference: format!("oci://{reference_text}"),
                found: "an image index (several platforms), not one artifact".into(),
            });
        }
        Err(err) => return Err(registry_error("the manifest parse", reference_text, err)),
    };
    let Some(layer) = manifest
        .layers
        .iter()
        .find(|layer| layer.media_type == LAYER_MEDIA_TYPE)
    else {
        let found: Vec<&str> = manifest
            .layers
            .iter()
            .map(|l| l.media_type.as_str())
            .collect();
        return Err(DistributionError::NotAComponent {
            reference: format!("oci://{reference_text}"),
            found: if found.is_empty() {
                "no layers".into()
            } else {
                found.join(", ")
            },
        });
    };
    if layer.size < 0 || layer.size as u64 > MAX_COMPONENT_BYTES {
        return Err(DistributionError::TooLarge {
            what: format!("the component layer of oci://{reference_text}"),
            limit: MAX_COMPONENT_BYTES,
        });
    }
    let mut bytes = Vec::new();
    client
        .pull_blob(&reference, layer, &mut bytes)
        .await
        .map_err(|err| registry_error("the layer pull", reference_text, err))?;
    let layer_actual = format!("sha256:{}", sha256_hex(&bytes));
    if layer_actual != layer.digest {
        return Err(DistributionError::DigestMismatch {
            what: format!("the component layer of oci://{reference_text}"),
            expected: layer.digest.trim_start_matches("sha256:").to_string(),
            actual: layer_actual.trim_start_matches("sha256:").to_string(),
        });
    }
    let repository = format!(
        "{}/{}",
        reference.resolve_registry(),
        reference.repository()
    );
    Ok(Pulled {
        bytes,
        pinned: format!("{repository}@{actual}"),
    })
}

/// Pushes `bytes` (a component) to `reference` (`host/repository:tag`) in the Wasm layout.
pub async fn push(
    reference_text: &str,
    bytes: Vec<u8>,
    summary: &ComponentSummary,
) -> Result<Pushed, DistributionError> {
    let reference = parse(reference_text)?;
    let auth = credentials::for_registry(reference.resolve_registry());
    let client = client_for(&reference);
    let component_sha256 = sha256_hex(&bytes);
    let layer_digest = format!("sha256:{component_sha256}");
    let config_json = wasm_config::config(summary, &layer_digest, &wasm_config::now_rfc3339());
    let config = Config::new(
        serde_json::to_vec(&config_json).expect("a JSON value serialises"),
        CONFIG_MEDIA_TYPE.into(),
        None,
    );
    let layers = vec![ImageLayer::new(bytes, LAYER_MEDIA_TYPE.into(), None)];
    let mut manifest = OciImageManifest::build(&layers, &config, None);
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_string());
    client
        .push(&reference, &layers, config, &auth, Some(manifest.clone()))
        .await
        .map_err(|err| registry_error("the push", reference_text, err))?;
    let raw = serde_json::to_vec(&manifest).expect("a manifest serialises");
    let (_, digest) = client
        .pull_manifest_raw(&reference, &auth, &[OCI_IMAGE_MEDIA_TYPE])
        .await
        .map_err(|err| registry_error("reading back the pushed manifest of", reference_text, err))
        .unwrap_or_else(|_| (Default::default(), format!("sha256:{}", sha256_hex(&raw))));
    Ok(Pushed {
        manifest_digest: digest,
        component_sha256,
    })
}
