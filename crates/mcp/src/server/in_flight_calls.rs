//! The calls being served over stateless HTTP, by who sent them and their JSON-RPC id, so a
//! `notifications/cancelled` that arrives as a request of its own (as clients of the 2025-11-25
//! revision send it) can stop the call it names. Stdio and the 2026-07-28 revision cancel through
//! the request's own stream; over stateless HTTP nothing else connects the two requests.
//!
//! "Who" is the request's `Authorization` header (empty without one): a cancellation can only stop
//! calls sent with the same credentials, and with no token (loopback only) local clients share one
//! namespace of ids.
//!
//! A shutdown whose grace period is over cancels them all, so each ends as a `cancelled` result.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One call's key: the sender's credentials and the request id as text.
type CallKey = (String, String);

/// The calls under one key (a client may reuse an id), each with its registration number.
type Tokens = Vec<(u64, CancellationToken)>;

/// The running calls' cancellation tokens. Cheap to clone.
#[derive(Clone, Default)]
pub struct InFlightCalls {
    calls: Arc<Mutex<HashMap<CallKey, Tokens>>>,
    next: Arc<AtomicU64>,
}

/// Keeps a call registered while it runs.
pub struct Registered {
    calls: InFlightCalls,
    key: CallKey,
    number: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        if let Some(tokens) = calls.get_mut(&self.key) {
            tokens.retain(|(number, _)| *number != self.number);
            if tokens.is_empty() {
                calls.remove(&self.key);
            }
        }
    }
}

/// Who sent a request, as far as cancellation goes: its `Authorization` header, or "".
pub(crate) fn credentials(headers: &axum::http::HeaderMap) -> &str {
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
}

impl InFlightCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CallKey, Tokens>> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers call `id` sent with `credentials`; `token` is cancelled if a cancellation names it.
    pub fn register(&self, credentials: &str, id: &str, token: CancellationToken) -> Registered {
        let key = (credentials.to_string(), id.to_string());
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock()
            .entry(key.clone())
            .or_default()
            .push((number, token));
        Registered {
            calls: self.clone(),
            key,
            number,
        }
    }

    /// Cancels the calls with id `id` sent with `credentials`; how many there were.
    pub fn cancel(&self, credentials: &str, id: &str) -> usize {
        let key = (credentials.to_string(), id.to_string());
        let tokens = self.lock().get(&key).cloned().unwrap_or_default();
        tokens.iter().for_each(|(_, token)| token.cancel());
        tokens.len()
    }

    /// Cancels every call being served (a shutdown whose grace period is over); how many there were.
    pub fn cancel_all(&self) -> usize {
        let tokens: Vec<CancellationToken> = self
            .lock()
            .values()
            .flatten()
            .map(|(_, token)| token.clone())
            .collect();
        tokens.iter().for_each(CancellationToken::cancel);
        tokens.len()
    }
}
