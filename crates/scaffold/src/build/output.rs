//! Where a build's component goes, and what it may replace: `PLUGINS/NAME.wasm`, NAME checked as
//! `cordon new` and `cordon add` check a plugin name; written under a temporary directory in the
//! plugins directory and renamed into place, so a watching `cordon serve` never loads half a file;
//! and never over a file this project did not build, unless `--force` says so.
//!
//! What a build wrote is recorded in the user's cache (`$XDG_CACHE_HOME/cordon/builds/`, one small
//! file per output, named by the output's device and inode): the project, the output path, and the
//! file's length and modification time as the build left them. An existing output is this
//! project's own when its record says exactly that today. Anything else (a plugin `cordon add`
//! installed, another project's build, a file copied there or edited since, a record lost with
//! the cache) is another plugin, and the build refuses before running the toolchain. Nothing of
//! the existing file is read, so a huge or special file there costs nothing.

use crate::project::{ScaffoldError, is_valid_name};
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Where builds record what they wrote; `None`: nowhere (every existing output needs `--force`).
#[derive(Debug, Clone)]
pub struct BuildRecords {
    dir: Option<PathBuf>,
}

impl BuildRecords {
    /// The records under `cache` (cordon's cache directory), or nowhere when there is none.
    pub fn in_cache(cache: Option<&Path>) -> Self {
        Self {
            dir: cache.map(|cache| cache.join("builds")),
        }
    }

    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
        }
    }

    /// The record of the file `metadata` describes.
    fn path_for(&self, metadata: &Metadata) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{}-{}", metadata.dev(), metadata.ino())))
    }

    /// Whether the file at `output` (described by `metadata`) is what a build of `project` wrote
    /// there, unchanged since.
    fn shows_built(&self, project: &Path, output: &Path, metadata: &Metadata) -> bool {
        let Some(path) = self.path_for(metadata) else {
            return false;
        };
        std::fs::read(path).is_ok_and(|kept| kept == record(project, output, metadata))
    }

    /// Records that a build of `project` wrote the file now at `output`, and forgets the record
    /// of the file it replaced. A record that cannot be written costs a `--force` next time.
    fn keep(&self, project: &Path, output: &Path, replaced: Option<&Metadata>) {
        if let Some(old) = replaced.and_then(|metadata| self.path_for(metadata)) {
            let _ = std::fs::remove_file(old);
        }
        let Ok(metadata) = std::fs::symlink_metadata(output) else {
            return;
        };
        let (Some(path), Some(dir)) = (self.path_for(&metadata), self.dir.as_ref()) else {
            return;
        };
        if std::fs::create_dir_all(dir).is_ok() {
            let _ = std::fs::write(path, record(project, output, &metadata));
        }
    }
}

/// A record's exact text: compared whole, never parsed, so no path can be mistaken for a field.
fn record(project: &Path, output: &Path, metadata: &Metadata) -> Vec<u8> {
    let mut text = b"cordon build record 1\nproject ".to_vec();
    text.extend_from_slice(project.as_os_str().as_bytes());
    text.extend_from_slice(b"\noutput ");
    text.extend_from_slice(output.as_os_str().as_bytes());
    text.extend_from_slice(
        format!(
            "\nlength {}\nmodified {}.{:09}\n",
            metadata.len(),
            metadata.mtime(),
            metadata.mtime_nsec()
        )
        .as_bytes(),
    );
    text
}

/// Where one build writes: the checked name, the final path, and the temporary file the
/// toolchain writes first.
pub struct Output {
    pub name: String,
    /// The output, canonical (what is checked, recorded and written).
    pub path: PathBuf,
    /// The output as the caller named the plugins directory (what is reported).
    shown: PathBuf,
    project: PathBuf,
    /// The file there before the build, when it may be replaced.
    replaced: Option<Metadata>,
    scratch: tempfile::TempDir,
}

impl Output {
    /// Checks the name (`--name`, or the project directory's) and that the build may write
    /// `plugins/NAME.wasm`, before anything is built.
    pub fn prepare(
        project: &Path,
        plugins: &Path,
        name: Option<&str>,
        force: bool,
        records: &BuildRecords,
    ) -> Result<Self, ScaffoldError> {
        let name = match name {
            Some(name) if is_valid_name(name) => name.to_string(),
            Some(name) => {
                return Err(ScaffoldError::InvalidName {
                    name: name.to_string(),
                });
            }
            None => {
                let dir_name = project.file_name().map(OsString::from).unwrap_or_default();
                match dir_name.to_str().filter(|name| is_valid_name(name)) {
                    Some(name) => name.to_string(),
                    None => {
                        return Err(ScaffoldError::ProjectDirNotAName {
                            name: dir_name.to_string_lossy().into_owned(),
                            project: project.to_path_buf(),
                        });
                    }
                }
            }
        };
        std::fs::create_dir_all(plugins).map_err(ScaffoldError::io("create", plugins))?;
        let shown = plugins.join(format!("{name}.wasm"));
        let plugins = plugins
            .canonicalize()
            .map_err(ScaffoldError::io("open", plugins))?;
        let path = plugins.join(format!("{name}.wasm"));
        let replaced = may_replace(project, &path, force, records)?;
        let scratch = tempfile::Builder::new()
            .prefix(".cordon-build-")
            .tempdir_in(&plugins)
            .map_err(ScaffoldError::io(
                "create a temporary directory in",
                &plugins,
            ))?;
        Ok(Self {
            name,
            path,
            shown,
            project: project.to_path_buf(),
            replaced,
            scratch,
        })
    }

    /// Where the toolchain writes the component (inside the plugins directory, not loaded from
    /// there: the loader reads only the directory's own `*.wasm` files).
    pub fn scratch_file(&self) -> PathBuf {
        self.scratch.path().join(format!("{}.wasm", self.name))
    }

    /// Moves the built component into place, checking again that what is there may be replaced
    /// (something may have been installed there while the toolchain ran), and records the build.
    /// Returns the output as the caller named the plugins directory.
    pub fn finish(self, force: bool, records: &BuildRecords) -> Result<PathBuf, ScaffoldError> {
        let built = self.scratch_file();
        if !built.is_file() {
            return Err(ScaffoldError::Io {
                action: "find the built component",
                path: built,
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        let now_there = may_replace(&self.project, &self.path, force, records)?;
        let replaced = now_there.or(self.replaced);
        std::fs::rename(&built, &self.path).map_err(ScaffoldError::io("write", &self.path))?;
        records.keep(&self.project, &self.path, replaced.as_ref());
        Ok(self.shown)
    }
}

/// Whether the build may write `output`: nothing is there, or what is there is this project's
/// own last build, or `force`. Returns what is there, when something is.
fn may_replace(
    project: &Path,
    output: &Path,
    force: bool,
    records: &BuildRecords,
) -> Result<Option<Metadata>, ScaffoldError> {
    let metadata = match std::fs::symlink_metadata(output) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(ScaffoldError::io("inspect", output)(err)),
    };
    if force || (metadata.is_file() && records.shows_built(project, output, &metadata)) {
        return Ok(Some(metadata));
    }
    Err(ScaffoldError::WouldReplace {
        output: output.to_path_buf(),
        project: project.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Setup {
        _dir: tempfile::TempDir,
        project: PathBuf,
        plugins: PathBuf,
        records: BuildRecords,
    }

    fn setup(project_name: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join(project_name);
        std::fs::create_dir(&project).unwrap();
        let plugins = dir.path().join("plugins");
        std::fs::create_dir(&plugins).unwrap();
        let records = BuildRecords::at(dir.path().join("records"));
        Setup {
            project: project.canonicalize().unwrap(),
            plugins: plugins.canonicalize().unwrap(),
            records,
            _dir: dir,
        }
    }

    /// A build of `setup.project` that writes `bytes`.
    fn build(setup: &Setup, force: bool, bytes: &[u8]) -> Result<PathBuf, ScaffoldError> {
        let output = Output::prepare(&setup.project, &setup.plugins, None, force, &setup.records)?;
        std::fs::write(output.scratch_file(), bytes).unwrap();
        output.finish(force, &setup.records)
    }

    #[test]
    fn a_project_rebuilds_its_own_output_but_not_another_plugin() {
        let setup = setup("fs");
        let installed = setup.plugins.join("fs.wasm");
        std::fs::write(&installed, b"the installed fs plugin").unwrap();
        let refused = build(&setup, false, b"hostile").unwrap_err().to_string();
        assert!(
            refused.contains(&installed.display().to_string()) && refused.contains("--force"),
            "{refused}"
        );
        assert_eq!(
            std::fs::read(&installed).unwrap(),
            b"the installed fs plugin"
        );

        assert_eq!(build(&setup, true, b"first build").unwrap(), installed);
        assert_eq!(build(&setup, false, b"second build").unwrap(), installed);
        assert_eq!(std::fs::read(&installed).unwrap(), b"second build");

        // Replaced behind the build's back (an install renames a new file into place).
        std::fs::write(setup.plugins.join("new.tmp"), b"installed again").unwrap();
        std::fs::rename(setup.plugins.join("new.tmp"), &installed).unwrap();
        assert!(build(&setup, false, b"third build").is_err());
        assert_eq!(std::fs::read(&installed).unwrap(), b"installed again");
        let leftovers: Vec<_> = std::fs::read_dir(&setup.plugins)
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec![OsString::from("fs.wasm")]);
    }

    #[test]
    fn another_project_of_the_same_name_does_not_inherit_the_record() {
        let first = setup("word_count");
        build(&first, false, b"first project").unwrap();
        let elsewhere = first.project.parent().unwrap().join("elsewhere/word_count");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let other = Setup {
            project: elsewhere.canonicalize().unwrap(),
            plugins: first.plugins.clone(),
            records: first.records.clone(),
            _dir: tempfile::tempdir().unwrap(),
        };
        assert!(matches!(
            build(&other, false, b"second project"),
            Err(ScaffoldError::WouldReplace { .. })
        ));
    }

    #[test]
    fn names_that_are_not_plugin_names_are_refused_before_anything_is_written() {
        let setup = setup("my-plugin");
        let refused = Output::prepare(&setup.project, &setup.plugins, None, false, &setup.records)
            .err()
            .unwrap()
            .to_string();
        assert!(
            refused.contains("\"my-plugin\"") && refused.contains("--name"),
            "{refused}"
        );
        for name in ["../fs", "fs/x", "", "Fs", "fs.wasm", "\u{1b}[2J"] {
            assert!(
                matches!(
                    Output::prepare(
                        &setup.project,
                        &setup.plugins,
                        Some(name),
                        true,
                        &setup.records
                    ),
                    Err(ScaffoldError::InvalidName { .. })
                ),
                "{name:?}"
            );
        }
        assert_eq!(std::fs::read_dir(&setup.plugins).unwrap().count(), 0);
        let named = Output::prepare(
            &setup.project,
            &setup.plugins,
            Some("my_plugin"),
            false,
            &setup.records,
        )
        .unwrap();
        assert_eq!(named.path, setup.plugins.join("my_plugin.wasm"));
    }
}
