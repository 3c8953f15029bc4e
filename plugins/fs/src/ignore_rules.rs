//! The ignore rules in force at one point of a walk, decided the way ripgrep decides them when it
//! does not require a git checkout (`--no-require-git`, as the `ignore` crate's walker with
//! `require_git(false)`): per directory its `.ignore`, its `.gitignore` and (beside a `.git`
//! directory) `.git/info/exclude`, and those of the directories above it inside the grant; the
//! deepest directory with a matching rule wins, any `.ignore` rule beats any `.gitignore` rule,
//! which beats any exclude rule; a name starting with `.` is hidden unless a rule keeps it. The
//! patterns themselves are parsed and matched by the `ignore` crate.

use crate::file_bytes::{Read, read_file};
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::{Path, PathBuf};
use wasip2::filesystem::types::{Descriptor, DescriptorType, PathFlags};

/// Ignore files larger than this are not read (ripgrep reads them whole too; this bounds memory).
const MAX_IGNORE_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One directory's rules.
struct Level {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    exclude: Option<Gitignore>,
}

/// The rules of every directory from the granted directory down to the one being walked.
#[derive(Default)]
pub struct IgnoreRules {
    levels: Vec<Level>,
}

impl IgnoreRules {
    /// Adds the rules of the directory `path`, open at `dir`, whose entries are `entries`: only
    /// ignore files the listing shows are read.
    pub fn enter(&mut self, path: &Path, dir: &Descriptor, entries: &[(String, DescriptorType)]) {
        let has = |name: &str| entries.iter().find(|(entry, _)| entry == name).map(|e| e.1);
        self.levels.push(Level {
            ignore: has(".ignore").and_then(|_| matcher(path, dir, ".ignore")),
            gitignore: has(".gitignore").and_then(|_| matcher(path, dir, ".gitignore")),
            exclude: match has(".git") {
                Some(DescriptorType::Directory) => matcher(path, dir, ".git/info/exclude"),
                _ => None,
            },
        });
    }

    /// Adds the rules of a directory above the walk's start (inside the granted directory), open
    /// at `dir`, probing for its ignore files by name.
    pub fn enter_parent(&mut self, path: &Path, dir: &Descriptor) {
        let kind = |name: &str| {
            dir.stat_at(PathFlags::empty(), name)
                .ok()
                .map(|stat| stat.type_)
        };
        let entries: Vec<(String, DescriptorType)> = [".ignore", ".gitignore", ".git"]
            .into_iter()
            .filter_map(|name| kind(name).map(|kind| (name.to_string(), kind)))
            .collect();
        self.enter(path, dir, &entries);
    }

    /// Removes the rules of the directory the walk just left.
    pub fn leave(&mut self) {
        self.levels.pop();
    }

    /// Whether the entry at `path` (named `name`, a directory or not) is skipped.
    pub fn skips(&self, path: &Path, name: &str, is_dir: bool) -> bool {
        let (mut by_ignore, mut by_gitignore, mut by_exclude) = (None, None, None);
        for level in self.levels.iter().rev() {
            by_ignore = by_ignore.or_else(|| decide(&level.ignore, path, is_dir));
            by_gitignore = by_gitignore.or_else(|| decide(&level.gitignore, path, is_dir));
            by_exclude = by_exclude.or_else(|| decide(&level.exclude, path, is_dir));
        }
        match by_ignore.or(by_gitignore).or(by_exclude) {
            Some(skip) => skip,
            None => name.starts_with('.'),
        }
    }
}

/// `Some(true)` when the rules ignore the path, `Some(false)` when a `!` rule keeps it.
fn decide(rules: &Option<Gitignore>, path: &Path, is_dir: bool) -> Option<bool> {
    match rules.as_ref()?.matched(path, is_dir) {
        Match::None => None,
        Match::Ignore(_) => Some(true),
        Match::Whitelist(_) => Some(false),
    }
}

/// The rules of the ignore file `name` in the directory `path` (open at `dir`); `None` when it
/// cannot be read. Lines that are not valid patterns are left out, as git does.
fn matcher(path: &Path, dir: &Descriptor, name: &str) -> Option<Gitignore> {
    let mut bytes = Vec::new();
    match read_file(dir, name, MAX_IGNORE_FILE_BYTES, &mut bytes) {
        Ok(Read::Whole) => {}
        _ => return None,
    }
    let text = String::from_utf8_lossy(&bytes);
    let from = PathBuf::from(path).join(name);
    let mut builder = GitignoreBuilder::new(path);
    for line in text.lines() {
        let _ = builder.add_line(Some(from.clone()), line);
    }
    builder.build().ok()
}
