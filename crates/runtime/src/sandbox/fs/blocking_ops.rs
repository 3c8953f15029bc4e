//! Host filesystem work a guest starts that can take long (a sync behind other dirty data, a large
//! write, the listing of a huge directory) runs here: on a blocking thread, never on an async
//! worker, while the call waits for it asynchronously and stops waiting at its deadline or
//! cancellation. At most [`MAX_SLOW_OPS_IN_FLIGHT`] run at once in the process; one the kernel
//! never finishes keeps its thread and its slot, and the calls after it wait for a slot within
//! their own deadlines.

use crate::sandbox::call_state::CallState;
use std::sync::{Arc, LazyLock};

/// Slow operations running at once in the process, each on a blocking thread.
pub const MAX_SLOW_OPS_IN_FLIGHT: usize = 8;

static SLOW_OP_SLOTS: LazyLock<Arc<tokio::sync::Semaphore>> =
    LazyLock::new(|| Arc::new(tokio::sync::Semaphore::new(MAX_SLOW_OPS_IN_FLIGHT)));

/// When a call stops waiting: its deadline, and its cancellation.
pub(crate) type Stop = (std::time::Instant, tokio_util::sync::CancellationToken);

pub(crate) fn stop_of(state: &CallState) -> Stop {
    (state.deadline, state.cancellation())
}

/// Runs `work` on a blocking thread, holding one of the process's slots until it returns (even
/// after the call has gone). The call stops waiting at its deadline or cancellation, as a
/// timeout or a cancellation.
pub(crate) async fn off_thread<T: Send + 'static>(
    (deadline, cancelled): Stop,
    work: impl FnOnce() -> T + Send + 'static,
) -> wasmtime::Result<T> {
    let deadline = tokio::time::Instant::from_std(deadline);
    let run = async {
        let slot = SLOW_OP_SLOTS
            .clone()
            .acquire_owned()
            .await
            .map_err(wasmtime::Error::msg)?;
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            work()
        })
        .await
        .map_err(wasmtime::Error::msg)
    };
    tokio::select! {
        done = run => done,
        () = tokio::time::sleep_until(deadline) => Err(wasmtime::Trap::Interrupt.into()),
        () = cancelled.cancelled() => Err(wasmtime::Trap::Interrupt.into()),
    }
}
