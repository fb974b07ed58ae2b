//! CUDA graphs and stream capture.
//!
//! - [`model`]: nodes, graphs and executable graphs, in one table behind
//!   its own lock (taken after the driver's, never before).
//! - [`build`]: making and inspecting graphs (`cuGraphCreate`,
//!   `cuGraphAdd*Node`, dependencies, node parameters, `cuGraphClone`).
//! - [`exec`]: `cuGraphInstantiate*`, `cuGraphLaunch`, executable-graph
//!   updates. A launch runs the nodes in a topological order on the launch
//!   stream, each through the same entry point the stream call would use
//!   (`cuLaunchKernelEx`, `cuMemcpy3DAsync`, ...), so a graph does exactly
//!   what the same work issued to the stream does.
//! - [`capture`]: stream capture. Work issued to a capturing stream becomes
//!   nodes of the capture's graph; other modules ask [`capture`] first
//!   (`capture::intercept`, `capture::unsafe_call`, ...), and it enforces the
//!   rules the driver enforces (unsafe calls during capture, the legacy
//!   stream, joins through events, unjoined forks).
//! - [`user_object`]: user objects and the references graphs hold.

pub mod abi;
pub mod build;
pub mod capture;
pub mod exec;
pub mod model;
pub mod user_object;

use super::proc_address::ProcEntry;
use crate::cu::*;
use crate::entry::non_null;
use abi::CUgraphNode;

/// Reads a caller's `(array, count)` of graph nodes.
///
/// # Safety
/// `ptr` must be NULL or hold `count` handles.
pub(crate) unsafe fn read_nodes(
    ptr: *const CUgraphNode,
    count: usize,
) -> Result<Vec<usize>, CUresult> {
    if count == 0 {
        return Ok(Vec::new());
    }
    non_null(ptr)?;
    // SAFETY: the caller's array holds `count` handles.
    let nodes = unsafe { std::slice::from_raw_parts(ptr, count) };
    Ok(nodes.iter().map(|n| *n as usize).collect())
}

/// Checks an optional `CUgraphEdgeData` array: only ordinary (all-zero)
/// edges exist here; programmatic ports are a device feature the emulator
/// does not model.
///
/// # Safety
/// `ptr` must be NULL or hold `count` entries.
pub(crate) unsafe fn check_edge_data(
    ptr: *const abi::EdgeData,
    count: usize,
) -> Result<(), CUresult> {
    if ptr.is_null() || count == 0 {
        return Ok(());
    }
    // SAFETY: the caller's array holds `count` entries.
    let data = unsafe { std::slice::from_raw_parts(ptr, count) };
    if data.iter().all(|e| *e == abi::EdgeData::default()) {
        Ok(())
    } else {
        Err(CUDA_ERROR_NOT_SUPPORTED)
    }
}

/// The "query or fill" protocol of `cuGraphGetNodes` and friends: with a
/// NULL array, `*count` receives the number of items; otherwise up to
/// `*count` items are written, the rest of the array is NULLed, and
/// `*count` receives how many were written.
///
/// # Safety
/// `out` must be NULL or hold `*count` handles; `count` must be valid.
pub(crate) unsafe fn write_list(
    out: *mut CUgraphNode,
    count: *mut usize,
    items: &[usize],
) -> Result<(), CUresult> {
    non_null(count)?;
    // SAFETY: checked non-null; the caller's size_t.
    let capacity = unsafe { count.read_unaligned() };
    if out.is_null() {
        // SAFETY: as above.
        unsafe { count.write_unaligned(items.len()) };
        return Ok(());
    }
    let n = capacity.min(items.len());
    for i in 0..capacity {
        let v = items.get(i).copied().unwrap_or(0);
        // SAFETY: the caller's array holds `capacity` handles.
        unsafe { out.add(i).write_unaligned(v as CUgraphNode) };
    }
    // SAFETY: as above.
    unsafe { count.write_unaligned(n) };
    Ok(())
}

/// [`write_list`] of nodes for the `_v2` queries: when the nodes are
/// written, so is their edge data (all default: prlx keeps none).
///
/// # Safety
/// As [`write_list`]; `edge_data` must be NULL or hold `*count` entries.
pub(crate) unsafe fn write_list_with_edge_data(
    out: *mut CUgraphNode,
    edge_data: *mut abi::EdgeData,
    count: *mut usize,
    items: &[usize],
) -> Result<(), CUresult> {
    non_null(count)?;
    // SAFETY: checked non-null; the caller's size_t.
    let capacity = unsafe { count.read_unaligned() };
    // SAFETY: forwarded contract.
    unsafe { write_list(out, count, items) }?;
    if !out.is_null() {
        // SAFETY: forwarded contract.
        unsafe { zero_edge_data(edge_data, capacity) };
    }
    Ok(())
}

/// Zeroes `count` edge-data entries when the caller asked for them.
///
/// # Safety
/// `out` must be NULL or hold `count` entries.
pub(crate) unsafe fn zero_edge_data(out: *mut abi::EdgeData, count: usize) {
    if out.is_null() {
        return;
    }
    for i in 0..count {
        // SAFETY: the caller's array holds `count` entries.
        unsafe { out.add(i).write_unaligned(abi::EdgeData::default()) };
    }
}

/// The `cuGetProcAddress` entries of everything this module exports.
pub fn entries() -> Vec<ProcEntry> {
    let mut v = build::entries();
    v.extend(exec::entries());
    v.extend(capture::entries());
    v.extend(user_object::entries());
    v
}
