//! cosign's keyed signatures of an artifact in its registry: read from the signature manifest
//! (`sha256-<digest>.sig`, simple_signing.rs) and checked against the trusted keys, or written
//! there by `cordon push --sign` in the layout cosign writes, beside the signatures already
//! there. Every blob is read no further than its descriptor's size (and 64 KiB), checked against
//! its digest, and taken only from the artifact's own repository.

use super::keys::SigningKey;
use super::simple_signing::{
    self, MAX_PAYLOAD_BYTES, PAYLOAD_MEDIA_TYPE, SIGNATURE_ANNOTATION, signature_tag,
};
use super::{Signer, TrustedKey};
use crate::credentials::SecretListener;
use crate::oci::{
    client_for, fetch_manifest_if_any, parse, pull_layer, registry_error, signed_in, uploader,
};
use crate::{DistributionError, sha256_hex};
use base64::Engine as _;
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use std::collections::BTreeMap;

/// The most signatures of one artifact looked at.
const MAX_SIGNATURES: usize = 64;

/// What the signatures beside an artifact showed.
#[derive(Debug, Default)]
pub struct OciSignatures {
    /// How many signature layers there were.
    pub found: usize,
    /// The trusted key that signed it: the preferred one (the signer the lock recorded) when it
    /// is among them, else the first.
    pub signer: Option<Signer>,
    /// Why each signature that was read did not count (not by a trusted key, another artifact's).
    pub refused: Vec<String>,
}

/// The keyed signatures of the manifest `digest` (`sha256:…`) in `repository`
/// (`host/repository`), checked against `keys`; `preferred` is the fingerprint of the signer
/// wanted when several trusted keys signed (so another valid signature put first changes
/// nothing). A signature layer that cannot be read is skipped with its reason.
pub async fn find(
    repository: &str,
    digest: &str,
    keys: &[TrustedKey],
    preferred: Option<&str>,
    on_secret: SecretListener<'_>,
) -> Result<OciSignatures, DistributionError> {
    let reference_text = format!("{repository}:{}", signature_tag(digest));
    let reference = parse(&reference_text)?;
    let auth = signed_in(&reference, &reference_text, false, on_secret).await?;
    let client = client_for(&reference);
    let Some(raw) = fetch_manifest_if_any(&client, &reference, &reference_text, &auth).await?
    else {
        return Ok(OciSignatures::default());
    };
    let manifest: OciImageManifest = serde_json::from_slice(&raw)
        .map_err(|err| registry_error("the signature manifest parse", &reference_text, err))?;
    let mut findings = OciSignatures::default();
    for layer in manifest
        .layers
        .iter()
        .filter(|layer| layer.media_type == PAYLOAD_MEDIA_TYPE)
        .take(MAX_SIGNATURES)
    {
        findings.found += 1;
        let Some(signature) = layer
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(SIGNATURE_ANNOTATION))
        else {
            findings
                .refused
                .push(format!("{}: no signature annotation", layer.digest));
            continue;
        };
        let Ok(signature) = base64::engine::general_purpose::STANDARD.decode(signature.trim())
        else {
            findings
                .refused
                .push(format!("{}: the signature is not base64", layer.digest));
            continue;
        };
        if layer.size < 0 || layer.size as u64 > MAX_PAYLOAD_BYTES {
            findings.refused.push(format!(
                "{}: a payload over {MAX_PAYLOAD_BYTES} bytes",
                layer.digest
            ));
            continue;
        }
        let what = format!("the signature payload {}", layer.digest);
        let payload = match pull_layer(&client, &reference, &reference_text, layer, &what).await {
            Ok(payload) => payload,
            Err(err) => {
                findings.refused.push(format!(
                    "{}: the payload could not be read ({err})",
                    layer.digest
                ));
                continue;
            }
        };
        if let Err(reason) = simple_signing::check_payload(&payload, digest) {
            findings.refused.push(format!("{}: {reason}", layer.digest));
            continue;
        }
        match keys
            .iter()
            .find(|trusted| trusted.key.verifies(&payload, &signature))
        {
            Some(trusted) => {
                let signer = Signer::Key {
                    name: trusted.name.clone(),
                    fingerprint: trusted.key.fingerprint().to_string(),
                };
                let wanted = preferred == Some(trusted.key.fingerprint());
                if wanted || findings.signer.is_none() {
                    findings.signer = Some(signer);
                }
                if wanted {
                    break;
                }
            }
            None => findings.refused.push(format!(
                "{}: signed by no key in [trust.keys]",
                layer.digest
            )),
        }
    }
    Ok(findings)
}

/// Signs the manifest `digest` of `repository` with `key` and stores the signature where cosign
/// does, keeping the signatures already there.
pub async fn push(
    repository: &str,
    digest: &str,
    key: &SigningKey,
    on_secret: SecretListener<'_>,
) -> Result<(), DistributionError> {
    let tag = signature_tag(digest);
    let reference_text = format!("{repository}:{tag}");
    let reference = parse(&reference_text)?;
    let auth = signed_in(&reference, &reference_text, true, on_secret).await?;
    let client = client_for(&reference);
    // The signatures there are kept; a manifest there that is not one is not overwritten.
    let existing = fetch_manifest_if_any(&client, &reference, &reference_text, &auth).await?;
    let mut layers = match existing {
        Some(raw) => serde_json::from_slice::<OciImageManifest>(&raw)
            .map(|manifest| manifest.layers)
            .map_err(|err| {
                registry_error(
                    "the signature push",
                    &reference_text,
                    format!("what is there is not an image manifest ({err}); it was left as it is"),
                )
            })?,
        None => Vec::new(),
    };
    layers.retain(|layer| layer.media_type == PAYLOAD_MEDIA_TYPE);
    let payload = simple_signing::payload(repository, digest);
    let signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&payload));
    let payload_digest = format!("sha256:{}", sha256_hex(&payload));
    layers.push(OciDescriptor {
        media_type: PAYLOAD_MEDIA_TYPE.to_string(),
        digest: payload_digest.clone(),
        size: payload.len() as i64,
        urls: None,
        annotations: Some(BTreeMap::from([(
            SIGNATURE_ANNOTATION.to_string(),
            signature,
        )])),
    });
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": "",
        "config": {},
        "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}],
        "os": "",
        "rootfs": {"type": "layers", "diff_ids": layers.iter().map(|layer| &layer.digest).collect::<Vec<_>>()},
    }))
    .expect("a JSON value serialises");
    let config_digest = format!("sha256:{}", sha256_hex(&config));
    let manifest = OciImageManifest {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_string()),
        config: OciDescriptor {
            media_type: "application/vnd.oci.image.config.v1+json".to_string(),
            digest: config_digest.clone(),
            size: config.len() as i64,
            urls: None,
            annotations: None,
        },
        layers,
        subject: None,
        artifact_type: None,
        annotations: None,
    };
    let pushing = |err| registry_error("the signature push", &reference_text, err);
    let upload = uploader(&reference, &auth).map_err(pushing)?;
    upload
        .blob(&payload, &payload_digest)
        .await
        .map_err(pushing)?;
    upload
        .blob(&config, &config_digest)
        .await
        .map_err(pushing)?;
    let body = serde_json::to_vec(&manifest).expect("a manifest serialises");
    upload
        .manifest(&tag, body, OCI_IMAGE_MEDIA_TYPE)
        .await
        .map_err(pushing)?;
    Ok(())
}
