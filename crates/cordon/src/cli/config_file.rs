//! cordon.toml as the binary reads it: one [`ConfigDocument`], from which each crate reads the
//! tables it owns (the runtime's grants, hooks and host; the agent's `[model]` and loop keys;
//! `[telemetry]`; the binary's own `[trust]`), and then one check names any key nobody read, with its file and line. A mistake
//! in any table fails every command that reads the file.

use crate::cli::host_secrets::host_secrets;
use crate::cli::trust_policy::TrustPolicy;
use cordon_agent::settings::SessionSettings;
use cordon_runtime::config::{Config, ConfigDocument, ConfigError};
use std::path::Path;

/// Every part of one config file, checked.
pub struct ConfigFile {
    /// The runtime's tables: what the pipeline is built from.
    pub runtime: Config,
    /// `[model]` and the loop's keys of `[agent]`.
    pub session: SessionSettings,
    /// `[trust]`: the keys signatures are checked with, and which plugins must be signed.
    pub trust: TrustPolicy,
}

/// Reads and checks the config file at `path`.
pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
    read(&ConfigDocument::load(path, host_secrets())?)
}

/// Fails, before `command` changes the config file at `path`, when the file does not load now:
/// it would not load after either, and every other command would refuse it. No file is fine.
pub fn loads_before_editing(path: &Path, command: &str) -> anyhow::Result<()> {
    if !path.exists() {
        return Ok(());
    }
    load(path).map(drop).map_err(|err| {
        anyhow::anyhow!(
            "{err}\n{} must load before `{command}` changes it; fix it and run the command again (nothing was installed)",
            path.display()
        )
    })
}

/// Checks config text as [`load`] checks a file; `origin` names it, `base` anchors its paths.
pub fn parse(text: &str, origin: &Path, base: &Path) -> Result<ConfigFile, ConfigError> {
    read(&ConfigDocument::new(text, origin, base, host_secrets())?)
}

fn read(document: &ConfigDocument) -> Result<ConfigFile, ConfigError> {
    let runtime = Config::from_document(document)?;
    let session = SessionSettings::from_document(document)?;
    cordon_telemetry::read_file_settings(document)?;
    let trust = TrustPolicy::from_document(document)?;
    // The trusted keys are the host's own files: a plugin that could rewrite one could sign.
    runtime.check_own_files(&trust.key_files().collect::<Vec<_>>())?;
    document.check_all_read()?;
    Ok(ConfigFile {
        runtime,
        session,
        trust,
    })
}
