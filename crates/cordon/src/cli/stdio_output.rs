//! The binary's own stdout and stderr, made so the host never blocks or dies on its output.
//!
//! - fds 0, 1 and 2 that were closed when cordon started are opened on `/dev/null` first, so no
//!   file, socket or directory the host opens later can take their numbers (and receive its logs).
//! - stderr (logs, events, the live view) goes through a bounded queue to a writer thread: when
//!   the queue is full because nobody drains the pipe, lines are dropped and counted, never waited
//!   for; a write error (the reader went away) stops the writer, and later lines are dropped.
//! - neither ever shows a configured secret (cordon_runtime::report::secrets scrubs every write).
//! - stdout (results, answers) is written directly; a reader that went away (`EPIPE`) is not an
//!   error, so `cordon call ... | head -1` ends quietly instead of panicking.

use std::io::{ErrorKind, Write};
use std::os::fd::{AsRawFd, IntoRawFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::time::Duration;

/// Lines waiting for the stderr writer at most.
const QUEUED_LINES: usize = 4_096;
/// Bytes waiting for the stderr writer at most.
const QUEUED_BYTES: usize = 4 << 20;

/// Opens `/dev/null` on whichever of fds 0, 1 and 2 are closed.
pub fn ensure_standard_fds() {
    for _ in 0..3 {
        let Ok(null) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null")
        else {
            return;
        };
        if null.as_raw_fd() > 2 {
            return; // every standard fd is open; this one closes when dropped
        }
        // It took a standard fd's number: keep it open there.
        let _ = null.into_raw_fd();
    }
}

enum Message {
    Bytes(Vec<u8>),
    Flush(SyncSender<()>),
}

struct Queue {
    sender: SyncSender<Message>,
    queued_bytes: AtomicUsize,
    dropped: AtomicU64,
    broken: AtomicBool,
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<Queue> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (sender, receiver) = sync_channel(QUEUED_LINES);
        std::thread::Builder::new()
            .name("cordon-stderr".into())
            .spawn(move || write_stderr(receiver))
            .expect("spawning the stderr writer thread");
        Queue {
            sender,
            queued_bytes: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            broken: AtomicBool::new(false),
        }
    })
}

fn write_stderr(receiver: Receiver<Message>) {
    let mut stderr = std::io::stderr();
    while let Ok(message) = receiver.recv() {
        match message {
            Message::Bytes(bytes) => {
                queue()
                    .queued_bytes
                    .fetch_sub(bytes.len(), Ordering::Relaxed);
                if queue().broken.load(Ordering::Relaxed) {
                    queue().dropped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                if stderr
                    .write_all(&bytes)
                    .and_then(|()| stderr.flush())
                    .is_err()
                {
                    queue().broken.store(true, Ordering::Relaxed);
                    queue().dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            Message::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// Queues `bytes` for stderr without waiting; dropped (and counted) when the queue is full.
pub fn stderr_write(bytes: &[u8]) {
    let bytes = &*crate::cli::host_secrets::host_secrets().scrub_bytes(bytes);
    let queue = queue();
    if queue.broken.load(Ordering::Relaxed)
        || queue.queued_bytes.load(Ordering::Relaxed) + bytes.len() > QUEUED_BYTES
    {
        queue.dropped.fetch_add(1, Ordering::Relaxed);
        return;
    }
    queue.queued_bytes.fetch_add(bytes.len(), Ordering::Relaxed);
    match queue.sender.try_send(Message::Bytes(bytes.to_vec())) {
        Ok(()) => {}
        Err(
            TrySendError::Full(Message::Bytes(bytes))
            | TrySendError::Disconnected(Message::Bytes(bytes)),
        ) => {
            queue.queued_bytes.fetch_sub(bytes.len(), Ordering::Relaxed);
            queue.dropped.fetch_add(1, Ordering::Relaxed);
        }
        Err(_) => {}
    }
}

/// Queues one line (a newline is added) for stderr.
pub fn stderr_line(text: &str) {
    let mut line = Vec::with_capacity(text.len() + 1);
    line.extend_from_slice(text.as_bytes());
    line.push(b'\n');
    stderr_write(&line);
}

/// Waits up to `timeout` for the queued stderr output to be written, first noting how many lines
/// were dropped (if any). Called once, before the process exits.
pub fn finish_stderr(timeout: Duration) {
    let queue = queue();
    let dropped = queue.dropped.load(Ordering::Relaxed);
    if dropped > 0 && !queue.broken.load(Ordering::Relaxed) {
        stderr_line(&format!(
            "cordon: {dropped} writes to stderr were dropped because nobody was reading it"
        ));
    }
    let (done, finished) = sync_channel(1);
    if queue.sender.try_send(Message::Flush(done)).is_ok() {
        let _ = finished.recv_timeout(timeout);
    }
}

/// Writes `text` to stdout. A reader that went away is not an error: the output is simply unread.
pub fn stdout_write(text: &str) -> std::io::Result<()> {
    static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    let text = crate::cli::host_secrets::host_secrets().scrub(text);
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(err) if err.kind() == ErrorKind::BrokenPipe => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
            Ok(())
        }
        other => other,
    }
}

/// The writer tracing's log lines go to: the stderr queue.
#[derive(Clone, Copy, Default)]
pub struct QueuedStderr;

impl Write for QueuedStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        stderr_write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for QueuedStderr {
    type Writer = LineBuffer;

    fn make_writer(&'a self) -> Self::Writer {
        LineBuffer(Vec::new())
    }
}

/// Collects one formatted log record and queues it whole when dropped, so records are never
/// interleaved or split.
pub struct LineBuffer(Vec<u8>);

impl Write for LineBuffer {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LineBuffer {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            stderr_write(&self.0);
        }
    }
}
