//! How a call's store takes and gives back the charges of the objects the host holds for its guest
//! (`host_objects.rs`) against the call's memory limit: a charge is set, added to, moved with its
//! object or given back, and when the limit is reached the charges of objects that no longer exist
//! are given back first. The gates that make those objects charge here: `http/host_memory.rs` for
//! `wasi:http`, `fs/listing.rs` for directory listings.

use crate::sandbox::call_state::CallState;
use crate::sandbox::host_objects::Object;
use wasmtime::component::Resource;
use wasmtime_wasi_http::p2::bindings::http::types::{
    Fields, OutgoingBody, OutgoingRequest, OutgoingResponse,
};

impl CallState {
    /// Sets the charge of part `kind` of object `rep` to `bytes` (giving back what it held). When
    /// the memory limit is reached, the charges of objects that no longer exist are given back
    /// first.
    pub(crate) fn charge(
        &mut self,
        kind: Object,
        rep: u32,
        bytes: u64,
        what: &str,
    ) -> wasmtime::Result<()> {
        if let Some(old) = self.host_objects.charged.remove(&(kind, rep)) {
            self.give_back_host_bytes(old);
        }
        if self.take_host_bytes(bytes).is_err() {
            self.give_back_dead_objects();
            if self.take_host_bytes(bytes).is_err() {
                self.limiter.denied = true;
                wasmtime::bail!(
                    "the plugin made the host hold more memory in {what} than its memory limit allows"
                );
            }
        }
        self.host_objects.charged.insert((kind, rep), bytes);
        Ok(())
    }

    /// Adds `bytes` to the charge of part `kind` of object `rep` (an entry added to a header map).
    pub(crate) fn add_charge(
        &mut self,
        kind: Object,
        rep: u32,
        bytes: u64,
        what: &str,
    ) -> wasmtime::Result<()> {
        let held = self
            .host_objects
            .charged
            .get(&(kind, rep))
            .copied()
            .unwrap_or(0);
        self.charge(kind, rep, held + bytes, what)
    }

    /// How many bytes a directory listing may still take before the memory limit (after giving back
    /// the charges of objects that are gone): the listing stops reading there.
    pub(crate) fn listing_headroom(&mut self) -> u64 {
        self.give_back_dead_objects();
        self.limiter.headroom() as u64
    }

    /// A listing outgrew [`CallState::listing_headroom`]: the call ends out of memory.
    pub(crate) fn listing_over_limit(&mut self) -> wasmtime::Error {
        self.limiter.denied = true;
        wasmtime::format_err!(
            "the plugin made the host hold more memory in directory listings than its memory limit allows"
        )
    }

    /// Charges a directory listing the guest asked for (see fs/listing.rs).
    pub(crate) fn charge_listing(&mut self, rep: u32, bytes: u64) -> wasmtime::Result<()> {
        self.charge(Object::Listing, rep, bytes, "directory listings")
    }

    /// A new object took handle `rep`: whatever was charged to an earlier object of that handle
    /// (which is gone) is given back.
    pub(crate) fn new_object(&mut self, kinds: &[Object], rep: u32) {
        for kind in kinds {
            if let Some(old) = self.host_objects.charged.remove(&(*kind, rep)) {
                self.give_back_host_bytes(old);
            }
        }
    }

    /// Moves the charge of `from` to `to` (headers moved into a request).
    pub(crate) fn move_charge(&mut self, from: (Object, u32), to: (Object, u32)) {
        if let Some(bytes) = self.host_objects.charged.remove(&from) {
            self.host_objects.charged.insert(to, bytes);
        }
    }

    fn give_back_dead_objects(&mut self) {
        let charged = std::mem::take(&mut self.host_objects.charged);
        let mut freed = 0;
        for ((kind, rep), bytes) in charged {
            if self.object_alive(kind, rep) {
                self.host_objects.charged.insert((kind, rep), bytes);
            } else {
                freed += bytes;
            }
        }
        self.give_back_host_bytes(freed);
    }

    fn object_alive(&mut self, kind: Object, rep: u32) -> bool {
        let table = self.table();
        match kind {
            Object::Fields => table.get(&Resource::<Fields>::new_borrow(rep)).is_ok(),
            Object::RequestHeaders
            | Object::RequestMethod
            | Object::RequestPath
            | Object::RequestScheme
            | Object::RequestAuthority => table
                .get(&Resource::<OutgoingRequest>::new_borrow(rep))
                .is_ok(),
            Object::Response => table
                .get(&Resource::<OutgoingResponse>::new_borrow(rep))
                .is_ok(),
            Object::RequestBody(request) => {
                table
                    .get(&Resource::<OutgoingBody>::new_borrow(rep))
                    .is_ok()
                    || table
                        .get(&Resource::<OutgoingRequest>::new_borrow(request))
                        .is_ok()
            }
            Object::ResponseBody(response) => {
                table
                    .get(&Resource::<OutgoingBody>::new_borrow(rep))
                    .is_ok()
                    || table
                        .get(&Resource::<OutgoingResponse>::new_borrow(response))
                        .is_ok()
            }
            Object::Listing => table
                .get(&Resource::<crate::sandbox::fs::listing::Listing>::new_borrow(rep))
                .is_ok(),
        }
    }
}
