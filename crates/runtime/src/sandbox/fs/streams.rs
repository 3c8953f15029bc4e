//! Streams over granted files that read and write on the calling thread. wasmtime-wasi's own file
//! streams hand every non-blocking read (and the poll behind a blocking one, 4 KiB at a time) to a
//! blocking-pool thread and back, which was most of the cost of a guest reading many files (the
//! way language runtimes read: a stream, polled). A granted file is a regular file on a local
//! disk (fs/gate.rs refuses to open FIFOs and devices), so a read of at most 64 KiB returns at
//! once: `read-via-stream`, `write-via-stream` and `append-via-stream` are shadowed in the linker
//! to hand out these streams instead, with the same permission checks; every byte a stream writes
//! is charged to the call's disk quota first (fs/disk_quota.rs).

use crate::sandbox::call_state::CallState;
use crate::sandbox::fs::disk_quota::DiskQuota;
use bytes::Bytes;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::bindings::filesystem::types::{Descriptor, ErrorCode};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, InputStream, OutputStream, Pollable};
use wasmtime_wasi::p2::{StreamError, StreamResult};

/// The `wasi:filesystem` version wasmtime 48 defines.
const TYPES: &str = "wasi:filesystem/types@0.2.12";

/// The most one read returns (wasmtime's own bound).
const MAX_READ_BYTES: usize = 64 << 10;

/// Replaces `read-via-stream` and `write-via-stream` in a linker that already has WASI p2.
pub fn shadow_in_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(TYPES)?;
    types.func_wrap(
        "[method]descriptor.read-via-stream",
        |mut store: StoreContextMut<'_, CallState>,
         (descriptor, offset): (Resource<Descriptor>, u64)| {
            let state = store.data_mut();
            let file = match state.table().get(&descriptor)? {
                Descriptor::File(file) => file.file.clone(),
                Descriptor::Dir(_) => return Ok((Err(ErrorCode::IsDirectory),)),
            };
            let stream: DynInputStream = Box::new(FileInput {
                file,
                position: offset,
            });
            Ok((Ok(state.table().push(stream)?),))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.write-via-stream",
        |mut store: StoreContextMut<'_, CallState>,
         (descriptor, offset): (Resource<Descriptor>, u64)| {
            let state = store.data_mut();
            let file = match state.table().get(&descriptor)? {
                Descriptor::File(file) if file.perms.write_not_permitted() => {
                    return Ok((Err(ErrorCode::NotPermitted),));
                }
                Descriptor::File(file) => file.file.clone(),
                Descriptor::Dir(_) => return Ok((Err(ErrorCode::BadDescriptor),)),
            };
            let stream: DynOutputStream = Box::new(FileOutput {
                file,
                position: Position::At(offset),
                disk: state.disk().clone(),
            });
            Ok((Ok(state.table().push(stream)?),))
        },
    )?;
    types.func_wrap(
        "[method]descriptor.append-via-stream",
        |mut store: StoreContextMut<'_, CallState>, (descriptor,): (Resource<Descriptor>,)| {
            let state = store.data_mut();
            let file = match state.table().get(&descriptor)? {
                Descriptor::File(file) if file.perms.write_not_permitted() => {
                    return Ok((Err(ErrorCode::NotPermitted),));
                }
                Descriptor::File(file) => file.file.clone(),
                Descriptor::Dir(_) => return Ok((Err(ErrorCode::BadDescriptor),)),
            };
            let stream: DynOutputStream = Box::new(FileOutput {
                file,
                position: Position::End,
                disk: state.disk().clone(),
            });
            Ok((Ok(state.table().push(stream)?),))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Reads a file from a position, on the calling thread.
struct FileInput {
    file: Arc<std::fs::File>,
    position: u64,
}

#[wasmtime_wasi::async_trait]
impl InputStream for FileInput {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        if size == 0 {
            return Ok(Bytes::new());
        }
        let mut buffer = vec![0; size.min(MAX_READ_BYTES)];
        loop {
            match self.file.read_at(&mut buffer, self.position) {
                Ok(0) => return Err(StreamError::Closed),
                Ok(n) => {
                    buffer.truncate(n);
                    self.position += n as u64;
                    return Ok(buffer.into());
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(StreamError::LastOperationFailed(err.into())),
            }
        }
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FileInput {
    async fn ready(&mut self) {}
}

/// Where a stream writes next.
enum Position {
    At(u64),
    /// At the end of the file, wherever it is when each write comes.
    End,
}

/// Writes a file from a position (or at its end), on the calling thread, within the call's disk
/// budget: a write past it ends the call.
struct FileOutput {
    file: Arc<std::fs::File>,
    position: Position,
    disk: Arc<DiskQuota>,
}

#[wasmtime_wasi::async_trait]
impl OutputStream for FileOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let end = self
            .file
            .metadata()
            .map_err(|err| StreamError::LastOperationFailed(err.into()))?
            .len();
        let at = match self.position {
            Position::At(at) => at,
            Position::End => end,
        };
        // A write past the end grows the file by the gap too (a sparse file, like set-size).
        self.disk
            .charge_bytes(bytes.len() as u64 + at.saturating_sub(end))
            .map_err(|limit| StreamError::Trap(limit.into()))?;
        self.file
            .write_all_at(&bytes, at)
            .map_err(|err| StreamError::LastOperationFailed(err.into()))?;
        if let Position::At(at) = &mut self.position {
            *at += bytes.len() as u64;
        }
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(MAX_READ_BYTES)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FileOutput {
    async fn ready(&mut self) {}
}
