//! What a guest makes the host hold in `wasi:http` objects counts against its memory limit, like
//! its own linear memory: header maps, request methods, schemes, authorities and paths, the buffer
//! behind each request or response body, the copy of a header map every `headers()` call makes.
//! The functions that make those objects are shadowed in the linker by wrappers that call
//! wasmtime's own implementation unchanged and charge what the new object holds to the call's
//! memory limit, keyed by the object's handle (`sandbox/host_charges.rs`); a handle the guest gave
//! up (dropped, or passed on: headers moved into a request carry their charge with them) is given
//! back when the limit is next reached. Past the limit the guest traps and the call ends as
//! `out_of_memory`. Directory listings are charged the same way (`fs/listing.rs`).

use super::BODY_CHUNK_BYTES;
use crate::sandbox::call_state::CallState;
use crate::sandbox::host_objects::Object;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::{
    self as http_types, Fields, HeaderError, HostFields, HostIncomingResponse, HostOutgoingRequest,
    HostOutgoingResponse, IncomingResponse, Method, OutgoingBody, OutgoingRequest,
    OutgoingResponse, Scheme,
};

/// The `wasi:http` version wasmtime 48 defines; guests importing any 0.2.x reach it.
const HTTP_TYPES: &str = "wasi:http/types@0.2.12";

/// What each header entry, string or directory entry costs besides its bytes.
const ENTRY_OVERHEAD_BYTES: u64 = 64;

fn bytes(text: &[u8]) -> u64 {
    text.len() as u64 + ENTRY_OVERHEAD_BYTES
}

/// The parts charged for a request (all live and die with it).
const REQUEST_PARTS: [Object; 5] = [
    Object::RequestHeaders,
    Object::RequestMethod,
    Object::RequestPath,
    Object::RequestScheme,
    Object::RequestAuthority,
];

/// Bytes of a header map's entries (names, values and per-entry overhead).
fn header_bytes(entries: &[(String, Vec<u8>)]) -> u64 {
    entries
        .iter()
        .map(|(name, value)| bytes(name.as_bytes()) + value.len() as u64)
        .sum()
}

/// Bytes a copy of a header map holds: its entries (the values themselves are shared).
fn copy_bytes(state: &mut CallState, fields: u32) -> wasmtime::Result<u64> {
    let entries = HostFields::entries(&mut state.http(), Resource::new_borrow(fields))?;
    Ok(entries.len() as u64 * ENTRY_OVERHEAD_BYTES + ENTRY_OVERHEAD_BYTES)
}

/// Replaces the functions that make the host hold guest-chosen bytes, in a linker that already
/// has `wasi:http` and `wasi:filesystem`.
pub fn shadow_in_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut http = linker.instance(HTTP_TYPES)?;
    http.func_wrap(
        "[static]fields.from-list",
        |mut store: StoreContextMut<'_, CallState>, (entries,): (Vec<(String, Vec<u8>)>,)| {
            let state = store.data_mut();
            let size = header_bytes(&entries);
            let mut view = state.http();
            let created = HostFields::from_list(&mut view, entries);
            let outcome = header_outcome(&mut view, created)?;
            if let Ok(fields) = &outcome {
                state.charge(Object::Fields, fields.rep(), size, "HTTP header maps")?;
            }
            Ok((outcome,))
        },
    )?;
    http.func_wrap(
        "[method]fields.set",
        |mut store: StoreContextMut<'_, CallState>,
         (fields, name, values): (Resource<Fields>, String, Vec<Vec<u8>>)| {
            let state = store.data_mut();
            let size = bytes(name.as_bytes()) + values.iter().map(|v| bytes(v)).sum::<u64>();
            state.add_charge(Object::Fields, fields.rep(), size, "HTTP header maps")?;
            let mut view = state.http();
            let outcome = HostFields::set(&mut view, fields, name, values);
            Ok((header_outcome(&mut view, outcome)?,))
        },
    )?;
    http.func_wrap(
        "[method]fields.append",
        |mut store: StoreContextMut<'_, CallState>,
         (fields, name, value): (Resource<Fields>, String, Vec<u8>)| {
            let state = store.data_mut();
            let size = bytes(name.as_bytes()) + value.len() as u64;
            state.add_charge(Object::Fields, fields.rep(), size, "HTTP header maps")?;
            let mut view = state.http();
            let outcome = HostFields::append(&mut view, fields, name, value);
            Ok((header_outcome(&mut view, outcome)?,))
        },
    )?;
    http.func_wrap(
        "[method]fields.clone",
        |mut store: StoreContextMut<'_, CallState>, (fields,): (Resource<Fields>,)| {
            let state = store.data_mut();
            let entries =
                HostFields::entries(&mut state.http(), Resource::new_borrow(fields.rep()))?;
            let copy = HostFields::clone(&mut state.http(), fields)?;
            state.charge(
                Object::Fields,
                copy.rep(),
                header_bytes(&entries),
                "HTTP header maps",
            )?;
            Ok((copy,))
        },
    )?;
    http.func_wrap(
        "[constructor]outgoing-request",
        |mut store: StoreContextMut<'_, CallState>, (headers,): (Resource<Fields>,)| {
            let state = store.data_mut();
            let from = (Object::Fields, headers.rep());
            let request = HostOutgoingRequest::new(&mut state.http(), headers)?;
            state.new_object(&REQUEST_PARTS, request.rep());
            state.move_charge(from, (Object::RequestHeaders, request.rep()));
            Ok((request,))
        },
    )?;
    http.func_wrap(
        "[constructor]outgoing-response",
        |mut store: StoreContextMut<'_, CallState>, (headers,): (Resource<Fields>,)| {
            let state = store.data_mut();
            let from = (Object::Fields, headers.rep());
            let response = HostOutgoingResponse::new(&mut state.http(), headers)?;
            state.new_object(&[Object::Response], response.rep());
            state.move_charge(from, (Object::Response, response.rep()));
            Ok((response,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-request.headers",
        |mut store: StoreContextMut<'_, CallState>, (request,): (Resource<OutgoingRequest>,)| {
            let state = store.data_mut();
            let copy = HostOutgoingRequest::headers(&mut state.http(), request)?;
            let size = copy_bytes(state, copy.rep())?;
            state.charge(Object::Fields, copy.rep(), size, "HTTP header maps")?;
            Ok((copy,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-response.headers",
        |mut store: StoreContextMut<'_, CallState>, (response,): (Resource<OutgoingResponse>,)| {
            let state = store.data_mut();
            let copy = HostOutgoingResponse::headers(&mut state.http(), response)?;
            let size = copy_bytes(state, copy.rep())?;
            state.charge(Object::Fields, copy.rep(), size, "HTTP header maps")?;
            Ok((copy,))
        },
    )?;
    http.func_wrap(
        "[method]incoming-response.headers",
        |mut store: StoreContextMut<'_, CallState>, (response,): (Resource<IncomingResponse>,)| {
            let state = store.data_mut();
            let copy = HostIncomingResponse::headers(&mut state.http(), response)?;
            let size = copy_bytes(state, copy.rep())?;
            state.charge(Object::Fields, copy.rep(), size, "HTTP header maps")?;
            Ok((copy,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-request.set-method",
        |mut store: StoreContextMut<'_, CallState>,
         (request, method): (Resource<OutgoingRequest>, Method)| {
            let state = store.data_mut();
            if let Method::Other(name) = &method {
                state.charge(
                    Object::RequestMethod,
                    request.rep(),
                    bytes(name.as_bytes()),
                    "HTTP requests",
                )?;
            }
            Ok((HostOutgoingRequest::set_method(
                &mut state.http(),
                request,
                method,
            )?,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-request.set-path-with-query",
        |mut store: StoreContextMut<'_, CallState>,
         (request, path): (Resource<OutgoingRequest>, Option<String>)| {
            let state = store.data_mut();
            let size = path.as_deref().map_or(0, |p| bytes(p.as_bytes()));
            state.charge(Object::RequestPath, request.rep(), size, "HTTP requests")?;
            Ok((HostOutgoingRequest::set_path_with_query(
                &mut state.http(),
                request,
                path,
            )?,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-request.set-scheme",
        |mut store: StoreContextMut<'_, CallState>,
         (request, scheme): (Resource<OutgoingRequest>, Option<Scheme>)| {
            let state = store.data_mut();
            if let Some(Scheme::Other(name)) = &scheme {
                state.charge(
                    Object::RequestScheme,
                    request.rep(),
                    bytes(name.as_bytes()),
                    "HTTP requests",
                )?;
            }
            Ok((HostOutgoingRequest::set_scheme(
                &mut state.http(),
                request,
                scheme,
            )?,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-request.set-authority",
        |mut store: StoreContextMut<'_, CallState>,
         (request, authority): (Resource<OutgoingRequest>, Option<String>)| {
            let state = store.data_mut();
            let size = authority.as_deref().map_or(0, |a| bytes(a.as_bytes()));
            state.charge(
                Object::RequestAuthority,
                request.rep(),
                size,
                "HTTP requests",
            )?;
            Ok((HostOutgoingRequest::set_authority(
                &mut state.http(),
                request,
                authority,
            )?,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-request.body",
        |mut store: StoreContextMut<'_, CallState>, (request,): (Resource<OutgoingRequest>,)| {
            let state = store.data_mut();
            let owner = Object::RequestBody(request.rep());
            let body: Result<Resource<OutgoingBody>, ()> =
                HostOutgoingRequest::body(&mut state.http(), request)?;
            if let Ok(body) = &body {
                state.charge(owner, body.rep(), body_bytes(), "HTTP bodies")?;
            }
            Ok((body,))
        },
    )?;
    http.func_wrap(
        "[method]outgoing-response.body",
        |mut store: StoreContextMut<'_, CallState>, (response,): (Resource<OutgoingResponse>,)| {
            let state = store.data_mut();
            let owner = Object::ResponseBody(response.rep());
            let body: Result<Resource<OutgoingBody>, ()> =
                HostOutgoingResponse::body(&mut state.http(), response)?;
            if let Ok(body) = &body {
                state.charge(owner, body.rep(), body_bytes(), "HTTP bodies")?;
            }
            Ok((body,))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}

fn body_bytes() -> u64 {
    2 * BODY_CHUNK_BYTES as u64 + ENTRY_OVERHEAD_BYTES
}

/// A header operation's outcome as the guest sees it.
fn header_outcome<T>(
    view: &mut wasmtime_wasi_http::WasiHttpCtxView<'_>,
    outcome: Result<T, wasmtime_wasi_http::p2::HeaderError>,
) -> wasmtime::Result<Result<T, HeaderError>> {
    match outcome {
        Ok(value) => Ok(Ok(value)),
        Err(err) => Ok(Err(http_types::Host::convert_header_error(view, err)?)),
    }
}
