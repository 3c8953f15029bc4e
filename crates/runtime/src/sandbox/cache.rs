//! The on-disk compile cache. Compiling a component takes from ~50 ms (Rust) to seconds (Python,
//! JavaScript); the compiled artifact is stored under the XDG cache dir, keyed by the component's
//! sha256 and the engine's compatibility hash, written atomically. The file holds wasmtime's
//! artifact exactly as serialized, so it is loaded by mmap (its code is used in place, shared with
//! the page cache, not copied); the entry's name carries a CRC-32 of its bytes, checked before the
//! entry is used, so a damaged entry is reported, removed and rebuilt.

use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

const EXTENSION: &str = "cwasm";

/// Where a plugin's compiled code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileSource {
    /// Loaded from the cache.
    Cached,
    /// Compiled now (and stored, when the cache is on).
    Compiled,
}

/// cordon's own cache directory: `$XDG_CACHE_HOME/cordon` (or `~/.cache/cordon`); `None` when
/// neither variable is set. The compile cache and `cordon build`'s records live under it.
pub fn cordon_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .map(|base| base.join("cordon"))
}

/// The compile cache; `dir: None` disables it.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
}

impl CompileCache {
    /// The cache under `$XDG_CACHE_HOME/cordon/compiled` (or `~/.cache/...`).
    pub fn default_location() -> Self {
        Self {
            dir: cordon_cache_dir().map(|base| base.join("compiled")),
        }
    }

    /// A cache in `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
        }
    }

    /// No cache: every plugin is compiled at each load.
    pub fn disabled() -> Self {
        Self { dir: None }
    }

    /// The cache directory, when the cache is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The compiled component whose sha256 is `sha256`, from the cache, or compiled from the bytes
    /// `source` returns (only called on a miss).
    pub(crate) fn load_or_compile(
        &self,
        engine: &Engine,
        sha256: &[u8; 32],
        source: impl FnOnce() -> wasmtime::Result<Vec<u8>>,
    ) -> wasmtime::Result<(Component, CompileSource)> {
        let Some(dir) = &self.dir else {
            return Ok((Component::new(engine, source()?)?, CompileSource::Compiled));
        };
        let key = entry_key(engine, sha256);
        if let Some(component) = read_entry(engine, dir, &key) {
            return Ok((component, CompileSource::Cached));
        }
        let component = Component::new(engine, source()?)?;
        match component.serialize() {
            Ok(artifact) => {
                if let Err(err) = write_entry(dir, &key, &artifact) {
                    tracing::warn!(dir = %dir.display(), "could not write compile cache entry: {err:#}");
                }
            }
            Err(err) => tracing::warn!("could not serialize compiled component: {err:#}"),
        }
        Ok((component, CompileSource::Compiled))
    }
}

/// sha256 of the component plus the engine's compatibility hash (wasmtime version, target, and
/// every setting that changes generated code, such as fuel metering).
fn entry_key(engine: &Engine, sha256: &[u8; 32]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{}-{:016x}", hex::encode(sha256), hasher.finish())
}

/// `KEY.CRC32.cwasm`: the entry for `key` whose bytes have that CRC-32.
fn entry_name(key: &str, crc: u32) -> String {
    format!("{key}.{crc:08x}.{EXTENSION}")
}

/// A verified cache entry for `key`, or `None` (missing, or damaged and now removed).
fn read_entry(engine: &Engine, dir: &Path, key: &str) -> Option<Component> {
    let prefix = format!("{key}.");
    let candidates: Vec<(PathBuf, Option<u32>)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let crc = name
                .strip_prefix(&prefix)?
                .strip_suffix(&format!(".{EXTENSION}"))
                .map(|crc| u32::from_str_radix(crc, 16).ok())?;
            Some((entry.path(), crc))
        })
        .collect();
    let mut found = None;
    for (path, crc) in candidates {
        if found.is_none() && crc.is_some() && crc == file_crc(&path) {
            found = Some(path);
            continue;
        }
        if found.is_none() {
            tracing::warn!(path = %path.display(), "compile cache entry is damaged; removing it and recompiling");
        }
        let _ = std::fs::remove_file(&path);
    }
    let path = found?;
    // SAFETY: `Component::deserialize_file` trusts its input to be wasmtime's own output and maps
    // the file into memory. The file was written by `write_entry` from `Component::serialize` of
    // this engine's configuration (its name carries the engine's compatibility hash), its bytes
    // match the CRC-32 in its name, and entries are only ever replaced by renaming a new file into
    // place, never modified, so the mapped bytes stay exactly what wasmtime produced.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize_file(engine, &path) };
    match component {
        Ok(component) => Some(component),
        Err(err) => {
            tracing::warn!(path = %path.display(), "compile cache entry cannot be loaded ({err}); recompiling");
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// The CRC-32 of a file's bytes, read in chunks.
fn file_crc(path: &Path) -> Option<u32> {
    let mut file = std::fs::File::open(path).ok()?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0u8; 128 << 10];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Some(hasher.finalize()),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Writes the artifact to a temporary file in the same directory, then renames it into place, so
/// readers never see a partial entry.
fn write_entry(dir: &Path, key: &str, artifact: &[u8]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(artifact)?;
    file.as_file().sync_all()?;
    file.persist(dir.join(entry_name(key, crc32fast::hash(artifact))))?;
    Ok(())
}
