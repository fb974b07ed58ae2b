//! CUDA graphs and stream capture, below the entry points (`api::graph`):
//!
//! - [`model`]: nodes, graphs and executable graphs, in one table behind
//!   its own lock (taken after the driver's, never before).
//! - [`capture`]: stream capture. Work issued to a capturing stream becomes
//!   nodes of the capture's graph; every stream-ordered entry point asks
//!   [`capture`] first (`capture::intercept`, `capture::unsafe_call`, ...),
//!   and it enforces the rules the driver enforces (unsafe calls during
//!   capture, the legacy stream, joins through events, unjoined forks).
//! - [`ops`]: node operations made from C parameters (copies, memsets,
//!   allocations), shared by capture and by `cuGraphAdd*Node`.
//! - [`abi`]: `cuda.h`'s graph types.
//!
//! The helpers here read and write the caller's node arrays.

pub mod abi;
pub mod capture;
pub mod model;
pub mod ops;

use crate::cu::*;
use crate::entry::non_null;
use abi::CUgraphNode;

/// Reads a caller's `(array, count)` of graph nodes.
///
/// # Safety
/// `ptr` must be NULL or hold `count` handles.
pub unsafe fn read_nodes(ptr: *const CUgraphNode, count: usize) -> Result<Vec<usize>, CUresult> {
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
pub unsafe fn check_edge_data(ptr: *const abi::EdgeData, count: usize) -> Result<(), CUresult> {
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
pub unsafe fn write_list(
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
pub unsafe fn write_list_with_edge_data(
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
pub unsafe fn zero_edge_data(out: *mut abi::EdgeData, count: usize) {
    if out.is_null() {
        return;
    }
    for i in 0..count {
        // SAFETY: the caller's array holds `count` entries.
        unsafe { out.add(i).write_unaligned(abi::EdgeData::default()) };
    }
}
