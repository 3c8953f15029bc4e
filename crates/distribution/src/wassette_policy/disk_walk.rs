//! A deny followed on disk as the kernel would follow it: a literal part into the entry of that
//! name, a glob part into every entry it may match (and `.` and `..`, which no directory lists),
//! `**` into every directory below, symlinks followed (a dangling one to where it points). The
//! walk is bounded (entries looked at, links, depth) and what it cannot be sure of (a directory
//! it cannot list, `..` where a link may be made later) reaches everywhere.

use super::storage_paths::{GLOB, MAX_PARTS, PathStart, lexical_start, path_parts};
use std::path::{Path, PathBuf};

/// How many directory entries a policy's denies may be matched against on disk, all of them
/// together, before cordon stops looking and holds the rest to reach everywhere.
pub(super) const MAX_ENTRIES_LOOKED_AT: usize = 10_000;

/// Why a deny whose glob may match `..` under a missing directory reaches everywhere.
const DOTS_UNDER_MISSING: &str = "a glob part of it may match `..` under a directory that does not exist yet (which may be made a link to anywhere)";

/// Why a deny whose glob is over a directory cordon cannot list reaches everywhere.
const UNLISTABLE: &str =
    "a glob part of it is over a directory cordon cannot list (its entries may lead anywhere)";

/// Why a deny that made the walk look at too much reaches everywhere.
const TOO_MANY: &str = "the policy's denies match too many paths on disk for cordon to check each";

/// How many symbolic links one path may pass through, as the kernel allows (then `ELOOP`).
const MAX_SYMLINK_HOPS: usize = 40;

/// Follows `parts` from `at` as the filesystem would: a literal part into the entry of that name,
/// `..` up from where `at` really is (after its symlinks), a glob part into every entry it may
/// match, `**` into every directory below. Where the walk ends, or reaches a part that does not
/// exist, the rest is read as text from the real path (symlinks resolved) and pushed to `found`.
/// `Err` when more than [`MAX_ENTRIES_LOOKED_AT`] entries were looked at.
pub(super) fn walk_on_disk(
    at: PathBuf,
    parts: &[&str],
    depth: usize,
    looked_at: &mut usize,
    found: &mut Vec<PathStart>,
) -> Result<(), &'static str> {
    *looked_at += 1;
    if *looked_at > MAX_ENTRIES_LOOKED_AT || depth > MAX_PARTS {
        return Err(TOO_MANY);
    }
    let real = real_path(&at, &mut 0, &mut 0).ok_or(
        "it passes a link cordon cannot follow for certain (a loop, too many links, or `..` after a link or a part that does not exist yet)",
    )?;
    if real.starts_with("/proc") || real.starts_with("/dev") || is_procfs(&real) {
        // `/proc/self`, `/dev/fd`: what they lead to depends on the process reading them.
        return Err(
            "it passes a link into /proc or /dev, where paths depend on the process reading them",
        );
    }
    let Some((part, rest)) = parts.split_first() else {
        found.push(lexical_start(path_parts(&real), &[]));
        return Ok(());
    };
    let stop_here = |found: &mut Vec<PathStart>| {
        let start = lexical_start(path_parts(&real), parts);
        if !found.contains(&start) {
            found.push(start);
        }
    };
    if *part == ".." {
        let mut up = real.clone();
        up.pop();
        return walk_on_disk(up, rest, depth + 1, looked_at, found);
    }
    if !part.contains(GLOB) {
        let next = real.join(part);
        if next.symlink_metadata().is_ok() {
            return walk_on_disk(next, rest, depth + 1, looked_at, found);
        }
        // Not there as written: in another case it may be (a case-insensitive volume reaches
        // `lnk` through `LNK`), so entries of the same name in any case are followed too.
        if let Ok(entries) = std::fs::read_dir(&real) {
            for entry in entries.flatten() {
                *looked_at += 1;
                if *looked_at > MAX_ENTRIES_LOOKED_AT {
                    return Err(TOO_MANY);
                }
                if entry.file_name().to_string_lossy().to_lowercase() == part.to_lowercase() {
                    walk_on_disk(entry.path(), rest, depth + 1, looked_at, found)?;
                }
            }
        }
        if rest
            .iter()
            .any(|later| *later != "**" && later.contains(GLOB) && glob_may_match(later, ".."))
        {
            return Err(DOTS_UNDER_MISSING);
        }
        stop_here(found);
        return Ok(());
    }
    // A glob: where it may match is read from the directory; what it may match next, too.
    stop_here(found);
    if *part != "**" {
        // A directory lists neither `.` nor `..`, and a glob part may match them.
        if glob_may_match(part, ".") {
            walk_on_disk(real.clone(), rest, depth + 1, looked_at, found)?;
        }
        if glob_may_match(part, "..") {
            if real.symlink_metadata().is_err() {
                return Err(DOTS_UNDER_MISSING);
            }
            let mut up = real.clone();
            up.pop();
            walk_on_disk(up, rest, depth + 1, looked_at, found)?;
        }
    }
    let entries = match std::fs::read_dir(&real) {
        Ok(entries) => entries,
        Err(err) if listing_error_reaches_everywhere(&err) => return Err(UNLISTABLE),
        Err(_) => return Ok(()),
    };
    for entry in entries.flatten() {
        *looked_at += 1;
        if *looked_at > MAX_ENTRIES_LOOKED_AT {
            return Err(TOO_MANY);
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if *part == "**" {
            // `**` may stand for this entry and more directories below it, or end here.
            if entry.path().is_dir() {
                walk_on_disk(entry.path(), parts, depth + 1, looked_at, found)?;
            }
            walk_on_disk(entry.path(), rest, depth + 1, looked_at, found)?;
        } else if glob_may_match(part, &name) {
            walk_on_disk(entry.path(), rest, depth + 1, looked_at, found)?;
        }
    }
    Ok(())
}

/// Whether `path` is on a proc filesystem, wherever it is mounted (`self` there is the process
/// reading it).
fn is_procfs(path: &Path) -> bool {
    const PROC_SUPER_MAGIC: u64 = 0x9fa0;
    rustix::fs::statfs(path).is_ok_and(|stats| stats.f_type as u64 == PROC_SUPER_MAGIC)
}

/// Whether a directory that could not be listed for `err` may hold anything: every error but
/// "nothing there" (not found, not a directory; a link made there later is the limit the docs
/// name). A directory cordon cannot list (mode 711) may hold links a process that can enter it
/// follows.
pub(super) fn listing_error_reaches_everywhere(err: &std::io::Error) -> bool {
    !(err.kind() == std::io::ErrorKind::NotFound || err.raw_os_error() == Some(libc::ENOTDIR))
}

/// `path` as the kernel would reach it: every symbolic link followed, a dangling one too (to
/// where it points, which may be made later), `..` taken from where its parent really is, and
/// what does not exist appended as written. `None` when it takes more than [`MAX_SYMLINK_HOPS`]
/// links or more than a few [`MAX_PARTS`] steps (the kernel would refuse such a path too).
fn real_path(path: &Path, hops: &mut usize, steps: &mut usize) -> Option<PathBuf> {
    *steps += 1;
    if *steps > 4 * MAX_PARTS {
        return None;
    }
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    let Some(parent) = path.parent() else {
        return Some(path.to_path_buf());
    };
    let mut here = real_path(parent, hops, steps)?;
    match path.file_name() {
        None => {
            // The path ends in `..`: from a part that does not exist yet, it goes wherever a
            // link made there later would lead.
            here.symlink_metadata().ok()?;
            here.pop();
            return Some(here);
        }
        Some(name) => here.push(name),
    }
    match std::fs::read_link(&here) {
        Ok(_) if *hops >= MAX_SYMLINK_HOPS => None,
        // A dangling link whose target has `..`: where it goes depends on links made later.
        Ok(target)
            if target
                .components()
                .any(|c| c == std::path::Component::ParentDir) =>
        {
            None
        }
        Ok(target) => {
            *hops += 1;
            here.pop();
            real_path(&here.join(target), hops, steps)
        }
        Err(_) => Some(here),
    }
}

/// Whether the glob part `pattern` may match the entry `name` (in any case): `*` and `?` are matched; any other
/// glob syntax is held to match every name.
fn glob_may_match(pattern: &str, name: &str) -> bool {
    // A name cordon cannot compare character for character (bytes that are not UTF-8, read as
    // U+FFFD; a letter whose lower case is longer, such as `İ`) may match any glob.
    let comparable = name
        .chars()
        .all(|c| c != char::REPLACEMENT_CHARACTER && c.to_lowercase().count() == 1);
    // Without regard to case, as every path is compared (a case-insensitive volume).
    !comparable
        || super::name_pattern::is_unreadable(pattern)
        || super::name_pattern::matches(
            &pattern.replace("**", "*").to_lowercase(),
            &name.to_lowercase(),
        )
}
