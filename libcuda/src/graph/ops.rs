//! Graph node operations made from C parameters: copies, memsets and
//! allocations, checked as the driver checks them when a node is made.
//! Both `cuGraphAdd*Node` (`api::graph::build`) and stream capture
//! ([`super::capture`]) make them.

use super::abi::*;
use super::model::{Copy3D, GraphMemory, MemsetOp, Op, with_state};
use crate::cu::*;
use crate::driver::Driver;
use crate::entry::non_null;

/// A copy as a node. Memory types must be known; the copy itself is
/// checked when it runs, as `cuMemcpy3DAsync` checks it.
///
/// # Safety
/// `p` must be NULL or a valid `CUDA_MEMCPY3D`.
pub unsafe fn copy_op(p: *const CUDA_MEMCPY3D) -> Result<Copy3D, CUresult> {
    non_null(p)?;
    // SAFETY: non-null, the caller's struct; copied bitwise.
    let c = Copy3D(unsafe { std::ptr::read_unaligned(p) });
    let known = |t: u32| (CU_MEMORYTYPE_HOST..=CU_MEMORYTYPE_UNIFIED).contains(&t);
    if !known(c.0.src_memory_type) || !known(c.0.dst_memory_type) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(c)
}

/// A memset as a node: element size 1, 2 or 4, aligned destination, a
/// pitch that holds a row when there are several.
pub fn memset_op(p: &MemsetNodeParams) -> Result<MemsetOp, CUresult> {
    let elem = p.element_size as usize;
    if !matches!(elem, 1 | 2 | 4) || p.dst % elem as u64 != 0 || p.dst == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if p.height > 1 && p.pitch < p.width * elem {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(MemsetOp {
        dst: p.dst,
        pitch: p.pitch,
        value: p.value,
        element_size: p.element_size,
        width: p.width,
        height: p.height,
    })
}

/// An allocation node's memory: reserved now, at the address the node
/// reports, owned by the current context; allocated when the node runs.
pub fn alloc_op(d: &mut Driver, ctx: usize, bytes: usize) -> Result<Op, CUresult> {
    let dptr = d.alloc(ctx, bytes)?;
    with_state(|s| {
        s.graph_memory.insert(
            dptr,
            GraphMemory {
                bytes,
                live: false,
                exec: None,
            },
        );
        s.note_graph_memory();
    });
    Ok(Op::MemAlloc { dptr, bytes })
}
