//! cosign's keyed signature of an OCI artifact: the "simple signing" JSON payload that names the
//! artifact's manifest digest, signed as it is (its exact bytes). cosign stores the payloads in a
//! manifest under the tag `sha256-<digest>.sig` beside the artifact, one layer each, the base64
//! signature in the layer's `dev.cosignproject.cosign/signature` annotation. A payload vouches
//! for an artifact only when its `critical.image.docker-manifest-digest` is that artifact's digest
//! and its `critical.type` is cosign's: the signature alone says nothing about which artifact.

use serde_json::{Value, json};

/// The media type of a payload layer.
pub const PAYLOAD_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
/// The layer annotation holding the base64 signature.
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// What `critical.type` says.
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// The most bytes of one payload read (cosign's are a few hundred).
pub const MAX_PAYLOAD_BYTES: u64 = 64 << 10;

/// The tag cosign keeps the signatures of the manifest `digest` (`sha256:HEX`) under.
pub fn signature_tag(digest: &str) -> String {
    digest.replacen(':', "-", 1) + ".sig"
}

/// The payload cordon signs for the manifest `digest` of `repository` (`host/repository`), in
/// the form cosign writes.
pub fn payload(repository: &str, digest: &str) -> Vec<u8> {
    let payload = json!({
        "critical": {
            "identity": {"docker-reference": repository},
            "image": {"docker-manifest-digest": digest},
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    });
    serde_json::to_vec(&payload).expect("a JSON value serialises")
}

/// Why a payload does not vouch for the artifact.
pub fn check_payload(bytes: &[u8], digest: &str) -> Result<(), String> {
    let payload: Value =
        serde_json::from_slice(bytes).map_err(|err| format!("the payload is not JSON: {err}"))?;
    let critical = &payload["critical"];
    if critical["type"] != PAYLOAD_TYPE {
        return Err(format!(
            "the payload's critical.type is {}, not {PAYLOAD_TYPE:?}",
            critical["type"]
        ));
    }
    match critical["image"]["docker-manifest-digest"].as_str() {
        Some(signed) if signed == digest => Ok(()),
        Some(signed) => Err(format!(
            "the payload signs the manifest {signed}, not {digest}"
        )),
        None => Err("the payload names no critical.image.docker-manifest-digest".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_vouches_only_for_its_digest() {
        let digest = "sha256:".to_string() + &"ab".repeat(32);
        let bytes = payload("localhost:5000/tools/echo", &digest);
        assert_eq!(check_payload(&bytes, &digest), Ok(()));
        let other = "sha256:".to_string() + &"cd".repeat(32);
        assert!(
            check_payload(&bytes, &other)
                .unwrap_err()
                .contains("signs the manifest")
        );
        let wrong_type = br#"{"critical":{"type":"x","image":{"docker-manifest-digest":"d"}}}"#;
        assert!(
            check_payload(wrong_type, "d")
                .unwrap_err()
                .contains("critical.type")
        );
        assert_eq!(
            signature_tag(&digest),
            format!("sha256-{}.sig", "ab".repeat(32))
        );
    }
}
