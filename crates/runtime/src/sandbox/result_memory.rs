//! The host memory a call's result may take while it is copied out of the sandbox and converted.
//!
//! A guest's return value is lifted by wasmtime into host values before cordon sees it, and a
//! plain component's value is then converted to JSON: both are host allocations the guest's own
//! memory limit does not count, and a compact guest value can lift to many times its size (each
//! element of a `list<string>` is 8 bytes in the guest and a 40-byte value on the host). So:
//! - each call gets a lift budget, wasmtime's hostcall fuel, which wasmtime charges *before* it
//!   allocates each list, string and record it lifts: a result that would lift past it is refused
//!   without being built (the same budget bounds every single transfer the guest makes to the
//!   host during the call);
//!   (wasmtime charges a whole value per list element and field, so the host's memory stays
//!   within a small factor of the budget; a plain result whose type holds flags, charged a few
//!   bytes each, gets a budget divided by what they cost, see `plain::lift_weight`);
//! - a plain component's conversion to JSON is charged against the same number of bytes again;
//! - and the lift budgets of all calls running in the process come out of one pool of
//!   [`POOL_BYTES`], taken without waiting: under heavy concurrency a call gets what is left (never
//!   less than [`MIN_LIFT_BYTES`]), so a batch as a whole is bounded, and calls with small results
//!   never wait for it.

use std::sync::atomic::{AtomicU64, Ordering};

/// The most bytes one call's result may lift to (and again, convert to).
pub const MAX_LIFT_BYTES: u64 = 32 << 20;
/// The least lift budget a call gets, whatever the pool has left.
pub const MIN_LIFT_BYTES: u64 = 1 << 20;
/// The lift budgets of every call running at once, together.
pub const POOL_BYTES: u64 = 512 << 20;
/// A call may lift to this many times its output limit (a value's host form is larger than its
/// JSON text, which is what the output limit counts).
const LIFT_PER_OUTPUT_BYTE: u64 = 2;

static IN_USE: AtomicU64 = AtomicU64::new(0);

/// A call's lift budget, returned to the pool when dropped.
#[derive(Debug)]
pub struct LiftBudget {
    bytes: u64,
    /// What it took from the pool (the part above [`MIN_LIFT_BYTES`]).
    pooled: u64,
    /// What the call would have had with the pool free.
    wanted: u64,
}

impl LiftBudget {
    /// The budget of a call whose plugin may return `output_limit` bytes.
    pub fn reserve(output_limit: u64) -> Self {
        let wanted = output_limit
            .saturating_mul(LIFT_PER_OUTPUT_BYTE)
            .clamp(MIN_LIFT_BYTES, MAX_LIFT_BYTES);
        let want_pooled = wanted - MIN_LIFT_BYTES;
        let mut pooled = 0;
        let _ = IN_USE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |in_use| {
            pooled = want_pooled.min(POOL_BYTES.saturating_sub(in_use));
            Some(in_use + pooled)
        });
        Self {
            bytes: MIN_LIFT_BYTES + pooled,
            pooled,
            wanted,
        }
    }

    /// The budget in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether the call got less than its own limit because other calls held the pool.
    pub fn was_shared(&self) -> bool {
        self.bytes < self.wanted
    }
}

impl Drop for LiftBudget {
    fn drop(&mut self) {
        IN_USE.fetch_sub(self.pooled, Ordering::AcqRel);
    }
}

/// What the host's bound on moving data out of the sandbox means for a call that hit it.
pub fn exceeded_message(what: &str, budget: u64, shared: bool) -> String {
    let crowded = if shared {
        " (less than usual, because many other calls were returning results at the same time; retrying alone may fit)"
    } else {
        ""
    };
    format!(
        "`{what}` handed the host more data at once than a call may ({} MiB of host memory for its result{crowded}; twice its plugin's output limit, `limits.output`, at most {} MiB). Ask for less at a time (use offsets, limits or filters).",
        budget >> 20,
        MAX_LIFT_BYTES >> 20
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_follow_the_output_limit_within_bounds() {
        assert_eq!(LiftBudget::reserve(16 << 20).bytes(), MAX_LIFT_BYTES);
        assert_eq!(LiftBudget::reserve(1 << 20).bytes(), 2 << 20);
        assert_eq!(LiftBudget::reserve(1).bytes(), MIN_LIFT_BYTES);
    }

    #[test]
    fn the_pool_bounds_calls_together_and_is_given_back() {
        let held: Vec<LiftBudget> = (0..64).map(|_| LiftBudget::reserve(16 << 20)).collect();
        let pooled: u64 = held.iter().map(|budget| budget.pooled).sum();
        assert!(pooled <= POOL_BYTES, "{pooled}");
        assert!(held.iter().any(LiftBudget::was_shared));
        assert!(held.iter().all(|budget| budget.bytes() >= MIN_LIFT_BYTES));
        drop(held);
        assert_eq!(LiftBudget::reserve(16 << 20).bytes(), MAX_LIFT_BYTES);
    }
}
