//! Walking a directory tree for find and grep: files only, sorted by name at every level, so
//! results are the same on every run. By default the walk skips what ripgrep and fd skip: files
//! and directories that `.gitignore` (in a git checkout or not), `.ignore` or `.git/info/exclude`
//! exclude, and hidden ones (names starting with `.`). `include_ignored` keeps all of them except
//! `.git` itself.

use ignore::WalkBuilder;
use std::path::{Path, PathBuf};

/// Which files a walk skips.
#[derive(Clone, Copy, Debug, Default)]
pub struct Skip {
    /// Keep files that ignore files exclude, and hidden files.
    pub include_ignored: bool,
}

/// Every file under `dir` (or `dir` itself when it is a file), in a stable order.
pub fn files_under(dir: &Path, skip: Skip) -> impl Iterator<Item = PathBuf> {
    let filters = !skip.include_ignored;
    WalkBuilder::new(dir)
        .standard_filters(filters)
        .require_git(false)
        .hidden(filters)
        .filter_entry(|entry| entry.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(|entry| entry.into_path())
}
