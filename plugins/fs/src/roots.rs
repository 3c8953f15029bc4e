//! The granted directories (WASI preopens) and how a model's path maps onto them.

use cordon_sdk::ToolError;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::{Descriptor, DescriptorFlags};

/// One granted directory, as the guest sees it.
pub struct Root {
    pub path: PathBuf,
    pub writable: bool,
    /// The directory's handle: the walks and reads open paths relative to it.
    pub descriptor: Rc<Descriptor>,
}

/// Every directory this plugin was granted, in the operator's order.
pub struct Roots(Vec<Root>);

impl Roots {
    pub fn granted() -> Self {
        Self(
            get_directories()
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

    /// An absolute glob pattern split into the granted directory it lies in and the pattern
    /// relative to it (`/repo/src/*.rs` with `/repo` granted: `/repo` and `src/*.rs`).
    pub fn split_absolute_pattern(&self, pattern: &str) -> Result<(&Root, String), ToolError> {
        let root = self
            .0
            .iter()
            .filter(|root| {
                let prefix = root.path.to_string_lossy();
                pattern == prefix
                    || pattern.starts_with(&format!("{}/", prefix.trim_end_matches('/')))
            })
            .max_by_key(|root| root.path.components().count())
            .ok_or_else(|| self.outside(pattern))?;
        let prefix = root.path.to_string_lossy();
        let rest = pattern[prefix.len()..].trim_start_matches('/');
        let rest = if rest.is_empty() { "**" } else { rest };
        Ok((root, rest.to_string()))
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
        ToolError::denied(format!(
            "{path:?} is outside the directories this tool may use: {}. Use a path inside one of them.",
            self.describe()
        ))
    }
}

impl Root {
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
