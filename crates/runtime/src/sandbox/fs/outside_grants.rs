//! Where a path outside every grant lands. wasi-libc (and so Rust's std, CPython and C) resolves
//! an absolute path by the preopen with the longest matching prefix, and when none matches it
//! fails with `ENOENT` without asking the host: the host could neither report such a read nor
//! say why it failed, and the plugin saw "No such file or directory" for a file it was simply not
//! granted. So every sandbox also gets a preopen at `/` (unless a grant is there): a handle to an
//! empty directory removed as soon as it was opened, on which the gate refuses every open with
//! `not-permitted`, reports it like any refused open (event, audit log) and names it, with what
//! is granted, in the call's refusals (a tool that then fails is `capability_denied`).
//!
//! Nothing can be created in a removed directory, and it lists as empty; its link count, 0, tells
//! it from any granted directory for code that enumerates the preopens (the bundled `fs` plugin,
//! the JavaScript SDK).

use std::sync::OnceLock;
use wasmtime_wasi::filesystem::Dir;
use wasmtime_wasi::{FsPerms, OpenMode};

/// The guest path of the directory.
pub(crate) const GUEST_PATH: &str = "/";

/// The process's one removed, empty directory, opened read-only; `None` when it could not be made
/// (then sandboxes have no preopen at `/`, and a path outside the grants is `ENOENT` again).
pub(crate) fn directory() -> Option<Dir> {
    static DIRECTORY: OnceLock<Option<Dir>> = OnceLock::new();
    DIRECTORY
        .get_or_init(|| match removed_empty_directory() {
            Ok(handle) => Some(Dir::new(handle, FsPerms::ReadOnly, OpenMode::READ, true)),
            Err(err) => {
                tracing::warn!(
                    "no directory for paths outside the grants ({err}): a plugin opening one gets `no such file` instead of a refusal naming its grants"
                );
                None
            }
        })
        .clone()
}

/// Whether `dir` is that directory.
pub(crate) fn is_it(dir: &Dir) -> bool {
    directory().is_some_and(|outside| std::sync::Arc::ptr_eq(&outside.dir, &dir.dir))
}

/// A private temporary directory (mode 0700, a random name), opened, then removed.
fn removed_empty_directory() -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let made = tempfile::Builder::new()
        .prefix("cordon-outside-grants-")
        .tempdir()?;
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(made.path())?;
    made.close()?;
    Ok(handle)
}

/// The granted directories as a refusal names them: `/data (read-only), /out (read-write)`.
pub(crate) fn describe_grants(preopens: &[(Dir, String)]) -> String {
    let granted: Vec<String> = preopens
        .iter()
        // `.` is the working directory again, under the name relative paths resolve by.
        .filter(|(_, guest)| guest != ".")
        .map(|(dir, guest)| {
            let mode = match dir.perms {
                FsPerms::ReadWrite => "read-write",
                _ => "read-only",
            };
            format!("{guest} ({mode})")
        })
        .collect();
    if granted.is_empty() {
        "no directory is granted to this plugin".into()
    } else {
        format!("the granted directories are {}", granted.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_empty_removed_and_read_only() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = directory().expect("made");
        let metadata = dir.dir.metadata().unwrap();
        assert_eq!(metadata.nlink(), 0, "removed");
        assert!(is_it(&dir));
        assert!(matches!(dir.perms, FsPerms::ReadOnly));
        assert_eq!(
            describe_grants(&[(dir, "/data".into())]),
            "the granted directories are /data (read-only)"
        );
        assert_eq!(
            describe_grants(&[]),
            "no directory is granted to this plugin"
        );
    }
}
