//! Where directory grants may point, checked once when the configuration loads. A plugin can change
//! what lies inside its read-write grants (rename directories, plant symlinks), so:
//! - no grant's path may go through a symlink (it must name a directory, not a redirect);
//! - no grant, of any plugin, may lie inside a read-write grant (its holder could swap it for a
//!   symlink to anywhere, turning a read-only grant into "read the whole disk");
//! - no read-write grant may cover cordon's own files (the config, the lockfile, the plugins
//!   directory, the audit log, the compile cache), which decide what plugins may do.
//!
//! Errors name the keys concerned, e.g. `plugins.fs.dirs[1].host`.

use crate::capabilities::grant::{Access, PluginGrant};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

type KeyError = (String, String);

/// The first symlink on the way from `base` (the config's directory, itself taken as it really is)
/// along `host`, if there is one. Stops quietly at a missing component: opening reports that.
pub fn symlink_on_the_way(base: &Path, host: &Path) -> Option<PathBuf> {
    let mut at = if host.is_absolute() {
        PathBuf::from("/")
    } else {
        base.canonicalize().ok()?
    };
    for component in host.components() {
        match component {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                at.pop();
            }
            Component::Normal(name) => {
                at.push(name);
                match std::fs::symlink_metadata(&at) {
                    Ok(meta) if meta.file_type().is_symlink() => return Some(at),
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
        }
    }
    None
}

/// One directory grant, with the key that names it in errors.
struct Entry<'a> {
    key: String,
    plugin: &'a str,
    host: &'a Path,
    access: Access,
}

fn entries(plugins: &BTreeMap<String, PluginGrant>) -> Vec<Entry<'_>> {
    plugins
        .iter()
        .flat_map(|(id, grant)| {
            grant
                .dirs
                .iter()
                .enumerate()
                .map(move |(index, dir)| Entry {
                    key: format!("plugins.{id}.dirs[{index}].host"),
                    plugin: id,
                    host: &dir.host,
                    access: dir.access,
                })
        })
        .collect()
}

/// Refuses grants inside other plugins' (or the same plugin's) read-write grants, and read-write
/// grants covering the config file or the audit log.
pub fn check_grants(
    plugins: &BTreeMap<String, PluginGrant>,
    config: &Path,
    audit: Option<&Path>,
) -> Result<(), KeyError> {
    let all = entries(plugins);
    for inner in &all {
        for outer in all.iter().filter(|e| e.access == Access::ReadWrite) {
            if inner.host != outer.host && inner.host.starts_with(outer.host) {
                return Err((
                    inner.key.clone(),
                    format!(
                        "{} lies inside {} ({}, read-write for plugin `{}`), which could replace it with a symlink to anywhere; grant directories that are not inside a read-write grant",
                        inner.host.display(),
                        outer.key,
                        outer.host.display(),
                        outer.plugin
                    ),
                ));
            }
        }
    }
    let mut own: Vec<(&str, &Path)> = vec![("the config file", config)];
    if let Some(audit) = audit {
        own.push(("the audit log", audit));
    }
    check_own_files(plugins, &own)
}

/// Refuses a read-write grant that contains (or is) one of `files`, however the file is reached:
/// through symlinks (a dangling one included: what it would create is checked), a bind mount of
/// the grant elsewhere (directories are compared by device and inode, not only by path), a file
/// bind-mounted from inside the grant (mount_source.rs: where each really lives), or a
/// hard link (a file of cordon's own with more than one name is refused while any read-write
/// grant exists, since its other name could be inside one).
pub fn check_own_files(
    plugins: &BTreeMap<String, PluginGrant>,
    files: &[(&str, &Path)],
) -> Result<(), KeyError> {
    let mounts = super::mount_source::Mounts::read();
    for grant in entries(plugins)
        .iter()
        .filter(|e| e.access == Access::ReadWrite)
    {
        let grant_id = file_id(grant.host);
        for (what, path) in files {
            let resolved = resolve_lenient(&follow_final_links(path));
            let inside = resolved.starts_with(grant.host)
                || grant_id.is_some_and(|id| {
                    resolved
                        .ancestors()
                        .any(|ancestor| file_id(ancestor) == Some(id))
                })
                || mounts
                    .as_ref()
                    .is_some_and(|mounts| mounts.inside(&resolved, grant.host));
            if inside {
                return Err((
                    grant.key.clone(),
                    format!(
                        "{} is granted read-write to plugin `{}` and contains {what} ({}), which the plugin could then rewrite; grant a directory that does not contain cordon's own files",
                        grant.host.display(),
                        grant.plugin,
                        resolved.display()
                    ),
                ));
            }
            // A directory of cordon's own (the plugins, the compile cache, a skills folder) with
            // a read-write grant inside it is as writable as one the grant contains.
            if resolved.is_dir() && grant.host.starts_with(&resolved) {
                return Err((
                    grant.key.clone(),
                    format!(
                        "{} is granted read-write to plugin `{}` and is inside {what} ({}), which the plugin could then rewrite; grant a directory outside cordon's own",
                        grant.host.display(),
                        grant.plugin,
                        resolved.display()
                    ),
                ));
            }
            if let Ok(meta) = std::fs::metadata(path)
                && meta.is_file()
                && meta.nlink() > 1
            {
                return Err((
                    grant.key.clone(),
                    format!(
                        "{what} ({}) has {} names (hard links), and while plugin `{}` has a read-write grant ({}) another name of it could be inside one, where the plugin could rewrite it; give cordon a file with one name",
                        path.display(),
                        meta.nlink(),
                        grant.plugin,
                        grant.host.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A directory's or file's identity: device and inode.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path)
        .ok()
        .map(|meta| (meta.dev(), meta.ino()))
}

/// `path` with a symlink at its end followed, however many times, even to a target that does not
/// exist yet (what opening it for writing would create).
fn follow_final_links(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&current) {
            Ok(target) => {
                current = match current.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            Err(_) => break,
        }
    }
    current
}

/// `path` made absolute with its longest existing ancestor resolved (symlinks included), so it
/// compares with canonical grant paths even when it does not exist yet.
fn resolve_lenient(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut resolved = real;
            for name in rest.iter().rev() {
                resolved.push(name);
            }
            return resolved;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::grant::DirGrant;

    fn grant(dirs: &[(&Path, Access)]) -> PluginGrant {
        PluginGrant {
            dirs: dirs
                .iter()
                .enumerate()
                .map(|(i, (host, access))| DirGrant {
                    host: host.to_path_buf(),
                    guest: format!("/g{i}"),
                    access: *access,
                })
                .collect(),
            ..PluginGrant::default()
        }
    }

    #[test]
    fn grants_inside_read_write_grants_are_refused_and_the_rest_allowed() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (work, docs, other) = (
            root.join("work"),
            root.join("work/docs"),
            root.join("other"),
        );
        let config = root.join("cordon.toml");
        let check = |plugins: BTreeMap<String, PluginGrant>| check_grants(&plugins, &config, None);
        let same_plugin = BTreeMap::from([(
            "a".to_string(),
            grant(&[(&work, Access::ReadWrite), (&docs, Access::ReadOnly)]),
        )]);
        let (key, message) = check(same_plugin).unwrap_err();
        assert_eq!(key, "plugins.a.dirs[1].host");
        assert!(message.contains("plugins.a.dirs[0].host"), "{message}");
        let across = BTreeMap::from([
            ("a".to_string(), grant(&[(&work, Access::ReadWrite)])),
            ("b".to_string(), grant(&[(&docs, Access::ReadOnly)])),
        ]);
        assert_eq!(check(across).unwrap_err().0, "plugins.b.dirs[0].host");
        let fine = BTreeMap::from([
            (
                "a".to_string(),
                grant(&[(&work, Access::ReadWrite), (&other, Access::ReadOnly)]),
            ),
            (
                "b".to_string(),
                grant(&[(&work, Access::ReadWrite), (&root, Access::ReadOnly)]),
            ),
            (
                "c".to_string(),
                grant(&[(&other, Access::ReadOnly), (&root, Access::ReadOnly)]),
            ),
        ]);
        assert!(
            check(fine).is_ok(),
            "equal rw grants, a ro grant around a rw one, ro beside and around ro"
        );
        let covering = BTreeMap::from([("a".to_string(), grant(&[(&root, Access::ReadWrite)]))]);
        let (key, message) = check(covering).unwrap_err();
        assert_eq!(key, "plugins.a.dirs[0].host");
        assert!(message.contains("the config file"), "{message}");
    }

    #[test]
    fn symlinks_on_the_way_are_found() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("real/inner")).unwrap();
        std::os::unix::fs::symlink("real", root.path().join("link")).unwrap();
        assert_eq!(
            symlink_on_the_way(root.path(), Path::new("real/inner")),
            None
        );
        let found = symlink_on_the_way(root.path(), Path::new("link/inner")).unwrap();
        assert!(found.ends_with("link"), "{}", found.display());
        assert!(symlink_on_the_way(root.path(), &root.path().join("link")).is_some());
        assert_eq!(
            symlink_on_the_way(root.path(), Path::new("missing/x")),
            None
        );
    }
}
