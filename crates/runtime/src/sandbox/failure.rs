//! Turning everything that can go wrong inside a sandbox into a classified [`Failure`] whose
//! message tells the model what happened and what it could do, with no host backtraces.

use crate::capabilities::limits::{Limits, MAX_TABLE_ELEMENTS};
use crate::report::ErrorKind;
use crate::report::text_cut::{CutMark, cut_chars};
use crate::sandbox::call_state::CallState;
use serde_json::{Value, json};
use wasmtime::Trap;

/// How many lines of the guest's stderr a trap message quotes.
const STDERR_TAIL_LINES: usize = 6;

/// A call that did not produce output.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
    pub details: Value,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>, details: Value) -> Self {
        Self {
            kind,
            message: message.into(),
            details,
        }
    }

    pub fn trap(reason: impl Into<String>, stderr: &str) -> Self {
        let reason = reason.into();
        let mut message = format!("The tool crashed ({reason}).");
        if !stderr.is_empty() {
            message.push_str(&format!(" Its last stderr output:\n{stderr}"));
        }
        message.push_str("\nThis is a bug in the tool, not in your request; retrying the same call will likely crash again.");
        Self::new(
            ErrorKind::Trap,
            message,
            json!({ "trap": reason, "stderr": stderr }),
        )
    }
}

/// An async guest whose every task waits on something nothing will ever finish (a future it never
/// writes, its own `pending()`): wasmtime stops it at once instead of letting it sit out its time
/// limit. A bug in the tool, so a trap; the message says what kind.
fn waits_forever(state: &CallState, what: &str) -> Failure {
    flagged_trap(
        format!(
            "`{what}` waits for something that can never happen: every one of its tasks is waiting, on a future or stream no one will ever write, so it was stopped"
        ),
        state,
        "deadlock",
    )
}

/// A trap whose details say which kind it is (`details.FLAG` is true), with the guest's last
/// stderr lines.
fn flagged_trap(reason: String, state: &CallState, flag: &str) -> Failure {
    let mut failure = Failure::trap(reason, &state.stderr.tail(STDERR_TAIL_LINES));
    failure.details[flag] = json!(true);
    failure
}

/// Classifies an error from instantiating or calling a guest.
pub fn classify(err: &wasmtime::Error, state: &CallState, limits: &Limits, what: &str) -> Failure {
    if let Some(exit) = err.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return Failure::trap(
            format!(
                "the plugin exited with status {} instead of returning a result",
                exit.0
            ),
            &state.stderr.tail(STDERR_TAIL_LINES),
        );
    }
    if let Some(limit) = state.disk().exceeded() {
        return out_of_disk(limit, what);
    }
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            let fuel = limits.fuel.unwrap_or(0);
            Failure::new(
                ErrorKind::OutOfFuel,
                format!(
                    "`{what}` used up its fuel budget ({fuel} units of CPU work) and was stopped. Ask for less work per call (smaller inputs, fewer items), or ask the operator to raise `limits.fuel`."
                ),
                json!({ "fuel": fuel }),
            )
        }
        Some(Trap::Interrupt) if state.is_cancelled() => cancelled(what),
        Some(Trap::Interrupt) => timed_out(state, limits, what),
        _ if state.limiter.denied => out_of_memory(limits, what),
        _ if state.limiter.table_denied => out_of_table_space(what),
        Some(Trap::AsyncDeadlock) => waits_forever(state, what),
        Some(trap) => trap_where(err, trap, state),
        None if is_lift_budget_exhausted(err) => over_lift_budget(state, what),
        None if is_out_of_handles(err) => out_of_handles(err, state, what),
        None => {
            let reason = err
                .chain()
                .last()
                .map(ToString::to_string)
                .unwrap_or_else(|| err.to_string());
            Failure::trap(reason, &state.stderr.tail(STDERR_TAIL_LINES))
        }
    }
}

/// A trap of the guest's own, with the functions it was in (innermost first) in
/// `details.wasm_frames` when the component has a name section. A guest that printed nothing
/// before it stopped (a component built with stubbed-out imports stops so, in the stub) gets the
/// innermost named function in the message too, since nothing else says where it stopped.
fn trap_where(err: &wasmtime::Error, trap: &Trap, state: &CallState) -> Failure {
    let stderr = state.stderr.tail(STDERR_TAIL_LINES);
    let frames = guest_frames(err);
    let mut reason = trap.to_string();
    if stderr.is_empty()
        && let Some(innermost) = frames.first()
    {
        reason.push_str(&format!(" in `{innermost}`"));
    }
    let mut failure = Failure::trap(reason, &stderr);
    if !frames.is_empty() {
        failure.details["wasm_frames"] = json!(frames);
    }
    failure
}

/// The most frames a trap's details name, and the longest name kept of each.
const MAX_FRAMES: usize = 8;
const MAX_FRAME_NAME_CHARS: usize = 120;

/// The named guest functions the trap happened in, innermost first: demangled when they are
/// Rust symbols, on one line and cut (a name section is the guest's own text).
fn guest_frames(err: &wasmtime::Error) -> Vec<String> {
    let Some(backtrace) = err.downcast_ref::<wasmtime::WasmBacktrace>() else {
        return Vec::new();
    };
    backtrace
        .frames()
        .iter()
        .filter_map(|frame| frame.func_name())
        .take(MAX_FRAMES)
        .map(|name| {
            let name = match rustc_demangle::try_demangle(name) {
                Ok(demangled) => format!("{demangled:#}"),
                Err(_) => name.to_string(),
            };
            let name = crate::report::terminal_text::one_line(&name);
            cut_chars(&name, MAX_FRAME_NAME_CHARS, CutMark::Ellipsis).into_owned()
        })
        .collect()
}

/// Whether the call held as many handles as it may: resources in its WASI table, or the component
/// model's own (pending async calls, futures, streams, waitable sets). The messages are wasmtime's.
fn is_out_of_handles(err: &wasmtime::Error) -> bool {
    err.chain().any(|cause| {
        let text = cause.to_string();
        text.contains("resource table has no free keys")
            || text.contains("store handle limit exceeded")
    })
}

/// A call that held more handles at once than it may: a bug (or an attack) in the tool, so a
/// trap, saying which limit and why it exists.
fn out_of_handles(err: &wasmtime::Error, state: &CallState, what: &str) -> Failure {
    let reason = err
        .chain()
        .last()
        .map(ToString::to_string)
        .unwrap_or_else(|| err.to_string());
    flagged_trap(
        format!(
            "`{what}` held more handles at once than one call may: resources, pending async calls, futures or streams, each host memory outside its own ({reason}); the handle limit grows with `limits.memory`"
        ),
        state,
        "handle_limit",
    )
}

/// Whether wasmtime refused to copy more out of the guest than the call's lift budget (its
/// hostcall fuel). wasmtime's error type for it is private; its message is stable.
fn is_lift_budget_exhausted(err: &wasmtime::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .to_string()
            .contains("fuel allocated for hostcalls has been exhausted")
    })
}

/// The result (or one transfer to the host) was larger than the call's lift budget.
pub fn over_lift_budget(state: &CallState, what: &str) -> Failure {
    let (bytes, shared) = state
        .lift
        .as_ref()
        .map_or((0, false), |lift| (lift.bytes(), lift.was_shared()));
    Failure::new(
        ErrorKind::ToolError,
        crate::sandbox::result_memory::exceeded_message(what, bytes, shared),
        json!({ "limit": "result_memory", "limitBytes": bytes }),
    )
}

/// The call ran past its wall-time limit (or was cancelled while stuck in the host).
pub fn timed_out(state: &CallState, limits: &Limits, what: &str) -> Failure {
    if state.is_cancelled() {
        return cancelled(what);
    }
    let limit_ms = limits.timeout.as_millis() as u64;
    Failure::new(
        ErrorKind::Timeout,
        format!(
            "`{what}` did not finish within its time limit of {} and was stopped. Try a smaller request, or ask the operator to raise `limits.timeout`.",
            human_duration(limit_ms)
        ),
        json!({ "limitMs": limit_ms }),
    )
}

/// The host itself panicked while `what` ran (a bug in cordon or in wasmtime that this call met):
/// the call is stopped and the host carries on. Reported as a trap, flagged `host_panic`, since
/// the call cannot be retried to a different end.
pub fn host_panic(what: &str, message: &str) -> Failure {
    let reason = format!(
        "the host met an internal error while running `{what}` and stopped the call: {message}"
    );
    let mut failure = Failure::new(
        ErrorKind::Trap,
        format!(
            "`{what}` could not be completed: {reason}. This is a bug in cordon, not in your request; the host carries on, but the same call will likely fail the same way."
        ),
        json!({ "trap": reason, "stderr": "" }),
    );
    failure.details["host_panic"] = json!(true);
    failure
}

pub fn cancelled(what: &str) -> Failure {
    Failure::new(
        ErrorKind::Cancelled,
        format!("`{what}` was cancelled before it finished."),
        json!({}),
    )
}

fn out_of_memory(limits: &Limits, what: &str) -> Failure {
    Failure::new(
        ErrorKind::OutOfMemory,
        format!(
            "`{what}` ran out of memory: it tried to grow past its limit of {} and was stopped. Ask for less data per call, or ask the operator to raise `limits.memory`.",
            human_bytes(limits.memory_bytes)
        ),
        json!({ "limitBytes": limits.memory_bytes }),
    )
}

fn out_of_disk(limit: crate::sandbox::fs::disk_quota::DiskLimit, what: &str) -> Failure {
    use crate::sandbox::fs::disk_quota::DiskLimit;
    let (bound, key, details) = match limit {
        DiskLimit::Bytes { limit } => (
            format!(
                "write more than {} to its granted directories",
                human_bytes(limit)
            ),
            "limits.disk_write",
            json!({ "limitBytes": limit }),
        ),
        DiskLimit::Entries { limit } => (
            format!("create more than {limit} files, directories and links"),
            "limits.files_created",
            json!({ "limitEntries": limit }),
        ),
    };
    Failure::new(
        ErrorKind::OutOfDisk,
        format!(
            "`{what}` tried to {bound} in one call and was stopped; what it wrote before stays. Ask for less output per call, or ask the operator to raise `{key}`."
        ),
        details,
    )
}

fn out_of_table_space(what: &str) -> Failure {
    Failure::new(
        ErrorKind::OutOfMemory,
        format!(
            "`{what}` ran out of memory: it tried to grow a table past {MAX_TABLE_ELEMENTS} elements, the most the host allows, and was stopped. Ask for less work per call; this limit is fixed in the host."
        ),
        json!({ "limitTableElements": MAX_TABLE_ELEMENTS }),
    )
}

pub fn human_duration(millis: u64) -> String {
    if millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else {
        format!("{millis} ms")
    }
}

pub fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}
