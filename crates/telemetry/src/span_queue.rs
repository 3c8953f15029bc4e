//! The span processor between cordon's calls and the exporter: a span that ends goes into a
//! bounded queue without waiting (a full queue drops it and counts it), and a thread of its own
//! takes batches off the queue and exports them. So a slow or dead collector costs that thread
//! its time and the queue its spans, never a call its latency. Shutdown flushes what is queued
//! within a deadline, then gives up. Each span is masked and bounded ([`ExportGuard`]) before it
//! is queued, so the queue's 2,048 spans hold kilobytes each at most.

use crate::export_guard::ExportGuard;
use opentelemetry::Context;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Spans waiting for export at most; past this a span that ends is dropped.
pub const QUEUE_SPANS: usize = 2_048;
/// Spans per export at most.
const BATCH_SPANS: usize = 512;
/// How long a span may wait in the queue before its batch is sent.
const SEND_EVERY: Duration = Duration::from_millis(500);

enum Message {
    Span(Box<SpanData>),
    /// Export everything queued, then answer.
    Flush(SyncSender<()>),
    /// Export everything queued, answer, and end.
    Shutdown(SyncSender<()>),
}

/// Counts of what the queue did, shared with whoever reports them (`/metrics`).
#[derive(Debug, Default)]
pub struct QueueCounts {
    pub dropped: AtomicU64,
    pub exported: AtomicU64,
    pub failed_exports: AtomicU64,
}

#[derive(Debug)]
pub struct SpanQueue {
    sender: SyncSender<Message>,
    counts: Arc<QueueCounts>,
    /// Set once shut down: later spans are dropped (and counted).
    closed: Mutex<bool>,
    guard: ExportGuard,
}

impl SpanQueue {
    /// Starts the export thread over `exporter`.
    pub fn start<E: SpanExporter + 'static>(
        exporter: E,
        counts: Arc<QueueCounts>,
        guard: ExportGuard,
    ) -> Self {
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUE_SPANS);
        let thread_counts = counts.clone();
        let started = std::thread::Builder::new()
            .name("cordon-otel-spans".into())
            .spawn(move || export_loop(exporter, receiver, &thread_counts));
        if let Err(err) = started {
            tracing::warn!("cannot start the span export thread ({err}); spans will be dropped");
        }
        Self {
            sender,
            counts,
            closed: Mutex::new(false),
            guard,
        }
    }

    fn wait_for(
        &self,
        make: impl FnOnce(SyncSender<()>) -> Message,
        within: Duration,
    ) -> OTelSdkResult {
        let (done, answered) = std::sync::mpsc::sync_channel(1);
        // Never waits for room: a queue still full behind a collector that does not answer is
        // given up on like a flush past its deadline.
        match self.sender.try_send(make(done)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => return Err(OTelSdkError::Timeout(within)),
            Err(TrySendError::Disconnected(_)) => return Err(OTelSdkError::AlreadyShutdown),
        }
        answered
            .recv_timeout(within)
            .map_err(|_| OTelSdkError::Timeout(within))
    }
}

impl SpanProcessor for SpanQueue {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, mut span: SpanData) {
        self.guard.span(&mut span);
        match self.sender.try_send(Message::Span(Box::new(span))) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.wait_for(Message::Flush, Duration::from_secs(5))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
        if *closed {
            return Err(OTelSdkError::AlreadyShutdown);
        }
        *closed = true;
        self.wait_for(Message::Shutdown, timeout)
    }
}

fn export_loop<E: SpanExporter>(mut exporter: E, queue: Receiver<Message>, counts: &QueueCounts) {
    let mut batch: Vec<SpanData> = Vec::with_capacity(BATCH_SPANS);
    let mut oldest: Option<Instant> = None;
    loop {
        let wait = oldest.map_or(SEND_EVERY, |since| {
            SEND_EVERY.saturating_sub(since.elapsed())
        });
        let message = match queue.recv_timeout(wait) {
            Ok(message) => Some(message),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                send(&mut exporter, &mut batch, counts);
                return;
            }
        };
        match message {
            Some(Message::Span(span)) => {
                oldest.get_or_insert_with(Instant::now);
                batch.push(*span);
                if batch.len() >= BATCH_SPANS {
                    send(&mut exporter, &mut batch, counts);
                    oldest = None;
                }
            }
            Some(Message::Flush(done)) => {
                drain(&queue, &mut batch, &mut exporter, counts);
                oldest = None;
                let _ = done.send(());
            }
            Some(Message::Shutdown(done)) => {
                drain(&queue, &mut batch, &mut exporter, counts);
                let _ = exporter.shutdown();
                let _ = done.send(());
                return;
            }
            None => {
                send(&mut exporter, &mut batch, counts);
                oldest = None;
            }
        }
    }
}

/// Exports what is queued now, in batches.
fn drain<E: SpanExporter>(
    queue: &Receiver<Message>,
    batch: &mut Vec<SpanData>,
    exporter: &mut E,
    counts: &QueueCounts,
) {
    while let Ok(Message::Span(span)) = queue.try_recv() {
        batch.push(*span);
        if batch.len() >= BATCH_SPANS {
            send(exporter, batch, counts);
        }
    }
    send(exporter, batch, counts);
}

fn send<E: SpanExporter>(exporter: &mut E, batch: &mut Vec<SpanData>, counts: &QueueCounts) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    let size = spans.len() as u64;
    match futures_executor::block_on(exporter.export(spans)) {
        Ok(()) => {
            counts.exported.fetch_add(size, Ordering::Relaxed);
        }
        Err(err) => {
            counts.failed_exports.fetch_add(1, Ordering::Relaxed);
            counts.dropped.fetch_add(size, Ordering::Relaxed);
            tracing::debug!("a span export failed: {err}");
        }
    }
}
