//! A response body with bounds: at most so many bytes, and done before the request's deadline. It
//! holds its connection's slots (of the call and of the process) until it ends or is dropped.

/// The chunk a request or response body buffers (wasmtime's default is 1 MiB); a body holds at
/// most two, and their bytes count against the guest's memory limit (sandbox/http/host_memory.rs).
pub const BODY_CHUNK_BYTES: usize = 64 << 10;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Sleep;
use wasmtime_wasi_http::Error;

pub struct BoundedBody {
    inner: hyper::body::Incoming,
    remaining: u64,
    limit: u64,
    deadline: Pin<Box<Sleep>>,
    /// Released when the body ends, fails or is dropped.
    slots: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
}

impl BoundedBody {
    pub fn new(
        inner: hyper::body::Incoming,
        limit: u64,
        deadline: Pin<Box<Sleep>>,
        slots: (OwnedSemaphorePermit, OwnedSemaphorePermit),
    ) -> Self {
        Self {
            inner,
            remaining: limit,
            limit,
            deadline,
            slots: Some(slots),
        }
    }

    fn end<T>(&mut self, outcome: T) -> T {
        self.slots = None;
        outcome
    }
}

impl Body for BoundedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if self.deadline.as_mut().poll(cx).is_ready() {
            return self.end(Poll::Ready(Some(Err(Error::HttpResponseTimeout))));
        }
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let size = data.len() as u64;
                    if size > self.remaining {
                        let limit = self.limit;
                        tracing::warn!(
                            limit,
                            "response body over the plugin's limits.http_response; cut"
                        );
                        return self.end(Poll::Ready(Some(Err(Error::HttpResponseBodySize(
                            Some(limit),
                        )))));
                    }
                    self.remaining -= size;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(err))) => self.end(Poll::Ready(Some(Err(Error::from(err))))),
            Poll::Ready(None) => self.end(Poll::Ready(None)),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

use std::future::Future as _;
