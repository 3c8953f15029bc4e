//! The host's gate on what a guest writes and syncs through `wasi:filesystem`, shadowed in the
//! linker around wasmtime-wasi's own implementation:
//! - `write` (a write past the end counts the gap as well) and `set-size` (growing a file
//!   counts, sparse or not) are charged to the call's
//!   disk quota, `create-directory-at`, `link-at` and `symlink-at` to its entry budget (a
//!   directory's block and a link's target to its disk quota too; fs/disk_quota.rs), before
//!   anything reaches the disk; past either the call ends as `out_of_disk`;
//! - `sync`, `sync-data` and writes of more than [`INLINE_WRITE_BYTES`], which can block for
//!   seconds behind other dirty data, run on a blocking thread, never on an async worker: the
//!   call waits for them asynchronously and ends at its deadline (or cancellation) even if the
//!   kernel has not answered, and other calls and the HTTP server keep their threads. At most
//!   `blocking_ops::MAX_SLOW_OPS_IN_FLIGHT` run at once in the process (one the kernel never
//!   finishes keeps its thread and its slot; the calls after it wait for a slot, within their own
//!   deadlines).
//!
//! Opens with `create` are charged in fs/gate.rs, stream writes in fs/streams.rs.

use crate::sandbox::call_state::CallState;
use crate::sandbox::fs::blocking_ops::{off_thread, stop_of};
use std::os::unix::fs::FileExt;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, ErrorCode, HostDescriptor, PathFlags,
};

/// The `wasi:filesystem` version wasmtime 48 defines.
const TYPES: &str = "wasi:filesystem/types@0.2.12";

/// The largest `write` done on the calling thread (a stream writes at most this much at once).
pub const INLINE_WRITE_BYTES: usize = 64 << 10;

/// Replaces the write, create and sync entry points in a linker that already has WASI p2.
pub fn shadow_in_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut types = linker.instance(TYPES)?;
    types.func_wrap_async(
        "[method]descriptor.write",
        |mut store: StoreContextMut<'_, CallState>,
         (descriptor, buffer, offset): (Resource<Descriptor>, Vec<u8>, u64)| {
            Box::new(async move {
                let state = store.data_mut();
                let file = match state.table().get(&descriptor)? {
                    Descriptor::File(file) if file.perms.write_not_permitted() => {
                        return Ok((Err(ErrorCode::NotPermitted),));
                    }
                    Descriptor::File(file) => file.file.clone(),
                    Descriptor::Dir(_) => return Ok((Err(ErrorCode::BadDescriptor),)),
                };
                // A write past the end grows the file by the gap too (a sparse file, like set-size).
                let end = match file.metadata() {
                    Ok(metadata) => metadata.len(),
                    Err(err) => return Ok((Err(ErrorCode::from(err)),)),
                };
                state
                    .disk()
                    .charge_bytes(buffer.len() as u64 + offset.saturating_sub(end))?;
                let inline = buffer.len() <= INLINE_WRITE_BYTES;
                let write = move || file.write_at(&buffer, offset);
                let written = if inline {
                    write()
                } else {
                    let stop = stop_of(state);
                    off_thread(stop, write).await?
                };
                Ok((written.map(|n| n as u64).map_err(ErrorCode::from),))
            })
        },
    )?;
    types.func_wrap(
        "[method]descriptor.set-size",
        |mut store: StoreContextMut<'_, CallState>,
         (descriptor, size): (Resource<Descriptor>, u64)| {
            let state = store.data_mut();
            let file = match state.table().get(&descriptor)? {
                Descriptor::File(file) if file.perms.write_not_permitted() => {
                    return Ok((Err(ErrorCode::NotPermitted),));
                }
                Descriptor::File(file) => file.file.clone(),
                Descriptor::Dir(_) => return Ok((Err(ErrorCode::IsDirectory),)),
            };
            let current = match file.metadata() {
                Ok(metadata) => metadata.len(),
                Err(err) => return Ok((Err(ErrorCode::from(err)),)),
            };
            state.disk().charge_bytes(size.saturating_sub(current))?;
            Ok((file.set_len(size).map_err(ErrorCode::from),))
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.create-directory-at",
        |mut store: StoreContextMut<'_, CallState>,
         (directory, path): (Resource<Descriptor>, String)| {
            Box::new(async move {
                let state = store.data_mut();
                state.disk().charge_entry(0)?;
                answer(
                    HostDescriptor::create_directory_at(&mut state.filesystem(), directory, path)
                        .await,
                )
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.symlink-at",
        |mut store: StoreContextMut<'_, CallState>,
         (directory, target, path): (Resource<Descriptor>, String, String)| {
            Box::new(async move {
                let state = store.data_mut();
                state.disk().charge_entry(target.len() as u64)?;
                answer(
                    HostDescriptor::symlink_at(&mut state.filesystem(), directory, target, path)
                        .await,
                )
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.link-at",
        |mut store: StoreContextMut<'_, CallState>,
         (directory, flags, old_path, new_directory, new_path): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| {
            Box::new(async move {
                let state = store.data_mut();
                state.disk().charge_entry(0)?;
                answer(
                    HostDescriptor::link_at(
                        &mut state.filesystem(),
                        directory,
                        flags,
                        old_path,
                        new_directory,
                        new_path,
                    )
                    .await,
                )
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.sync",
        |mut store: StoreContextMut<'_, CallState>, (descriptor,): (Resource<Descriptor>,)| {
            Box::new(async move { sync(&mut store, descriptor, Sync::All).await })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.sync-data",
        |mut store: StoreContextMut<'_, CallState>, (descriptor,): (Resource<Descriptor>,)| {
            Box::new(async move { sync(&mut store, descriptor, Sync::Data).await })
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

/// wasmtime-wasi's answer as the guest gets it: an error code, or a trap.
fn answer<T>(result: FsResult<T>) -> wasmtime::Result<(Result<T, ErrorCode>,)> {
    match result {
        Ok(value) => Ok((Ok(value),)),
        Err(err) => Ok((Err(err.downcast()?),)),
    }
}

#[derive(Clone, Copy)]
enum Sync {
    All,
    Data,
}

/// Syncs a file or directory off the async workers.
async fn sync(
    store: &mut StoreContextMut<'_, CallState>,
    descriptor: Resource<Descriptor>,
    what: Sync,
) -> wasmtime::Result<(Result<(), ErrorCode>,)> {
    let state = store.data_mut();
    let file = match state.table().get(&descriptor)? {
        Descriptor::File(file) => file.file.clone(),
        Descriptor::Dir(dir) => dir.dir.clone(),
    };
    let stop = stop_of(state);
    let synced = off_thread(stop, move || match what {
        Sync::All => file.sync_all(),
        Sync::Data => file.sync_data(),
    })
    .await?;
    Ok((synced.map_err(ErrorCode::from),))
}
