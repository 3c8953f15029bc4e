//! A guest's `open-at`, done as wasmtime-wasi does it (the same flags, the same permission checks,
//! the path resolved beneath the directory handle by cap-primitives, the same descriptors as a
//! result) with one difference: the open itself can never block. Files are opened on the calling
//! thread (granted directories allow blocking it, for speed), and opening a FIFO waits for its
//! other end, which neither the epoch nor a timeout can interrupt. So every open asks for
//! `O_NONBLOCK`, then the opened descriptor's own type decides: a FIFO, device or socket is closed
//! and refused; a file or directory goes to the guest (the flag changes nothing for those). What
//! is checked is what was opened, so swapping a FIFO in between cannot win a race.

use std::os::fd::AsFd;
use std::path::Path;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, OpenMode};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode, OpenFlags, PathFlags,
};

/// Why an open was refused.
pub enum Refused {
    Error(ErrorCode),
    /// It named something whose use could block a host thread.
    Blocking(&'static str),
}

/// Opens `path` beneath `dir` for the guest.
pub fn open_at(
    dir: &Dir,
    path_flags: PathFlags,
    path: &str,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
) -> Result<Descriptor, Refused> {
    let mut options = cap_primitives::fs::OpenOptions::new();
    let mut open_mode = OpenMode::empty();
    let creates = open_flags.contains(OpenFlags::CREATE);
    if creates {
        match open_flags.contains(OpenFlags::EXCLUSIVE) {
            true => options.create_new(true),
            false => options.create(true),
        };
        options.write(true);
        open_mode |= OpenMode::WRITE;
    }
    if open_flags.contains(OpenFlags::TRUNCATE) {
        options.truncate(true).write(true);
        open_mode |= OpenMode::WRITE;
    }
    if flags.contains(DescriptorFlags::READ) {
        options.read(true);
        open_mode |= OpenMode::READ;
    }
    if flags.contains(DescriptorFlags::WRITE) {
        options.write(true);
        open_mode |= OpenMode::WRITE;
    } else {
        // Readable at the OS level; the descriptor's permissions refuse what was not asked for.
        options.read(true);
        open_mode |= OpenMode::READ;
    }
    options._cap_fs_ext_follow(match path_flags.contains(PathFlags::SYMLINK_FOLLOW) {
        true => cap_primitives::fs::FollowSymlinks::Yes,
        false => cap_primitives::fs::FollowSymlinks::No,
    });
    options._cap_fs_ext_nonblock(true);
    if flags.intersects(
        DescriptorFlags::FILE_INTEGRITY_SYNC
            | DescriptorFlags::DATA_INTEGRITY_SYNC
            | DescriptorFlags::REQUESTED_WRITE_SYNC,
    ) {
        return Err(Refused::Error(ErrorCode::Unsupported));
    }
    let directory_only = open_flags.contains(OpenFlags::DIRECTORY);
    if directory_only
        && open_flags.intersects(OpenFlags::CREATE | OpenFlags::EXCLUSIVE | OpenFlags::TRUNCATE)
    {
        return Err(Refused::Error(ErrorCode::Invalid));
    }
    if dir.perms.write_not_permitted() && (creates || open_mode.contains(OpenMode::WRITE)) {
        return Err(Refused::Error(ErrorCode::NotPermitted));
    }
    let opened = cap_primitives::fs::open(&dir.dir, Path::new(path), &options)
        .map_err(|err| Refused::Error(ErrorCode::from(err)))?;
    let kind = rustix::fs::fstat(opened.as_fd())
        .map(|stat| rustix::fs::FileType::from_raw_mode(stat.st_mode))
        .map_err(|err| Refused::Error(ErrorCode::from(std::io::Error::from(err))))?;
    use rustix::fs::FileType;
    match kind {
        FileType::Directory | FileType::RegularFile => {}
        FileType::Fifo => return Err(Refused::Blocking("FIFO")),
        FileType::CharacterDevice | FileType::BlockDevice => {
            return Err(Refused::Blocking("device"));
        }
        FileType::Socket => return Err(Refused::Blocking("socket")),
        FileType::Symlink | FileType::Unknown => {
            return Err(Refused::Blocking("file of unknown type"));
        }
    }
    // `O_NONBLOCK` stays set: on Linux it has no effect on regular files and directories (their
    // reads and listings wait for the disk either way), and clearing it would cost two system
    // calls per open.
    // Directories and files opened beneath a grant may block the calling thread, as the grant's.
    let allow_blocking = true;
    Ok(match kind {
        FileType::Directory => {
            Descriptor::Dir(Dir::new(opened, dir.perms, open_mode, allow_blocking))
        }
        _ if directory_only => return Err(Refused::Error(ErrorCode::NotDirectory)),
        _ => Descriptor::File(File::new(opened, dir.perms, open_mode, allow_blocking)),
    })
}
