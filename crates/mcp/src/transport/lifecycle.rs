//! Where the HTTP server is in its life: serving (ready) or draining (shutting down), and how many
//! MCP requests are in flight, each counted until its response has been sent, so a shutdown can
//! wait for them (and `/metrics` can report them).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::Notify;

/// The server's state. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Lifecycle {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    draining: AtomicBool,
    in_flight: AtomicUsize,
    /// Woken when the last request in flight ends.
    idle: Notify,
}

/// Counts one request as in flight until dropped.
pub(crate) struct InFlight {
    lifecycle: Lifecycle,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let inner = &self.lifecycle.inner;
        if inner.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            inner.idle.notify_waiters();
        }
    }
}

impl Lifecycle {
    /// Ready for calls: serving, and not shutting down. The server only listens once the plugins
    /// are loaded, so whoever can ask is told the truth.
    pub fn is_ready(&self) -> bool {
        !self.is_draining()
    }

    pub fn is_draining(&self) -> bool {
        self.inner.draining.load(Ordering::Acquire)
    }

    /// From now on the server is shutting down: no new requests, not ready.
    pub fn begin_draining(&self) {
        self.inner.draining.store(true, Ordering::Release);
    }

    pub fn requests_in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::Acquire)
    }

    /// Counts a request in flight until the guard is dropped.
    pub fn track(&self) -> InFlight {
        self.inner.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight {
            lifecycle: self.clone(),
        }
    }

    /// Returns once no request is in flight.
    pub async fn idle(&self) {
        loop {
            let notified = self.inner.idle.notified();
            tokio::pin!(notified);
            // Registered before the count is read, so a request ending in between still wakes it.
            notified.as_mut().enable();
            if self.requests_in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn idle_waits_for_the_last_request() {
        let lifecycle = Lifecycle::default();
        lifecycle.idle().await;
        let first = lifecycle.track();
        let second = lifecycle.track();
        assert_eq!(lifecycle.requests_in_flight(), 2);
        let waiting = tokio::spawn({
            let lifecycle = lifecycle.clone();
            async move { lifecycle.idle().await }
        });
        drop(first);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiting.is_finished());
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("idle once the last request ended")
            .unwrap();
        assert!(lifecycle.is_ready());
        lifecycle.begin_draining();
        assert!(!lifecycle.is_ready());
    }
}
