//! OCI registries: pulling a component pushed in the Wasm artifact layout (one
//! `application/wasm` layer; the config is not needed, so artifacts pushed by `oras push` without
//! one install too) and pushing one with the layout's config. A reference given by digest is
//! checked against the manifest's own digest; every blob is checked against its descriptor and read
//! no further than the size it gives, and the manifest no further than 4 MiB (cordon reads it
//! itself). Plain HTTP is used only for a loopback registry; credentials go to the registry they
//! are for (pushes are uploaded by upload.rs, which sends them to the registry's origin only), and
//! to its token service only over HTTPS.

use crate::credentials::SecretListener;
use crate::source::is_loopback;
use crate::upload::Upload;
use crate::wasm_config::{self, CONFIG_MEDIA_TYPE, ComponentSummary, LAYER_MEDIA_TYPE};
use crate::{DistributionError, MAX_COMPONENT_BYTES, credentials, sha256_hex, transfer};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{
    OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest, OciManifest,
};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

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

pub(crate) fn parse(reference: &str) -> Result<Reference, DistributionError> {
    let bad = |reason: String| DistributionError::BadReference {
        reference: format!("oci://{reference}"),
        reason,
    };
    let parsed = reference
        .parse::<Reference>()
        .map_err(|err| bad(err.to_string()))?;
    // Docker's rule makes a first part without a dot or a port (`oci://registry/acme/x`) a Docker
    // Hub repository; cordon goes only to the host written.
    let written = reference.split('/').next().unwrap_or_default();
    let same = parsed.registry() == written
        || (written == "index.docker.io" && parsed.registry() == "docker.io");
    if !same {
        return Err(bad(format!(
            "{written:?} would be read as a Docker Hub repository, not a registry host; write the registry's full host (with a dot or a port, e.g. {written}.local:5000, or docker.io/{written}/…)"
        )));
    }
    Ok(parsed)
}

pub(crate) fn client_for(reference: &Reference) -> Client {
    let registry = reference.resolve_registry().to_string();
    let protocol = if is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        connect_timeout: Some(transfer::CONNECT_TIMEOUT),
        read_timeout: Some(transfer::READ_TIMEOUT),
        ..Default::default()
    })
}

/// `https`, or `http` for a registry on this machine.
pub(crate) fn scheme_for(registry: &str) -> &'static str {
    if is_loopback(registry) {
        "http"
    } else {
        "https"
    }
}

pub(crate) fn registry_error(
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

/// The credentials for `reference`'s registry, after cordon signed in itself (see sign_in.rs).
pub(crate) async fn signed_in(
    reference: &Reference,
    reference_text: &str,
    push: bool,
    on_secret: SecretListener<'_>,
) -> Result<RegistryAuth, DistributionError> {
    let registry = reference.resolve_registry();
    crate::sign_in::sign_in(
        registry,
        scheme_for(registry),
        reference.repository(),
        push,
        credentials::for_registry(registry, on_secret),
        reference_text,
        on_secret,
    )
    .await
}

/// The manifest at `reference`, read by cordon itself so its size is capped, with the token the
/// client signed in with (or the registry's Basic credentials).
async fn fetch_manifest(
    client: &Client,
    reference: &Reference,
    reference_text: &str,
    auth: &RegistryAuth,
) -> Result<Vec<u8>, DistributionError> {
    fetch_manifest_if_any(client, reference, reference_text, auth)
        .await?
        .ok_or_else(|| {
            registry_error(
                "the manifest pull",
                reference_text,
                format!("HTTP {}", reqwest::StatusCode::NOT_FOUND),
            )
        })
}

/// The manifest at `reference`, or `None` when the registry has none there (404).
pub(crate) async fn fetch_manifest_if_any(
    client: &Client,
    reference: &Reference,
    reference_text: &str,
    auth: &RegistryAuth,
) -> Result<Option<Vec<u8>>, DistributionError> {
    let token = client
        .auth(reference, auth, RegistryOperation::Pull)
        .await
        .map_err(|err| registry_error("the sign-in", reference_text, err))?;
    let registry = reference.resolve_registry();
    let target = reference.digest().or(reference.tag()).unwrap_or("latest");
    let url = format!(
        "{}://{registry}/v2/{}/manifests/{target}",
        scheme_for(registry),
        reference.repository()
    );
    let mut request = transfer::client()?.get(&url).header(
        reqwest::header::ACCEPT,
        [
            OCI_IMAGE_MEDIA_TYPE,
            "application/vnd.docker.distribution.manifest.v2+json",
            OCI_IMAGE_INDEX_MEDIA_TYPE,
            "application/vnd.docker.distribution.manifest.list.v2+json",
        ]
        .join(", "),
    );
    request = match (token, auth) {
        (Some(token), _) => request.bearer_auth(token),
        (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
        (None, _) => request,
    };
    let response = request
        .send()
        .await
        .map_err(|err| registry_error("the manifest pull", reference_text, err))?;
    if response.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !response.status().is_success() {
        return Err(registry_error(
            "the manifest pull",
            reference_text,
            format!("HTTP {}", response.status()),
        ));
    }
    transfer::read_capped(
        response,
        MAX_MANIFEST_BYTES,
        &format!("the manifest of oci://{reference_text}"),
    )
    .await
    .map(Some)
}

/// An uploader to `reference`'s repository, with `auth` for its registry's origin only.
pub(crate) fn uploader<'a>(
    reference: &'a Reference,
    auth: &'a RegistryAuth,
) -> Result<Upload<'a>, String> {
    let registry = reference.resolve_registry();
    Upload::new(registry, scheme_for(registry), reference.repository(), auth)
}

/// The most bytes of one manifest read (a Wasm artifact's is well under a kilobyte).
const MAX_MANIFEST_BYTES: u64 = 4 << 20;

/// Pulls the component at `reference` (`host/repository:tag` or `…@sha256:…`).
pub async fn pull(
    reference_text: &str,
    on_secret: SecretListener<'_>,
) -> Result<Pulled, DistributionError> {
    let reference = parse(reference_text)?;
    let auth = signed_in(&reference, reference_text, false, on_secret).await?;
    let client = client_for(&reference);
    let raw = fetch_manifest(&client, &reference, reference_text, &auth).await?;
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
        let found: Vec<String> = manifest
            .layers
            .iter()
            .map(|l| l.media_type.clone())
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
    let bytes = pull_layer(
        &client,
        &reference,
        reference_text,
        layer,
        &format!("the component layer of oci://{reference_text}"),
    )
    .await?;
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

/// The bytes of `layer` (`what` names it in errors), from this registry only, refused as soon as
/// they pass the size its descriptor gave, and checked against its digest.
pub(crate) async fn pull_layer(
    client: &Client,
    reference: &Reference,
    reference_text: &str,
    layer: &OciDescriptor,
    what: &str,
) -> Result<Vec<u8>, DistributionError> {
    use futures_util::StreamExt as _;
    // Only from this registry: a descriptor's `urls` could send the pull anywhere.
    let mut layer = layer.clone();
    layer.urls = None;
    let mut stream = client
        .pull_blob_stream(reference, &layer)
        .await
        .map_err(|err| registry_error("the layer pull", reference_text, err))?;
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|err| registry_error("the layer pull", reference_text, err))?;
        if (bytes.len() + chunk.len()) as u64 > layer.size as u64 {
            return Err(DistributionError::DigestMismatch {
                what: format!(
                    "{what} (longer than the {} bytes its descriptor gives)",
                    layer.size
                ),
                expected: layer.digest.trim_start_matches("sha256:").to_string(),
                actual: "(not read past the size)".into(),
            });
        }
        bytes.extend_from_slice(&chunk);
    }
    let actual = format!("sha256:{}", sha256_hex(&bytes));
    if actual != layer.digest {
        return Err(DistributionError::DigestMismatch {
            what: what.to_string(),
            expected: layer.digest.trim_start_matches("sha256:").to_string(),
            actual: actual.trim_start_matches("sha256:").to_string(),
        });
    }
    Ok(bytes)
}

/// Pushes `bytes` (a component) to `reference` (`host/repository:tag`) in the Wasm layout. The
/// digest reported is that of the manifest bytes cordon sent; a registry that then serves another
/// manifest under the tag is an error.
pub async fn push(
    reference_text: &str,
    bytes: Vec<u8>,
    summary: &ComponentSummary,
    on_secret: SecretListener<'_>,
) -> Result<Pushed, DistributionError> {
    let reference = parse(reference_text)?;
    let auth = signed_in(&reference, reference_text, true, on_secret).await?;
    let client = client_for(&reference);
    client
        .store_auth_if_needed(reference.resolve_registry(), &auth)
        .await;
    let component_sha256 = sha256_hex(&bytes);
    let layer_digest = format!("sha256:{component_sha256}");
    let config_json = wasm_config::config(summary, &layer_digest, &wasm_config::now_rfc3339());
    let config = Config::new(
        serde_json::to_vec(&config_json).expect("a JSON value serialises"),
        CONFIG_MEDIA_TYPE.into(),
        None,
    );
    let layer = ImageLayer::new(bytes, LAYER_MEDIA_TYPE.into(), None);
    let mut manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, None);
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_string());
    let pushing = |err| registry_error("the push", reference_text, err);
    // cordon uploads itself, so the credentials go to the registry's origin and nowhere else
    // (upload.rs): a registry's upload Location on another host gets the bytes, not them.
    let upload = uploader(&reference, &auth).map_err(pushing)?;
    upload
        .blob(&layer.data, &layer_digest)
        .await
        .map_err(pushing)?;
    upload
        .blob(&config.data, &manifest.config.digest)
        .await
        .map_err(pushing)?;
    let body = serde_json::to_vec(&manifest).expect("a manifest serialises");
    let digest = format!("sha256:{}", sha256_hex(&body));
    let tag = reference
        .digest()
        .or(reference.tag())
        .unwrap_or("latest")
        .to_string();
    upload
        .manifest(&tag, body, OCI_IMAGE_MEDIA_TYPE)
        .await
        .map_err(pushing)?;
    let served = fetch_manifest(&client, &reference, reference_text, &auth).await?;
    let served_digest = format!("sha256:{}", sha256_hex(&served));
    if served_digest != digest {
        return Err(DistributionError::DigestMismatch {
            what: format!(
                "the manifest oci://{reference_text} serves after the push (it is not the one pushed; do not pin it)"
            ),
            expected: digest.trim_start_matches("sha256:").to_string(),
            actual: served_digest.trim_start_matches("sha256:").to_string(),
        });
    }
    Ok(Pushed {
        manifest_digest: digest,
        component_sha256,
    })
}
