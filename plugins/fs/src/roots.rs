//! The granted directories (WASI preopens) and how a model's path maps onto them.

use cordon_sdk::ToolError;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};

/// One granted directory, as the guest sees it.
pub struct Root {
    pub path: PathBuf,
    pub writable: bool,
    /// The directory's handle: the walks and reads open paths relative to it.
    pub descriptor: Rc<Descriptor>,
}

/// Every directory this plugin was granted, in the operator's order, and the host's directory for
/// paths outside them, if it gave one.
pub struct Roots(Vec<Root>, Option<Descriptor>);

impl Roots {
    pub fn granted() -> Self {
        let (outside, granted): (Vec<_>, Vec<_>) = get_directories()
            .into_iter()
            .partition(|(descriptor, path)| is_outside_grants(descriptor, path));
        Self(
            granted
                .into_iter()
                .map(|(descriptor, path)| Root {
                    writable: descriptor
                        .get_flags()
                        .map(|flags| flags.contains(DescriptorFlags::MUTATE_DIRECTORY))
                        .unwrap_or(false),
                    path: PathBuf::from(path),
                    descriptor: Rc::new(descriptor),
                })
                .collect(),
            outside.into_iter().next().map(|(descriptor, _)| descriptor),
        )
    }

    /// "/repo (read-only), /scratch (read-write)".
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|root| {
                let mode = if root.writable {
                    "read-write"
                } else {
                    "read-only"
                };
                format!("{} ({mode})", root.path.display())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Maps a path from the model onto a granted directory. Relative paths are taken from the
    /// first granted directory; `..` may not climb out of the directory it starts in.
    pub fn resolve(&self, path: &str) -> Result<(PathBuf, &Root), ToolError> {
        let Some(first) = self.0.first() else {
            return Err(ToolError::denied(
                "this plugin has no directories granted; the operator must add a `dirs` grant for it in cordon.toml",
            ));
        };
        let requested = Path::new(path);
        let absolute = if requested.is_absolute() {
            requested.to_path_buf()
        } else {
            first.path.join(requested)
        };
        let normalized = normalize(&absolute).ok_or_else(|| self.outside(path))?;
        let root = self
            .0
            .iter()
            .filter(|root| normalized.starts_with(&root.path))
            .max_by_key(|root| root.path.components().count())
            .ok_or_else(|| self.outside(path))?;
        Ok((normalized, root))
    }

    /// An absolute glob pattern split at its fixed prefix (the components before the first one
    /// with a glob character, `..` resolved), which must lie inside a granted directory: that
    /// directory, the prefix and the pattern relative to the directory (`/repo/src/*.rs` with
    /// `/repo` granted: `/repo`, `/repo/src` and `src/*.rs`; the directory itself: `**`).
    pub fn split_absolute_pattern(&self, pattern: &str) -> Result<AbsolutePattern<'_>, ToolError> {
        let parts: Vec<&str> = pattern.split('/').filter(|part| !part.is_empty()).collect();
        let fixed = parts
            .iter()
            .position(|part| part.contains(GLOB_CHARACTERS))
            .unwrap_or(parts.len());
        let (prefix, root) = self
            .resolve(&format!("/{}", parts[..fixed].join("/")))
            .map_err(|err| {
                if self.0.is_empty() {
                    err
                } else {
                    self.outside(pattern)
                }
            })?;
        let mut relative: Vec<String> = match root.relative(&prefix).as_str() {
            "." => Vec::new(),
            inside => vec![inside.to_string()],
        };
        relative.extend(parts[fixed..].iter().map(|part| part.to_string()));
        let relative = match relative.join("/") {
            whole if whole.is_empty() => "**".to_string(),
            some => some,
        };
        Ok(AbsolutePattern {
            root,
            prefix,
            has_glob: fixed < parts.len(),
            relative,
        })
    }

    /// Like [`Roots::resolve`], and the directory must be granted read-write.
    pub fn resolve_writable(&self, path: &str) -> Result<PathBuf, ToolError> {
        let (resolved, root) = self.resolve(path)?;
        if !root.writable {
            return Err(ToolError::denied(format!(
                "{} is inside {}, which is granted read-only. Writable directories: {}",
                resolved.display(),
                root.path.display(),
                self.writable_list()
            )));
        }
        Ok(resolved)
    }

    fn writable_list(&self) -> String {
        let list: Vec<String> = self
            .0
            .iter()
            .filter(|r| r.writable)
            .map(|r| r.path.display().to_string())
            .collect();
        if list.is_empty() {
            "none".to_string()
        } else {
            list.join(", ")
        }
    }

    fn outside(&self, path: &str) -> ToolError {
        // Asked of the host too, which refuses it and so reports the attempt (event, audit log).
        if let Some(outside) = &self.1 {
            let _ = outside.open_at(
                PathFlags::empty(),
                path.trim_start_matches('/'),
                OpenFlags::empty(),
                DescriptorFlags::READ,
            );
        }
        ToolError::denied(format!(
            "{path:?} is outside the directories this tool may use: {}. Use a path inside one of them.",
            self.describe()
        ))
    }

    /// `path` does not exist: names it and the directories the tool may use.
    pub fn missing(&self, path: &Path) -> ToolError {
        ToolError::new(format!(
            "{} does not exist; the directories you may use: {}",
            path.display(),
            self.describe()
        ))
    }

    /// A `wasi:filesystem` error on `path`, for the model: the path as the plugin sees it, what
    /// went wrong, and the granted directories when the path does not exist or the sandbox
    /// refused it (a symlink leading out of the grants).
    pub fn fs_error(&self, path: &Path, code: ErrorCode) -> ToolError {
        let problem = match code {
            ErrorCode::NoEntry => Problem::Missing,
            ErrorCode::NotDirectory => Problem::NotDirectory,
            ErrorCode::IsDirectory => Problem::IsDirectory,
            ErrorCode::Access | ErrorCode::NotPermitted | ErrorCode::ReadOnly => Problem::Denied,
            ErrorCode::Quota => Problem::Other("too many files open in this call".into()),
            ErrorCode::Unsupported => {
                Problem::Other("not a regular file or directory (a FIFO, device or socket)".into())
            }
            ErrorCode::Loop => Problem::Other("too many levels of symbolic links".into()),
            // "Bad descriptor, similar to `EBADF` in POSIX.": the words before the comparison.
            other => Problem::Other(
                other
                    .message()
                    .split(", similar to")
                    .next()
                    .unwrap_or_default()
                    .to_lowercase(),
            ),
        };
        self.explain(path, problem)
    }

    /// A `std::fs` error on `path`, explained as [`Roots::fs_error`] does.
    pub fn io_error(&self, path: &Path, err: &std::io::Error) -> ToolError {
        use std::io::ErrorKind;
        let problem = match err.kind() {
            ErrorKind::NotFound => Problem::Missing,
            ErrorKind::NotADirectory => Problem::NotDirectory,
            ErrorKind::IsADirectory => Problem::IsDirectory,
            ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => Problem::Denied,
            ErrorKind::InvalidData => Problem::NotText,
            _ => {
                // "Quota exceeded (os error 48)": the sentence without the guest's errno.
                let message = err.to_string();
                let message = match message.rfind(" (os error ") {
                    Some(at) => message[..at].to_string(),
                    None => message,
                };
                Problem::Other(message)
            }
        };
        self.explain(path, problem)
    }

    fn explain(&self, path: &Path, problem: Problem) -> ToolError {
        let shown = path.display();
        let grants = self.describe();
        match problem {
            Problem::Missing => self.missing(path),
            Problem::NotDirectory => {
                let file = self.file_on_the_way(path).map_or_else(
                    || "a part of its path".to_string(),
                    |file| file.display().to_string(),
                );
                ToolError::new(format!(
                    "{shown} does not exist: {file} is a file, not a directory; the directories you may use: {grants}"
                ))
            }
            Problem::IsDirectory => ToolError::new(format!(
                "{shown} is a directory, not a file; use list_dir or find_files to see what is in it"
            )),
            Problem::Denied => ToolError::denied(format!(
                "{shown}: permission denied by the sandbox (a symlink out of the granted \
                 directories?); the directories you may use: {grants}"
            )),
            Problem::NotText => ToolError::new(format!("{shown} is not UTF-8 text")),
            Problem::Other(message) => ToolError::new(format!("{shown}: {message}")),
        }
    }

    /// Creating the directories above the file `path` failed with `err`.
    pub fn cannot_create(&self, path: &Path, err: &std::io::Error) -> ToolError {
        match self.file_on_the_way(path) {
            Some(file) => ToolError::new(format!(
                "{} cannot be created: {} is a file, not a directory",
                path.display(),
                file.display()
            )),
            None => self.io_error(path, err),
        }
    }

    /// The shallowest ancestor of `path` below its granted directory that is a file: what stands
    /// where a directory should be.
    fn file_on_the_way(&self, path: &Path) -> Option<PathBuf> {
        path.ancestors()
            .skip(1)
            .take_while(|dir| self.0.iter().all(|root| root.path != *dir))
            .filter(|dir| dir.is_file())
            .last()
            .map(Path::to_path_buf)
    }
}

/// The characters that make a path component a glob.
pub const GLOB_CHARACTERS: [char; 5] = ['*', '?', '[', '{', '\\'];

/// What [`Roots::split_absolute_pattern`] makes of an absolute pattern.
pub struct AbsolutePattern<'a> {
    /// The granted directory the pattern lies in.
    pub root: &'a Root,
    /// The pattern's fixed prefix, `..` resolved: the directory (or file) it starts from.
    pub prefix: PathBuf,
    /// Whether anything follows the prefix (else the pattern is a plain path).
    pub has_glob: bool,
    /// The pattern relative to `root`.
    pub relative: String,
}

/// What went wrong with a path, before it is put in words.
enum Problem {
    Missing,
    NotDirectory,
    IsDirectory,
    Denied,
    NotText,
    Other(String),
}

impl Root {
    /// Whether `path` (inside this directory) can be found, as an error naming it and the
    /// granted directories when it cannot.
    pub fn check_exists(&self, path: &Path, roots: &Roots) -> Result<(), ToolError> {
        self.descriptor
            .stat_at(PathFlags::SYMLINK_FOLLOW, &self.relative(path))
            .map(|_| ())
            .map_err(|code| roots.fs_error(path, code))
    }

    /// `path` (inside this directory, as [`Roots::resolve`] returns it) relative to it: `.` for
    /// the directory itself.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.path) {
            Ok(rest) if !rest.as_os_str().is_empty() => rest.to_string_lossy().into_owned(),
            _ => ".".to_string(),
        }
    }
}

/// Removes `.` and resolves `..` lexically; `None` when `..` climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(part) => out.push(part),
        }
    }
    Some(out)
}

/// Whether a preopen is the host's directory for paths outside the grants, not a grant: at `/`,
/// and removed (link count 0), which no granted directory can be.
fn is_outside_grants(descriptor: &Descriptor, path: &str) -> bool {
    path == "/" && descriptor.stat().is_ok_and(|stat| stat.link_count == 0)
}
