//! A Wassette storage allow (`fs://DIR`, `fs://DIR/` or `fs://DIR/**`) as the directory grant
//! cordon would write, or why it is not one. Only a plain path is read: letters, digits,
//! `. _ -`, spaces inside a name, and `/`; `.` and empty parts are dropped. A relative path is
//! taken from the policy file's directory and seen by the component at `/` + the path; an
//! absolute one at the same path. What a directory grant cannot express as narrowly (a glob or
//! file pattern, a single file, write-only access) or what could be read two ways (`..`, a
//! first part that names a host, `/proc` and `/dev`, a symbolic link on the way) is refused.

use super::ProposedDir;
use std::path::{Path, PathBuf};

/// The longest path, in bytes, that is read (the kernel's `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// The directory grant for the allow of `uri` with `access`, relative paths taken from `base`.
pub(super) fn proposed_dir(
    uri: &str,
    access: &[String],
    base: &Path,
) -> Result<ProposedDir, String> {
    if let Some(unknown) = access
        .iter()
        .find(|a| !matches!(a.as_str(), "read" | "write"))
    {
        return Err(format!("unknown access {unknown:?}"));
    }
    let read_write = access.iter().any(|access| access == "write");
    if !access.iter().any(|access| access == "read") {
        return Err(if read_write {
            "write-only access; cordon's read-write grant would allow reading too".into()
        } else {
            "no access is listed".into()
        });
    }
    let path = uri
        .trim_ascii()
        .strip_prefix("fs://")
        .filter(|path| !path.trim_ascii().is_empty())
        .ok_or("not an fs:// URI naming a directory")?;
    let mut parts: Vec<&str> = path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    // `DIR/**` is all of DIR; `DIR/*` only its entries, which no directory grant is.
    if parts.last() == Some(&"**") {
        parts.pop();
    }
    if parts
        .iter()
        .any(|part| part.contains(['*', '?', '[', ']', '{', '}']))
    {
        return Err("cordon grants whole directories (fs://DIR or fs://DIR/**); a glob or file pattern inside a path cannot be granted as narrowly".into());
    }
    let plain = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | ' ');
    if path.len() > MAX_PATH_BYTES
        || !parts.iter().all(|part| part.chars().all(plain))
        || parts.iter().any(|part| *part != part.trim())
    {
        return Err("not a plain path (letters, digits, . _ - and /, spaces only inside a name, at most 4096 bytes); write the directory as it is named on disk, or grant it by hand".into());
    }
    if parts.contains(&"..") {
        return Err("a path with `..`, which the kernel takes back from where a link leads rather than as written; write the directory it means".into());
    }
    let absolute = path.starts_with('/');
    if !absolute && parts.first().is_some_and(|first| names_a_host(first)) {
        return Err(
            "its first part names a host (localhost or an address); write the path without it"
                .into(),
        );
    }
    if absolute && matches!(parts.first(), Some(&"proc") | Some(&"dev")) {
        return Err(
            "/proc and /dev name what depends on the process reading them, not the plugin's files"
                .into(),
        );
    }
    let guest = format!("/{}", parts.join("/"));
    let host = if absolute {
        PathBuf::from(&guest)
    } else {
        base.join(parts.join("/"))
    };
    match host.canonicalize() {
        Ok(real) if real != host => Err(format!(
            "{} is reached through a symbolic link (it is {}); write the directory itself",
            host.display(),
            real.display()
        )),
        Ok(real) if real.is_dir() => Ok(ProposedDir {
            host: real,
            guest,
            read_write,
        }),
        _ => Err(format!(
            "{} is not a directory here; cordon grants directories that exist",
            host.display()
        )),
    }
}

/// Whether the first part of a relative path names a host, as `fs://localhost/srv` would to a
/// reader of URIs: `localhost` (or a name under it) in any case, or an IP address.
fn names_a_host(first: &str) -> bool {
    let name = first.to_ascii_lowercase();
    let name = name.strip_suffix('.').unwrap_or(&name);
    name == "localhost" || name.ends_with(".localhost") || name.parse::<std::net::IpAddr>().is_ok()
}
