//! The on-disk compile cache. Compiling a component takes from ~50 ms (Rust) to seconds (Python,
//! JavaScript); the compiled artifact is stored under the XDG cache dir, keyed by the component's
//! sha256 and the engine's compatibility hash, written atomically, and checked against its own
//! sha256 before it is deserialized. A damaged entry is reported, removed and rebuilt.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 8] = b"CORDON01";
const HEADER_LEN: usize = MAGIC.len() + 32;

/// Where a plugin's compiled code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompileSource {
    /// Loaded from the cache.
    Cached,
    /// Compiled now (and stored, when the cache is on).
    Compiled,
}

/// The compile cache; `dir: None` disables it.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
}

impl CompileCache {
    /// The cache under `$XDG_CACHE_HOME/cordon/compiled` (or `~/.cache/...`).
    pub fn default_location() -> Self {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")));
        Self {
            dir: base.map(|base| base.join("cordon").join("compiled")),
        }
    }

    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
        }
    }

    pub fn disabled() -> Self {
        Self { dir: None }
    }

    /// The compiled component for `bytes` (whose sha256 is `sha256`), from the cache or compiled.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        sha256: &[u8; 32],
    ) -> wasmtime::Result<(Component, CompileSource)> {
        let Some(dir) = &self.dir else {
            return Ok((Component::new(engine, bytes)?, CompileSource::Compiled));
        };
        let entry = dir.join(format!("{}.cwasm", entry_key(engine, sha256)));
        if let Some(component) = read_entry(engine, &entry) {
            return Ok((component, CompileSource::Cached));
        }
        let component = Component::new(engine, bytes)?;
        match component.serialize() {
            Ok(artifact) => {
                if let Err(err) = write_entry(dir, &entry, &artifact) {
                    tracing::warn!(path = %entry.display(), "could not write compile cache entry: {err:#}");
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

/// A verified cache entry, or `None` (missing, or damaged and now removed).
fn read_entry(engine: &Engine, path: &Path) -> Option<Component> {
    let data = std::fs::read(path).ok()?;
    let verified = data.len() >= HEADER_LEN
        && &data[..MAGIC.len()] == MAGIC
        && Sha256::digest(&data[HEADER_LEN..]).as_slice() == &data[MAGIC.len()..HEADER_LEN];
    if !verified {
        tracing::warn!(path = %path.display(), "compile cache entry is damaged; removing it and recompiling");
        let _ = std::fs::remove_file(path);
        return None;
    }
    // SAFETY: `Component::deserialize` trusts its input to be wasmtime's own output. The bytes were
    // written by `write_entry` from `Component::serialize` of this engine's configuration (the file
    // name carries the engine's compatibility hash) and match the sha256 recorded beside them, so
    // they are exactly what wasmtime produced.
    #[allow(unsafe_code)]
    let component = unsafe { Component::deserialize(engine, &data[HEADER_LEN..]) };
    match component {
        Ok(component) => Some(component),
        Err(err) => {
            tracing::warn!(path = %path.display(), "compile cache entry cannot be loaded ({err}); recompiling");
            let _ = std::fs::remove_file(path);
            None
        }
    }
}

/// Writes magic + sha256 + artifact to a temporary file in the same directory, then renames it
/// into place, so readers never see a partial entry.
fn write_entry(dir: &Path, path: &Path, artifact: &[u8]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(MAGIC)?;
    file.write_all(&Sha256::digest(artifact))?;
    file.write_all(artifact)?;
    file.as_file().sync_all()?;
    file.persist(path)?;
    Ok(())
}
