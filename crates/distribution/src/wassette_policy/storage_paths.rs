//! A Wassette policy's storage URIs made comparable, and whether a deny can reach an allowed
//! directory. A path is read only when it is plain: letters, digits, `. _ - ~`, spaces and `/`
//! (and, in a deny, glob syntax). A deny with anything else (`%` escapes, `\`, `$`, quotes,
//! brackets of other shells, a `..` whose meaning depends on links that may change, more than
//! [`MAX_PARTS`] parts) is held to reach every directory; an allow with anything else, or with
//! `..`, is not proposed. A relative path is taken from the policy file's directory, `.`, empty
//! parts and a trailing `/` dropped, and a `localhost` authority (in any case) read as the root.
//! A deny is also followed on disk as the kernel would follow it (symlinks, dangling ones to
//! where they point, globs matched against the entries that exist, a bounded number of them),
//! and read from home when it starts with `~`. A deny is held to reach an allow unless it
//! provably cannot: the literal part of every reading (everything before its first glob
//! character) diverges from the allowed path, compared without regard to case, as written and
//! with its symlinks resolved.

use super::disk_walk::walk_on_disk;
use super::file_identity;
use std::path::{Path, PathBuf};

/// The characters that make a path part a glob.
pub(super) const GLOB: [char; 6] = ['*', '?', '[', ']', '{', '}'];

/// The most parts a path may have to be read (the kernel's `PATH_MAX` of 4096 bytes allows
/// about 2048; no directory a policy grants is this deep).
pub(super) const MAX_PARTS: usize = 256;

/// The longest path, in bytes, that is read (the kernel's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// Whether `c` may appear in a plain path: an ASCII letter or digit, `. _ - ~`, a space or `/`,
/// and in a deny (`glob`) glob syntax; in an allow, any Unicode letter or digit too (an allow
/// is granted as written, so only a deny's spelling needs to be one cordon can compare).
fn is_plain(c: char, glob: bool) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, '.' | '_' | '-' | '~' | ' ' | '/')
        || (glob && (GLOB.contains(&c) || matches!(c, ',' | '!' | '^')))
        || (!glob && c.is_alphanumeric())
}

/// A relative `path` whose first part may name this machine as a host (RFC 8089 lets a file
/// URI name it by any of its names or addresses: see [`super::addresses::name_is_this_machine`])
/// read as an absolute path: the rest, or the root when there is none.
fn without_authority(path: &str) -> Option<String> {
    if path.starts_with('/') || path.starts_with('~') {
        return None;
    }
    let (first, rest) = path.split_once('/').unwrap_or((path, ""));
    super::addresses::name_is_this_machine(first).then(|| format!("/{rest}"))
}

/// Whether the absolute `path` (or one from a host) names what depends on the process reading
/// it: `/proc/self/cwd`, `/proc/PID/...`, `/dev/fd/N`, `/dev/stdin`.
fn depends_on_the_process(path: &str) -> bool {
    let absolute = path.trim_start_matches(' ');
    let absolute = without_authority(absolute).unwrap_or_else(|| absolute.to_string());
    let parts = parts_of(&absolute);
    absolute.starts_with('/') && matches!(parts.first(), Some(&"proc") | Some(&"dev"))
}

/// An allowed directory, as cordon would grant it.
#[derive(Debug, Clone)]
pub(super) struct AllowedDir {
    /// The directory on the host (the normalised path, symlinks as written).
    pub host: PathBuf,
    /// Where the component sees it.
    pub guest: String,
}

/// Why an allow URI is not one directory cordon can grant.
#[derive(Debug)]
pub(super) enum NotADirectory {
    /// A glob or file pattern inside the path.
    Pattern,
    /// A relative path with `..` (which may leave the policy's directory, or follow a link).
    LeavesBase,
    /// An absolute path with `..`, which the kernel takes back from where a link leads, not as
    /// written.
    Dots,
    /// A character outside a plain path, or too long a path.
    Unreadable,
    /// A `localhost` authority, which Wassette and cordon may read differently.
    NamesAHost,
    /// Not an `fs://` URI.
    NotFs,
    /// `fs://` with no path.
    Empty,
}

impl NotADirectory {
    /// Why the allow is left out, and what to write instead.
    pub(super) fn reason(&self) -> &'static str {
        match self {
            Self::LeavesBase => {
                "a relative path with `..`, which may leave the policy's directory or follow a link; write the directory it means, or grant it by hand"
            }
            Self::Dots => {
                "a path with `..`, which the kernel takes back from where a link leads rather than as written; write the directory it means"
            }
            Self::Unreadable => {
                "not a plain path (letters, digits, . _ - ~, spaces and /, at most 4096 bytes); write the directory as it is named on disk, or grant it by hand"
            }
            Self::NamesAHost => {
                "its first part names this machine as a host (localhost, its host name, an address); write the path without it"
            }
            Self::NotFs | Self::Empty => "not an fs:// URI naming a directory",
            Self::Pattern => {
                "cordon grants whole directories (fs://DIR or fs://DIR/**); a glob or file pattern inside a path cannot be granted as narrowly"
            }
        }
    }
}

/// `fs://DIR`, `fs://DIR/` or `fs://DIR/**` as the directory it names, normalised.
pub(super) fn allowed_dir(uri: &str, base: &Path) -> Result<AllowedDir, NotADirectory> {
    let path = uri
        .trim_ascii()
        .strip_prefix("fs://")
        .ok_or(NotADirectory::NotFs)?;
    if path.trim_ascii().is_empty() {
        return Err(NotADirectory::Empty);
    }
    if path.len() > MAX_PATH_BYTES || !path.chars().all(|c| is_plain(c, false) || c == '*') {
        return Err(NotADirectory::Unreadable);
    }
    if without_authority(path).is_some() {
        return Err(NotADirectory::NamesAHost);
    }
    if path.split('/').any(|part| part != part.trim()) || depends_on_the_process(path) {
        return Err(NotADirectory::Unreadable);
    }
    let mut parts = parts_of(path);
    // `DIR/**` is all of DIR; `DIR/*` only its entries, which no directory grant is.
    if parts.last() == Some(&"**") {
        parts.pop();
    }
    if parts.iter().any(|part| part.contains(GLOB)) {
        return Err(NotADirectory::Pattern);
    }
    if parts.contains(&"..") {
        return Err(if path.starts_with('/') {
            NotADirectory::Dots
        } else {
            NotADirectory::LeavesBase
        });
    }
    if parts.len() > MAX_PARTS {
        return Err(NotADirectory::Unreadable);
    }
    let inside: Vec<String> = parts.iter().map(|part| (*part).to_string()).collect();
    if path.starts_with('/') {
        return Ok(AllowedDir {
            host: PathBuf::from(join(&inside)),
            guest: join(&inside),
        });
    }
    let mut host = base_parts(base);
    host.extend(inside.iter().cloned());
    Ok(AllowedDir {
        host: PathBuf::from(join(&host)),
        guest: join(&inside),
    })
}

/// What a deny's URI can match.
#[derive(Debug)]
pub(super) enum DenyReach {
    /// Paths that begin with one of the `starts`: each a normalised absolute path, then, when
    /// its `glob` is set, the characters of the first glob part before its first glob character;
    /// each with what lies under it.
    From {
        starts: Vec<PathStart>,
        /// Where the starts that exist are on disk, to find a bind mount of an allowed
        /// directory (the same directory under another path, which no symlink shows).
        identities: Vec<file_identity::StartIdentity>,
    },
    /// Any path: the URI starts with a glob, has `..` after one, or cannot be read.
    Anywhere(&'static str),
}

/// Where the paths a deny matches begin, in one reading of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PathStart {
    pub literal: String,
    pub glob: bool,
}

/// The reach of the deny `uri`, relative paths taken from `base`. A deny that is not a plain
/// path (see [`is_plain`]) reaches everywhere; a plain one reaches what any of its readings
/// reaches: as written, as the filesystem resolves it (symlinks, globs matching symlinks), with a
/// `localhost` authority as the root, and with a leading `~` as the home directory. `looked_at`
/// counts the entries every deny of the policy has been matched against (see
/// [`super::disk_walk::MAX_ENTRIES_LOOKED_AT`]).
pub(super) fn deny_reach(uri: &str, base: &Path, looked_at: &mut usize) -> DenyReach {
    let Some(path) = uri.trim_ascii().strip_prefix("fs://") else {
        return DenyReach::Anywhere("it is not an fs:// URI cordon can read");
    };
    if path.trim_ascii().is_empty() {
        return DenyReach::Anywhere("it names no path");
    }
    if let Some(odd) = path.chars().find(|c| !is_plain(*c, true)) {
        return DenyReach::Anywhere(if odd.is_control() {
            "it has a NUL or control character cordon cannot read"
        } else if odd == '%' || odd == '\\' {
            "it has an escape (% or \\), which cordon does not decode"
        } else {
            "it has a character outside a plain path (letters, digits, . _ - ~, space, /, globs)"
        });
    }
    let parts = parts_of(path);
    if path.len() > MAX_PATH_BYTES || parts.len() > MAX_PARTS {
        return DenyReach::Anywhere("it is longer than any path cordon reads");
    }
    if parts.contains(&"..") {
        return DenyReach::Anywhere(
            "it has `..`, which follows links that may be made or changed after it is read",
        );
    }
    if depends_on_the_process(path) {
        return DenyReach::Anywhere(
            "it names a path that depends on the process reading it (/proc, /dev/fd), which is not the plugin's",
        );
    }
    let mut readings = vec![path.to_string()];
    // Spaces around the path or its parts (`fs:// /srv/x`, `data /secret`) are read away too.
    let trimmed: Vec<&str> = path.split('/').map(str::trim).collect();
    let trimmed = trimmed.join("/");
    if trimmed != path {
        readings.push(trimmed.trim_start_matches(' ').to_string());
    }
    if let Some(absolute) = without_authority(path) {
        readings.push(absolute);
    }
    for reading in readings.clone() {
        if let Some(after) = reading.strip_prefix('~') {
            if !(after.is_empty() || after.starts_with('/')) {
                return DenyReach::Anywhere("it names another user's home (~user)");
            }
            let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) else {
                return DenyReach::Anywhere("it starts with ~ and HOME is not set");
            };
            readings.push(format!("{}/{after}", home.to_string_lossy()));
        }
    }
    let mut starts = Vec::new();
    for reading in &readings {
        match reading_reach(reading, base, looked_at) {
            DenyReach::From { starts: more, .. } => {
                for start in more {
                    if !starts.contains(&start) {
                        starts.push(start);
                    }
                }
            }
            anywhere => return anywhere,
        }
    }
    DenyReach::From {
        identities: starts
            .iter()
            .map(file_identity::StartIdentity::of)
            .collect(),
        starts,
    }
}

/// The reach of one reading of a deny's path.
fn reading_reach(path: &str, base: &Path, looked_at: &mut usize) -> DenyReach {
    let parts = parts_of(path);
    let relative = !path.starts_with('/');
    if relative && parts.first().is_some_and(|first| first.contains(GLOB)) {
        return DenyReach::Anywhere("it starts with a glob, so it can match under any directory");
    }
    let glob_at = parts.iter().position(|part| part.contains(GLOB));
    if parts[glob_at.unwrap_or(parts.len())..].contains(&"..") {
        return DenyReach::Anywhere("it has `..` after a glob");
    }
    let start = if relative {
        base_parts(base)
    } else {
        Vec::new()
    };
    let mut starts = vec![lexical_start(start.clone(), &parts)];
    let mut on_disk = Vec::new();
    let walked = walk_on_disk(
        PathBuf::from(join(&start)),
        &parts,
        0,
        looked_at,
        &mut on_disk,
    );
    if let Err(reason) = walked {
        return DenyReach::Anywhere(reason);
    }
    for found in on_disk {
        if !starts.contains(&found) {
            starts.push(found);
        }
    }
    DenyReach::From {
        starts,
        identities: Vec::new(),
    }
}

/// Where the deny's matches begin when its `parts` are read as text from `start`.
pub(super) fn lexical_start(start: Vec<String>, parts: &[&str]) -> PathStart {
    let glob_at = parts.iter().position(|part| part.contains(GLOB));
    let (plain, rest) = parts.split_at(glob_at.unwrap_or(parts.len()));
    let literal = join(&resolve_dots(start, plain));
    match rest.first() {
        None => PathStart {
            literal,
            glob: false,
        },
        Some(first) => {
            let before_glob = &first[..first.find(GLOB).unwrap_or(first.len())];
            let separator = if literal == "/" { "" } else { "/" };
            PathStart {
                literal: format!("{literal}{separator}{before_glob}"),
                glob: true,
            }
        }
    }
}

/// `path` (absolute) as parts.
pub(super) fn path_parts(path: &Path) -> Vec<String> {
    resolve_dots(Vec::new(), &parts_of(&path.to_string_lossy()))
}

/// Whether the deny `reach` can match the directory `allowed` or anything under or over it,
/// comparing the paths as written and, where they exist, with symlinks resolved.
pub(super) fn may_reach(reach: &DenyReach, allowed: &Path) -> bool {
    let DenyReach::From { starts, identities } = reach else {
        return true;
    };
    let allowed_identity = file_identity::AllowedIdentity::of(allowed);
    if identities
        .iter()
        .any(|start| allowed_identity.reached_by(start))
    {
        return true;
    }
    // Compared without regard to case: a case-insensitive filesystem (or directory) reaches
    // `Data` through `data`.
    let allowed_text = allowed.to_string_lossy().to_lowercase();
    let allowed_forms = [
        Some(allowed_text),
        resolved_dir(allowed).map(|dir| dir.to_lowercase()),
    ];
    allowed_forms.iter().flatten().any(|allow| {
        starts
            .iter()
            .any(|start| overlaps(allow, &start.literal.to_lowercase(), start.glob))
    })
}

/// Whether a deny of `literal` (a path, or when `glob` the text all its matches begin with)
/// can match `allow`, a path under it, or a path it lies under.
fn overlaps(allow: &str, literal: &str, glob: bool) -> bool {
    let under = |inner: &str, outer: &str| {
        outer == "/"
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    if glob {
        // A match begins with `literal`: it is `allow`, lies over it or under it only if one of
        // the two texts begins with the other (at a part boundary when `allow` is the shorter).
        allow.starts_with(literal) || under(literal, allow)
    } else {
        under(allow, literal) || under(literal, allow)
    }
}

/// The parts of `path` with empty ones (`//`, a trailing `/`) and `.` dropped.
fn parts_of(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect()
}

/// `start` followed by `parts`, each `..` taking one part back (never above the root).
fn resolve_dots(mut start: Vec<String>, parts: &[&str]) -> Vec<String> {
    for part in parts {
        if *part == ".." {
            start.pop();
        } else {
            start.push((*part).to_string());
        }
    }
    start
}

/// The policy's directory as parts, normalised like every path.
fn base_parts(base: &Path) -> Vec<String> {
    resolve_dots(Vec::new(), &parts_of(&base.to_string_lossy()))
}

/// The parts as an absolute path (`/` for none).
fn join(parts: &[String]) -> String {
    format!("/{}", parts.join("/"))
}

/// `dir` with its symlinks resolved, when it exists.
fn resolved_dir(dir: &Path) -> Option<String> {
    let resolved = dir.canonicalize().ok()?;
    Some(resolved.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(uri: &str) -> DenyReach {
        deny_reach(uri, Path::new("/policy"), &mut 0)
    }

    fn reaches(uri: &str, allowed: &str) -> bool {
        may_reach(&reach(uri), Path::new(allowed))
    }

    #[test]
    fn denies_in_any_spelling_reach_the_same_directories() {
        for deny in [
            "fs://data/secret/**",
            "fs://./data/secret/**",
            "fs://data//secret/",
            "fs:///policy/data/secret",
            "fs://data/x/../secret/**",
            "fs://**/secret/**",
            "fs://data/sec*",
            "fs:///**",
            "fs://data",
            "/policy/data/secret",
        ] {
            assert!(reaches(deny, "/policy/data"), "{deny}");
        }
        for deny in ["fs://other/**", "fs://data2/**", "fs:///elsewhere/secret"] {
            assert!(!reaches(deny, "/policy/data"), "{deny}");
        }
        assert!(!reaches("fs://data/sec*", "/policy/data/public"));
        assert!(reaches("fs:///policy/dat*/x", "/policy/data"));
        assert!(!reaches("fs:///policy/dat*/x", "/policy/other"));
        // Relative and starting with a glob: it can match under any directory.
        assert!(reaches("fs://dat*/x", "/elsewhere"));
    }

    #[test]
    fn allowed_directories_are_normalised() {
        let base = Path::new("/policy");
        let dir = allowed_dir("fs://./data//sub/**", base).unwrap();
        assert_eq!(dir.host, Path::new("/policy/data/sub"));
        assert_eq!(dir.guest, "/data/sub");
        // `..` is taken back by the kernel from where a link leads, not as written.
        assert!(matches!(
            allowed_dir("fs://data/sub/../pub", base),
            Err(NotADirectory::LeavesBase)
        ));
        assert!(matches!(
            allowed_dir("fs:///srv/link/../pub", base),
            Err(NotADirectory::Dots)
        ));
        for unreadable in [
            "fs://data\u{3000}",
            "fs://data%2Fx",
            "fs://da\\ta",
            "fs://$HOME/x",
        ] {
            assert!(
                matches!(
                    allowed_dir(unreadable, base),
                    Err(NotADirectory::Unreadable)
                ),
                "{unreadable}"
            );
        }
        assert!(matches!(
            allowed_dir("fs://LocalHost./srv", base),
            Err(NotADirectory::NamesAHost)
        ));
        let dir = allowed_dir("fs:///srv//data/./", base).unwrap();
        assert_eq!(
            (dir.host.to_str(), dir.guest.as_str()),
            (Some("/srv/data"), "/srv/data")
        );
        assert!(matches!(
            allowed_dir("fs://../up", base),
            Err(NotADirectory::LeavesBase)
        ));
        assert!(matches!(
            allowed_dir("fs://logs/*.log", base),
            Err(NotADirectory::Pattern)
        ));
    }
}
