//! Per-plugin resource limits and their defaults.

use std::time::Duration;

/// What one call of a plugin may consume. Every call gets the whole budget afresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Wall time for one call, enforced by epoch interruption (default 30 s).
    pub timeout: Duration,
    /// Linear memory the plugin may grow to (default 256 MiB).
    pub memory_bytes: u64,
    /// Fuel (roughly, WebAssembly instructions) for one call; `None` means unmetered.
    pub fuel: Option<u64>,
    /// Bytes the plugin may push into the host per call: its result plus log and progress
    /// messages (default 16 MiB).
    pub output_bytes: u64,
    /// Bytes of stdout and of stderr kept per call; the rest is dropped (default 64 KiB).
    pub stdio_bytes: u64,
    /// Bounds on outgoing HTTP requests.
    pub http: HttpLimits,
    /// Bytes one call may write through read-write grants, growing a file by `set-size` included
    /// (default 256 MiB).
    pub disk_write_bytes: u64,
    /// Files, directories and links one call may create through read-write grants (default
    /// 10,000; every open with `create` counts).
    pub files_created: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            memory_bytes: 256 << 20,
            fuel: None,
            output_bytes: 16 << 20,
            stdio_bytes: 64 << 10,
            http: HttpLimits::default(),
            disk_write_bytes: DEFAULT_DISK_WRITE_BYTES,
            files_created: DEFAULT_FILES_CREATED,
        }
    }
}

/// Bytes one call may write through read-write grants unless `limits.disk_write` says otherwise.
pub const DEFAULT_DISK_WRITE_BYTES: u64 = 256 << 20;

/// Entries one call may create through read-write grants unless `limits.files_created` says
/// otherwise.
pub const DEFAULT_FILES_CREATED: u64 = 10_000;

/// Elements one table of a plugin may grow to (engine-wide: it sizes the pooling allocator's table
/// slots). Far above what a language runtime needs; a `table.grow` past it fails and is reported as
/// `out_of_memory`.
pub const MAX_TABLE_ELEMENTS: usize = 100_000;

/// `describe` runs at load with this much wall time at most.
pub const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Files and directories one call may hold open at once. With the default `[host] max_sandboxes`
/// of 64, every sandbox's share fits the default process bound, so no call can starve another.
pub const MAX_OPEN_FILES_PER_CALL: usize = 256;

/// Bounds on a call's outgoing requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// How long connecting may take (`http_connect_timeout`; default 10 s).
    pub connect_timeout: Duration,
    /// From sending the request to the end of the response body.
    pub total_timeout: Duration,
    /// The most bytes of one response body the guest may read (`http_response`; default 16 MiB).
    pub max_response_bytes: u64,
    /// Requests of one call waiting for their response at once.
    pub max_concurrent: usize,
    /// Connections one call may have open at once, a held response body included.
    pub max_open: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            max_response_bytes: 16 << 20,
            max_concurrent: 8,
            max_open: 32,
        }
    }
}
