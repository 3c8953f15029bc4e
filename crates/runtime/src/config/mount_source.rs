//! Where a path really lives: its filesystem (the device, `major:minor`) and its path inside that
//! filesystem, from `/proc/self/mountinfo`. Two names reached through different bind mounts are
//! the same place here even when their paths differ: a file bind-mounted from inside a read-write
//! grant onto a plugin file or a transcript is found inside the grant, where device and inode
//! comparisons of directories cannot see it.

use std::path::{Path, PathBuf};

/// The mount table of this process, in mount order.
pub(super) struct Mounts(Vec<Mount>);

struct Mount {
    device: String,
    /// What of the filesystem is mounted (`/` for the whole of it, a file or directory for a bind).
    root: PathBuf,
    /// Where it is mounted.
    point: PathBuf,
}

impl Mounts {
    /// This process's mounts; `None` where there is no `/proc` to read them from.
    pub(super) fn read() -> Option<Self> {
        std::fs::read_to_string("/proc/self/mountinfo")
            .ok()
            .map(|text| Self::parse(&text))
    }

    /// Parses mountinfo lines: `ID PARENT MAJOR:MINOR ROOT POINT OPTIONS ... - TYPE SOURCE ...`.
    pub(super) fn parse(text: &str) -> Self {
        Self(
            text.lines()
                .filter_map(|line| {
                    let mut fields = line.split(' ');
                    let device = fields.nth(2)?.to_string();
                    let root = PathBuf::from(unescape(fields.next()?));
                    let point = PathBuf::from(unescape(fields.next()?));
                    Some(Mount {
                        device,
                        root,
                        point,
                    })
                })
                .collect(),
        )
    }

    /// The filesystem `path` (absolute, links resolved) lives on, and its path inside it: through
    /// the mount on top at the longest mount point that contains it.
    pub(super) fn locate(&self, path: &Path) -> Option<(String, PathBuf)> {
        let mount = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, mount)| path.starts_with(&mount.point))
            .max_by_key(|(order, mount)| (mount.point.components().count(), *order))?
            .1;
        let rest = path.strip_prefix(&mount.point).ok()?;
        Some((mount.device.clone(), mount.root.join(rest)))
    }

    /// Whether `path` lives inside `directory`, however each is mounted.
    pub(super) fn inside(&self, path: &Path, directory: &Path) -> bool {
        match (self.locate(path), self.locate(directory)) {
            (Some((device, at)), Some((directory_device, directory_at))) => {
                device == directory_device && at.starts_with(directory_at)
            }
            _ => false,
        }
    }
}

/// A mountinfo field with its octal escapes (`\040` for a space) decoded.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = field
                .get(i + 1..i + 4)
                .and_then(|digits| u8::from_str_radix(digits, 8).ok())
        {
            out.push(code);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:25 / /proc rw - proc proc rw
100 22 8:1 /srv/work/data/evil.wasm /srv/work/plugins/evil.wasm rw,relatime shared:1 - ext4 /dev/sda1 rw
101 22 8:1 /srv/work/data /mnt/my\\040grant rw,relatime shared:1 - ext4 /dev/sda1 rw
102 22 0:40 / /srv/work/plugins/other.wasm rw - tmpfs tmpfs rw
";

    #[test]
    fn a_file_bind_mounted_from_inside_a_grant_is_found_inside_it() {
        let mounts = Mounts::parse(TABLE);
        assert_eq!(
            mounts.locate(Path::new("/srv/work/plugins/evil.wasm")),
            Some(("8:1".into(), PathBuf::from("/srv/work/data/evil.wasm")))
        );
        assert!(mounts.inside(
            Path::new("/srv/work/plugins/evil.wasm"),
            Path::new("/srv/work/data")
        ));
        assert!(
            mounts.inside(
                Path::new("/srv/work/plugins/evil.wasm"),
                Path::new("/mnt/my grant")
            ),
            "a grant reached through a bind mount of its own, with an escaped name"
        );
        assert!(!mounts.inside(
            Path::new("/srv/work/plugins/fine.wasm"),
            Path::new("/srv/work/data")
        ));
        assert!(
            !mounts.inside(
                Path::new("/srv/work/plugins/other.wasm"),
                Path::new("/srv/work/data")
            ),
            "another filesystem"
        );
        assert!(mounts.inside(Path::new("/proc/self"), Path::new("/proc")));
    }
}
