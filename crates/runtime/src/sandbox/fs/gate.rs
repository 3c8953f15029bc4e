//! The host's gate on `wasi:filesystem`, three entry points shadowed in the linker around
//! wasmtime-wasi's own implementation:
//! - `get-directories` hands the guest clones of the directory handles the plugin opened once at
//!   load (see grant.rs), never a path opened anew, and the directory paths outside the grants
//!   land in (outside_grants.rs), where every open is refused;
//! - `open-at` never blocks (nonblocking_open.rs: a FIFO, device or socket is refused by what was
//!   opened), is bounded (a call holds at most [`MAX_OPEN_FILES_PER_CALL`](crate::capabilities::limits::MAX_OPEN_FILES_PER_CALL) open files and
//!   directories, the process at most its `[host] max_open_files`; past either the open fails with
//!   `quota`, so no plugin can exhaust the host's file descriptors) and reported for the audit log
//!   and events: the path as the guest sees it (cut to a length), what it asked for, and whether the
//!   host opened or refused it, up to a number of records per sandbox (the rest are counted);
//! - an open with `create` is charged to the call's entry budget (fs/disk_quota.rs);
//! - dropping a descriptor gives its slot back.
//!
//! Nothing is recorded (and nothing is allocated) for calls nobody listens to.

use crate::report::budget::{MAX_RECORDED_PATH_BYTES, RecordKind};
use crate::report::{GuestReport, PathOpen};
use crate::sandbox::call_state::CallState;
use crate::sandbox::fs::nonblocking_open::{self, Refused};
use crate::sandbox::fs::outside_grants;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceType};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorFlags, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
};

/// The `wasi:filesystem` version wasmtime-wasi 48 defines; guests importing any 0.2.x reach it. The
/// audit tests fail if a wasmtime update moves it (the shadow would then define an unused name).
const TYPES: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// Replaces `get-directories`, `open-at` and the descriptor's destructor in a linker that already
/// has WASI p2.
pub fn shadow_in_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker
        .instance(PREOPENS)?
        .func_wrap("get-directories", get_directories)?;
    let mut types = linker.instance(TYPES)?;
    types.func_wrap_async("[method]descriptor.open-at", |store, params| {
        Box::new(open_at(store, params))
    })?;
    types.resource(
        "descriptor",
        ResourceType::host::<Descriptor>(),
        |mut store, rep| {
            let state = store.data_mut();
            state.open_files().closed(rep);
            HostDescriptor::drop(&mut state.filesystem(), Resource::new_own(rep))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

type Preopens = Vec<(Resource<Descriptor>, String)>;

fn get_directories(
    mut store: StoreContextMut<'_, CallState>,
    (): (),
) -> wasmtime::Result<(Preopens,)> {
    let state = store.data_mut();
    let granted = state.preopens().clone();
    let mut directories = Vec::with_capacity(granted.len() + 1);
    for (dir, guest_path) in granted.iter() {
        let descriptor = state.table().push(Descriptor::Dir(dir.clone()))?;
        directories.push((descriptor, guest_path.clone()));
    }
    // Last, so code that takes the first preopen for relative paths still takes a grant. Not
    // beside a grant at `/`, nor beside a working directory (`.`): wasi-libc reads `/` and `.`
    // as the same empty prefix, and the working directory is where a command's relative paths,
    // and any path no other grant holds, resolve.
    if !granted
        .iter()
        .any(|(_, guest)| guest == outside_grants::GUEST_PATH || guest == ".")
        && let Some(outside) = outside_grants::directory()
    {
        let descriptor = state.table().push(Descriptor::Dir(outside))?;
        directories.push((descriptor, outside_grants::GUEST_PATH.to_string()));
    }
    if let Some(opened) = state.opened_paths() {
        for (descriptor, guest_path) in &directories {
            opened
                .paths
                .insert(descriptor.rep(), guest_path.as_str().into());
        }
    }
    Ok((directories,))
}

type OpenAt = (
    Resource<Descriptor>,
    PathFlags,
    String,
    OpenFlags,
    DescriptorFlags,
);

async fn open_at(
    mut store: StoreContextMut<'_, CallState>,
    (directory, path_flags, path, open_flags, flags): OpenAt,
) -> wasmtime::Result<(Result<Resource<Descriptor>, ErrorCode>,)> {
    let state = store.data_mut();
    let guest_path = state
        .opened_paths()
        .map(|opened| joined(&opened.path_of(directory.rep()), &path))
        .map(|guest_path| state.masked_cut(&guest_path, MAX_RECORDED_PATH_BYTES));
    // A path outside every grant: answered as wasi-libc answered it before the host could see it
    // (`no-entry`, so a plugin falling back on a missing optional file still does), and noted.
    // Nothing is opened, so nothing is charged.
    if let Descriptor::Dir(dir) = state.table().get(&directory)?
        && outside_grants::is_it(dir)
    {
        outside_open(state, &path, open_flags, flags);
        return record(
            state,
            guest_path,
            open_flags,
            flags,
            Err(ErrorCode::NoEntry),
            Some(OUTSIDE_GRANTS),
        );
    }
    // Creating counts against the call's entry budget (fs/disk_quota.rs); past it the call ends.
    if open_flags.contains(OpenFlags::CREATE) {
        state.disk().charge_entry(0)?;
    }
    let outcome = match state.open_files().take() {
        Err(reason) => {
            state.warn_limited(&format!(
                "refused to open a file: {reason}; close files before opening more"
            ));
            Err(ErrorCode::Quota)
        }
        Ok(slot) => {
            let opened = match state.table().get(&directory)? {
                Descriptor::Dir(dir) => {
                    nonblocking_open::open_at(dir, path_flags, &path, open_flags, flags)
                }
                Descriptor::File(_) => Err(Refused::Error(ErrorCode::NotDirectory)),
            };
            match opened {
                Ok(descriptor) => {
                    let descriptor = state.table().push(descriptor)?;
                    state.open_files().opened(descriptor.rep(), slot);
                    Ok(descriptor)
                }
                Err(refused) => {
                    drop(slot);
                    Err(match refused {
                        Refused::Error(code) => code,
                        Refused::Blocking(kind) => {
                            state.warn_limited(&format!(
                                "refused to open a {kind}: only files and directories may be opened"
                            ));
                            ErrorCode::Unsupported
                        }
                    })
                }
            }
        }
    };
    if let Err(code @ (ErrorCode::NotPermitted | ErrorCode::Access | ErrorCode::ReadOnly)) =
        &outcome
    {
        let asked = mode(open_flags, flags).join(", ");
        state.refused(|| format!("to open {path:?} ({asked}): {}", code.name()));
    }
    record(state, guest_path, open_flags, flags, outcome, None)
}

/// What a refused open outside the grants is recorded as (its `error`): it never reached the
/// host's file system, so the audit log maps it onto no grant.
pub(crate) const OUTSIDE_GRANTS: &str = "outside-grants";

/// Notes an open of `path` in the directory outside the grants (outside_grants.rs), with what
/// is granted; `/` itself (a listing of the root) is nothing to note.
fn outside_open(state: &CallState, path: &str, open_flags: OpenFlags, flags: DescriptorFlags) {
    if matches!(path.trim_matches('/'), "" | ".") {
        return;
    }
    let asked = mode(open_flags, flags).join(", ");
    let full = state.masked_cut(
        &joined(outside_grants::GUEST_PATH, path),
        MAX_RECORDED_PATH_BYTES,
    );
    let grants = outside_grants::describe_grants(state.preopens());
    state.refused_outside(&full, || {
        format!(
            "to open {full:?} ({asked}): it is outside the directories granted to it ({grants})"
        )
    });
}

/// Reports an open (when opens are being recorded) and answers it; `error` names a refusal the
/// error code does not (an open outside the grants).
fn record(
    state: &mut CallState,
    guest_path: Option<String>,
    open_flags: OpenFlags,
    flags: DescriptorFlags,
    outcome: Result<Resource<Descriptor>, ErrorCode>,
    error: Option<&'static str>,
) -> wasmtime::Result<(Result<Resource<Descriptor>, ErrorCode>,)> {
    if let Some(guest_path) = guest_path {
        let host_path = match &outcome {
            Ok(descriptor) => real_path(state, descriptor),
            Err(_) => None,
        };
        let Some(opened) = state.opened_paths() else {
            return Ok((outcome,));
        };
        let error = error.or_else(|| outcome.as_ref().err().map(ErrorCode::name));
        if opened.budget.record(RecordKind::Path) {
            (opened.sink)(GuestReport::PathOpen(PathOpen {
                call_id: opened.call_id.clone(),
                path: guest_path.clone(),
                host_path,
                mode: mode(open_flags, flags),
                error,
            }));
        }
        if let Ok(descriptor) = &outcome {
            opened.paths.insert(descriptor.rep(), guest_path.into());
        }
    }
    Ok((outcome,))
}

/// Where an opened descriptor really is on the host (its `/proc/self/fd` link), cut to a length:
/// what the audit log reports, whatever renames inside the grant made of the guest's path.
fn real_path(state: &mut CallState, descriptor: &Resource<Descriptor>) -> Option<String> {
    use std::os::fd::AsRawFd;
    let fd = match state.table().get(descriptor).ok()? {
        Descriptor::File(file) => file.file.as_raw_fd(),
        Descriptor::Dir(dir) => dir.dir.as_raw_fd(),
    };
    let path = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    Some(state.masked_cut(&path.to_string_lossy(), MAX_RECORDED_PATH_BYTES))
}

/// The directory's guest path joined with the path the guest gave, as written (not normalised, so
/// a `..` the host refused stays visible).
fn joined(directory: &str, path: &str) -> String {
    if directory.ends_with('/') {
        format!("{directory}{path}")
    } else {
        format!("{directory}/{path}")
    }
}

/// What an open asked for, in WASI's words. `mutate-directory` is left out: wasi-libc asks for it
/// on every writable open, so it says nothing.
fn mode(open_flags: OpenFlags, flags: DescriptorFlags) -> Vec<&'static str> {
    [
        (flags.contains(DescriptorFlags::READ), "read"),
        (flags.contains(DescriptorFlags::WRITE), "write"),
        (open_flags.contains(OpenFlags::CREATE), "create"),
        (open_flags.contains(OpenFlags::TRUNCATE), "truncate"),
        (open_flags.contains(OpenFlags::EXCLUSIVE), "exclusive"),
        (open_flags.contains(OpenFlags::DIRECTORY), "directory"),
    ]
    .into_iter()
    .filter_map(|(set, name)| set.then_some(name))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_as_written() {
        assert_eq!(joined("/data", "a/b.txt"), "/data/a/b.txt");
        assert_eq!(joined("/", "etc"), "/etc");
        assert_eq!(joined("/data", "../secret"), "/data/../secret");
    }

    #[test]
    fn modes_name_what_was_asked() {
        assert_eq!(
            mode(OpenFlags::empty(), DescriptorFlags::READ),
            vec!["read"]
        );
        assert_eq!(
            mode(
                OpenFlags::CREATE | OpenFlags::TRUNCATE,
                DescriptorFlags::WRITE
            ),
            vec!["write", "create", "truncate"]
        );
    }
}
