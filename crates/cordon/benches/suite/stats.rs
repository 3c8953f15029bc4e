//! Timing samples and their order statistics (median, p99, max), and a helper that times a closure.

use std::time::{Duration, Instant};

/// Durations of repeated runs of one thing, sorted.
pub struct Sample {
    times: Vec<Duration>,
}

impl Sample {
    pub fn new(mut times: Vec<Duration>) -> Self {
        assert!(!times.is_empty(), "a sample needs at least one run");
        times.sort();
        Self { times }
    }

    /// One sample of every run of `samples`.
    pub fn combined(samples: Vec<Sample>) -> Self {
        Self::new(samples.into_iter().flat_map(|s| s.times).collect())
    }

    pub fn runs(&self) -> usize {
        self.times.len()
    }

    pub fn median(&self) -> Duration {
        self.times[self.times.len() / 2]
    }

    pub fn p99(&self) -> Duration {
        self.times[(self.times.len() * 99 / 100).min(self.times.len() - 1)]
    }

    pub fn max(&self) -> Duration {
        self.times[self.times.len() - 1]
    }

    pub fn min(&self) -> Duration {
        self.times[0]
    }
}

/// Times `rounds` runs of `f`.
pub fn time_n(rounds: usize, mut f: impl FnMut()) -> Sample {
    Sample::new(
        (0..rounds)
            .map(|_| {
                let started = Instant::now();
                f();
                started.elapsed()
            })
            .collect(),
    )
}

pub fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

pub fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}
