//! What one call may do to the disk through its read-write grants: bytes written (every write,
//! stream write and append, and a file grown by `set-size`, sparse or not, counts) and entries
//! created (files opened with `create`, directories, hard and symbolic links; every entry also
//! costs the byte budget at least [`ENTRY_BYTES`], the block a filesystem gives it, so many tiny
//! files cannot take far more disk than the byte limit says, and a symbolic link its target's
//! bytes when that is more), each against the
//! plugin's `limits.disk_write` and `limits.files_created`. A charge past either bound is refused
//! before anything is written, the call ends (a trap the failure classification reports as
//! `out_of_disk`), and the host carries on. The budget is shared with the call's file streams,
//! which outlive the host call that made them.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// What creating any entry (file, directory, link) costs the byte budget at least: the block it
/// takes on most filesystems (a one-byte file takes 4 KiB of disk on ext4).
pub const ENTRY_BYTES: u64 = 4 << 10;

/// Which bound a call went past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DiskLimit {
    #[error("the call tried to write more than its limit of {limit} bytes to granted directories")]
    Bytes { limit: u64 },
    #[error("the call tried to create more than its limit of {limit} files, directories and links")]
    Entries { limit: u64 },
}

/// One call's disk use so far, against its limits.
#[derive(Debug)]
pub struct DiskQuota {
    max_bytes: u64,
    max_entries: u64,
    written: AtomicU64,
    created: AtomicU64,
    exceeded: OnceLock<DiskLimit>,
}

impl DiskQuota {
    pub fn new(max_bytes: u64, max_entries: u64) -> Self {
        Self {
            max_bytes,
            max_entries,
            written: AtomicU64::new(0),
            created: AtomicU64::new(0),
            exceeded: OnceLock::new(),
        }
    }

    /// Takes `bytes` about to be written; refused (and remembered) past the limit.
    pub fn charge_bytes(&self, bytes: u64) -> Result<(), DiskLimit> {
        charge(&self.written, bytes, self.max_bytes).map_err(|()| {
            self.refuse(DiskLimit::Bytes {
                limit: self.max_bytes,
            })
        })
    }

    /// Takes one entry about to be created, and the disk it takes by being made: its block
    /// ([`ENTRY_BYTES`]) or `bytes` (a symbolic link's target) if that is more; refused (and
    /// remembered) past either limit.
    pub fn charge_entry(&self, bytes: u64) -> Result<(), DiskLimit> {
        charge(&self.created, 1, self.max_entries).map_err(|()| {
            self.refuse(DiskLimit::Entries {
                limit: self.max_entries,
            })
        })?;
        self.charge_bytes(bytes.max(ENTRY_BYTES))
    }

    fn refuse(&self, limit: DiskLimit) -> DiskLimit {
        *self.exceeded.get_or_init(|| limit)
    }

    /// The bound the call went past, if it did.
    pub fn exceeded(&self) -> Option<DiskLimit> {
        self.exceeded.get().copied()
    }
}

/// Adds `amount` to `used` unless the total would pass `max` (then nothing is added).
fn charge(used: &AtomicU64, amount: u64, max: u64) -> Result<(), ()> {
    used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
        now.checked_add(amount).filter(|total| *total <= max)
    })
    .map(|_| ())
    .map_err(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_stop_at_the_limit_and_say_which() {
        let budget = DiskQuota::new(2 * ENTRY_BYTES + 100, 3);
        assert_eq!(budget.charge_bytes(60), Ok(()));
        assert_eq!(budget.charge_bytes(40), Ok(()));
        assert_eq!(budget.charge_entry(0), Ok(()), "an entry costs its block");
        assert_eq!(budget.charge_entry(1), Ok(()));
        let limit = 2 * ENTRY_BYTES + 100;
        assert_eq!(budget.charge_bytes(1), Err(DiskLimit::Bytes { limit }));
        assert_eq!(
            budget.charge_bytes(u64::MAX),
            Err(DiskLimit::Bytes { limit }),
            "no overflow"
        );
        assert!(
            budget.charge_entry(0).is_err(),
            "a third entry has no block left"
        );
        assert!(
            budget.charge_entry(0).is_err(),
            "nor a fourth: past the count"
        );
        assert_eq!(
            budget.exceeded(),
            Some(DiskLimit::Bytes { limit }),
            "the first bound passed is the one reported"
        );
    }
}
