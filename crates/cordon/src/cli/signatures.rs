//! Who signed a plugin `cordon add`, `sync` and `verify` fetch, checked against `[trust]`
//! (trust_policy.rs): an OCI artifact's keyed signatures (cosign's layout) against the trusted
//! keys. A plugin the policy requires to be signed and no trusted key signed is refused with what
//! was expected and what was found; a signer that differs from the one the lock recorded is
//! refused too (another publisher's update is a new decision, not an update).

use super::trust_policy::TrustPolicy;
use anyhow::bail;
use cordon_distribution::Source;
use cordon_distribution::signature::{Signer, oci_signatures, signature_tag};

/// What the signatures of one fetched plugin showed.
#[derive(Debug, Default)]
pub struct Findings {
    /// The trusted signer, if a trusted key signed it.
    pub signer: Option<Signer>,
    /// What was looked at, in words (for errors and `cordon verify`).
    pub found: String,
}

/// How long looking up one artifact's signatures may take in all.
const LOOKUP_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// The signatures of the plugin at `pinned` (the source as the lock records it), checked
/// against the trusted keys of `policy`; `recorded` is the signer the lock records (a
/// [`Signer::lock_text`]), preferred when several trusted keys signed.
pub async fn look(
    policy: &TrustPolicy,
    pinned: &Source,
    recorded: Option<&str>,
) -> anyhow::Result<Findings> {
    let Source::Oci { reference } = pinned else {
        return Ok(Findings {
            signer: None,
            found: "no signature (only OCI artifacts carry keyed signatures)".into(),
        });
    };
    let Some((repository, digest)) = reference.split_once('@') else {
        bail!("oci://{reference} is not pinned by a digest, so its signatures cannot be looked up");
    };
    if policy.keys.is_empty() {
        return Ok(Findings {
            signer: None,
            found: "not looked at ([trust.keys] names no key)".into(),
        });
    }
    // Signatures that cannot be read are no signature: refused where one is required, with why.
    let preferred = recorded.and_then(Signer::fingerprint_in);
    let lookup = oci_signatures::find(
        repository,
        digest,
        &policy.keys,
        preferred,
        &super::host_secrets::registry_secret,
    );
    let signatures = match tokio::time::timeout(LOOKUP_DEADLINE, lookup).await {
        Ok(Ok(signatures)) => signatures,
        Ok(Err(err)) => {
            return Ok(Findings {
                signer: None,
                found: format!("no signature that could be read ({err})"),
            });
        }
        Err(_) => {
            return Ok(Findings {
                signer: None,
                found: format!(
                    "no signature read within {} s (the registry is too slow)",
                    LOOKUP_DEADLINE.as_secs()
                ),
            });
        }
    };
    let found = match (&signatures.signer, signatures.found) {
        (Some(signer), _) => format!("signed by {signer}"),
        (None, 0) => format!(
            "no signature (cosign keeps them under oci://{repository}:{})",
            signature_tag(digest)
        ),
        (None, count) => format!(
            "{count} signature(s), none that counts: {}",
            signatures.refused.join("; ")
        ),
    };
    Ok(Findings {
        signer: signatures.signer,
        found,
    })
}

/// Refuses `name` (from `source`) when the policy requires a signature and `findings` has no
/// trusted signer, or when its signer is not the one the lock recorded (`recorded`, a
/// [`Signer::lock_text`]).
pub fn check(
    policy: &TrustPolicy,
    name: &str,
    source: &str,
    findings: &Findings,
    recorded: Option<&str>,
) -> anyhow::Result<()> {
    let signer = findings.signer.as_ref().map(Signer::lock_text);
    if let Some(recorded) = recorded
        && signer.as_deref() != Some(recorded)
    {
        let trusted = policy
            .key_of(recorded)
            .map_or(String::new(), |key| format!(" (the key `{}`)", key.name));
        bail!(
            "{name}: cordon.lock records it as signed by {recorded}{trusted}, but {source} is {}. A plugin from another signer is a new decision: check who published it, then add it again with --force",
            findings.found
        );
    }
    if findings.signer.is_none() && policy.requires_signature(name, source) {
        bail!(
            "{name}: [trust] requires {source} to be signed by a key in [trust.keys] ({}), but it has {}. Sign it (`cordon push --sign KEY`, or `cosign sign --key`), or let it in unsigned with [trust] unsigned = [\"{name}\"]",
            policy
                .keys
                .iter()
                .map(|trusted| trusted.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            findings.found
        );
    }
    Ok(())
}

/// The load-time check for `policy`, with the lock at `lock_path` as it is now (what `cordon
/// add` and `sync` verified); none when nothing must be signed.
pub fn admission(
    policy: &TrustPolicy,
    lock_path: &std::path::Path,
) -> anyhow::Result<Option<cordon_runtime::Admission>> {
    use anyhow::Context as _;
    if !policy.requires_any() {
        return Ok(None);
    }
    let sources = if lock_path.exists() {
        cordon_runtime::capabilities::lock::Lockfile::load(lock_path)
            .context("[trust] requires signatures, which cordon.lock records")?
            .sources
    } else {
        std::collections::BTreeMap::new()
    };
    let policy = policy.clone();
    Ok(Some(std::sync::Arc::new(
        move |id: &str, sha256: &[u8; 32]| admit(&policy, &sources, id, sha256),
    )))
}

/// The load-time check: a plugin `[trust]` requires to be signed loads only as the lock records
/// it installed (`sources`, from `cordon add` or `sync`): the same sha256 as the file now, and a
/// signer whose key `[trust.keys]` still names. Made on the digest of the bytes that are compiled.
pub fn admit(
    policy: &TrustPolicy,
    sources: &std::collections::BTreeMap<String, cordon_runtime::capabilities::lock::PluginSource>,
    id: &str,
    sha256: &[u8; 32],
) -> Result<(), String> {
    let recorded = sources.get(id);
    let source = recorded.map_or_else(
        || format!("plugins/{id}.wasm (installed by hand)"),
        |recorded| recorded.source.clone(),
    );
    if !policy.requires_signature(id, &source) {
        return Ok(());
    }
    let let_in = format!("or let it in unsigned with [trust] unsigned = [\"{id}\"]");
    let Some(recorded) = recorded else {
        return Err(format!(
            "[trust] requires it to be signed, and cordon.lock records no signed install of it: install it with `cordon add` from a signed artifact, {let_in}"
        ));
    };
    let actual = hex::encode(sha256);
    if recorded.sha256 != actual {
        return Err(format!(
            "[trust] requires it to be signed, and the file (sha256 {actual}) is not the one cordon.lock records as installed from {} (sha256 {}): run `cordon sync`, {let_in}",
            recorded.source, recorded.sha256
        ));
    }
    match recorded.signer.as_deref() {
        None => Err(format!(
            "[trust] requires it to be signed, and it was installed unsigned from {}: install a signed artifact, {let_in}",
            recorded.source
        )),
        Some(signer) => match policy.key_of(signer) {
            Some(_) => Ok(()),
            None => Err(format!(
                "[trust] requires it to be signed by a key in [trust.keys], and it was signed by {signer}, which [trust.keys] does not name (any more): add the key back, {let_in}"
            )),
        },
    }
}

/// What `cordon list` shows of who signed each loaded plugin: the signer the lock records for
/// the file as it is (by its `[trust.keys]` name when it has one), or that `[trust] unsigned`
/// lets it in.
pub fn provenance(
    policy: &TrustPolicy,
    lock_path: &std::path::Path,
    pipeline: &cordon_runtime::Pipeline,
) -> std::collections::BTreeMap<String, String> {
    let sources = cordon_runtime::capabilities::lock::Lockfile::load(lock_path)
        .map(|lock| lock.sources)
        .unwrap_or_default();
    let mut shown = std::collections::BTreeMap::new();
    for plugin in pipeline.registry().plugins() {
        let id = plugin.id.to_string();
        let signer = sources
            .get(&id)
            .filter(|recorded| recorded.sha256 == hex::encode(plugin.sha256))
            .and_then(|recorded| recorded.signer.as_deref());
        let text = match signer {
            Some(signer) => match policy.key_of(signer) {
                Some(key) => format!("signed by the key `{}`", key.name),
                None => format!("signed by {signer}, not in [trust.keys]"),
            },
            None if policy.waives(&id) => "unsigned, let in by [trust] unsigned".to_string(),
            None => continue,
        };
        shown.insert(id, text);
    }
    shown
}
