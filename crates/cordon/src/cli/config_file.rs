//! cordon.toml as the binary reads it: the runtime's tables through [`Config`] and the tables
//! other crates own (`[telemetry]`: `cordon-telemetry`) through theirs, all checked on every load,
//! so a mistake in any table fails the command that reads the file, naming the file and the key.

use anyhow::Context as _;
use cordon_runtime::config::Config;
use std::path::Path;

/// Reads and checks the config file at `path`; the runtime's part of it is returned.
pub fn load(path: &Path) -> anyhow::Result<Config> {
    let config = Config::load(path)?;
    cordon_telemetry::load_file_settings(path).with_context(|| {
        format!(
            "{} has a [telemetry] table cordon cannot use",
            path.display()
        )
    })?;
    Ok(config)
}
