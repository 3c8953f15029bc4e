//! The state of one sandboxed call (the wasmtime `Store` data): its WASI context and granted
//! directory handles, memory limiter, captured stdio, deadline, the record of the files it opens,
//! the bound on what it makes the host record, its disk quota, and the host functions the plugin imports (`log`,
//! `progress`, `cancelled`, `settings`).

use crate::capabilities::config_secrets::ConfigSecret;
use crate::capabilities::grant::OpenedDirs;
use crate::capabilities::limits::MAX_TABLE_ELEMENTS;
use crate::report::budget::{
    MAX_LOG_LINE_BYTES, MESSAGE_OVERHEAD_BYTES, RecordKind, ReportBudget, cut, without_controls,
};
use crate::report::secrets::Secrets;
use crate::report::{
    Content, GuestReport, LogLevel, LogLine, OmittedRecords, ProgressUpdate, ReportSink,
};
use crate::sandbox::capture::OutputCapture;
use crate::sandbox::fs::open_files::{OpenFiles, OpenedPaths};
use crate::sandbox::http::HttpGate;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// Bytes one table element is counted as against the memory limit (a reference).
const TABLE_ELEMENT_BYTES: usize = 8;

/// Holds the plugin to its memory limit summed over all its linear memories and tables (a
/// component may declare several of each), denies table growth past [`MAX_TABLE_ELEMENTS`], and
/// remembers that it denied, so a trap that follows is reported as `out_of_memory`.
pub struct MemoryLimiter {
    limit: usize,
    /// Bytes of linear memory and table space granted so far, over every memory and table.
    used: usize,
    /// A memory was refused growth.
    pub denied: bool,
    /// A table was refused growth.
    pub table_denied: bool,
}

impl MemoryLimiter {
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            limit: usize::try_from(limit_bytes).unwrap_or(usize::MAX),
            used: 0,
            denied: false,
            table_denied: false,
        }
    }

    /// Gives back `bytes` taken before (host objects the guest dropped).
    pub(crate) fn give_back(&mut self, bytes: usize) {
        self.used = self.used.saturating_sub(bytes);
    }

    /// Bytes left under the limit.
    pub(crate) fn headroom(&self) -> usize {
        self.limit.saturating_sub(self.used)
    }

    /// Takes `bytes` more from the limit, if they fit.
    pub(crate) fn take(&mut self, bytes: usize) -> bool {
        match self.used.checked_add(bytes) {
            Some(total) if total <= self.limit => {
                self.used = total;
                true
            }
            _ => false,
        }
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed =
            maximum.is_none_or(|max| desired <= max) && self.take(desired.saturating_sub(current));
        if !allowed {
            self.denied = true;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > MAX_TABLE_ELEMENTS || maximum.is_some_and(|max| desired > max) {
            self.table_denied = true;
            return Ok(false);
        }
        let bytes = desired
            .saturating_sub(current)
            .saturating_mul(TABLE_ELEMENT_BYTES);
        if !self.take(bytes) {
            self.denied = true;
            return Ok(false);
        }
        Ok(true)
    }
}

/// Store data of one call.
pub struct CallState {
    wasi: WasiCtx,
    /// The granted directories, as handed to the guest by `get-directories`.
    preopens: OpenedDirs,
    /// The files and directories the guest opened and holds, against its bounds.
    open_files: OpenFiles,
    table: ResourceTable,
    http: WasiHttpCtx,
    http_gate: HttpGate,
    pub limiter: MemoryLimiter,
    pub stderr: OutputCapture,
    pub stdout: OutputCapture,
    plugin_id: Arc<str>,
    call_id: String,
    settings: Arc<str>,
    /// The host's secrets: a log line is masked before it is escaped or cut.
    secrets: Secrets,
    config_secrets: Arc<[ConfigSecret]>,
    reports: Option<ReportSink>,
    /// Where the guest's file opens are recorded; only when someone listens to reports.
    opened_paths: Option<OpenedPaths>,
    /// What this sandbox may still make the host record.
    budget: Arc<ReportBudget>,
    /// The host objects the guest holds that are charged to its memory limit.
    pub(crate) host_objects: crate::sandbox::host_objects::HostObjects,
    cancelled: CancellationToken,
    /// When the epoch callback stops the guest.
    pub deadline: Instant,
    /// Bytes the guest may still push through `log` and `progress`.
    push_budget: u64,
    pub push_dropped: bool,
    /// What the call may still write and create through its read-write grants.
    disk: Arc<crate::sandbox::fs::disk_quota::DiskQuota>,
    /// The host memory its result may take while lifted and converted (set by the runner).
    pub lift: Option<crate::sandbox::result_memory::LiftBudget>,
}

/// Everything needed to build a [`CallState`].
pub struct CallSetup {
    pub wasi: WasiCtx,
    pub preopens: OpenedDirs,
    pub open_files: OpenFiles,
    pub budget: Arc<ReportBudget>,
    pub http_gate: HttpGate,
    pub stdout: OutputCapture,
    pub stderr: OutputCapture,
    pub memory_bytes: u64,
    pub plugin_id: Arc<str>,
    pub call_id: String,
    pub settings: Arc<str>,
    pub secrets: Secrets,
    /// What `wasi:config/store` gives beside the settings (none for `describe`).
    pub config_secrets: Arc<[ConfigSecret]>,
    pub reports: Option<ReportSink>,
    pub cancelled: CancellationToken,
    pub deadline: Instant,
    pub push_budget: u64,
    pub disk: Arc<crate::sandbox::fs::disk_quota::DiskQuota>,
}

impl CallState {
    pub fn new(setup: CallSetup) -> Self {
        let opened_paths = setup
            .reports
            .clone()
            .map(|sink| OpenedPaths::new(sink, setup.call_id.clone(), setup.budget.clone()));
        Self {
            wasi: setup.wasi,
            preopens: setup.preopens,
            open_files: setup.open_files,
            budget: setup.budget,
            host_objects: Default::default(),
            table: bounded_table(),
            http: {
                let mut http = WasiHttpCtx::new();
                http.set_field_size_limit(MAX_HEADER_BYTES);
                http
            },
            http_gate: setup.http_gate,
            limiter: MemoryLimiter::new(setup.memory_bytes),
            stdout: setup.stdout,
            stderr: setup.stderr,
            plugin_id: setup.plugin_id,
            call_id: setup.call_id,
            settings: setup.settings,
            secrets: setup.secrets,
            config_secrets: setup.config_secrets,
            opened_paths,
            reports: setup.reports,
            cancelled: setup.cancelled,
            deadline: setup.deadline,
            push_budget: setup.push_budget,
            push_dropped: false,
            disk: setup.disk,
            lift: None,
        }
    }

    /// The call's disk quota (fs/disk_quota.rs).
    pub(crate) fn disk(&self) -> &Arc<crate::sandbox::fs::disk_quota::DiskQuota> {
        &self.disk
    }

    /// What cancels the call (for host work that waits off the async workers).
    pub(crate) fn cancellation(&self) -> CancellationToken {
        self.cancelled.clone()
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.is_cancelled()
    }

    /// Takes `bytes` from the push budget; false (and remembered) when the budget is spent.
    fn spend(&mut self, bytes: usize) -> bool {
        let bytes = bytes as u64;
        if bytes > self.push_budget {
            if !self.push_dropped {
                tracing::warn!(plugin = %self.plugin_id, call = %self.call_id, "output budget spent; dropping further log and progress messages");
            }
            self.push_dropped = true;
            return false;
        }
        self.push_budget -= bytes;
        true
    }

    /// The record of the guest's file opens, when they are being recorded.
    pub(crate) fn opened_paths(&mut self) -> Option<&mut OpenedPaths> {
        self.opened_paths.as_mut()
    }

    /// Takes `bytes` the host holds for the guest from its memory limit, if they fit.
    pub(crate) fn take_host_bytes(&mut self, bytes: u64) -> Result<(), ()> {
        match self
            .limiter
            .take(usize::try_from(bytes).unwrap_or(usize::MAX))
        {
            true => Ok(()),
            false => Err(()),
        }
    }

    /// Gives back host bytes of objects the guest no longer holds.
    pub(crate) fn give_back_host_bytes(&mut self, bytes: u64) {
        self.limiter
            .give_back(usize::try_from(bytes).unwrap_or(usize::MAX));
    }

    /// The files the guest holds open, for `open-at` and descriptor drops.
    pub(crate) fn open_files(&mut self) -> &mut OpenFiles {
        &mut self.open_files
    }

    /// A warning in the host's log about this call, while it has warnings left.
    pub(crate) fn warn_limited(&self, message: &str) {
        if self.budget.warn() {
            tracing::warn!(plugin = %self.plugin_id, call = %self.call_id, "{message}");
        }
    }

    /// Remembers that the host refused the guest something, if it is the first refusal.
    pub(crate) fn refused(&self, what: impl FnOnce() -> String) {
        self.budget.refused(what);
    }

    /// The first thing the host refused this call (see [`ReportBudget::refused`]).
    pub(crate) fn first_refusal(&self) -> Option<String> {
        self.budget.first_refusal().map(str::to_string)
    }

    /// Remembers an open of `path`, outside every grant (see [`ReportBudget::refused_outside`]).
    pub(crate) fn refused_outside(&self, path: &str, what: impl FnOnce() -> String) {
        self.budget.refused_outside(path, what);
    }

    /// The refusal a failure saying `message` is about: the first thing the host refused the call
    /// (a request, a write, an escape), or else its first open outside the grants when the
    /// message is about that (runtimes probe such paths on their own, so one merely made is not
    /// enough): it names that path, or it is a bare "not found" naming no path at all (as
    /// Rust's `std::io::Error` is).
    pub(crate) fn refusal_behind(&self, message: &str) -> Option<String> {
        self.first_refusal().or_else(|| {
            self.budget
                .first_outside()
                .filter(|(path, _)| names_path(message, path) || is_bare_not_found(message))
                .map(|(_, what)| what.to_string())
        })
    }

    /// The granted directory handles, for `get-directories`.
    pub(crate) fn preopens(&self) -> &OpenedDirs {
        &self.preopens
    }

    /// The resource table the guest's handles live in.
    pub(crate) fn table(&mut self) -> &mut ResourceTable {
        &mut self.table
    }

    /// Reports what was past the record bounds, once, when the sandbox is done.
    pub fn report_omitted(&self) {
        let omitted = self.budget.omitted();
        let warnings = self.budget.warnings_dropped();
        if warnings > 0 {
            tracing::warn!(plugin = %self.plugin_id, call = %self.call_id, "{warnings} more warnings about this call were not logged");
        }
        if let (true, Some(sink)) = (omitted.any(), &self.reports) {
            sink(GuestReport::Omitted(OmittedRecords {
                call_id: self.call_id.clone(),
                omitted,
            }));
        }
    }

    /// Bytes left in the push budget, for checking the final result.
    pub fn push_budget(&self) -> u64 {
        self.push_budget
    }
}

/// Host resources (streams, header maps, requests, descriptors) one call may hold at once. Far above
/// what a real tool needs; a guest that floods handles traps instead of growing host memory. With
/// header maps of at most [`MAX_HEADER_BYTES`] (and request paths of at most 64 KiB, the most a URI
/// may have), what one call can park in host memory this way stays in the hundreds of MiB.
pub const MAX_RESOURCES_PER_CALL: usize = 10_000;

/// The in-memory size one header map (`wasi:http` fields) may reach; real headers fit in 8 KiB.
pub const MAX_HEADER_BYTES: usize = 32 << 10;

fn bounded_table() -> ResourceTable {
    let mut table = ResourceTable::new();
    table.set_max_capacity(MAX_RESOURCES_PER_CALL);
    table
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.http_gate,
        }
    }
}

/// The contract's host functions, whichever version the plugin speaks (each version's module
/// adapts its generated trait to these).
impl CallState {
    /// `log`: a line to the host's log and the call's reports, within the output limit.
    pub(crate) fn log_line(&mut self, level: LogLevel, message: String) {
        if !self.spend(message.len() + MESSAGE_OVERHEAD_BYTES)
            || !self.budget.record(RecordKind::Log)
        {
            return;
        }
        // Masked first: escaping or cutting a secret would leave what the mask no longer knows.
        let message = self.secrets.scrub(&message);
        let message = cut(&without_controls(&message), MAX_LOG_LINE_BYTES);
        let (plugin, call) = (&*self.plugin_id, self.call_id.as_str());
        match level {
            LogLevel::Trace => tracing::trace!(plugin, call, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, call, "{message}"),
            LogLevel::Info => tracing::info!(plugin, call, "{message}"),
            LogLevel::Warn => tracing::warn!(plugin, call, "{message}"),
            LogLevel::Error => tracing::error!(plugin, call, "{message}"),
        }
        if let Some(sink) = &self.reports {
            sink(GuestReport::Log(LogLine {
                call_id: self.call_id.clone(),
                level,
                message,
            }));
        }
    }

    /// `progress`: a partial output to the call's reports, within the output limit.
    pub(crate) fn report_progress(&mut self, content: Vec<Content>, details: &str) {
        let size = content.iter().map(Content::size).sum::<usize>() + details.len();
        if !self.spend(size + MESSAGE_OVERHEAD_BYTES) || !self.budget.record(RecordKind::Progress) {
            return;
        }
        tracing::debug!(plugin = %self.plugin_id, call = %self.call_id, bytes = size, "progress");
        if let Some(sink) = &self.reports {
            sink(GuestReport::Progress(ProgressUpdate {
                call_id: self.call_id.clone(),
                content,
                details: crate::sandbox::contract::content::details(details),
            }));
        }
    }

    /// `settings`: the plugin's settings table as JSON text.
    pub(crate) fn settings_json(&self) -> String {
        self.settings_text().to_string()
    }

    /// The plugin's settings table as JSON text, borrowed.
    pub(crate) fn settings_text(&self) -> &str {
        &self.settings
    }

    /// `text` with the host's secrets masked, then cut to `max` bytes: what the host records of a
    /// guest's paths (a cut first could leave part of a secret the mask no longer recognises).
    pub(crate) fn masked_cut(&self, text: &str, max: usize) -> String {
        crate::report::budget::masked_cut(text, max, &self.secrets)
    }

    /// The plugin's secret config keys (`[plugins.ID] secrets`), for `wasi:config/store`.
    pub(crate) fn config_secrets(&self) -> &[ConfigSecret] {
        &self.config_secrets
    }
}

/// Whether `message` names `path` as a whole path (not as the end of a longer one: `/notes.txt`
/// is not named by `/data/notes.txt`).
fn names_path(message: &str, path: &str) -> bool {
    let in_path = |c: char| c.is_alphanumeric() || "/._-~".contains(c);
    message.match_indices(path).any(|(at, _)| {
        let before = message[..at].chars().next_back();
        let after = message[at + path.len()..].chars().next();
        !before.is_some_and(in_path)
            && !after.is_some_and(|c| c.is_alphanumeric() || "/_-".contains(c))
    })
}

/// Whether `message` is WASI's "no such file" as an OS error, naming no path.
fn is_bare_not_found(message: &str) -> bool {
    message.contains("(os error 44)") && !message.contains('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_about_a_path_it_names_whole_or_a_bare_not_found() {
        assert!(names_path("cannot read /etc/x: No such file", "/etc/x"));
        assert!(names_path(
            "[Errno 44] No such file or directory: '/etc/x'",
            "/etc/x"
        ));
        assert!(!names_path(
            "invalid JSON in /data/notes.txt at byte 12",
            "/notes.txt"
        ));
        assert!(!names_path("cannot read /etc/xy", "/etc/x"));
        assert!(is_bare_not_found("No such file or directory (os error 44)"));
        assert!(!is_bare_not_found(
            "/data/a: No such file or directory (os error 44)"
        ));
        assert!(!is_bare_not_found("ValueError: bad input"));
    }
}
