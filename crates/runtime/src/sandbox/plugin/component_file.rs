//! The plugin file on disk: hashed in chunks (pins, the lockfile and the compile cache rely on the
//! hash), read whole only to compile and only if it is still the file that was hashed, and
//! refused early when it is not a component at all.

use super::LoadError;
use sha2::{Digest, Sha256};
use std::path::Path;

/// The sha256 of a file and its first bytes (enough for the header check), read in chunks: the
/// whole file is only read into memory when it has to be compiled.
pub(super) fn hash_file(path: &Path) -> std::io::Result<([u8; 32], Vec<u8>)> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut header = Vec::with_capacity(8);
    let mut buffer = vec![0u8; 128 << 10];
    loop {
        let n = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if header.len() < 8 {
            let take = (8 - header.len()).min(n);
            header.extend_from_slice(&buffer[..take]);
        }
        hasher.update(&buffer[..n]);
    }
    Ok((hasher.finalize().into(), header))
}

/// The file's bytes for compiling, refused if they are no longer the bytes that were hashed (and
/// checked against pins and the lockfile).
pub(super) fn read_unchanged(path: &Path, sha256: &[u8; 32]) -> wasmtime::Result<Vec<u8>> {
    let bytes = std::fs::read(path)?;
    if Sha256::digest(&bytes).as_slice() != sha256 {
        wasmtime::bail!("the file changed while it was being loaded; load the plugins again");
    }
    Ok(bytes)
}

/// A friendly refusal for files that are not components at all.
pub(super) fn check_component_header(bytes: &[u8]) -> Result<(), LoadError> {
    const COMPONENT_LAYER: [u8; 4] = [0x0d, 0x00, 0x01, 0x00];
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadError::NotWebAssembly);
    }
    if bytes[4..8] != COMPONENT_LAYER {
        return Err(LoadError::CoreModule);
    }
    Ok(())
}
