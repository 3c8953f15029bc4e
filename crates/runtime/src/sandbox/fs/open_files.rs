//! What one call's store holds of its guest's files: the descriptors it has open (counted against
//! the call's and the process's bounds) and where each directory descriptor points, for the audit
//! log and events. The gate that fills them in is fs/gate.rs.

use crate::capabilities::limits::MAX_OPEN_FILES_PER_CALL;
use crate::report::ReportSink;
use crate::report::budget::ReportBudget;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The process's count of files and directories guests hold open, against its limit. Cheap to
/// clone; every call's [`OpenFiles`] shares it.
#[derive(Clone, Debug)]
pub struct ProcessFiles {
    pub(super) open: Arc<AtomicUsize>,
    pub(super) limit: usize,
}

impl ProcessFiles {
    pub fn new(limit: usize) -> Self {
        Self {
            open: Arc::default(),
            limit: limit.max(1),
        }
    }

    pub(super) fn try_take(&self) -> bool {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.limit).then_some(open + 1)
            })
            .is_ok()
    }

    pub(super) fn give_back(&self, count: usize) {
        self.open.fetch_sub(count, Ordering::AcqRel);
    }
}

/// The descriptors one call opened and still holds; given back to the process when the call's
/// store is dropped (which closes them).
pub struct OpenFiles {
    pub(super) live: HashSet<u32>,
    pub(super) process: ProcessFiles,
}

impl OpenFiles {
    pub fn new(process: ProcessFiles) -> Self {
        Self {
            live: HashSet::new(),
            process,
        }
    }

    /// A slot for one more open file (given back when dropped, unless the open succeeded), or why
    /// there is none.
    pub(super) fn take(&mut self) -> Result<FileSlot, &'static str> {
        if self.live.len() >= MAX_OPEN_FILES_PER_CALL {
            return Err("this call already holds 256 files open");
        }
        if !self.process.try_take() {
            return Err(
                "guests hold as many files open as the host allows ([host] max_open_files)",
            );
        }
        Ok(FileSlot {
            process: Some(self.process.clone()),
        })
    }

    /// The open that `slot` was taken for succeeded: the descriptor holds it until closed.
    pub(super) fn opened(&mut self, descriptor: u32, mut slot: FileSlot) {
        slot.process = None;
        self.live.insert(descriptor);
    }

    pub(super) fn closed(&mut self, descriptor: u32) {
        if self.live.remove(&descriptor) {
            self.process.give_back(1);
        }
    }
}

/// One file slot of the process, taken before an open and given back when dropped: an open that
/// fails, or one that never finishes (its call was cancelled mid-open), returns it.
pub(super) struct FileSlot {
    pub(super) process: Option<ProcessFiles>,
}

impl Drop for FileSlot {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            process.give_back(1);
        }
    }
}

impl Drop for OpenFiles {
    fn drop(&mut self) {
        self.process.give_back(self.live.len());
    }
}

/// A call's record of where its directory descriptors point, and where opens are reported.
pub struct OpenedPaths {
    /// Guest path of each descriptor the guest received, by resource index. An index is reused only
    /// after its descriptor is dropped, and every new descriptor passes through here, so an entry
    /// is never stale when it is read.
    pub(super) paths: HashMap<u32, Arc<str>>,
    pub(super) sink: ReportSink,
    pub(super) call_id: String,
    pub(super) budget: Arc<ReportBudget>,
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

    pub(super) fn path_of(&self, descriptor: u32) -> Arc<str> {
        self.paths
            .get(&descriptor)
            .cloned()
            .unwrap_or_else(|| "<unknown directory>".into())
    }
}
