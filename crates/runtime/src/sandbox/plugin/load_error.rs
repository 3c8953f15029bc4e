//! Why a plugin file was refused: every way loading can fail, each saying what to do about it.

use crate::capabilities::grant::OpenDirError;
use crate::capabilities::lock::LockRefusal;
use crate::report::ErrorKind;
use crate::sandbox::contract::WrongWorld;
use std::path::PathBuf;

/// Why a plugin file was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The skills it carries break a rule (`skills/embedded.rs`).
    #[error("the skills it carries are refused: {0}")]
    Skills(String),
    /// The file could not be read.
    #[error("cannot read the file: {0}")]
    Read(#[source] std::io::Error),
    /// The file is larger than a plugin file may be.
    #[error("it is {bytes} bytes, over the {limit} bytes a plugin file may be")]
    TooLarge {
        /// The file's size, in bytes.
        bytes: u64,
        /// The most bytes a plugin file may have (256 MiB).
        limit: u64,
    },
    /// The file is reachable through a read-write grant (a link into one), where a plugin could
    /// rewrite it.
    #[error("{0}")]
    OwnFile(String),
    /// Two plugins (a file and bytes given in code, or two given in code) share one id.
    #[error("{0}")]
    DuplicateId(String),
    /// The file's sha256 is not the one cordon.toml pins (`sha256`).
    #[error(
        "its sha256 is {actual} but cordon.toml pins {expected}; the file changed since it was pinned (update the pin only if you trust the new file)"
    )]
    PinMismatch {
        /// The pinned sha256, in hex.
        expected: String,
        /// The file's sha256, in hex.
        actual: String,
    },
    /// Its grant cannot be given now (an environment variable it reads is not set).
    #[error("{0}")]
    GrantUnavailable(String),
    /// The file does not start with the WebAssembly header.
    #[error("it is not a WebAssembly file (no \\0asm header); build the plugin for wasm32-wasip2")]
    NotWebAssembly,
    /// The file is a core WebAssembly module, not a component.
    #[error(
        "it is a core WebAssembly module, not a component; build it for wasm32-wasip2 or wrap it with `wasm-tools component new`"
    )]
    CoreModule,
    /// Refused from its outline, before it was compiled.
    #[error(transparent)]
    Outline(#[from] super::component_outline::OutlineRefusal),
    /// Wasmtime could not compile the component.
    #[error("it cannot be compiled: {}", innermost(.0))]
    Compile(#[source] wasmtime::Error),
    /// The component uses the component model's async ABI, which the operator turned off.
    #[error(
        "it uses the component model's async ABI (`async func` exports, `future` or `stream`, WASI 0.3: {0}), which `[host] component_model_async = false` in cordon.toml turns off; remove that line (or set it to true) to load it"
    )]
    AsyncTurnedOff(String),
    /// The compile task panicked or was cancelled.
    #[error("compiling it failed in the host: {0}")]
    CompileTask(#[source] tokio::task::JoinError),
    /// Loading is locked and cordon.lock does not approve the plugin as it is.
    #[error(transparent)]
    NotApproved(#[from] LockRefusal),
    /// The embedder's admission check refused the component (the binary's: `[trust]` requires a
    /// signature the lock does not record).
    #[error("{0}")]
    NotAdmitted(String),
    /// The component follows no contract the host speaks.
    #[error(transparent)]
    WrongWorld(#[from] WrongWorld),
    /// `describe` failed as a call would have (trap, timeout, limits), with the host's message.
    #[error("its describe() failed: {message}")]
    Describe {
        /// How `describe` ended.
        kind: ErrorKind,
        /// The host's message about it.
        message: String,
    },
    /// The plugin declares more tools than a plugin may (256).
    #[error("it declares {count} tools; a plugin may declare at most {limit}")]
    TooManyTools {
        /// How many it declares.
        count: usize,
        /// The most a plugin may declare.
        limit: usize,
    },
    /// The tools' schemas together are larger than a plugin may declare (4 MiB).
    #[error(
        "its tools' parameters and output schemas take {bytes} bytes, all tools together; a plugin may declare at most {limit}"
    )]
    SchemasTooLarge {
        /// Bytes of every parameters and output schema together.
        bytes: usize,
        /// The most bytes they may take.
        limit: usize,
    },
    /// The hook declares too many tool globs (more than 256), or one that is not valid.
    #[error(
        "it declares a hook with {count} tool globs, some not valid; a hook may declare at most {limit} globs of tool-name characters, `*` and `?`"
    )]
    InvalidHookGlobs {
        /// How many globs it declares.
        count: usize,
        /// The most globs a hook may declare.
        limit: usize,
    },
    /// A declared resource, resource template or prompt breaks a rule (contract 0.4).
    #[error("{what}: {reason}")]
    InvalidOffer {
        /// What it is (`resource "docs://x"`, `prompt "review"`).
        what: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// One declared tool breaks a rule (its name, title, schemas, guidelines or locks).
    #[error("tool {tool:?}: {reason}")]
    InvalidTool {
        /// The tool's name, as declared.
        tool: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A granted directory could not be opened.
    #[error("{0}")]
    Dirs(#[from] OpenDirError),
    /// The WIT file the grant names (`wit`) cannot be read, or does not apply to this plugin.
    #[error("cannot read the WIT at {} (`wit` in its config): {reason}", path.display())]
    Wit {
        /// The WIT file's path.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
}

/// The innermost message of an error chain, without wasmtime's backtraces.
pub(super) fn innermost(err: &wasmtime::Error) -> String {
    err.chain()
        .last()
        .map(|cause| cause.to_string())
        .unwrap_or_else(|| err.to_string())
}
