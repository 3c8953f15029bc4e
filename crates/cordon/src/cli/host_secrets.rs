//! The cordon program is one host, so it has one scrubber: every secret it reads (cordon.toml's,
//! the model key, registry credentials, the serve token, collector headers) is registered with
//! [`host_secrets`], and everything it prints or writes is masked by it. The library keeps no
//! scrubber of its own: the config documents the program reads, and every [`Config`] it builds,
//! are given this one, so the pipeline, the agent and the MCP server mask with it too.

use cordon_runtime::config::Config;
use cordon_runtime::report::secrets::Secrets;
use std::sync::LazyLock;

static HOST_SECRETS: LazyLock<Secrets> = LazyLock::new(Secrets::default);

/// The program's scrubber.
pub fn host_secrets() -> &'static Secrets {
    &HOST_SECRETS
}

/// A config with nothing in it (no cordon.toml) whose secrets are the program's.
pub fn empty_config() -> Config {
    Config {
        secrets: host_secrets().clone(),
        ..Config::default()
    }
}

/// Registers what a registry client found (a password, a token) with the program's scrubber.
pub fn registry_secret(secret: &str) {
    host_secrets().register(secret);
}
