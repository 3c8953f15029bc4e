//! The guest's view of its granted directories, and which paths it asks the host to open, for the
//! audit log and the event stream. `wasi:filesystem`'s preopen listing (`get-directories`) is
//! shadowed in the linker: it hands the guest clones of the directory handles the plugin opened
//! once at load (see grant.rs), never a path opened anew. `open-at` is shadowed by a wrapper that
//! calls wasmtime-wasi's own implementation unchanged and then reports the open: the path as the
//! guest sees it (cut to a length), what it asked for, and whether the host opened or refused it,
//! up to a number of records per sandbox (the rest are counted). Nothing is recorded (and nothing
//! is allocated) for calls nobody listens to.

use crate::call_state::{CallState, GuestReport, PathOpen, ReportSink};
use crate::report_budget::{MAX_RECORDED_PATH_BYTES, RecordKind, ReportBudget, cut};
use std::collections::HashMap;
use std::sync::Arc;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, Descriptor, DescriptorFlags, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
};

/// The `wasi:filesystem` version wasmtime-wasi 48 defines; guests importing any 0.2.x reach it. The
/// audit tests fail if a wasmtime update moves it (the shadow would then define an unused name).
const TYPES: &str = "wasi:filesystem/types@0.2.12";
const PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// A call's record of where its directory descriptors point, and where opens are reported.
pub struct OpenedPaths {
    /// Guest path of each descriptor the guest received, by resource index. An index is reused only
    /// after its descriptor is dropped, and every new descriptor passes through here, so an entry
    /// is never stale when it is read.
    paths: HashMap<u32, Arc<str>>,
    sink: ReportSink,
    call_id: String,
    budget: Arc<ReportBudget>,
}

impl OpenedPaths {
    pub fn new(sink: ReportSink, call_id: String, budget: Arc<ReportBudget>) -> Self {
        Self {
            paths: HashMap::new(),
            sink,
            call_id,
            budget,
        }
    }

    fn path_of(&self, descriptor: u32) -> Arc<str> {
        self.paths
            .get(&descriptor)
            .cloned()
            .unwrap_or_else(|| "<unknown directory>".into())
    }
}

/// Replaces `open-at` and `get-directories` in a linker that already has WASI p2.
pub fn shadow_in_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    linker.allow_shadowing(true);
    linker
        .instance(PREOPENS)?
        .func_wrap("get-directories", get_directories)?;
    linker
        .instance(TYPES)?
        .func_wrap_async("[method]descriptor.open-at", |store, params| {
            Box::new(open_at(store, params))
        })?;
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
    let mut directories = Vec::with_capacity(granted.len());
    for (dir, guest_path) in granted.iter() {
        let descriptor = state.table().push(Descriptor::Dir(dir.clone()))?;
        directories.push((descriptor, guest_path.clone()));
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
    let guest_path = state.opened_paths().map(|opened| {
        cut(
            &joined(&opened.path_of(directory.rep()), &path),
            MAX_RECORDED_PATH_BYTES,
        )
    });
    let outcome = HostDescriptor::open_at(
        &mut state.filesystem(),
        directory,
        path_flags,
        path,
        open_flags,
        flags,
    )
    .await;
    let outcome = match outcome {
        Ok(descriptor) => Ok(descriptor),
        Err(err) => Err(types::Host::convert_error_code(
            &mut state.filesystem(),
            err,
        )?),
    };
    if let (Some(guest_path), Some(opened)) = (guest_path, state.opened_paths()) {
        let error = outcome.as_ref().err().map(ErrorCode::name);
        if opened.budget.record(RecordKind::Path) {
            (opened.sink)(GuestReport::PathOpen(PathOpen {
                call_id: opened.call_id.clone(),
                path: guest_path.clone(),
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
