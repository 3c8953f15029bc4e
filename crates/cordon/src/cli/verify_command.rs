//! `cordon verify REF`: who signed a plugin, checked against `[trust]`, without installing it:
//! REF as `cordon add` takes it, or the name of a plugin cordon.lock records (its recorded source,
//! sha256 and signer).

use super::signatures::{check, look};
use cordon_distribution::Source;

/// `cordon verify REF`: fetches REF (or the source cordon.lock records for an installed name)
/// without installing it, and prints who signed it and whether `[trust]` lets it in.
pub async fn run(
    paths: &super::install::InstallPaths,
    reference: &str,
) -> anyhow::Result<std::process::ExitCode> {
    use super::render::stdout_line;
    use cordon_runtime::report::terminal_text::one_line;
    let trust = super::trust_policy::read(&paths.config)?;
    let lock = if paths.lock.exists() {
        super::install::load_lock(&paths.lock)?
    } else {
        Default::default()
    };
    let (name, source, sha256, recorded) = match lock.sources.get(reference) {
        Some(installed) => (
            reference.to_string(),
            Source::parse(&installed.source)?,
            Some(installed.sha256.clone()),
            installed.signer.clone(),
        ),
        None => {
            // Judged as `cordon add` would install it: under its default name, whose recorded
            // signer it must match.
            let source = Source::parse(reference)?;
            let name = source.default_name();
            let recorded = lock
                .sources
                .get(&name)
                .and_then(|installed| installed.signer.clone());
            (name, source, None, recorded)
        }
    };
    let fetched = cordon_distribution::fetch(
        &source,
        sha256.as_deref(),
        &super::host_secrets::registry_secret,
    )
    .await?;
    let pinned = fetched.pinned.to_text();
    let findings = look(&trust, &fetched.pinned, recorded.as_deref()).await?;
    stdout_line(&format!(
        "{} (sha256 {}): {}",
        one_line(&pinned),
        fetched.sha256,
        one_line(&findings.found)
    ))?;
    if let Some(recorded) = &recorded {
        stdout_line(&format!("  cordon.lock records it as signed by {recorded}"))?;
    }
    // For an installed name, what decides whether it loads is the file in plugins/ and the
    // lock's record of it, checked as loading checks them.
    let installed = paths.plugins.join(format!("{name}.wasm"));
    let loads = match lock.sources.contains_key(reference) {
        true => match cordon_distribution::read_component_file(&installed) {
            Ok(bytes) => super::signatures::admit(
                &trust,
                &lock.sources,
                &name,
                &cordon_distribution::sha256(&bytes),
            ),
            Err(_) => Ok(()),
        },
        false => Ok(()),
    };
    let verdict = check(&trust, &name, &pinned, &findings, recorded.as_deref());
    if let Err(refusal) = &loads {
        stdout_line(&format!(
            "  [trust]: refused: the installed plugins/{name}.wasm does not load: {}",
            one_line(refusal)
        ))?;
        return Ok(std::process::ExitCode::FAILURE);
    }
    match verdict {
        Ok(()) if trust.waives(&name) => {
            stdout_line(&format!(
                "  [trust]: let in unsigned by name ([trust] unsigned lists {name})"
            ))?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        Ok(()) => {
            let verdict = match (&findings.signer, trust.requires_signature(&name, &pinned)) {
                (Some(_), _) => "accepted: signed by a trusted key",
                (None, false) => "accepted: [trust] does not require it to be signed",
                (None, true) => {
                    unreachable!("check refuses an unsigned plugin the policy requires signed")
                }
            };
            stdout_line(&format!("  [trust]: {verdict}"))?;
            Ok(std::process::ExitCode::SUCCESS)
        }
        Err(refusal) => {
            stdout_line(&format!(
                "  [trust]: refused: {}",
                one_line(&refusal.to_string())
            ))?;
            Ok(std::process::ExitCode::FAILURE)
        }
    }
}
