//! When to retry a model request and how long to wait: 429, 408 and 5xx answers (and requests that
//! got no answer) are retried with exponential backoff and jitter, or after exactly what the
//! server's `Retry-After` (or OpenAI's `retry-after-ms`) asks for.

use std::hash::{BuildHasher as _, Hasher as _};
use std::time::Duration;

/// No single wait is longer than this, whatever the server asks.
const MAX_WAIT: Duration = Duration::from_secs(300);
/// Backoff (without `Retry-After`) grows up to this.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// How many retries, and the first one's delay.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub retries: u32,
    pub first_delay: Duration,
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first): what the server asked for, or
    /// `first_delay × 2^(retry-1)` (capped) with up to half of it taken off at random, so that
    /// many clients do not retry in step.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Duration {
        if let Some(wait) = retry_after {
            return wait.min(MAX_WAIT);
        }
        let factor = 1u32 << retry.saturating_sub(1).min(16);
        let backoff = self.first_delay.saturating_mul(factor).min(MAX_BACKOFF);
        let jitter = backoff.mul_f64(random_fraction() / 2.0);
        backoff - jitter
    }
}

/// Whether an HTTP status is worth retrying.
pub fn is_retryable(status: u16) -> bool {
    matches!(status, 408 | 429) || (500..=599).contains(&status)
}

/// The wait a response asks for: `retry-after-ms`, or `Retry-After` in seconds. (An HTTP-date
/// `Retry-After` is not understood and falls back to backoff.)
pub fn requested_wait(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let seconds = header("retry-after")?.parse::<f64>().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(1e6)))
}

/// A number in [0, 1) from the standard library's per-process random hash keys.
fn random_fraction() -> f64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default(),
    );
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            retries: 5,
            first_delay: Duration::from_millis(400),
        };
        for (retry, full) in [(1, 400), (2, 800), (3, 1600), (12, 30_000)] {
            let delay = policy.delay(retry, None);
            let full = Duration::from_millis(full);
            assert!(
                delay <= full && delay >= full / 2,
                "retry {retry}: {delay:?} vs {full:?}"
            );
        }
    }

    #[test]
    fn the_server_decides_when_it_says() {
        let policy = RetryPolicy {
            retries: 1,
            first_delay: Duration::from_millis(10),
        };
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(policy.delay(1, Some(Duration::from_secs(9999))), MAX_WAIT);
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "3".parse().unwrap());
        assert_eq!(requested_wait(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", "250".parse().unwrap());
        assert_eq!(requested_wait(&headers), Some(Duration::from_millis(250)));
        let mut dated = reqwest::header::HeaderMap::new();
        dated.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(requested_wait(&dated), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        for status in [408, 429, 500, 502, 503, 529] {
            assert!(is_retryable(status), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!is_retryable(status), "{status}");
        }
    }
}
