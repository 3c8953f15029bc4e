//! Directory listings (`wasi:filesystem`'s `directory-entry-stream`), made by the host itself: the
//! entries are read once with their types from the directory itself (`getdents`), where
//! wasmtime-wasi's own listing stats every entry, which was a fifth of the cost of walking a tree.
//! The listing is read whole when the guest asks for it, as wasmtime-wasi does, and what it holds
//! is charged to the guest's memory limit (see http/host_memory.rs); reading stops as soon as it
//! would not fit under that limit, so a huge directory costs the host no more than the limit. The
//! first [`INLINE_ENTRIES`] entries are read on the calling thread (most directories end there);
//! the rest of a bigger one on a blocking thread (blocking_ops.rs), so listing a huge directory
//! neither holds an async worker nor its call past the deadline; that thread itself stops reading
//! at the call's deadline or cancellation, so an abandoned listing does not keep one of the
//! process's slow-operation slots. The resource, the call that makes
//! it and the call that reads it are all defined here, shadowing wasmtime-wasi's in the linker.

use crate::sandbox::call_state::CallState;
use crate::sandbox::fs::blocking_ops::{Stop, off_thread, stop_of};
use rustix::fs::FileType;
use std::collections::VecDeque;
use std::os::fd::AsFd;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorType, DirectoryEntry, ErrorCode,
};

/// The `wasi:filesystem` version wasmtime 48 defines.
const TYPES: &str = "wasi:filesystem/types@0.2.12";

/// What a listing costs besides its names, per entry.
const ENTRY_OVERHEAD_BYTES: u64 = 64;

/// Entries read on the calling thread before the rest of a listing moves to a blocking thread.
pub const INLINE_ENTRIES: usize = 1_024;

/// Entries read on the blocking thread between two looks at the call's deadline and cancellation.
const ENTRIES_BETWEEN_STOP_CHECKS: usize = 256;

/// One directory's entries, read when it was listed.
pub struct Listing {
    entries: VecDeque<Result<DirectoryEntry, ErrorCode>>,
    /// What the listing holds in host memory: each name and [`ENTRY_OVERHEAD_BYTES`] per entry.
    bytes: u64,
}

/// Replaces `read-directory`, `read-directory-entry` and the listing resource itself in a linker
/// that already has WASI p2.
pub fn shadow_in_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(TYPES)?;
    types.resource(
        "directory-entry-stream",
        ResourceType::host::<Listing>(),
        |mut store, rep| {
            store
                .data_mut()
                .table()
                .delete(Resource::<Listing>::new_own(rep))?;
            Ok(())
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.read-directory",
        |mut store: StoreContextMut<'_, CallState>, (directory,): (Resource<Descriptor>,)| {
            Box::new(async move {
                let state = store.data_mut();
                let headroom = state.listing_headroom();
                let reading = match state.table().get(&directory)? {
                    Descriptor::Dir(dir) => Reading::start(dir.dir.as_fd(), headroom),
                    Descriptor::File(_) => Err(Unlisted::Error(ErrorCode::NotDirectory)),
                };
                let listing = match reading {
                    Ok(mut reading) => match reading.read(Some(INLINE_ENTRIES), None) {
                        Ok(true) => Ok(reading.listing),
                        Ok(false) => {
                            let stop = stop_of(state);
                            let stop_reading = stop.clone();
                            off_thread(stop, move || {
                                reading
                                    .read(None, Some(&stop_reading))
                                    .map(|_| reading.listing)
                            })
                            .await?
                        }
                        Err(unlisted) => Err(unlisted),
                    },
                    Err(unlisted) => Err(unlisted),
                };
                let listing = match listing {
                    Ok(listing) => listing,
                    Err(Unlisted::Error(code)) => return Ok((Err(code),)),
                    Err(Unlisted::OverLimit) => return Err(state.listing_over_limit()),
                    Err(Unlisted::Stopped) => return Err(wasmtime::Trap::Interrupt.into()),
                };
                let size = listing.bytes;
                let stream = state.table().push(listing)?;
                state.charge_listing(stream.rep(), size)?;
                Ok((Ok(stream),))
            })
        },
    )?;
    types.func_wrap(
        "[method]directory-entry-stream.read-directory-entry",
        |mut store: StoreContextMut<'_, CallState>, (stream,): (Resource<Listing>,)| {
            let listing = store.data_mut().table().get_mut(&stream)?;
            Ok((listing.entries.pop_front().transpose(),))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Why a directory was not listed.
enum Unlisted {
    Error(ErrorCode),
    /// Its entries would take more than the memory the call has left.
    OverLimit,
    /// The call reached its deadline or was cancelled while the listing was read.
    Stopped,
}

/// A directory being listed: its own handle (so the reading can move to another thread), the
/// entries read so far, and the most they may hold.
struct Reading {
    reader: rustix::fs::Dir,
    listing: Listing,
    most_bytes: u64,
}

impl Reading {
    /// Starts listing the directory open at `dir`; its entries may hold at most `most_bytes`.
    fn start(dir: std::os::fd::BorrowedFd<'_>, most_bytes: u64) -> Result<Self, Unlisted> {
        let reader =
            rustix::fs::Dir::read_from(dir).map_err(|err| Unlisted::Error(error_code(err)))?;
        Ok(Self {
            reader,
            listing: Listing {
                entries: VecDeque::new(),
                bytes: 0,
            },
            most_bytes,
        })
    }

    /// Reads up to `most` more entries (all of them when `None`), without `.` and `..`, each with
    /// its type from the directory (a stat of the entry only where the filesystem does not say);
    /// `true` once the directory is read whole. Stops when they would hold more than allowed, and
    /// (given a `stop`) at the call's deadline or cancellation.
    fn read(&mut self, most: Option<usize>, stop: Option<&Stop>) -> Result<bool, Unlisted> {
        let error = |err| Unlisted::Error(error_code(err));
        let mut read = 0;
        loop {
            if most.is_some_and(|most| read >= most) {
                return Ok(false);
            }
            if let Some((deadline, cancelled)) = stop
                && read % ENTRIES_BETWEEN_STOP_CHECKS == 0
                && (std::time::Instant::now() >= *deadline || cancelled.is_cancelled())
            {
                return Err(Unlisted::Stopped);
            }
            let Some(entry) = self.reader.read() else {
                return Ok(true);
            };
            read += 1;
            let entry = entry.map_err(error)?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = String::from_utf8(name.to_vec());
            // A name that is not UTF-8 is not kept, only its error.
            self.listing.bytes +=
                ENTRY_OVERHEAD_BYTES + name.as_ref().map_or(0, |name| name.len() as u64);
            if self.listing.bytes > self.most_bytes {
                return Err(Unlisted::OverLimit);
            }
            let Ok(name) = name else {
                self.listing
                    .entries
                    .push_back(Err(ErrorCode::IllegalByteSequence));
                continue;
            };
            let kind = match entry.file_type() {
                FileType::Unknown => self
                    .reader
                    .fd()
                    .and_then(|dir| {
                        rustix::fs::statat(dir, &*name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                    })
                    .map(|stat| FileType::from_raw_mode(stat.st_mode))
                    .unwrap_or(FileType::Unknown),
                known => known,
            };
            self.listing.entries.push_back(Ok(DirectoryEntry {
                type_: descriptor_type(kind),
                name,
            }));
        }
    }
}

/// The whole listing of the directory open at `dir`, holding at most `most_bytes`.
#[cfg(test)]
fn list(dir: std::os::fd::BorrowedFd<'_>, most_bytes: u64) -> Result<Listing, Unlisted> {
    let mut reading = Reading::start(dir, most_bytes)?;
    reading.read(None, None)?;
    Ok(reading.listing)
}

fn descriptor_type(kind: FileType) -> DescriptorType {
    match kind {
        FileType::RegularFile => DescriptorType::RegularFile,
        FileType::Directory => DescriptorType::Directory,
        FileType::Symlink => DescriptorType::SymbolicLink,
        FileType::Fifo => DescriptorType::Fifo,
        FileType::Socket => DescriptorType::Socket,
        FileType::CharacterDevice => DescriptorType::CharacterDevice,
        FileType::BlockDevice => DescriptorType::BlockDevice,
        FileType::Unknown => DescriptorType::Unknown,
    }
}

fn error_code(err: rustix::io::Errno) -> ErrorCode {
    ErrorCode::from(std::io::Error::from(err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_stops_reading_where_it_would_pass_the_memory_left() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..100 {
            std::fs::write(dir.path().join(format!("{i:0>100}")), "").unwrap();
        }
        let handle = std::fs::File::open(dir.path()).unwrap();
        let whole = list(handle.as_fd(), u64::MAX).ok().expect("listed");
        assert_eq!(whole.entries.len(), 100);
        assert_eq!(whole.bytes, 100 * (100 + ENTRY_OVERHEAD_BYTES));
        let cut = list(handle.as_fd(), 50 * (100 + ENTRY_OVERHEAD_BYTES));
        assert!(matches!(cut, Err(Unlisted::OverLimit)));
    }

    #[test]
    fn a_listing_read_in_two_parts_has_every_entry_once() {
        // What the host does with a big directory: the first part on the calling thread, the
        // rest (here on another thread) where it cannot hold an async worker.
        let dir = tempfile::tempdir().unwrap();
        for i in 0..2_500 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        let handle = std::fs::File::open(dir.path()).unwrap();
        let mut reading = Reading::start(handle.as_fd(), u64::MAX).ok().unwrap();
        assert!(
            !reading.read(Some(INLINE_ENTRIES), None).ok().unwrap(),
            "more to read"
        );
        let rest = std::thread::spawn(move || {
            assert!(reading.read(None, None).ok().unwrap());
            reading.listing
        })
        .join()
        .unwrap();
        let mut names: Vec<String> = rest
            .entries
            .into_iter()
            .map(|entry| entry.ok().unwrap().name)
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 2_500);
    }

    #[test]
    fn a_listing_on_its_thread_stops_at_the_deadline_or_cancellation() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..2_000 {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        let handle = std::fs::File::open(dir.path()).unwrap();
        let past = std::time::Instant::now() - std::time::Duration::from_millis(1);
        let later = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let token = tokio_util::sync::CancellationToken::new();
        let mut reading = Reading::start(handle.as_fd(), u64::MAX).ok().unwrap();
        let late = reading.read(None, Some(&(past, token.clone())));
        assert!(matches!(late, Err(Unlisted::Stopped)));
        token.cancel();
        let mut reading = Reading::start(handle.as_fd(), u64::MAX).ok().unwrap();
        let cancelled = reading.read(None, Some(&(later, token)));
        assert!(matches!(cancelled, Err(Unlisted::Stopped)));
        let mut reading = Reading::start(handle.as_fd(), u64::MAX).ok().unwrap();
        let fresh = tokio_util::sync::CancellationToken::new();
        assert!(reading.read(None, Some(&(later, fresh))).ok().unwrap());
        assert_eq!(reading.listing.entries.len(), 2_000);
    }
}
