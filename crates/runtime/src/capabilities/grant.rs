//! One plugin's capabilities, as parsed from cordon.toml, and the only place they become a sandbox's
//! view of the world. Whatever is not granted here does not exist for the plugin: no files, no env
//! vars, no sockets, no args, no inherited stdio, no say over other plugins' calls.
//!
//! A directory grant is a handle, not a path: [`PluginGrant::open_dirs`] opens each granted
//! directory once, when the plugin loads, refusing a path that is (or has become) a symlink, and
//! every call's preopens are clones of those handles. Nothing a plugin later does on disk (renaming
//! a granted directory away, planting a symlink in its place) changes what a grant points at.

use crate::capabilities::limits::Limits;
use crate::capabilities::net::HttpGrant;
use crate::capabilities::tool_glob;
use crate::capabilities::tool_overrides::ToolOverride;
use serde_json::Value;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime_wasi::cli::StdoutStream;
use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::{FsPerms, OpenMode, WasiCtxBuilder};

/// The most random bytes one `get-random-bytes` call may ask for.
pub(crate) const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// Read-only or read-write access to a granted directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The plugin may read, list and stat, but not change anything.
    ReadOnly,
    /// The plugin may also create, write, rename and remove files and directories.
    ReadWrite,
}

impl Access {
    /// `ro` or `rw`, as cordon.toml and the lockfile write it.
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

    fn open_mode(self) -> OpenMode {
        match self {
            Self::ReadOnly => OpenMode::READ,
            Self::ReadWrite => OpenMode::READ | OpenMode::WRITE,
        }
    }
}

/// The operator's leave for a plugin's hook to see, block, rewrite and replace other tools' calls
/// (`hook = true`, or `hook = ["write_*", ...]` to narrow it to some tools).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookGrant {
    /// Tool-name globs the hook may watch; empty means every tool its hook declares.
    pub tools: Vec<String>,
    /// `unreviewed_progress = true`: the operator lets the progress of the tools this hook
    /// watches reach MCP clients as the tools send it, before the after-hook reviews the result
    /// (for a hook that reviews results only, a truncating one say; never for a redactor).
    pub unreviewed_progress: bool,
}

impl HookGrant {
    /// Whether the grant lets the hook watch `tool`.
    pub fn covers(&self, tool: &str) -> bool {
        tool_glob::any_matches(&self.tools, tool)
    }

    /// Whether the grant lets the hook watch the session stages it declares. Only `hook = true`
    /// does: a session stage sees every tool's calls and results (in the model's messages), so a
    /// grant for some tools (`hook = ["write_*"]`) is a grant for their calls alone.
    pub fn covers_session(&self) -> bool {
        self.tools.is_empty()
    }
}

/// A granted directory, opened: what each call's preopen is cloned from.
pub type OpenedDirs = Arc<[(Dir, String)]>;

/// Why a granted directory could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open granted directory {path} (guest {guest}): {reason}")]
pub struct OpenDirError {
    /// The host path of the directory.
    pub path: PathBuf,
    /// Where the plugin was to see it.
    pub guest: String,
    /// Why it could not be opened.
    pub reason: String,
}

/// A host directory the plugin sees at `guest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirGrant {
    /// Canonical host path.
    pub host: PathBuf,
    /// Absolute path inside the sandbox.
    pub guest: String,
    /// Read-only or read-write.
    pub access: Access,
}

/// Everything the operator granted one plugin.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PluginGrant {
    /// The directories the plugin sees, each at its guest path.
    pub dirs: Vec<DirGrant>,
    /// Names of host environment variables passed through (when set on the host).
    pub env: Vec<String>,
    /// Environment variables set to fixed values.
    pub env_set: Vec<(String, String)>,
    /// Origins the plugin may reach over `wasi:http`.
    pub http: std::sync::Arc<[HttpGrant]>,
    /// Time, memory, fuel, output, HTTP and disk bounds on each call (`[plugins.ID.limits]`).
    pub limits: Limits,
    /// Free-form settings handed to the plugin as JSON.
    pub settings: Value,
    /// Values the plugin reads through `wasi:config/store` beside its settings, never printed
    /// (`secrets`).
    pub config_secrets: std::sync::Arc<[crate::capabilities::config_secrets::ConfigSecret]>,
    /// When set, the plugin file must have exactly this sha256.
    pub sha256: Option<[u8; 32]>,
    /// Whether (and over which tools) the plugin's hook may run; `None`: its hook never runs.
    pub hook: Option<HookGrant>,
    /// What the operator says about the tools of a component that cannot say it itself, by the
    /// tool name cordon derives (`[plugins.ID.tools.NAME]`).
    pub tools: std::collections::BTreeMap<String, ToolOverride>,
    /// The WIT a plain component was built from (`wit = "…"`), read for its doc comments.
    pub wit: Option<PathBuf>,
    /// The granted directory (its guest path) a command starts in (`working_dir`); `None`: the
    /// first granted directory ([`PluginGrant::working_dir`]).
    pub working_dir: Option<String>,
    /// Why the grant cannot be given now (a `${env:NAME}` it reads is not set): the plugin is
    /// refused at load with this reason, and only it.
    pub unavailable: Option<String>,
}

impl PluginGrant {
    /// Whether it is granted a secret: a host env var, a fixed env value, or an HTTP header the
    /// host adds (which a server may echo back to it).
    pub fn holds_secrets(&self) -> bool {
        !self.env.is_empty()
            || !self.env_set.is_empty()
            || self.http.iter().any(|http| !http.headers.is_empty())
    }

    /// Whether the plugin may read host variable `name`.
    pub fn allows_env(&self, name: &str) -> bool {
        self.env.iter().any(|granted| granted == name)
    }

    /// Opens every granted directory, once: the handles each call's preopens are cloned from.
    /// Refuses a directory whose path is a symlink or is no longer the directory that was checked.
    pub(crate) fn open_dirs(&self) -> Result<OpenedDirs, OpenDirError> {
        self.dirs
            .iter()
            .map(|dir| {
                let handle = open_dir_handle(&dir.host).map_err(|reason| OpenDirError {
                    path: dir.host.clone(),
                    guest: dir.guest.clone(),
                    reason,
                })?;
                // Filesystem calls run on the calling thread instead of a hop to a blocking-pool
                // thread and back (most of a walk's cost otherwise); fs/gate.rs refuses to open
                // anything that could block a thread (a FIFO, a device).
                let dir_handle = Dir::new(handle, dir.access.perms(), dir.access.open_mode(), true);
                Ok((dir_handle, dir.guest.clone()))
            })
            .collect()
    }

    /// `opened` with the working directory ([`PluginGrant::working_dir`]) opened a second time as
    /// `.`, the name wasi-libc (and so Rust's std, C and CPython) resolves relative paths by: a
    /// command's `rg TODO` then searches its working directory. The handle is the grant's own, with
    /// its mode; a path that no other grant holds resolves inside it, as with `wasmtime run --dir .`.
    pub(crate) fn with_working_dir(&self, opened: OpenedDirs) -> OpenedDirs {
        let Some(working_dir) = self.working_dir() else {
            return opened;
        };
        let Some((dir, _)) = opened.iter().find(|(_, guest)| guest == working_dir) else {
            return opened;
        };
        let mut dirs = opened.to_vec();
        dirs.push((dir.clone(), ".".to_string()));
        dirs.into()
    }

    /// The WASI context of one call, before it is built (a `wasi:cli` command's call adds its
    /// arguments and stdin): the grant's env vars and captured stdio. Its directories are not
    /// here: they are the handles of [`PluginGrant::open_dirs`], handed out by the call state.
    pub(crate) fn wasi_builder(
        &self,
        stdout: impl StdoutStream + 'static,
        stderr: impl StdoutStream + 'static,
    ) -> WasiCtxBuilder {
        let mut builder = WasiCtxBuilder::new();
        builder
            // Files and directories opened under a grant work on the calling thread, like the
            // grant's own handle (see open_dirs).
            .allow_blocking_current_thread(true)
            .stdout(stdout)
            .stderr(stderr)
            .max_random_size(MAX_RANDOM_BYTES)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for name in &self.env {
            if let Ok(value) = std::env::var(name) {
                builder.env(name, value);
            }
        }
        for (name, value) in &self.env_set {
            builder.env(name, value);
        }
        builder
    }
}

/// Opens `path` as a directory without following a symlink at its end, and checks that the
/// handle is the directory the path names now (so no symlink was swapped in along the way).
fn open_dir_handle(path: &Path) -> Result<std::fs::File, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|err| match err.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
                "it is a symlink or not a directory; grant the real directory".to_string()
            }
            _ => err.to_string(),
        })?;
    let opened = file.metadata().map_err(|err| err.to_string())?;
    let named = std::fs::symlink_metadata(path).map_err(|err| err.to_string())?;
    if named.file_type().is_symlink() || (opened.dev(), opened.ino()) != (named.dev(), named.ino())
    {
        return Err("the path changed while it was being opened (a symlink was swapped in?); grant the real directory".into());
    }
    Ok(file)
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
