//! Reading a whole file straight through `wasi:filesystem`: one open relative to a directory
//! handle, one stat for the size, and reads of that many bytes (the host answers up to 64 KiB a
//! read), with no extra round trips for a size hint or an end-of-file probe.

use std::path::Path;
use wasip2::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};

/// What reading a file came to.
pub enum Read {
    /// The file's bytes are in the buffer.
    Whole,
    /// The file is larger than allowed; its size. Nothing was read.
    TooLarge(u64),
}

/// Reads the file at `path` (relative to `dir`, following symlinks inside the sandbox) into
/// `buffer`, replacing what it held, unless it is larger than `max_bytes`.
pub fn read_file(
    dir: &Descriptor,
    path: &str,
    max_bytes: u64,
    buffer: &mut Vec<u8>,
) -> Result<Read, ErrorCode> {
    let file = dir.open_at(
        PathFlags::SYMLINK_FOLLOW,
        path,
        OpenFlags::empty(),
        DescriptorFlags::READ,
    )?;
    let size = file.stat()?.size;
    if size > max_bytes {
        return Ok(Read::TooLarge(size));
    }
    buffer.clear();
    buffer.reserve(size as usize);
    // Up to the size the stat gave: a file that grows meanwhile is read as it was.
    while (buffer.len() as u64) < size {
        let offset = buffer.len() as u64;
        let (chunk, _end) = file.read(size - offset, offset)?;
        if chunk.is_empty() {
            break;
        }
        buffer.extend_from_slice(&chunk);
    }
    Ok(Read::Whole)
}

/// A sentence for the model naming the path and what went wrong.
pub fn explain(path: &Path, code: ErrorCode) -> String {
    let path = path.display();
    match code {
        ErrorCode::NoEntry => format!("{path} does not exist"),
        ErrorCode::IsDirectory => format!("{path} is a directory; use list_dir or find_files"),
        ErrorCode::NotDirectory => format!("{path}: a part of the path is not a directory"),
        ErrorCode::Access | ErrorCode::NotPermitted => {
            format!("{path}: permission denied by the sandbox")
        }
        ErrorCode::Quota => format!("{path}: too many files open in this call"),
        ErrorCode::Unsupported => {
            format!("{path} is not a regular file or directory (a FIFO, device or socket)")
        }
        ErrorCode::Loop => format!("{path}: too many levels of symbolic links"),
        other => format!("{path}: {}", other.message()),
    }
}
