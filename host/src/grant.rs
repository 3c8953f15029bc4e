//! One plugin's capabilities, as parsed from cordon.toml, and the only place they become a WASI
//! context. Whatever is not granted here does not exist for the plugin: no files, no env vars, no
//! sockets, no args, no inherited stdio.

use crate::capture::OutputCapture;
use crate::limits::Limits;
use crate::net::HttpGrant;
use serde_json::Value;
use std::path::PathBuf;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

/// The most random bytes one `get-random-bytes` call may ask for.
const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// Read-only or read-write access to a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "ro",
            Self::ReadWrite => "rw",
        }
    }

    fn perms(self) -> FsPerms {
        match self {
            Self::ReadOnly => FsPerms::ReadOnly,
            Self::ReadWrite => FsPerms::ReadWrite,
        }
    }
}

/// A host directory the plugin sees at `guest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// Canonical host path.
    pub host: PathBuf,
    /// Absolute path inside the sandbox.
    pub guest: String,
    pub access: Access,
}

/// Everything the operator granted one plugin.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginGrant {
    pub dirs: Vec<DirGrant>,
    /// Names of host environment variables passed through (when set on the host).
    pub env: Vec<String>,
    /// Environment variables set to fixed values.
    pub env_set: Vec<(String, String)>,
    /// Origins the plugin may reach over `wasi:http`.
    pub http: std::sync::Arc<[HttpGrant]>,
    pub limits: Limits,
    /// Free-form settings handed to the plugin as JSON.
    pub settings: Value,
    /// When set, the plugin file must have exactly this sha256.
    pub sha256: Option<[u8; 32]>,
}

impl PluginGrant {
    /// Whether the plugin may read host variable `name`.
    pub fn allows_env(&self, name: &str) -> bool {
        self.env.iter().any(|granted| granted == name)
    }

    /// The WASI context of one call: the grant's directories and env vars, and captured stdio.
    pub fn wasi_context(
        &self,
        stdout: OutputCapture,
        stderr: OutputCapture,
    ) -> anyhow::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        builder
            .stdout(stdout)
            .stderr(stderr)
            .max_random_size(MAX_RANDOM_BYTES)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for dir in &self.dirs {
            builder
                .preopened_dir(&dir.host, &dir.guest, dir.access.perms())
                .map_err(|err| {
                    anyhow::anyhow!(
                        "cannot open granted directory {}: {err}",
                        dir.host.display()
                    )
                })?;
        }
        for name in &self.env {
            if let Ok(value) = std::env::var(name) {
                builder.env(name, value);
            }
        }
        for (name, value) in &self.env_set {
            builder.env(name, value);
        }
        Ok(builder.build())
    }

    /// A context with nothing granted, for `describe`.
    pub fn empty_wasi_context(stdout: OutputCapture, stderr: OutputCapture) -> WasiCtx {
        WasiCtxBuilder::new()
            .stdout(stdout)
            .stderr(stderr)
            .max_random_size(MAX_RANDOM_BYTES)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_is_allowed_only_by_exact_name() {
        let grant = PluginGrant {
            env: vec!["HOME".into(), "LANG".into()],
            ..Default::default()
        };
        let cases = [
            ("HOME", true),
            ("LANG", true),
            ("home", false),
            ("PATH", false),
            ("", false),
            ("HOME ", false),
        ];
        for (name, allowed) in cases {
            assert_eq!(grant.allows_env(name), allowed, "{name:?}");
        }
    }
}
