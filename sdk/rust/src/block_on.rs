//! Async code inside a tool or hook: [`block_on`] runs a future to its end within the call,
//! sleeping in `wasi:io/poll` while it waits, so a tool may `await` timers ([`sleep`]) and any
//! WASI pollable ([`ready`]), and join several of them (with `futures`' combinators, say).
//!
//! The contract's exports stay synchronous: a plugin built with this loads on the host's faster
//! synchronous path (wit-bindgen's own `block_on` would pull in the component model's async ABI).
//! There is no reactor here but WASI's: a future waiting on anything else (a tokio timer, a
//! channel no one writes) can never be woken, and [`block_on`] says so instead of hanging.

use std::cell::RefCell;
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;
use wasip2::io::poll::Pollable;

thread_local! {
    /// The pollables the future being driven waits on, registered by [`ready`] as it returns
    /// `Pending`; taken by [`block_on`] before it blocks.
    static WAITING_ON: RefCell<Vec<Rc<Pollable>>> = const { RefCell::new(Vec::new()) };
}

/// Notes that the future asked to be polled again.
struct WokenFlag(AtomicBool);

impl Wake for WokenFlag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Runs `future` to completion and returns its output: polls it, and while it waits on WASI
/// pollables, blocks in `wasi:io/poll` until one is ready (no busy loop, no fuel spent waiting).
///
/// # Panics
/// When the future is pending with no pollable registered and no wake-up asked for: nothing
/// could ever finish it (it waits on a runtime other than WASI's, or on itself). The panic ends
/// the call as a trap whose message says so, rather than letting it sit out its time limit.
pub fn block_on<F: Future>(future: F) -> F::Output {
    // A `block_on` inside another (a sync helper called from an async body) leaves the outer
    // one's pollables as it found them.
    let outer = WAITING_ON.with(|waiting| std::mem::take(&mut *waiting.borrow_mut()));
    let output = drive(future);
    WAITING_ON.with(|waiting| *waiting.borrow_mut() = outer);
    output
}

/// [`block_on`]'s loop, on a list of waits of its own.
fn drive<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let woken = Arc::new(WokenFlag(AtomicBool::new(false)));
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    loop {
        woken.0.store(false, Ordering::Release);
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            WAITING_ON.with(|waiting| waiting.borrow_mut().clear());
            return value;
        }
        let waiting = WAITING_ON.with(|waiting| std::mem::take(&mut *waiting.borrow_mut()));
        if woken.0.load(Ordering::Acquire) {
            // It asked to be polled again at once (a yield): no blocking.
            continue;
        }
        if !waiting.is_empty() {
            let pollables: Vec<&Pollable> = waiting.iter().map(|pollable| &**pollable).collect();
            wasip2::io::poll::poll(&pollables);
        } else {
            panic!(
                "cordon_sdk::block_on: the future waits for something that can never happen (it is pending, waits on no WASI pollable and asked for no wake-up; only WASI's own waits, such as cordon_sdk::sleep and cordon_sdk::ready, can finish here)"
            );
        }
    }
}

/// Waits until `pollable` is ready, letting other futures joined with this one run meanwhile.
/// Any WASI 0.2 wait becomes awaitable this way: a clock's `subscribe`, an HTTP response's, a
/// stream's.
pub async fn ready(pollable: Pollable) {
    let pollable = Rc::new(pollable);
    std::future::poll_fn(|_cx| {
        if pollable.ready() {
            Poll::Ready(())
        } else {
            WAITING_ON.with(|waiting| waiting.borrow_mut().push(pollable.clone()));
            Poll::Pending
        }
    })
    .await
}

/// Waits `duration` on the monotonic clock.
pub async fn sleep(duration: Duration) {
    let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
    ready(wasip2::clocks::monotonic_clock::subscribe_duration(nanos)).await
}
