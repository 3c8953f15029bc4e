//! Directories compared by what they are on disk (device and inode), not by path: a bind mount
//! shows one directory under two paths, and no symlink says so. A deny whose start, or a
//! directory over it, is the allowed directory reaches inside it; one whose start is the allowed
//! directory or a directory over it reaches over it.

use super::storage_paths::PathStart;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// A device and inode.
type Identity = (u64, u64);

/// Where one start of a deny is on disk.
#[derive(Debug)]
pub(super) struct StartIdentity {
    /// The identities of the start's directory (for a glob, the directory its matches are in)
    /// and every directory over it that exists, nearest first.
    chain: Vec<Identity>,
    /// Whether `chain` begins with the start itself (it exists and is no glob: a glob's
    /// directory lies over all its matches, not only those that reach an allowed directory,
    /// and the walk on disk follows each match that exists).
    exists: bool,
}

impl StartIdentity {
    pub(super) fn of(start: &PathStart) -> Self {
        let literal = Path::new(&start.literal);
        let dir = if start.glob {
            // The glob's text begins after the last `/`: its matches are in that directory.
            literal.parent().unwrap_or(literal)
        } else {
            literal
        };
        let exists = !start.glob && std::fs::metadata(dir).is_ok();
        Self {
            chain: chain_of(dir),
            exists,
        }
    }
}

/// Where an allowed directory is on disk.
pub(super) struct AllowedIdentity {
    chain: Vec<Identity>,
}

impl AllowedIdentity {
    pub(super) fn of(dir: &Path) -> Self {
        Self {
            chain: if std::fs::metadata(dir).is_ok() {
                chain_of(dir)
            } else {
                Vec::new()
            },
        }
    }

    /// Whether the deny `start` is at or under this directory, or (existing) over it.
    pub(super) fn reached_by(&self, start: &StartIdentity) -> bool {
        let Some(own) = self.chain.first() else {
            return false;
        };
        start.chain.contains(own)
            || (start.exists
                && start
                    .chain
                    .first()
                    .is_some_and(|id| self.chain.contains(id)))
    }
}

/// The identities of `dir` and each directory over it that exists, nearest first.
fn chain_of(dir: &Path) -> Vec<Identity> {
    dir.ancestors()
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|meta| (meta.dev(), meta.ino()))
        .collect()
}
