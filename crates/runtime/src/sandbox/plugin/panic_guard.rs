//! A host panic while a sandbox runs (a bug in cordon or in wasmtime, met by one call) ends that
//! call with a result that says so, instead of taking the process, and every other call in it,
//! down. Release builds unwind (`panic = "unwind"` in the workspace profile), so the panic can be
//! caught at the sandbox's edge.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A panic caught while a call ran: its message, as the panic gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct HostPanic(pub String);

/// Polls `future`, turning a panic in any poll into [`HostPanic`]. The future is dropped when
/// its poll panicked (a panicked future must not be polled again).
pub(super) fn catch_panics<F: Future + Unpin>(future: F) -> CatchPanics<F> {
    CatchPanics {
        future: Some(future),
    }
}

pub(super) struct CatchPanics<F> {
    future: Option<F>,
}

impl<F: Future + Unpin> Future for CatchPanics<F> {
    type Output = Result<F::Output, HostPanic>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(future) = self.future.as_mut() else {
            return Poll::Ready(Err(HostPanic("polled after a panic".into())));
        };
        match catch_unwind(AssertUnwindSafe(|| Pin::new(future).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => {
                // What the panicked future holds may panic again as it is dropped: contained too.
                let future = self.future.take();
                let _ = catch_unwind(AssertUnwindSafe(move || drop(future)));
                Poll::Ready(Err(HostPanic(panic_message(payload.as_ref()))))
            }
        }
    }
}

/// The text a panic was raised with, or a stand-in when it carried something else.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_future_becomes_an_error_and_a_calm_one_its_value() {
        let calm = catch_panics(Box::pin(async { 7 })).await;
        assert_eq!(calm, Ok(7));
        let panicking = catch_panics(Box::pin(async {
            tokio::task::yield_now().await;
            panic!("bookkeeping went wrong");
        }))
        .await;
        assert_eq!(panicking, Err(HostPanic("bookkeeping went wrong".into())));
    }

    #[tokio::test]
    async fn a_panic_in_what_the_future_drops_is_contained_too() {
        struct PanicsOnDrop;
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                if !std::thread::panicking() {
                    panic!("drop panicked");
                }
            }
        }
        let guard = PanicsOnDrop;
        let outcome = catch_panics(Box::pin(async move {
            let _held = &guard;
            panic!("first");
        }))
        .await;
        assert_eq!(outcome, Err(HostPanic("first".into())));
    }
}
