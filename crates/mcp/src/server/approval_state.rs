//! The `requestState` of a 2026-07-28 approval question: issued by this server only, and good for
//! one answer to that question from the caller it was asked of, within `[approval]
//! answer_within` (5 minutes unless cordon.toml says otherwise).
//!
//! A state is `v1.NONCE.ISSUED.MAC`: a random 128-bit nonce, the issue time (seconds on the process's monotonic clock) and an
//! HMAC-SHA256, under a key drawn at random when the process starts (no client ever sees it), of
//! the nonce, the issue time, the question's fingerprint (tool, plugin, final arguments, askers and
//! their reasons) and the caller (over HTTP a digest of its `Authorization` header; over stdio the
//! connection, one per process). Issuing keeps nothing (the MAC proves the state was issued here);
//! an answer's nonce is remembered until the state would have expired, so a state approves at most
//! once. What is remembered is bounded per caller ([`MAX_ANSWERS_PER_CALLER`] within a lifetime)
//! and in all ([`MAX_ANSWERS`]); past either, that caller's answers approve nothing until older ones
//! expire, and no caller can crowd out another's questions. A state that was not issued here, is
//! for another question or caller, has expired, or was used already approves nothing: the question
//! is asked again.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// Answers one caller can have given within a state's lifetime.
pub const MAX_ANSWERS_PER_CALLER: usize = 10_000;
/// Answers remembered in all within a state's lifetime.
pub const MAX_ANSWERS: usize = 100_000;
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
    #[error(
        "this caller answered too many questions within [approval] answer_within; answer again later"
    )]
    TooManyAnswers,
}

/// Who asks: the credentials a request came with, or the connection it came on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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

/// The key, and the nonces already answered.
pub struct ApprovalStates {
    key: [u8; 32],
    /// How long an issued question can be answered, in seconds.
    lifetime: u64,
    answered: Mutex<Answered>,
}

/// Nonces answered and not yet expired.
#[derive(Default)]
struct Answered {
    /// Nonce → when its state was issued (the process's clock, seconds).
    nonces: HashMap<String, u64>,
    /// (issued, nonce, caller) in the order answered, to forget the expired.
    order: VecDeque<(u64, String, Caller)>,
    /// Answers remembered per caller.
    per_caller: HashMap<Caller, usize>,
}

impl ApprovalStates {
    /// States under a fresh random key, each answerable for `lifetime`.
    pub fn new(lifetime: Duration) -> Self {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the OS random number generator is available");
        Self {
            key,
            lifetime: lifetime.as_secs().max(1),
            answered: Mutex::new(Answered::default()),
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
        let mut answered = self.lock();
        answered.forget_expired(now, self.lifetime);
        if answered.nonces.contains_key(nonce) {
            return Err(StateRefused::Used);
        }
        let by_caller = answered.per_caller.get(caller).copied().unwrap_or(0);
        if by_caller >= MAX_ANSWERS_PER_CALLER || answered.nonces.len() >= MAX_ANSWERS {
            return Err(StateRefused::TooManyAnswers);
        }
        answered.nonces.insert(nonce.to_string(), issued);
        answered
            .order
            .push_back((issued, nonce.to_string(), caller.clone()));
        *answered.per_caller.entry(caller.clone()).or_insert(0) += 1;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Answered> {
        self.answered
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Answered {
    /// Forgets answers whose states have expired (they can no longer be replayed anyway). Answers
    /// come in roughly issue order; one issued later than an older neighbour waits for it.
    fn forget_expired(&mut self, now: u64, lifetime: u64) {
        while let Some((issued, _, _)) = self.order.front() {
            if now.saturating_sub(*issued) <= lifetime + 1 {
                break;
            }
            let (_, nonce, caller) = self.order.pop_front().expect("looked at above");
            self.nonces.remove(&nonce);
            if let Some(count) = self.per_caller.get_mut(&caller) {
                *count -= 1;
                if *count == 0 {
                    self.per_caller.remove(&caller);
                }
            }
        }
    }
}

/// Seconds on this process's own clock: monotonic, so setting the system clock back or forth
/// neither revives an expired state nor forgets an answered one (a state is good only in the
/// process that issued it anyway, its key being that process's).
fn now() -> u64 {
    static STARTED: std::sync::LazyLock<std::time::Instant> =
        std::sync::LazyLock::new(std::time::Instant::now);
    // Counted from a little past zero, so a state issued at start is never "from the future".
    STARTED.elapsed().as_secs() + 1_000
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
    fn an_old_state_has_expired_and_no_caller_crowds_out_another() {
        let states = ApprovalStates::new(LIFETIME);
        let caller = Caller::stdio();
        let issued = now() - LIFETIME.as_secs() - 5;
        let nonce = "00".repeat(16);
        let mac = states.mac(&caller, "q", &nonce, issued);
        assert_eq!(
            states.redeem(&format!("v1.{nonce}.{issued}.{mac}"), &caller, "q"),
            Err(StateRefused::Expired(300))
        );
        // Alice's question stays answerable however many Mallory asks and answers.
        let (alice, mallory) = (Caller::http("Bearer alice"), Caller::http("Bearer mallory"));
        let first = states.issue(&alice, "q");
        for n in 0..MAX_ANSWERS_PER_CALLER {
            let asked = states.issue(&mallory, &format!("m{n}"));
            assert_eq!(states.redeem(&asked, &mallory, &format!("m{n}")), Ok(()));
        }
        let more = states.issue(&mallory, "one more");
        assert_eq!(
            states.redeem(&more, &mallory, "one more"),
            Err(StateRefused::TooManyAnswers)
        );
        assert_eq!(states.redeem(&first, &alice, "q"), Ok(()));
        assert_eq!(states.redeem(&first, &alice, "q"), Err(StateRefused::Used));
    }
}
