//! Walking a directory tree for find and grep: files only, sorted by name at every level and
//! depth first, so results are the same on every run. By default the walk skips what ripgrep and
//! fd skip: files and directories that `.gitignore` (in a git checkout or not), `.ignore` or
//! `.git/info/exclude` exclude, and hidden ones (names starting with `.`); see ignore_rules.rs.
//! `include_ignored` keeps all of them except `.git` itself. Symlinks are not followed.
//!
//! The walk talks to `wasi:filesystem` directly: one listing per directory (entry types come with
//! it, no stat per entry), each directory and file opened by its name relative to its parent's
//! handle, and ignore files read only where the listing shows them.

use crate::file_bytes::{Read, read_file};
use crate::ignore_rules::IgnoreRules;
use crate::roots::Root;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

/// Directories deeper than this are not kept open while the walk is below them (a call may hold
/// only so many files open); their entries are opened from the granted directory instead.
const MAX_OPEN_LEVELS: usize = 64;

/// Which files a walk skips.
#[derive(Clone, Copy, Debug, Default)]
pub struct Skip {
    /// Keep files that ignore files exclude, and hidden files.
    pub include_ignored: bool,
}

/// A file the walk found.
pub struct FoundFile {
    /// Its path as the guest sees it.
    pub path: PathBuf,
    /// The directory it is opened from, and its path relative to that directory.
    dir: Rc<Descriptor>,
    name: String,
}

impl FoundFile {
    /// Reads the file into `buffer` unless it is larger than `max_bytes`.
    pub fn read(&self, max_bytes: u64, buffer: &mut Vec<u8>) -> Result<Read, ErrorCode> {
        read_file(&self.dir, &self.name, max_bytes, buffer)
    }
}

/// One directory being walked.
struct Level {
    path: PathBuf,
    /// Its path relative to the granted directory (`.` for the directory itself).
    relative: String,
    /// Its handle, or `None` past [`MAX_OPEN_LEVELS`].
    dir: Option<Rc<Descriptor>>,
    /// Its entries not yet visited, sorted by name, in reverse (the next one is last).
    entries: Vec<(String, DescriptorType)>,
}

/// Every file under a directory (or the file itself), in a stable order.
pub struct Walk {
    root: Rc<Descriptor>,
    levels: Vec<Level>,
    rules: Option<IgnoreRules>,
    single: Option<FoundFile>,
}

/// Walks `base`, a path inside `root` as `Roots::resolve` returns it. A path that cannot be opened
/// yields nothing.
pub fn files_under(root: &Root, base: &Path, skip: Skip) -> Walk {
    let mut walk = Walk {
        root: root.descriptor.clone(),
        levels: Vec::new(),
        rules: (!skip.include_ignored).then(IgnoreRules::default),
        single: None,
    };
    let relative = root.relative(base);
    match root
        .descriptor
        .stat_at(PathFlags::SYMLINK_FOLLOW, &relative)
    {
        Ok(stat) if stat.type_ == DescriptorType::Directory => {
            if let Some(rules) = &mut walk.rules {
                enter_parents(rules, root, base);
            }
            let dir = walk.root.clone();
            walk.enter(base.to_path_buf(), relative.clone(), dir, &relative);
        }
        Ok(stat) if stat.type_ == DescriptorType::RegularFile => {
            walk.single = Some(FoundFile {
                path: base.to_path_buf(),
                dir: walk.root.clone(),
                name: relative,
            });
        }
        _ => {}
    }
    walk
}

impl Walk {
    /// Opens and lists the directory at `path` (`name_in_from` inside `from`, its parent's handle
    /// or the granted directory's) and makes it the current level.
    fn enter(
        &mut self,
        path: PathBuf,
        relative: String,
        from: Rc<Descriptor>,
        name_in_from: &str,
    ) -> Option<()> {
        let dir = from
            .open_at(
                PathFlags::empty(),
                name_in_from,
                OpenFlags::DIRECTORY,
                DescriptorFlags::READ,
            )
            .ok()?;
        let mut entries = list(&dir)?;
        if let Some(rules) = &mut self.rules {
            rules.enter(&path, &dir, &entries);
        }
        entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
        let dir = (self.levels.len() < MAX_OPEN_LEVELS).then(|| Rc::new(dir));
        self.levels.push(Level {
            path,
            relative,
            dir,
            entries,
        });
        Some(())
    }
}

/// Whether the walk leaves out the entry at `path`: `.git` always, else what the rules skip.
fn skips(rules: &Option<IgnoreRules>, path: &Path, name: &str, is_dir: bool) -> bool {
    name == ".git"
        || rules
            .as_ref()
            .is_some_and(|rules| rules.skips(path, name, is_dir))
}

impl Iterator for Walk {
    type Item = FoundFile;

    fn next(&mut self) -> Option<FoundFile> {
        if let Some(single) = self.single.take() {
            return Some(single);
        }
        loop {
            let level = self.levels.last_mut()?;
            let Some((name, kind)) = level.entries.pop() else {
                self.levels.pop();
                if let Some(rules) = &mut self.rules {
                    rules.leave();
                }
                continue;
            };
            let path = level.path.join(&name);
            let is_dir = match kind {
                DescriptorType::RegularFile => false,
                DescriptorType::Directory => true,
                _ => continue,
            };
            if skips(&self.rules, &path, &name, is_dir) {
                continue;
            }
            // The path from the granted directory, needed for a directory (its level) and to open
            // anything below a level not kept open.
            let relative = match level.relative.as_str() {
                _ if !is_dir && level.dir.is_some() => String::new(),
                "." => name.clone(),
                parent => format!("{parent}/{name}"),
            };
            // Opened from the parent's handle by name, or from the granted directory by the whole
            // relative path when the parent is not kept open.
            let (from, name_in_from) = match &level.dir {
                Some(dir) => (dir.clone(), name),
                None => (self.root.clone(), relative.clone()),
            };
            if !is_dir {
                return Some(FoundFile {
                    path,
                    dir: from,
                    name: name_in_from,
                });
            }
            // An unreadable directory is left out, as ripgrep does.
            let _ = self.enter(path, relative, from, &name_in_from);
        }
    }
}

/// The rules of the directories between the granted directory and `base` (not `base` itself,
/// whose rules the walk reads from its listing).
fn enter_parents(rules: &mut IgnoreRules, root: &Root, base: &Path) {
    let Ok(below) = base.strip_prefix(&root.path) else {
        return;
    };
    if below.as_os_str().is_empty() {
        return;
    }
    let mut path = root.path.clone();
    rules.enter_parent(&path, &root.descriptor);
    let parts: Vec<_> = below.components().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        path.push(part);
        let relative = root.relative(&path);
        if let Ok(dir) = root.descriptor.open_at(
            PathFlags::empty(),
            &relative,
            OpenFlags::DIRECTORY,
            DescriptorFlags::READ,
        ) {
            rules.enter_parent(&path, &dir);
        }
    }
}

/// The entries of the directory open at `dir`, with their types.
fn list(dir: &Descriptor) -> Option<Vec<(String, DescriptorType)>> {
    let stream = dir.read_directory().ok()?;
    let mut entries = Vec::new();
    while let Ok(Some(entry)) = stream.read_directory_entry() {
        entries.push((entry.name, entry.type_));
    }
    Some(entries)
}
