//! A build whose inputs have not changed is not run again: the component a Python or JavaScript
//! build wrote (componentize-py and componentize-js take tens of seconds, even for a one-line
//! project) is kept in cordon's cache under the sha256 of everything the build reads, and a later
//! build with the same digest copies it instead. The digest covers the toolchain's identity (its
//! path and version), the contract, the SDK and every file of the project (by path, kind and
//! content; what builds write there, `__pycache__`, `.git` and `*.wasm`, left out), so any change
//! of any of them is a new build. A tree too large to read quickly is not cached at all.

use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// The most bytes read to key one build; past it the build is not cached.
const MAX_KEYED_BYTES: u64 = 512 << 20;
/// The most files read to key one build.
const MAX_KEYED_FILES: usize = 100_000;
/// How many cached components are kept; the least recently used go first.
const KEPT_OUTPUTS: usize = 24;

/// Where outputs are kept: `CACHE/build-outputs/`, or nowhere.
#[derive(Debug, Clone)]
pub struct OutputCache {
    dir: Option<PathBuf>,
}

/// The digest of one build's inputs, being computed.
pub struct BuildKey {
    hasher: Sha256,
    bytes: u64,
    files: usize,
    too_large: bool,
    skip: Vec<String>,
}

impl OutputCache {
    /// The cache under `cache` (cordon's cache directory), or none.
    pub fn in_cache(cache: Option<&Path>) -> Self {
        Self {
            dir: cache.map(|cache| cache.join("build-outputs")),
        }
    }

    /// Copies the component kept for `key` to `output`; whether there was one.
    pub fn restore(&self, key: &str, output: &Path) -> bool {
        let Some(kept) = self.dir.as_ref().map(|dir| dir.join(format!("{key}.wasm"))) else {
            return false;
        };
        if std::fs::copy(&kept, output).is_err() {
            return false;
        }
        // Touched, so the least recently used are the ones dropped.
        if let Ok(file) = std::fs::File::options().append(true).open(&kept) {
            let _ = file.set_modified(std::time::SystemTime::now());
        }
        true
    }

    /// Keeps a copy of `built` for `key` (best effort: a cache that cannot be written costs only
    /// the next build's time).
    pub fn keep(&self, key: &str, built: &Path) {
        let Some(dir) = &self.dir else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let Ok(temp) = tempfile::NamedTempFile::new_in(dir) else {
            return;
        };
        if std::fs::copy(built, temp.path()).is_ok() {
            let _ = temp.persist(dir.join(format!("{key}.wasm")));
        }
        forget_the_oldest(dir);
    }
}

/// Removes all but the [`KEPT_OUTPUTS`] most recently used outputs in `dir`.
fn forget_the_oldest(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut kept: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "wasm"))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .collect();
    if kept.len() <= KEPT_OUTPUTS {
        return;
    }
    kept.sort();
    for (_, path) in &kept[..kept.len() - KEPT_OUTPUTS] {
        let _ = std::fs::remove_file(path);
    }
}

impl BuildKey {
    /// A key for a build of `kind` (`python`, `javascript`).
    pub fn new(kind: &str) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"cordon build key 1\0");
        hasher.update(kind.as_bytes());
        Self {
            hasher,
            bytes: 0,
            files: 0,
            too_large: false,
            skip: Vec::new(),
        }
    }

    /// Adds a named value (a tool's path and version).
    pub fn value(&mut self, name: &str, value: &[u8]) {
        self.field(b"value", name.as_bytes());
        self.field(b"is", value);
    }

    /// Adds every file under `dir` (labelled `label`, so two trees cannot trade files), except
    /// what builds and tools write there and the entries named in `skip`.
    pub fn tree(&mut self, label: &str, dir: &Path, skip: &[&str]) {
        self.field(b"tree", label.as_bytes());
        self.skip = skip.iter().map(|name| name.to_string()).collect();
        self.walk(dir, Path::new(""));
    }

    /// The digest, or `None` when the inputs were too large to key.
    pub fn finish(self) -> Option<String> {
        (!self.too_large).then(|| hex::encode(self.hasher.finalize()))
    }

    fn walk(&mut self, dir: &Path, relative: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            self.field(b"unreadable", relative.as_os_str().as_encoded_bytes());
            return;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            if self.too_large {
                return;
            }
            let name = entry.file_name();
            let shown_name = name.to_string_lossy();
            if left_out(&shown_name) || self.skip.iter().any(|skip| *skip == shown_name) {
                continue;
            }
            let path = entry.path();
            let inside = relative.join(&name);
            let shown = inside.as_os_str().as_encoded_bytes();
            let Ok(metadata) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            self.files += 1;
            if self.files > MAX_KEYED_FILES {
                self.too_large = true;
                return;
            }
            if metadata.is_dir() {
                self.field(b"dir", shown);
                self.walk(&path, &inside);
            } else if metadata.is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                self.field(b"link", shown);
                self.field(b"to", target.as_os_str().as_encoded_bytes());
                // A linked file is read; a linked directory is not walked (a link can loop, and
                // the one every JavaScript project has, to the SDK, is keyed on its own).
                if path.is_file() {
                    self.file(&path, shown);
                }
            } else if metadata.is_file() {
                self.file(&path, shown);
            }
        }
    }

    fn file(&mut self, path: &Path, shown: &[u8]) {
        self.bytes += std::fs::metadata(path).map_or(0, |m| m.len());
        if self.bytes > MAX_KEYED_BYTES {
            self.too_large = true;
            return;
        }
        match std::fs::read(path) {
            Ok(content) => {
                self.field(b"file", shown);
                self.field(b"content", &content);
            }
            Err(_) => self.field(b"unreadable", shown),
        }
    }

    /// One length-prefixed field, so no two sequences of fields hash alike.
    fn field(&mut self, tag: &[u8], bytes: &[u8]) {
        self.hasher.update((tag.len() as u64).to_le_bytes());
        self.hasher.update(tag);
        self.hasher.update((bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }
}

/// What a project holds that is not an input of its build: what builds and tools write there.
fn left_out(name: &str) -> bool {
    matches!(name, "__pycache__" | ".git" | "target" | ".pytest_cache")
        || name.ends_with(".wasm")
        || name.ends_with(".pyc")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(dir: &Path) -> String {
        let mut key = BuildKey::new("python");
        key.tree("project", dir, &[]);
        key.finish().unwrap()
    }

    #[test]
    fn any_change_to_a_file_its_name_or_a_new_file_is_a_new_key_and_build_output_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.py"), "print(1)\n").unwrap();
        let first = key_of(dir.path());
        assert_eq!(first, key_of(dir.path()), "the same inputs, the same key");
        std::fs::create_dir(dir.path().join("__pycache__")).unwrap();
        std::fs::write(dir.path().join("__pycache__/app.pyc"), "x").unwrap();
        std::fs::write(dir.path().join("old.wasm"), "x").unwrap();
        assert_eq!(first, key_of(dir.path()), "what builds write is left out");
        std::fs::write(dir.path().join("app.py"), "print(2)\n").unwrap();
        let edited = key_of(dir.path());
        assert_ne!(first, edited);
        std::fs::write(dir.path().join("helper.py"), "").unwrap();
        assert_ne!(edited, key_of(dir.path()));
        std::fs::rename(dir.path().join("helper.py"), dir.path().join("other.py")).unwrap();
        let renamed = key_of(dir.path());
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        assert_ne!(
            renamed,
            key_of(dir.path()),
            "an empty package directory counts"
        );
    }

    #[test]
    fn a_kept_output_is_restored_and_the_oldest_are_dropped() {
        let cache = tempfile::tempdir().unwrap();
        let outputs = OutputCache::in_cache(Some(cache.path()));
        let built = cache.path().join("built.wasm");
        std::fs::write(&built, b"\0asm component").unwrap();
        let restored = cache.path().join("restored.wasm");
        assert!(!outputs.restore("abc", &restored));
        outputs.keep("abc", &built);
        assert!(outputs.restore("abc", &restored));
        assert_eq!(std::fs::read(&restored).unwrap(), b"\0asm component");
        for index in 0..KEPT_OUTPUTS + 3 {
            outputs.keep(&format!("k{index}"), &built);
        }
        let count = std::fs::read_dir(cache.path().join("build-outputs"))
            .unwrap()
            .filter(|entry| {
                entry
                    .as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|ext| ext == "wasm")
            })
            .count();
        assert_eq!(count, KEPT_OUTPUTS);
        assert!(!OutputCache::in_cache(None).restore("abc", &restored));
    }
}
