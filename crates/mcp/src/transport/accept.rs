//! The HTTP server's accept loop: each connection (HTTP/1.1) served on its own task, at most
//! [`MAX_CONNECTIONS`] open at once (past that a new one is answered `503` and closed), each closed
//! when it does not send a request's headers within [`HEADER_DEADLINE`]. When told to stop, it
//! stops accepting, lets every connection finish the response it is sending, closes them, and
//! waits a little for them to be gone.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Connections open at once; each holds a file descriptor.
pub const MAX_CONNECTIONS: usize = 256;
/// How long a connection may take to send a request's headers, and stay idle between requests.
pub const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// What a connection past [`MAX_CONNECTIONS`] is told before it is closed.
const TOO_MANY_CONNECTIONS: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
/// How long a stop waits for the open connections to finish writing and close.
const CLOSE_DEADLINE: Duration = Duration::from_secs(2);

/// Serves connections from `listener` until `stop` is cancelled, then closes them.
pub(crate) async fn accept_until(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    stop: CancellationToken,
) {
    let open = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let closing = CancellationToken::new();
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(err) => {
                    // Out of file descriptors or a connection reset before it was accepted: wait
                    // a little rather than spin.
                    tracing::warn!("accepting an MCP HTTP connection failed: {err}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let Ok(slot) = open.clone().try_acquire_owned() else {
            // A fresh socket's send buffer takes these few bytes at once; then it is closed.
            let _ = stream.try_write(TOO_MANY_CONNECTIONS);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        let closing = closing.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_DEADLINE);
            let connection =
                builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => return,
                () = closing.cancelled() => {}
            }
            // An idle connection closes now; a busy one once its response is written.
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        });
    }
    drop(listener);
    closing.cancel();
    // Every slot back means every connection is closed.
    let _ = tokio::time::timeout(CLOSE_DEADLINE, open.acquire_many(MAX_CONNECTIONS as u32)).await;
}
