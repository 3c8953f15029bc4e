//! Walking a directory tree for find and grep: files only, sorted, skipping `.git`.

use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// Every file under `dir` (or `dir` itself when it is a file), in a stable order.
pub fn files_under(dir: &Path) -> impl Iterator<Item = PathBuf> {
    WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| entry.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| entry.into_path())
}
