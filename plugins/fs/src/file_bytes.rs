//! Reading a whole file straight through `wasi:filesystem`: one open relative to a directory
//! handle, one stat for the size, and reads of that many bytes (the host answers up to 64 KiB a
//! read), with no extra round trips for a size hint or an end-of-file probe.

use wasip2::filesystem::types::{
    Descriptor, DescriptorFlags, DescriptorType, ErrorCode, OpenFlags, PathFlags,
};

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
    let stat = file.stat()?;
    if stat.type_ == DescriptorType::Directory {
        return Err(ErrorCode::IsDirectory);
    }
    let size = stat.size;
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
