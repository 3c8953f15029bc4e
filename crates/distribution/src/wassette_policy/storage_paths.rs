//! A Wassette policy's storage URIs made comparable, and whether a deny can reach an allowed
//! directory. Every path is taken the same way, allow or deny: a relative one from the policy
//! file's directory, `.`, empty parts (`//`) and a trailing `/` dropped, `..` taken back one part
//! (lexically, before anything is looked up). Where the paths exist they are also compared with
//! their symlinks resolved. A deny is held to reach an allow unless it provably cannot: its
//! literal part (everything before its first glob character) diverges from the allowed path.

use std::path::{Path, PathBuf};

/// The characters that make a path part a glob.
const GLOB: [char; 6] = ['*', '?', '[', ']', '{', '}'];

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
    /// A relative path whose `..` leaves the policy's directory.
    LeavesBase,
    /// Not an `fs://` URI.
    NotFs,
    /// `fs://` with no path.
    Empty,
}

/// `fs://DIR`, `fs://DIR/`, `fs://DIR/**` or `fs://DIR/*` as the directory it names, normalised.
pub(super) fn allowed_dir(uri: &str, base: &Path) -> Result<AllowedDir, NotADirectory> {
    let path = uri
        .trim()
        .strip_prefix("fs://")
        .ok_or(NotADirectory::NotFs)?;
    let mut parts = parts_of(path);
    if matches!(parts.last(), Some(&"**") | Some(&"*")) {
        parts.pop();
    }
    if path.trim().is_empty() {
        return Err(NotADirectory::Empty);
    }
    if parts.iter().any(|part| part.contains(GLOB)) {
        return Err(NotADirectory::Pattern);
    }
    if path.starts_with('/') {
        let absolute = resolve_dots(Vec::new(), &parts);
        return Ok(AllowedDir {
            host: PathBuf::from(join(&absolute)),
            guest: join(&absolute),
        });
    }
    let inside = resolve_dots_within(&parts).ok_or(NotADirectory::LeavesBase)?;
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
    /// Paths that begin with `literal` (a normalised absolute path, then, when `glob`, the
    /// characters of the first glob part before its first glob character), each with what lies
    /// under it.
    From { literal: String, glob: bool },
    /// Any path: the URI starts with a glob, has `..` after one, or cannot be read.
    Anywhere(&'static str),
}

/// The reach of the deny `uri`, relative paths taken from `base`.
pub(super) fn deny_reach(uri: &str, base: &Path) -> DenyReach {
    let Some(path) = uri.trim().strip_prefix("fs://") else {
        return DenyReach::Anywhere("it is not an fs:// URI cordon can read");
    };
    if path.trim().is_empty() {
        return DenyReach::Anywhere("it names no path");
    }
    let parts = parts_of(path);
    let relative = !path.starts_with('/');
    if relative && parts.first().is_some_and(|first| first.contains(GLOB)) {
        return DenyReach::Anywhere("it starts with a glob, so it can match under any directory");
    }
    let glob_at = parts.iter().position(|part| part.contains(GLOB));
    let (plain, rest) = parts.split_at(glob_at.unwrap_or(parts.len()));
    if rest.contains(&"..") {
        return DenyReach::Anywhere("it has `..` after a glob");
    }
    let start = if relative {
        base_parts(base)
    } else {
        Vec::new()
    };
    let literal = join(&resolve_dots(start, plain));
    match rest.first() {
        None => DenyReach::From {
            literal,
            glob: false,
        },
        Some(first) => {
            let before_glob = &first[..first.find(GLOB).unwrap_or(first.len())];
            let separator = if literal == "/" { "" } else { "/" };
            DenyReach::From {
                literal: format!("{literal}{separator}{before_glob}"),
                glob: true,
            }
        }
    }
}

/// Whether the deny `reach` can match the directory `allowed` or anything under or over it,
/// comparing the paths as written and, where they exist, with symlinks resolved.
pub(super) fn may_reach(reach: &DenyReach, allowed: &Path) -> bool {
    let DenyReach::From { literal, glob } = reach else {
        return true;
    };
    let allowed_text = allowed.to_string_lossy().into_owned();
    let allowed_forms = [Some(allowed_text.clone()), resolved_dir(allowed)];
    let deny_forms = [Some(literal.clone()), resolved_literal(literal, *glob)];
    allowed_forms.iter().flatten().any(|allow| {
        deny_forms
            .iter()
            .flatten()
            .any(|deny| overlaps(allow, deny, *glob))
    })
}

/// Whether a deny of `literal` (a path, or when `glob` the text all its matches begin with)
/// can match `allow`, a path under it, or a path it lies under.
fn overlaps(allow: &str, literal: &str, glob: bool) -> bool {
    let under = |inner: &str, outer: &str| {
        inner == outer || outer == "/" || inner.starts_with(&format!("{outer}/"))
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

/// `parts` with `..` resolved, or `None` when one goes above where they start.
fn resolve_dots_within(parts: &[&str]) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        if *part == ".." {
            out.pop()?;
        } else {
            out.push((*part).to_string());
        }
    }
    Some(out)
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

/// The deny's literal text with the symlinks of its longest existing directory resolved (a
/// trailing part-prefix before a glob kept as it is).
fn resolved_literal(literal: &str, glob: bool) -> Option<String> {
    let (dir, tail) = if glob {
        let cut = literal.rfind('/')?;
        (&literal[..cut.max(1)], &literal[cut + 1..])
    } else {
        (literal, "")
    };
    let mut existing = PathBuf::from(dir);
    let mut missing: Vec<String> = Vec::new();
    let resolved = loop {
        if let Ok(resolved) = existing.canonicalize() {
            break resolved;
        }
        missing.push(existing.file_name()?.to_string_lossy().into_owned());
        if !existing.pop() {
            return None;
        }
    };
    let mut text = resolved.to_string_lossy().into_owned();
    for part in missing.iter().rev() {
        if !text.ends_with('/') {
            text.push('/');
        }
        text.push_str(part);
    }
    if glob {
        if !text.ends_with('/') {
            text.push('/');
        }
        text.push_str(tail);
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(uri: &str) -> DenyReach {
        deny_reach(uri, Path::new("/policy"))
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
        let dir = allowed_dir("fs://./data//sub/../**", base).unwrap();
        assert_eq!(dir.host, Path::new("/policy/data"));
        assert_eq!(dir.guest, "/data");
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
