//! What a call's store counts of the objects the host holds for its guest (`wasi:http` header
//! maps, request parts, bodies, directory listings): each object's charge against the call's
//! memory limit, by handle. How a charge is taken and given back is `host_charges.rs`.

use std::collections::HashMap;

/// What is charged: one part of one kind of object (a request's path is charged apart from its
/// authority, so setting it again replaces its charge).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Object {
    Fields,
    RequestHeaders,
    RequestMethod,
    RequestPath,
    RequestScheme,
    RequestAuthority,
    Response,
    /// A request's body, keyed by the body's handle: its buffered chunks live on while either the
    /// body or the request it belongs to (the request's handle here) does.
    RequestBody(u32),
    /// A response's body, likewise.
    ResponseBody(u32),
    Listing,
}

/// The charges of one call's live objects, by object handle.
#[derive(Default)]
pub struct HostObjects {
    pub(super) charged: HashMap<(Object, u32), u64>,
}
