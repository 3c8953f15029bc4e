//! A guest's stdout or stderr: kept in a bounded buffer, never written to the host's stdio (which
//! the MCP stdio transport owns). Writes past the bound are accepted and dropped, so a chatty
//! plugin keeps running; the dropped byte count is reported with the captured text. The host's
//! secrets are masked before the text is cut to its bound: the buffer keeps the longest form of a
//! secret beyond it, so a secret across the bound is masked whole, not left half-shown.

use crate::report::secrets::Secrets;
use bytes::Bytes;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

#[derive(Debug, Default)]
struct Buffer {
    kept: Vec<u8>,
    dropped: u64,
}

/// A bounded capture buffer; clones share the same buffer.
#[derive(Debug, Clone)]
pub struct OutputCapture {
    limit: usize,
    /// Bytes kept past `limit` so a secret across it can be found before the cut.
    margin: usize,
    secrets: Secrets,
    buffer: Arc<Mutex<Buffer>>,
}

impl OutputCapture {
    pub fn new(limit: u64, secrets: Secrets) -> Self {
        Self {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            margin: secrets.longest_form(),
            secrets,
            buffer: Arc::default(),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut buffer = self
            .buffer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let room = self
            .limit
            .saturating_add(self.margin)
            .saturating_sub(buffer.kept.len());
        let kept = bytes.len().min(room);
        buffer.kept.extend_from_slice(&bytes[..kept]);
        buffer.dropped += (bytes.len() - kept) as u64;
    }

    /// What was captured (lossy UTF-8, the host's secrets masked, then cut to the bound) and how
    /// many bytes were dropped past the bound.
    pub fn contents(&self) -> (String, u64) {
        let buffer = self
            .buffer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let text = String::from_utf8_lossy(&buffer.kept);
        let mut text = self.secrets.scrub(&text).into_owned();
        let mut dropped = buffer.dropped;
        if text.len() > self.limit {
            let end = text.floor_char_boundary(self.limit);
            dropped += (text.len() - end) as u64;
            text.truncate(end);
        }
        (text, dropped)
    }

    /// The last `max_lines` non-empty lines, for error messages.
    pub fn tail(&self, max_lines: usize) -> String {
        let (text, _) = self.contents();
        let lines: Vec<&str> = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .collect();
        lines[lines.len().saturating_sub(max_lines)..].join("\n")
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for OutputCapture {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for OutputCapture {
    async fn ready(&mut self) {}
}

impl AsyncWrite for OutputCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for OutputCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputCapture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_the_limit_and_counts_the_rest() {
        let capture = OutputCapture::new(10, Secrets::default());
        capture.push(b"hello ");
        capture.push(b"world, and more");
        assert_eq!(capture.contents(), ("hello worl".to_string(), 11));
    }

    #[test]
    fn tail_returns_last_lines() {
        let capture = OutputCapture::new(1024, Secrets::default());
        capture.push(b"one\ntwo\n\nthree\n");
        assert_eq!(capture.tail(2), "two\nthree");
    }

    #[test]
    fn a_secret_across_the_bound_is_masked_whole_before_the_cut() {
        let secrets = Secrets::default();
        secrets.register("wk-5f1c0a9e7b3d");
        let capture = OutputCapture::new(12, secrets);
        capture.push(b"AAAAAAAAwk-5f1c0a9e7b3d and on");
        let (text, _) = capture.contents();
        assert!(!text.contains("wk-5f"), "{text}");
        assert!(text.starts_with("AAAAAAAA["), "{text}");
        assert!(text.len() <= 12, "{text}");
    }
}
