//! Running one export of a plugin in a fresh sandbox: a new `Store` with the call's limits, grants
//! and captured output, instantiated from the plugin's `InstancePre`, stopped by its deadline or
//! its cancellation, and whatever went wrong classified as a failure the pipeline can report.

use super::panic_guard::{HostPanic, catch_panics};
use super::{CallOptions, Plugin};
use crate::capabilities::grant::OpenedDirs;
use crate::capabilities::limits::{DESCRIBE_TIMEOUT, Limits};
use crate::report::budget::ReportBudget;
use crate::sandbox::call_state::{CallSetup, CallState};
use crate::sandbox::capture::OutputCapture;
use crate::sandbox::contract::Instance;
use crate::sandbox::contract::command::CommandInput;
use crate::sandbox::failure::{self, Failure};
use crate::sandbox::fs::open_files::OpenFiles;
use crate::sandbox::http::{GateSetup, HttpGate};
use crate::sandbox::result_memory::LiftBudget;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryInputPipe;

/// Extra wall time the outer async timeout allows beyond the epoch deadline; it only fires when
/// the guest is stuck inside a host call that does not return.
const HOST_CALL_GRACE: Duration = Duration::from_millis(100);

/// What a sandbox gets: the plugin's grants and limits (and a command's arguments and stdin), or
/// (for `describe`) nothing granted and a short time limit.
pub(super) enum Grants {
    Granted { command_input: Option<CommandInput> },
    None,
}

impl Grants {
    pub fn granted() -> Self {
        Self::Granted {
            command_input: None,
        }
    }
}

pub(super) type BoxedCall<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

impl Plugin {
    /// Instantiates a fresh sandbox, runs `f` in it under the limits, and classifies any failure.
    /// Returns `f`'s value and the output budget the guest has left.
    pub(super) async fn in_sandbox<R>(
        &self,
        call_id: &str,
        what: &str,
        grants: Grants,
        options: &CallOptions,
        f: impl for<'a> FnOnce(&'a mut Store<CallState>, &'a Instance) -> BoxedCall<'a, R>,
    ) -> Result<(R, u64), Failure> {
        let is_command = matches!(
            grants,
            Grants::Granted {
                command_input: Some(_)
            }
        );
        // A command's stdout is its result: it may take the output limit, less room for its
        // stderr, and halved, since it is both the text and the structured output.
        let stdout_limit = if is_command {
            self.grant
                .limits
                .output_bytes
                .saturating_sub(self.grant.limits.stdio_bytes)
                / 2
        } else {
            self.grant.limits.stdio_bytes
        };
        let stdout = OutputCapture::new(stdout_limit, self.secrets.clone());
        let stderr = OutputCapture::new(self.grant.limits.stdio_bytes, self.secrets.clone());
        let granted = matches!(grants, Grants::Granted { .. });
        let (limits, wasi, preopens) = match grants {
            Grants::Granted { command_input } => {
                let mut builder = self.grant.wasi_builder(stdout.clone(), stderr.clone());
                if let Some(input) = command_input {
                    builder
                        .args(&input.argv)
                        .stdin(MemoryInputPipe::new(input.stdin));
                    if let Some(working_dir) = self.grant.working_dir() {
                        builder.initial_cwd(working_dir);
                    }
                }
                (
                    self.grant.limits.clone(),
                    builder.build(),
                    self.preopens.clone(),
                )
            }
            Grants::None => {
                let limits = Limits {
                    timeout: DESCRIBE_TIMEOUT,
                    ..self.grant.limits.clone()
                };
                (
                    limits,
                    crate::sandbox::describe_context::describe_wasi_context(
                        stdout.clone(),
                        stderr.clone(),
                    ),
                    OpenedDirs::from([]),
                )
            }
        };
        let limits = &limits;
        // Waiting for a free slot does not count against the call's time limit.
        let _slot = tokio::select! {
            slot = self.sandbox_slots.acquire() => {
                slot.map_err(|_| Failure::trap("the host is shutting down", ""))?
            }
            () = options.cancel.cancelled() => return Err(failure::cancelled(what)),
        };
        let _running = RunningSandbox::start();
        let started = Instant::now();
        let reports = options
            .reports
            .clone()
            .map(|sink| (sink, call_id.to_string()));
        let http_grants = if granted {
            self.grant.http.clone()
        } else {
            Vec::new().into()
        };
        let budget = Arc::new(ReportBudget::default());
        let http_gate = HttpGate::new(GateSetup {
            plugin: self.id.clone(),
            grants: http_grants,
            limits: limits.http.clone(),
            connections: self.connections.clone(),
            reports,
            budget: budget.clone(),
            secrets: self.secrets.clone(),
        });
        let state = CallState::new(CallSetup {
            wasi,
            preopens,
            open_files: OpenFiles::new(self.files.clone()),
            budget,
            http_gate,
            stdout,
            stderr,
            memory_bytes: limits.memory_bytes,
            plugin_id: self.id.clone(),
            call_id: call_id.to_string(),
            settings: self.settings.clone(),
            secrets: self.secrets.clone(),
            config_secrets: if granted {
                self.grant.config_secrets.clone()
            } else {
                Arc::from([])
            },
            reports: options.reports.clone(),
            cancelled: options.cancel.clone(),
            deadline: started + limits.timeout,
            push_budget: limits.output_bytes,
            disk: Arc::new(crate::sandbox::fs::disk_quota::DiskQuota::new(
                limits.disk_write_bytes,
                limits.files_created,
            )),
        });
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        // What the result may take of the host's memory as it is lifted out (wasmtime checks
        // this before it allocates each string, list and record it copies).
        let lift = LiftBudget::reserve(limits.output_bytes);
        store.set_hostcall_fuel(usize::try_from(lift.bytes()).unwrap_or(usize::MAX));
        store.data_mut().lift = Some(lift);
        // The component model's own handles (the async ABI's subtasks, futures, streams and
        // waitable sets, and resource handles in the guest's tables) live in host memory the
        // memory limiter never sees, about 1 KiB each: bounded per call, and to a quarter of the
        // guest's own memory limit.
        let handles = component_handles_for(limits.memory_bytes);
        store.set_max_component_handles(handles);
        if let Some(table) = store.concurrent_resource_table() {
            table.set_max_capacity(handles);
        }
        if self.fuel_metering {
            store
                .set_fuel(limits.fuel.unwrap_or(u64::MAX))
                .map_err(|err| Failure::trap(format!("cannot set fuel: {err}"), ""))?;
        }
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|context| {
            let state = context.data();
            if state.is_cancelled() || Instant::now() >= state.deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });

        let run = catch_panics(Box::pin(async {
            let plugin = self.pre.instantiate(&mut store).await?;
            f(&mut store, &plugin).await
        }));
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(limits.timeout + HOST_CALL_GRACE, run) => outcome.ok(),
            () = options.cancel.cancelled() => None,
        };
        let outcome = match outcome {
            Some(Err(HostPanic(message))) => {
                tracing::error!(plugin = %self.id, call = call_id, what, "the host panicked while running a sandbox: {message}");
                // The store saw the panic: it is dropped where a second panic is contained too.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(store)));
                return Err(failure::host_panic(what, &message));
            }
            Some(Ok(outcome)) => Some(outcome),
            None => None,
        };
        let state = store.data();
        state.report_omitted();
        log_stdio(&self.id, call_id, state);
        tracing::debug!(plugin = %self.id, call = call_id, what, elapsed_ms = started.elapsed().as_millis() as u64, "sandbox finished");
        match outcome {
            Some(Ok(value)) => Ok((value, state.push_budget())),
            Some(Err(err)) => Err(failure::classify(&err, state, limits, what)),
            // Stopped from outside: the time limit ran out, or the call was cancelled.
            None => Err(failure::timed_out(state, limits, what)),
        }
    }
}

fn log_stdio(plugin: &str, call: &str, state: &CallState) {
    for (stream, capture) in [("stdout", &state.stdout), ("stderr", &state.stderr)] {
        let (text, dropped) = capture.contents();
        if !text.is_empty() {
            tracing::debug!(
                plugin,
                call,
                stream,
                dropped_bytes = dropped,
                "{}",
                text.trim_end()
            );
        }
    }
}

/// Sandboxes running now in this process, every registry's together.
static RUNNING_SANDBOXES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How many sandboxes are running now in this process (for the OpenTelemetry gauge).
pub fn sandboxes_running() -> usize {
    RUNNING_SANDBOXES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Counts one running sandbox while it lives.
struct RunningSandbox;

impl RunningSandbox {
    fn start() -> Self {
        RUNNING_SANDBOXES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self
    }
}

impl Drop for RunningSandbox {
    fn drop(&mut self) {
        RUNNING_SANDBOXES.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The component-model handles one call may hold at once: a quarter of its memory limit at
/// [`HOST_BYTES_PER_HANDLE`] each, within [`MIN_COMPONENT_HANDLES`] and
/// [`crate::sandbox::call_state::MAX_RESOURCES_PER_CALL`].
fn component_handles_for(memory_bytes: u64) -> usize {
    let share = memory_bytes / 4 / HOST_BYTES_PER_HANDLE;
    usize::try_from(share).unwrap_or(usize::MAX).clamp(
        MIN_COMPONENT_HANDLES,
        crate::sandbox::call_state::MAX_RESOURCES_PER_CALL,
    )
}

/// What one live component-model handle (a pending subtask, say) costs the host, measured.
const HOST_BYTES_PER_HANDLE: u64 = 1 << 10;

/// The fewest component-model handles any call may hold: more than a language runtime uses.
const MIN_COMPONENT_HANDLES: usize = 1_000;
