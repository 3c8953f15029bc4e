//! The plugin file on disk: opened without blocking, a regular file of at most 256 MiB only (its
//! size checked before a byte is read, so a sparse or special file costs nothing), refused at its
//! first bytes when it is not a component at all, hashed in chunks (pins, the lockfile and the
//! compile cache rely on the hash), and read whole only to compile and only if it is still the
//! file that was hashed. A component given as bytes in code (embedding) passes the same header,
//! size and hash checks.

use super::LoadError;
use crate::skills::section_scan::SectionScan;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a plugin's component comes from.
#[derive(Clone)]
pub(crate) enum ComponentSource {
    /// A `.wasm` file (the plugins directory).
    File(PathBuf),
    /// Bytes given in code.
    Bytes(Arc<[u8]>),
}

impl ComponentSource {
    /// The component's sha256, after its header and size are checked.
    /// The sha256 of the component's bytes, and the payload of its skills section (read in the
    /// same pass, so it is part of what was hashed).
    pub(super) fn sha256(&self) -> Result<Hashed, LoadError> {
        match self {
            Self::File(path) => hash_file(path),
            Self::Bytes(bytes) => {
                if bytes.len() as u64 > MAX_PLUGIN_BYTES {
                    return Err(LoadError::TooLarge {
                        bytes: bytes.len() as u64,
                        limit: MAX_PLUGIN_BYTES,
                    });
                }
                check_component_header(&bytes[..bytes.len().min(8)])?;
                let mut skills = skills_scan();
                skills.feed(bytes);
                Ok(Hashed {
                    sha256: Sha256::digest(bytes).into(),
                    skills_section: skills.finish().map_err(LoadError::Skills)?,
                })
            }
        }
    }

    /// The component's bytes, refused if they are no longer those that were hashed.
    pub(super) fn read(&self, sha256: &[u8; 32]) -> wasmtime::Result<Vec<u8>> {
        match self {
            Self::File(path) => read_unchanged(path, sha256),
            Self::Bytes(bytes) => Ok(bytes.to_vec()),
        }
    }
}

/// The largest plugin file loaded (the same bound `cordon add` keeps).
pub const MAX_PLUGIN_BYTES: u64 = 256 << 20;

/// Opens the plugin file without ever blocking (a FIFO named `*.wasm` would wait for a writer):
/// only a regular file of at most [`MAX_PLUGIN_BYTES`] is taken, as the opened descriptor says, so
/// swapping something else in after a directory listing cannot win a race. Returns its size.
fn open_plugin_file(path: &Path) -> Result<(File, u64), LoadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(LoadError::Read)?;
    let metadata = file.metadata().map_err(LoadError::Read)?;
    if !metadata.is_file() {
        return Err(LoadError::Read(std::io::Error::other(
            "it is not a regular file (a FIFO, device, socket or directory); a plugin is a .wasm file",
        )));
    }
    if metadata.len() > MAX_PLUGIN_BYTES {
        return Err(LoadError::TooLarge {
            bytes: metadata.len(),
            limit: MAX_PLUGIN_BYTES,
        });
    }
    Ok((file, metadata.len()))
}

/// The sha256 of a plugin file, read in chunks: its header is checked first,
/// so a file that is no component is refused before it is hashed, and the whole file is only
/// read into memory when it has to be compiled.
/// A component's digest and its skills section's payload.
pub(crate) struct Hashed {
    pub sha256: [u8; 32],
    pub skills_section: Option<Vec<u8>>,
}

fn skills_scan() -> SectionScan {
    SectionScan::new(
        crate::skills::embedded::SECTION_NAME,
        crate::skills::embedded::MAX_SECTION_BYTES,
    )
}

fn hash_file(path: &Path) -> Result<Hashed, LoadError> {
    let (file, _) = open_plugin_file(path)?;
    let mut file = file.take(MAX_PLUGIN_BYTES + 1);
    let mut header = [0u8; 8];
    let mut filled = 0;
    while filled < header.len() {
        match file.read(&mut header[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(LoadError::Read(err)),
        }
    }
    check_component_header(&header[..filled])?;
    let mut hasher = Sha256::new();
    hasher.update(&header[..filled]);
    let mut skills = skills_scan();
    skills.feed(&header[..filled]);
    let mut read = filled as u64;
    let mut buffer = vec![0u8; 128 << 10];
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(LoadError::Read(err)),
        };
        read += n as u64;
        hasher.update(&buffer[..n]);
        skills.feed(&buffer[..n]);
    }
    if read > MAX_PLUGIN_BYTES {
        return Err(LoadError::TooLarge {
            bytes: read,
            limit: MAX_PLUGIN_BYTES,
        });
    }
    Ok(Hashed {
        sha256: hasher.finalize().into(),
        skills_section: skills.finish().map_err(LoadError::Skills)?,
    })
}

/// The file's bytes for compiling, refused if they are no longer the bytes that were hashed (and
/// checked against pins and the lockfile).
fn read_unchanged(path: &Path, sha256: &[u8; 32]) -> wasmtime::Result<Vec<u8>> {
    let (file, size) = open_plugin_file(path).map_err(|err| wasmtime::format_err!("{err}"))?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(MAX_PLUGIN_BYTES + 1).read_to_end(&mut bytes)?;
    if Sha256::digest(&bytes).as_slice() != sha256 {
        wasmtime::bail!("the file changed while it was being loaded; load the plugins again");
    }
    Ok(bytes)
}

/// A friendly refusal for files that are not components at all.
fn check_component_header(bytes: &[u8]) -> Result<(), LoadError> {
    const COMPONENT_LAYER: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadError::NotWebAssembly);
    }
    if bytes[4..8] != COMPONENT_LAYER {
        return Err(LoadError::CoreModule);
    }
    Ok(())
}
