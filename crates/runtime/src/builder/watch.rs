//! What a running front end reloads from, watched on disk: the `*.wasm` files of the plugins
//! directory, the config file and the lockfile. Each look records every file's size, modification
//! time and inode; a change counts once the directory has looked the same for
//! [`SETTLE`], so a copy still being written, or an editor's save-by-rename, is read once it is
//! whole. Polling, not an OS notification API: it works on every filesystem (network and container
//! mounts included) and costs a directory listing per look.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often to look.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// How long what is on disk must stay the same before a change counts.
pub const SETTLE: Duration = Duration::from_millis(500);

/// One file as last seen; `None` when it is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
    inode: u64,
}

/// Everything watched, as seen at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Snapshot(BTreeMap<PathBuf, Option<Stamp>>);

/// The files a reload depends on.
#[derive(Debug, Clone)]
pub struct WatchedFiles {
    /// The plugins directory, whose `*.wasm` files are watched.
    pub plugins_dir: PathBuf,
    /// The config file and the lockfile (either may not exist).
    pub files: Vec<PathBuf>,
}

impl WatchedFiles {
    /// What they look like now. A plugins directory that cannot be read counts as empty.
    pub fn snapshot(&self) -> Snapshot {
        let mut seen = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir(&self.plugins_dir) {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|ext| ext == "wasm") {
                    seen.insert(path.clone(), stamp(&path));
                }
            }
        }
        for file in &self.files {
            seen.insert(file.clone(), stamp(file));
        }
        Snapshot(seen)
    }
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: meta.len(),
        modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        changed_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        inode: meta.ino(),
    })
}

/// Tells when what is watched has changed and settled.
pub struct ChangeWatcher {
    files: WatchedFiles,
    /// What the running set was loaded from.
    applied: Snapshot,
    /// A different view, and since when it has looked that way.
    pending: Option<(Snapshot, Instant)>,
}

impl ChangeWatcher {
    /// Watches `files`, taking what is there now as already loaded.
    pub fn new(files: WatchedFiles) -> Self {
        let applied = files.snapshot();
        Self {
            files,
            applied,
            pending: None,
        }
    }

    /// Looks once: a settled change (to load, then [`ChangeWatcher::loaded`]), if there is one.
    pub fn look(&mut self) -> Option<Snapshot> {
        let now = self.files.snapshot();
        if now == self.applied {
            self.pending = None;
            return None;
        }
        match &self.pending {
            Some((pending, since)) if *pending == now => {
                (since.elapsed() >= SETTLE).then(|| now.clone())
            }
            _ => {
                self.pending = Some((now, Instant::now()));
                None
            }
        }
    }

    /// Records that `snapshot` was loaded (or tried: a refused change is not retried until
    /// something changes again).
    pub fn loaded(&mut self, snapshot: Snapshot) {
        self.applied = snapshot;
        self.pending = None;
    }

    /// What is on disk now, for a reload asked for by other means (SIGHUP).
    pub fn now(&self) -> Snapshot {
        self.files.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_counts_once_it_has_settled() {
        let dir = tempfile::tempdir().unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        let mut watcher = ChangeWatcher::new(WatchedFiles {
            plugins_dir: plugins.clone(),
            files: vec![dir.path().join("cordon.toml")],
        });
        assert!(watcher.look().is_none(), "nothing changed");
        std::fs::write(plugins.join("a.wasm"), b"half").unwrap();
        assert!(watcher.look().is_none(), "just changed: not settled");
        std::fs::write(plugins.join("a.wasm"), b"half and the rest").unwrap();
        assert!(watcher.look().is_none(), "still being written");
        std::thread::sleep(SETTLE + Duration::from_millis(50));
        let settled = watcher.look().expect("settled");
        watcher.loaded(settled);
        assert!(watcher.look().is_none());
        std::fs::write(plugins.join("notes.txt"), b"not a plugin").unwrap();
        assert!(
            watcher.look().is_none(),
            "only .wasm files and the named files count"
        );
        std::fs::write(dir.path().join("cordon.toml"), b"[agent]\n").unwrap();
        watcher.look();
        std::thread::sleep(SETTLE + Duration::from_millis(50));
        assert!(watcher.look().is_some(), "the config appeared");
    }
}
