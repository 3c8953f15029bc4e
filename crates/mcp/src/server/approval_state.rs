//! The `requestState` of a 2026-07-28 approval question: issued by this server only, and good for
//! one answer to that question from the caller it was asked of, within `[approval]
//! answer_within` (5 minutes unless cordon.toml says otherwise).
//!
//! A state is `v1.NONCE.ISSUED.MAC`: a random 128-bit nonce, the issue time (Unix seconds) and an
//! HMAC-SHA256, under a key drawn at random when the process starts (no client ever sees it), of
//! the nonce, the issue time, the question's fingerprint (tool, plugin, final arguments, askers and
//! their reasons) and the caller (over HTTP a digest of its `Authorization` header; over stdio the
//! connection, one per process). Issued nonces are kept (at most [`MAX_OUTSTANDING`]; the oldest
//! go first) and an answer consumes its nonce, so a state approves at most once. A state that was
//! not issued here, is for another question or caller, has expired, or was used already approves
//! nothing: the question is asked again.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Questions outstanding at most; past this the oldest can no longer be answered.
pub const MAX_OUTSTANDING: usize = 10_000;
/// The version tag every state starts with.
const VERSION: &str = "v1";

type HmacSha256 = Hmac<Sha256>;

/// Why an answer's state approves nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StateRefused {
    #[error("it is not a state this server issued for this question and caller")]
    NotIssued,
    #[error("it expired (a question can be answered for {0} s: [approval] answer_within)")]
    Expired(u64),
    #[error("it was used already (each question is answered once)")]
    Used,
}

/// Who asks: the credentials a request came with, or the connection it came on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(String);

impl Caller {
    /// A caller over HTTP, by its `Authorization` header ("" without one: with no token, local
    /// clients are one caller).
    pub fn http(authorization: &str) -> Self {
        Self(format!(
            "http:{}",
            hex::encode(Sha256::digest(authorization.as_bytes()))
        ))
    }

    /// The caller of a stdio connection (this process serves one).
    pub fn stdio() -> Self {
        Self("stdio".into())
    }
}

/// The key, and the nonces issued and not yet answered.
pub struct ApprovalStates {
    key: [u8; 32],
    /// How long an issued question can be answered, in seconds.
    lifetime: u64,
    outstanding: Mutex<Outstanding>,
}

#[derive(Default)]
struct Outstanding {
    /// Nonce → when it was issued (Unix seconds).
    issued: HashMap<String, u64>,
    /// Nonces in issue order, to drop the oldest.
    order: VecDeque<String>,
}

impl ApprovalStates {
    /// States under a fresh random key, each answerable for `lifetime`.
    pub fn new(lifetime: Duration) -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random number generator is available");
        Self {
            key,
            lifetime: lifetime.as_secs().max(1),
            outstanding: Mutex::new(Outstanding::default()),
        }
    }

    fn mac(&self, caller: &Caller, fingerprint: &str, nonce: &str, issued: u64) -> String {
        let mut mac =
            HmacSha256::new_from_slice(&self.key).expect("HMAC takes a key of any length");
        for part in [
            "cordon approval state v1",
            &caller.0,
            fingerprint,
            nonce,
            &issued.to_string(),
        ] {
            // Each part with its length, so no two different tuples read the same.
            mac.update(&(part.len() as u64).to_be_bytes());
            mac.update(part.as_bytes());
        }
        hex::encode(mac.finalize().into_bytes())
    }

    /// A new state for asking `caller` the question `fingerprint`.
    pub fn issue(&self, caller: &Caller, fingerprint: &str) -> String {
        let mut nonce = [0u8; 16];
        getrandom::fill(&mut nonce).expect("the OS random number generator is available");
        let nonce = hex::encode(nonce);
        let issued = now();
        let mac = self.mac(caller, fingerprint, &nonce, issued);
        let mut outstanding = self.lock();
        outstanding.forget_expired(issued, self.lifetime);
        while outstanding.order.len() >= MAX_OUTSTANDING {
            if let Some(oldest) = outstanding.order.pop_front() {
                outstanding.issued.remove(&oldest);
            }
        }
        outstanding.issued.insert(nonce.clone(), issued);
        outstanding.order.push_back(nonce.clone());
        format!("{VERSION}.{nonce}.{issued}.{mac}")
    }

    /// Consumes `state` as the answer of `caller` to the question `fingerprint`.
    pub fn redeem(
        &self,
        state: &str,
        caller: &Caller,
        fingerprint: &str,
    ) -> Result<(), StateRefused> {
        let mut parts = state.split('.');
        let (Some(VERSION), Some(nonce), Some(issued), Some(mac), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(StateRefused::NotIssued);
        };
        let issued: u64 = issued.parse().map_err(|_| StateRefused::NotIssued)?;
        let expected = self.mac(caller, fingerprint, nonce, issued);
        if !constant_time_eq(expected.as_bytes(), mac.as_bytes()) {
            return Err(StateRefused::NotIssued);
        }
        let now = now();
        if now.saturating_sub(issued) > self.lifetime || issued > now + 1 {
            return Err(StateRefused::Expired(self.lifetime));
        }
        let mut outstanding = self.lock();
        match outstanding.issued.remove(nonce) {
            Some(_) => {
                outstanding.order.retain(|kept| kept != nonce);
                Ok(())
            }
            None => Err(StateRefused::Used),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Outstanding> {
        self.outstanding
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Outstanding {
    fn forget_expired(&mut self, now: u64, lifetime: u64) {
        while let Some(oldest) = self.order.front() {
            let expired = self
                .issued
                .get(oldest)
                .is_none_or(|issued| now.saturating_sub(*issued) > lifetime);
            if !expired {
                break;
            }
            let oldest = self.order.pop_front().expect("looked at above");
            self.issued.remove(&oldest);
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Equality of two byte strings in time that depends on their length only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIFETIME: Duration = Duration::from_secs(300);

    #[test]
    fn a_state_approves_its_question_for_its_caller_once() {
        let states = ApprovalStates::new(LIFETIME);
        let alice = Caller::http("Bearer a");
        let state = states.issue(&alice, "q1");
        assert_eq!(
            states.redeem(&state, &Caller::http("Bearer b"), "q1"),
            Err(StateRefused::NotIssued)
        );
        assert_eq!(
            states.redeem(&state, &alice, "q2"),
            Err(StateRefused::NotIssued)
        );
        assert_eq!(
            ApprovalStates::new(LIFETIME).redeem(&state, &alice, "q1"),
            Err(StateRefused::NotIssued),
            "another process's key"
        );
        assert_eq!(states.redeem(&state, &alice, "q1"), Ok(()));
        assert_eq!(states.redeem(&state, &alice, "q1"), Err(StateRefused::Used));
        assert_eq!(
            states.redeem("approval:abc", &alice, "q1"),
            Err(StateRefused::NotIssued)
        );
    }

    #[test]
    fn an_old_state_has_expired_and_the_oldest_outstanding_go_first() {
        let states = ApprovalStates::new(LIFETIME);
        let caller = Caller::stdio();
        let issued = now() - LIFETIME.as_secs() - 5;
        let nonce = "00".repeat(16);
        {
            let mut outstanding = states.lock();
            outstanding.issued.insert(nonce.clone(), issued);
            outstanding.order.push_back(nonce.clone());
        }
        let mac = states.mac(&caller, "q", &nonce, issued);
        assert_eq!(
            states.redeem(&format!("v1.{nonce}.{issued}.{mac}"), &caller, "q"),
            Err(StateRefused::Expired(300))
        );
        let first = states.issue(&caller, "q");
        for _ in 0..MAX_OUTSTANDING {
            states.issue(&caller, "other");
        }
        assert_eq!(states.redeem(&first, &caller, "q"), Err(StateRefused::Used));
        assert!(states.lock().issued.len() <= MAX_OUTSTANDING);
    }
}
