//! Making and inspecting graphs: `cuGraphCreate`, the `cuGraphAdd*Node`
//! family, dependencies, node parameters, `cuGraphClone`, `cuGraphDestroy*`.
//!
//! Node parameters are validated and copied when a node is made or changed,
//! as the driver does: kernel arguments are packed then (the caller's
//! `kernelParams` may go away), and a child graph is cloned into its node.

use crate::cu::*;
use crate::driver::{Driver, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{c_str, exports, non_null, write_out};
use crate::graph::abi::*;
use crate::graph::model::{KernelOp, Op, State, with_state};
pub use crate::graph::ops::{alloc_op, copy_op, memset_op};
use crate::graph::{check_edge_data, read_nodes, write_list, write_list_with_edge_data};
use crate::params;
use std::ffi::{c_char, c_uint, c_void};

fn raw<T>(p: *mut T) -> usize {
    p as usize
}

/// A kernel launch as a node: the function checked and the arguments packed.
///
/// # Safety
/// `kernel_params`/`extra` as for `cuLaunchKernel`.
pub(crate) unsafe fn kernel_op(
    d: &Driver,
    func: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<KernelOp, CUresult> {
    if func.is_null() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let emu = d.function(func)?.emu;
    let info = d.device.kernel_info(emu).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if grid.contains(&0) || block.contains(&0) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: forwarded contract.
    let args = unsafe { params::pack(info, kernel_params, extra) }?;
    let offsets = info.params.iter().map(|p| p.offset).collect();
    Ok(KernelOp::new(
        func as usize,
        grid,
        block,
        shared,
        false,
        args,
        offsets,
    ))
}

/// The kernel op described by a `CUDA_KERNEL_NODE_PARAMS` (v1 or v2).
///
/// # Safety
/// `p` must be NULL or valid; `v2` says which layout it has.
pub(super) unsafe fn kernel_from_params(
    d: &Driver,
    p: *const KernelNodeParamsV2,
    v2: bool,
) -> Result<KernelOp, CUresult> {
    non_null(p)?;
    // SAFETY: non-null; v1 is a prefix of v2, and only v1 fields are read
    // unless the caller passed v2.
    let c = unsafe { &*p };
    let as_kernel = c.func.is_null() && v2;
    let func = if as_kernel { c.kern } else { c.func };
    // SAFETY: forwarded contract.
    let mut op = unsafe {
        kernel_op(
            d,
            func,
            c.grid,
            c.block,
            c.shared_mem_bytes,
            c.kernel_params,
            c.extra,
        )
    }?;
    op.as_kernel = as_kernel;
    Ok(op)
}

/// As NVIDIA's driver (checked on an H200): a node whose kernel is a
/// library's `CUkernel` reports the current context's `CUfunction` in
/// `func` beside `kern`, and the context in `ctx`.
///
/// # Safety
/// `out` is a v2 parameter struct just written.
unsafe fn report_kernel_function(out: *mut KernelNodeParamsV2) {
    // SAFETY: per the contract.
    let (func, kern) = unsafe { ((*out).func, (*out).kern) };
    if !func.is_null() || kern.is_null() {
        return;
    }
    if let Some((f, kernel, ctx)) = crate::api::library::node_function_of_kernel(kern) {
        // SAFETY: per the contract.
        unsafe {
            (*out).func = f;
            (*out).kern = kernel;
            (*out).ctx = ctx;
        }
    }
}

/// Writes a kernel node's parameters in the v1 or v2 layout.
///
/// # Safety
/// `out` must be valid for the layout `v2` names.
unsafe fn write_kernel_params(out: *mut KernelNodeParamsV2, k: &KernelOp, v2: bool) {
    let args = if k.arg_ptrs.is_empty() {
        std::ptr::null_mut()
    } else {
        k.arg_ptrs.as_ptr() as *mut *mut c_void
    };
    let by_kernel = v2 && k.as_kernel;
    let p = KernelNodeParamsV1 {
        func: if by_kernel {
            std::ptr::null_mut()
        } else {
            k.func as CUfunction
        },
        grid: k.grid,
        block: k.block,
        shared_mem_bytes: k.shared,
        kernel_params: args,
        extra: std::ptr::null_mut(),
    };
    // SAFETY: the caller's struct, at least v1-sized.
    unsafe { (out as *mut KernelNodeParamsV1).write_unaligned(p) };
    if v2 {
        // SAFETY: the caller passed the v2 layout.
        unsafe {
            (*out).kern = if by_kernel {
                k.func as CUkernel
            } else {
                std::ptr::null_mut()
            };
            (*out).ctx = std::ptr::null_mut();
        }
    }
}

fn host_op(f: HostFn, data: *mut c_void) -> Result<Op, CUresult> {
    let f = f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
    Ok(Op::Host {
        f: f as usize,
        data: data as usize,
    })
}

fn check_event(d: &Driver, event: CUevent) -> Result<usize, CUresult> {
    if d.events.contains(event) {
        Ok(event as usize)
    } else {
        Err(CUDA_ERROR_INVALID_HANDLE)
    }
}

/// Adds a node and writes its handle.
///
/// # Safety
/// `ph` must be NULL or writable; `deps` NULL or `n` handles.
unsafe fn add(
    ph: *mut CUgraphNode,
    graph: CUgraph,
    deps: *const CUgraphNode,
    n: usize,
    op: Op,
) -> Result<(), CUresult> {
    non_null(ph)?;
    // SAFETY: forwarded contract.
    let deps = unsafe { read_nodes(deps, n) }?;
    let node = with_state(|s| s.add_node(raw(graph), &deps, op))?;
    // SAFETY: non-null, the caller's out-pointer.
    unsafe { write_out(ph, node as CUgraphNode) }
}

/// A child-graph op: a clone of `child`, owned by the node.
fn child_op(s: &mut State, child: CUgraph) -> Result<Op, CUresult> {
    let g = s.graph(raw(child))?;
    if g.capture.is_some() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(Op::Child(s.clone_graph(raw(child))?))
}

/// The op a `CUgraphNodeParams` describes (`cuGraphAddNode`).
///
/// # Safety
/// `p` must be NULL or valid.
pub(crate) unsafe fn op_from_node_params(p: *mut GraphNodeParams) -> Result<Op, CUresult> {
    non_null(p)?;
    // SAFETY: non-null, the caller's struct.
    let params = unsafe { &*p };
    let body = params.params.as_ptr() as *const u8;
    match params.type_ {
        NODE_KERNEL => with_driver(|d| {
            // SAFETY: the union holds CUDA_KERNEL_NODE_PARAMS_v3 (v2 layout).
            unsafe { kernel_from_params(d, body as *const KernelNodeParamsV2, true) }
        })
        .map(Op::Kernel),
        NODE_MEMCPY => {
            // SAFETY: the union holds CUDA_MEMCPY_NODE_PARAMS.
            let m = unsafe { &*(body as *const MemcpyNodeParams) };
            if m.flags != 0 || m.reserved != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: a field of the caller's struct.
            unsafe { copy_op(&m.copy_params) }.map(Op::Memcpy)
        }
        NODE_MEMSET => {
            // SAFETY: the union holds CUDA_MEMSET_NODE_PARAMS_v2.
            let m = unsafe { &*(body as *const MemsetNodeParamsV2) };
            memset_op(&m.base).map(Op::Memset)
        }
        NODE_HOST => {
            // SAFETY: the union holds CUDA_HOST_NODE_PARAMS_v2.
            let h = unsafe { &*(body as *const HostNodeParamsV2) };
            host_op(h.f, h.user_data)
        }
        NODE_GRAPH => {
            // SAFETY: the union holds CUDA_CHILD_GRAPH_NODE_PARAMS.
            let c = unsafe { &mut *(body as *mut ChildGraphNodeParams) };
            let op = with_state(|s| child_op(s, c.graph))?;
            Ok(op)
        }
        NODE_EMPTY => Ok(Op::Empty),
        NODE_WAIT_EVENT | NODE_EVENT_RECORD => {
            // SAFETY: the union holds CUDA_EVENT_{WAIT,RECORD}_NODE_PARAMS.
            let e = unsafe { &*(body as *const EventNodeParams) };
            let ev = with_driver(|d| check_event(d, e.event))?;
            Ok(if params.type_ == NODE_WAIT_EVENT {
                Op::EventWait(ev)
            } else {
                Op::EventRecord(ev)
            })
        }
        NODE_MEM_ALLOC => {
            // SAFETY: the union holds CUDA_MEM_ALLOC_NODE_PARAMS_v2.
            let op = unsafe { alloc_from_params(body as *const MemAllocNodeParams) }?;
            if let Op::MemAlloc { dptr, .. } = op {
                // SAFETY: as above; `dptr` is an out field.
                unsafe { (*(body as *mut MemAllocNodeParams)).dptr = dptr };
            }
            Ok(op)
        }
        // SAFETY: the union holds CUDA_MEM_FREE_NODE_PARAMS.
        NODE_MEM_FREE => free_op(unsafe { (body as *const u64).read_unaligned() }),
        // Semaphores, batch memory operations, conditionals: not modelled.
        _ => Err(CUDA_ERROR_NOT_SUPPORTED),
    }
}

/// `cuGraphNodeSetParams`: the new op must have the node's type.
fn set_op(node: CUgraphNode, op: Op) -> Result<(), CUresult> {
    with_state(|s| {
        let n = s.node_mut(raw(node))?;
        if n.op.node_type() != op.node_type() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let old = std::mem::replace(&mut n.op, op);
        let new_child = match &n.op {
            Op::Child(c) => Some(*c),
            _ => None,
        };
        if let Some(c) = new_child {
            s.graph_mut(c)?.owner = Some(raw(node));
        }
        if let Op::Child(c) = old {
            s.destroy_graph(c);
        }
        Ok(())
    })
}

fn node_op(node: CUgraphNode) -> Result<Op, CUresult> {
    with_state(|s| Ok::<_, CUresult>(s.node(raw(node))?.op.clone()))
}

/// Runs `f` on a kernel node's op.
fn with_kernel<R>(node: CUgraphNode, f: impl FnOnce(&KernelOp) -> R) -> Result<R, CUresult> {
    with_state(|s| match &s.node(raw(node))?.op {
        Op::Kernel(k) => Ok(f(k)),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    })
}

/// Checks an edge list against `graph` for `cuGraphAdd/RemoveDependencies`.
///
/// # Safety
/// `from`/`to` NULL or `n` handles each.
unsafe fn edge_list(
    s: &State,
    graph: CUgraph,
    from: *const CUgraphNode,
    to: *const CUgraphNode,
    n: usize,
) -> Result<Vec<(usize, usize)>, CUresult> {
    s.graph(raw(graph))?;
    // SAFETY: forwarded contract.
    let (a, b) = unsafe { (read_nodes(from, n)?, read_nodes(to, n)?) };
    let in_graph = |x: usize| s.node(x).map(|n| n.graph) == Ok(raw(graph));
    let edges: Vec<(usize, usize)> = a.into_iter().zip(b).collect();
    for (x, y) in &edges {
        if !in_graph(*x) || !in_graph(*y) || x == y {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
    }
    Ok(edges)
}

fn dot_label(s: &State, n: usize) -> String {
    let Ok(node) = s.node(n) else {
        return "?".into();
    };
    match &node.op {
        Op::Kernel(k) => format!(
            "KERNEL\\nfunc {:#x}\\ngrid ({},{},{}) block ({},{},{}) shared {}",
            k.func, k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.shared
        ),
        Op::Memcpy(c) => format!(
            "MEMCPY\\n{}x{}x{} bytes",
            c.0.width_in_bytes, c.0.height, c.0.depth
        ),
        Op::Memset(m) => format!(
            "MEMSET\\ndst {:#x} value {:#x}\\n{}x{} of {} bytes",
            m.dst, m.value, m.width, m.height, m.element_size
        ),
        Op::Host { f, .. } => format!("HOST\\nfn {f:#x}"),
        Op::Child(_) => "CHILD GRAPH".into(),
        Op::Empty => "EMPTY".into(),
        Op::EventRecord(e) => format!("EVENT_RECORD\\n{e:#x}"),
        Op::EventWait(e) => format!("EVENT_WAIT\\n{e:#x}"),
        Op::MemAlloc { dptr, bytes } => format!("MEM_ALLOC\\n{dptr:#x} {bytes} bytes"),
        Op::MemFree(p) => format!("MEM_FREE\\n{p:#x}"),
    }
}

/// The DOT text of a graph and its child graphs (`cuGraphDebugDotPrint`).
fn dot(s: &State, g: usize, name: &str, out: &mut String) -> Result<(), CUresult> {
    let graph = s.graph(g)?;
    out.push_str(&format!("subgraph cluster_{name} {{\nlabel=\"{name}\";\n"));
    for &n in &graph.nodes {
        out.push_str(&format!(
            "\"n{n:x}\" [shape=box, label=\"{}\"];\n",
            dot_label(s, n)
        ));
    }
    for (a, b) in &graph.edges {
        out.push_str(&format!("\"n{a:x}\" -> \"n{b:x}\";\n"));
    }
    out.push_str("}\n");
    for &n in &graph.nodes {
        if let Ok(node) = s.node(n)
            && let Op::Child(c) = node.op
        {
            dot(s, c, &format!("{name}_{n:x}"), out)?;
            out.push_str(&format!("\"n{n:x}\" -> \"n{:x}\" [style=dashed];\n", {
                s.graph(c)?.nodes.first().copied().unwrap_or(n)
            }));
        }
    }
    Ok(())
}

exports! {
    fn cuGraphCreate(ph_graph: *mut CUgraph, flags: c_uint) {
        with_driver(|_| Ok(()))?;
        non_null(ph_graph)?;
        if flags != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let g = with_state(|s| s.new_graph());
        // SAFETY: `cuGraphCreate`'s caller passes `ph_graph` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `CUgraph`.
        unsafe { write_out(ph_graph, g as CUgraph) }
    }

    /// Destroys a graph and its nodes. A child graph (owned by its node)
    /// and a graph a capture is building cannot be destroyed directly.
    fn cuGraphDestroy(h_graph: CUgraph) {
        with_state(|s| {
            let g = s.graph(raw(h_graph))?;
            if g.owner.is_some() || g.capture.is_some() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            s.destroy_graph(raw(h_graph));
            Ok(())
        })
    }

    fn cuGraphClone(ph_clone: *mut CUgraph, original: CUgraph) {
        non_null(ph_clone)?;
        let g = with_state(|s| s.clone_graph(raw(original)))?;
        // SAFETY: `cuGraphClone`'s caller passes `ph_clone` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `CUgraph`.
        unsafe { write_out(ph_clone, g as CUgraph) }
    }

    fn cuGraphNodeFindInClone(ph_node: *mut CUgraphNode, original: CUgraphNode, cloned: CUgraph) {
        non_null(ph_node)?;
        let n = with_state(|s| {
            s.graph(raw(cloned))?
                .clone_of
                .get(&raw(original))
                .copied()
                .filter(|n| s.nodes.contains(*n as *mut c_void))
                .ok_or(CUDA_ERROR_INVALID_VALUE)
        })?;
        // SAFETY: `cuGraphNodeFindInClone`'s caller passes `ph_node` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `CUgraphNode`.
        unsafe { write_out(ph_node, n as CUgraphNode) }
    }

    fn cuGraphAddKernelNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        params: *const KernelNodeParamsV1,
    ) {
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_KERNEL_NODE_PARAMS (v1
        // layout, a prefix of v2), whose `kernelParams`/`extra` describe the kernel's
        // arguments as cuda.h specifies for `cuGraphAddKernelNode`.
        let op = with_driver(|d| unsafe { kernel_from_params(d, params as *const KernelNodeParamsV2, false) })?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when `n` is 0)
        // come from this entry point's caller, as cuda.h specifies, which is `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::Kernel(op)) }
    }

    fn cuGraphAddKernelNode_v2(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        params: *const KernelNodeParamsV2,
    ) {
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_KERNEL_NODE_PARAMS_v2,
        // whose `kernelParams`/`extra` describe the kernel's arguments as cuda.h specifies
        // for `cuGraphAddKernelNode_v2`.
        let op = with_driver(|d| unsafe { kernel_from_params(d, params, true) })?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when `n` is 0)
        // come from this entry point's caller, as cuda.h specifies, which is `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::Kernel(op)) }
    }

    fn cuGraphAddMemcpyNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        copy: *const CUDA_MEMCPY3D,
        _ctx: CUcontext,
    ) {
        with_driver(|d| d.current_context())?;
        // SAFETY: `copy` is NULL (refused by `copy_op`) or the caller's CUDA_MEMCPY3D, as cuda.h
        // specifies for `cuGraphAddMemcpyNode`.
        let op = unsafe { copy_op(copy) }?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when `n` is 0)
        // come from this entry point's caller, as cuda.h specifies, which is `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::Memcpy(op)) }
    }

    fn cuGraphAddMemsetNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        params: *const MemsetNodeParams,
        _ctx: CUcontext,
    ) {
        with_driver(|d| d.current_context())?;
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's
        // CUDA_MEMSET_NODE_PARAMS, as cuda.h specifies for `cuGraphAddMemsetNode`.
        let op = memset_op(unsafe { &*params })?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when `n` is 0)
        // come from this entry point's caller, as cuda.h specifies, which is `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::Memset(op)) }
    }

    fn cuGraphAddHostNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        params: *const HostNodeParams,
    ) {
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's `HostNodeParams`,
        // as cuda.h specifies for `cuGraphAddHostNode`.
        let p = unsafe { &*params };
        let op = host_op(p.f, p.user_data)?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when `n` is 0)
        // come from this entry point's caller, as cuda.h specifies, which is `add`'s contract.
        unsafe { add(ph, graph, deps, n, op) }
    }

    /// The node gets its own clone of `child` (`cuGraphChildGraphNodeGetGraph`
    /// returns it); later changes to `child` do not affect it.
    fn cuGraphAddChildGraphNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        child: CUgraph,
    ) {
        non_null(ph)?;
        // SAFETY: `deps` holds `n` node handles (or is unused when `n` is 0), as cuda.h specifies
        // for `cuGraphAddChildGraphNode`.
        let deps = unsafe { read_nodes(deps, n) }?;
        let node = with_state(|s| {
            s.graph(raw(graph))?;
            let op = child_op(s, child)?;
            let copy = match op { Op::Child(c) => c, _ => unreachable!("child_op makes child ops") };
            s.add_node(raw(graph), &deps, op).inspect_err(|_| s.destroy_graph(copy))
        })?;
        // SAFETY: `cuGraphAddChildGraphNode`'s caller passes `ph` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `CUgraphNode`.
        unsafe { write_out(ph, node as CUgraphNode) }
    }

    fn cuGraphAddEmptyNode(ph: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize) {
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when
        // `n` is 0) come from `cuGraphAddEmptyNode`'s caller as cuda.h specifies, which is
        // `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::Empty) }
    }

    fn cuGraphAddEventRecordNode(ph: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent) {
        let e = with_driver(|d| check_event(d, event))?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when
        // `n` is 0) come from `cuGraphAddEventRecordNode`'s caller as cuda.h specifies,
        // which is `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::EventRecord(e)) }
    }

    fn cuGraphAddEventWaitNode(ph: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, event: CUevent) {
        let e = with_driver(|d| check_event(d, event))?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when
        // `n` is 0) come from `cuGraphAddEventWaitNode`'s caller as cuda.h specifies, which
        // is `add`'s contract.
        unsafe { add(ph, graph, deps, n, Op::EventWait(e)) }
    }

    fn cuGraphAddMemAllocNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        params: *mut MemAllocNodeParams,
    ) {
        non_null(ph)?;
        with_state(|s| s.graph(raw(graph)).map(|_| ()))?;
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_MEM_ALLOC_NODE_PARAMS,
        // as cuda.h specifies for `cuGraphAddMemAllocNode`.
        let op = unsafe { alloc_from_params(params) }?;
        let Op::MemAlloc { dptr, .. } = op else { unreachable!("alloc_from_params makes allocations") };
        // SAFETY: `ph` and `deps` (`n` handles) are the caller's, valid as cuda.h specifies, which is
        // `add`'s contract.
        unsafe { add(ph, graph, deps, n, op) }?;
        // SAFETY: `params` is non-null (`alloc_from_params` refused NULL) and the caller's writable
        // CUDA_MEM_ALLOC_NODE_PARAMS: cuda.h has the driver write `dptr` back into it.
        unsafe { (*params).dptr = dptr };
        Ok(())
    }

    fn cuGraphAddMemFreeNode(ph: *mut CUgraphNode, graph: CUgraph, deps: *const CUgraphNode, n: usize, dptr: CUdeviceptr) {
        let op = free_op(dptr)?;
        // SAFETY: `ph` (a writable `CUgraphNode`) and `deps` (`n` readable handles, or NULL when
        // `n` is 0) come from `cuGraphAddMemFreeNode`'s caller as cuda.h specifies, which
        // is `add`'s contract.
        unsafe { add(ph, graph, deps, n, op) }
    }

    fn cuGraphMemAllocNodeGetParams(node: CUgraphNode, out: *mut MemAllocNodeParams) {
        non_null(out)?;
        match node_op(node)? {
            Op::MemAlloc { dptr, bytes } => {
                // SAFETY: `out` is non-null (checked above) and the caller's writable
                // CUDA_MEM_ALLOC_NODE_PARAMS, as cuda.h specifies for
                // `cuGraphMemAllocNodeGetParams`.
                unsafe { write_alloc_params(out, dptr, bytes) };
                Ok(())
            }
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphMemFreeNodeGetParams(node: CUgraphNode, out: *mut CUdeviceptr) {
        non_null(out)?;
        match node_op(node)? {
            // SAFETY: `cuGraphMemFreeNodeGetParams`'s caller passes `out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUdeviceptr`.
            Op::MemFree(p) => unsafe { write_out(out, p) },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    /// Graph memory is not pooled apart from ordinary allocations: nothing
    /// to trim.
    fn cuDeviceGraphMemTrim(device: CUdevice) {
        crate::driver::with_driver(|_| crate::driver::check_device(device))
    }

    /// Used (allocated by a graph launch and not freed) and reserved (all
    /// graph allocations) bytes, and their high-water marks.
    fn cuDeviceGetGraphMemAttribute(device: CUdevice, attr: c_uint, value: *mut u64) {
        crate::driver::with_driver(|_| crate::driver::check_device(device))?;
        non_null(value)?;
        let v = with_state(|s| s.graph_memory_attribute(attr))?;
        // SAFETY: `cuDeviceGetGraphMemAttribute`'s caller passes `value` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `u64`.
        unsafe { write_out(value, v) }
    }

    /// Only the high-water marks may be set, and only to zero (a reset).
    fn cuDeviceSetGraphMemAttribute(device: CUdevice, attr: c_uint, value: *const u64) {
        crate::driver::with_driver(|_| crate::driver::check_device(device))?;
        non_null(value)?;
        // SAFETY: `value` is non-null (checked above) and points to the caller's `u64`, as cuda.h
        // specifies for `cuDeviceSetGraphMemAttribute`.
        if unsafe { value.read_unaligned() } != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        with_state(|s| s.reset_graph_memory_high(attr))
    }

    fn cuGraphAddNode(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        n: usize,
        params: *mut GraphNodeParams,
    ) {
        // SAFETY: the pointers `cuGraphAddNode`'s caller passed, valid as cuda.h specifies;
        // `cuGraphAddNode_v2` takes them with the same contract (its edge data, where it
        // has one, is NULL: none).
        unsafe { cuGraphAddNode_v2(ph, graph, deps, std::ptr::null(), n, params) }.into_result()
    }

    fn cuGraphAddNode_v2(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
        params: *mut GraphNodeParams,
    ) {
        // SAFETY: `edge_data` is NULL or holds `n` CUgraphEdgeData entries, as cuda.h specifies for
        // `cuGraphAddNode_v2`.
        unsafe { check_edge_data(edge_data, n) }?;
        // SAFETY: `params` is the caller's CUgraphNodeParams (NULL refused inside), whose `type` names the
        // union member `op_from_node_params` reads.
        let op = unsafe { op_from_node_params(params) }?;
        let child = match &op { Op::Child(c) => Some(*c), _ => None };
        // SAFETY: `ph` and `deps` (`n` handles) are the caller's, valid as cuda.h specifies, which is
        // `add`'s contract.
        let r = unsafe { add(ph, graph, deps, n, op) };
        match (r, child) {
            (Err(e), Some(c)) => {
                with_state(|s| s.destroy_graph(c));
                Err(e)
            }
            (Ok(()), Some(c)) => {
                // The node's own graph, for queries.
                // SAFETY: `params` is the caller's writable CUgraphNodeParams (read above, so non-null)
                // of type child graph (`op` was `Op::Child`), whose union holds a
                // CUDA_CHILD_GRAPH_NODE_PARAMS; cuda.h has the driver write the node's graph there.
                unsafe { (*((*params).params.as_mut_ptr() as *mut ChildGraphNodeParams)).graph = c as CUgraph };
                Ok(())
            }
            (r, None) => r,
        }
    }

    fn cuGraphNodeSetParams(node: CUgraphNode, params: *mut GraphNodeParams) {
        // SAFETY: `params` is the caller's CUgraphNodeParams (NULL refused inside), whose `type`
        // names the union member `op_from_node_params` reads.
        let op = unsafe { op_from_node_params(params) }?;
        set_op(node, op)
    }

    /// The node's parameters in the form `cuGraphAddNode` takes.
    fn cuGraphNodeGetParams(node: CUgraphNode, params: *mut GraphNodeParams) {
        non_null(params)?;
        with_state(|s| {
            let op = &s.node(raw(node))?.op;
            // SAFETY: `params` is non-null (checked above) and the caller's writable
            // CUgraphNodeParams, as cuda.h specifies for `cuGraphNodeGetParams`.
            unsafe { write_node_params(params, op, &[]) };
            Ok::<(), CUresult>(())
        })?;
        // SAFETY: written just above; a kernel node's body is v2 parameters.
        unsafe {
            if (*params).type_ == crate::graph::abi::NODE_KERNEL {
                report_kernel_function((*params).params.as_mut_ptr() as *mut KernelNodeParamsV2);
            }
        }
        Ok(())
    }

    fn cuGraphKernelNodeGetAttribute(node: CUgraphNode, attr: c_uint, value: *mut [u8; 64]) {
        non_null(value)?;
        let v = with_state(|s| match &s.node(raw(node))?.op {
            Op::Kernel(k) => get_attribute(k, attr),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })?;
        // SAFETY: `cuGraphKernelNodeGetAttribute`'s caller passes `value` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `[u8; 64]`.
        unsafe { write_out(value, v) }
    }

    fn cuGraphKernelNodeSetAttribute(node: CUgraphNode, attr: c_uint, value: *const [u8; 64]) {
        non_null(value)?;
        // SAFETY: `value` is non-null (checked above) and points to the caller's `[u8; 64]`, as
        // cuda.h specifies for `cuGraphKernelNodeSetAttribute`.
        let v = unsafe { value.read_unaligned() };
        with_state(|s| match &mut s.node_mut(raw(node))?.op {
            Op::Kernel(k) => set_attribute(k, attr, v),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })
    }

    /// Both must be kernel nodes; `dst` takes `src`'s attributes.
    fn cuGraphKernelNodeCopyAttributes(dst: CUgraphNode, src: CUgraphNode) {
        with_state(|s| {
            let (cooperative, attrs) = match &s.node(raw(src))?.op {
                Op::Kernel(k) => (k.cooperative, k.attrs.clone()),
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            };
            match &mut s.node_mut(raw(dst))?.op {
                Op::Kernel(k) => {
                    k.cooperative = cooperative;
                    k.attrs = attrs;
                    Ok(())
                }
                _ => Err(CUDA_ERROR_INVALID_VALUE),
            }
        })
    }

    fn cuGraphNodeGetType(node: CUgraphNode, ty: *mut c_uint) {
        non_null(ty)?;
        let t = with_state(|s| Ok::<_, CUresult>(s.node(raw(node))?.op.node_type()))?;
        // SAFETY: `cuGraphNodeGetType`'s caller passes `ty` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `c_uint`.
        unsafe { write_out(ty, t) }
    }

    fn cuGraphNodeGetContainingGraph(node: CUgraphNode, ph_graph: *mut CUgraph) {
        non_null(ph_graph)?;
        let g = with_state(|s| Ok::<_, CUresult>(s.node(raw(node))?.graph))?;
        // SAFETY: `cuGraphNodeGetContainingGraph`'s caller passes `ph_graph` as cuda.h specifies:
        // NULL (refused by `write_out`) or valid for writing a `CUgraph`.
        unsafe { write_out(ph_graph, g as CUgraph) }
    }

    fn cuGraphNodeGetLocalId(node: CUgraphNode, id: *mut c_uint) {
        non_null(id)?;
        let v = with_state(|s| Ok::<_, CUresult>(s.node(raw(node))?.local_id))?;
        // SAFETY: `cuGraphNodeGetLocalId`'s caller passes `id` as cuda.h specifies: NULL (refused
        // by `write_out`) or valid for writing a `c_uint`.
        unsafe { write_out(id, v) }
    }

    /// Unique in the process: the node's handle.
    fn cuGraphNodeGetToolsId(node: CUgraphNode, id: *mut u64) {
        non_null(id)?;
        with_state(|s| s.node(raw(node)).map(|_| ()))?;
        // SAFETY: `cuGraphNodeGetToolsId`'s caller passes `id` as cuda.h specifies: NULL (refused
        // by `write_out`) or valid for writing a `u64`.
        unsafe { write_out(id, node as u64) }
    }

    fn cuGraphGetId(graph: CUgraph, id: *mut c_uint) {
        non_null(id)?;
        let v = with_state(|s| Ok::<_, CUresult>(s.graph(raw(graph))?.id))?;
        // SAFETY: `cuGraphGetId`'s caller passes `id` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `c_uint`.
        unsafe { write_out(id, v) }
    }

    fn cuGraphDestroyNode(node: CUgraphNode) {
        with_state(|s| {
            let g = s.node(raw(node))?.graph;
            if s.graph(g)?.capture.is_some() {
                // Node removal is not permitted on a graph being captured.
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            s.destroy_node(raw(node))
        })
    }

    fn cuGraphKernelNodeGetParams(node: CUgraphNode, out: *mut KernelNodeParamsV1) {
        non_null(out)?;
        // SAFETY: `out` is non-null (checked above) and writable for the kernel-node parameter
        // layout `cuGraphKernelNodeGetParams` takes, as cuda.h specifies.
        with_kernel(node, |k| unsafe { write_kernel_params(out as *mut KernelNodeParamsV2, k, false) })?;
        // As NVIDIA's driver, a library kernel's node names the context's function.
        // SAFETY: written just above.
        if let Some((f, _, _)) = crate::api::library::node_function_of_kernel(unsafe { (*out).func }) {
            // SAFETY: `out` is non-null (checked above) and was just written as a v1 kernel-node struct, so
            // its `func` field is in bounds.
            unsafe { (*out).func = f };
        }
        Ok(())
    }

    fn cuGraphKernelNodeGetParams_v2(node: CUgraphNode, out: *mut KernelNodeParamsV2) {
        non_null(out)?;
        // SAFETY: `out` is non-null (checked above) and writable for the kernel-node parameter
        // layout `cuGraphKernelNodeGetParams_v2` takes, as cuda.h specifies.
        with_kernel(node, |k| unsafe { write_kernel_params(out, k, true) })?;
        // SAFETY: written just above.
        unsafe { report_kernel_function(out) };
        Ok(())
    }

    fn cuGraphKernelNodeSetParams(node: CUgraphNode, params: *const KernelNodeParamsV1) {
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_KERNEL_NODE_PARAMS (v1
        // layout, a prefix of v2), whose `kernelParams`/`extra` describe the kernel's
        // arguments as cuda.h specifies for `cuGraphKernelNodeSetParams`.
        let op = with_driver(|d| unsafe { kernel_from_params(d, params as *const KernelNodeParamsV2, false) })?;
        set_kernel(node, op)
    }

    fn cuGraphKernelNodeSetParams_v2(node: CUgraphNode, params: *const KernelNodeParamsV2) {
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_KERNEL_NODE_PARAMS_v2,
        // whose `kernelParams`/`extra` describe the kernel's arguments as cuda.h specifies
        // for `cuGraphKernelNodeSetParams_v2`.
        let op = with_driver(|d| unsafe { kernel_from_params(d, params, true) })?;
        set_kernel(node, op)
    }

    fn cuGraphMemcpyNodeGetParams(node: CUgraphNode, out: *mut CUDA_MEMCPY3D) {
        non_null(out)?;
        match node_op(node)? {
            // SAFETY: `cuGraphMemcpyNodeGetParams`'s caller passes `out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUDA_MEMCPY3D`.
            Op::Memcpy(c) => unsafe { write_out(out, c.0) },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphMemcpyNodeSetParams(node: CUgraphNode, params: *const CUDA_MEMCPY3D) {
        // SAFETY: `params` is NULL (refused by `copy_op`) or the caller's CUDA_MEMCPY3D, as cuda.h
        // specifies for `cuGraphMemcpyNodeSetParams`.
        let op = unsafe { copy_op(params) }?;
        set_op(node, Op::Memcpy(op))
    }

    fn cuGraphMemsetNodeGetParams(node: CUgraphNode, out: *mut MemsetNodeParams) {
        non_null(out)?;
        match node_op(node)? {
            // SAFETY: `cuGraphMemsetNodeGetParams`'s caller passes `out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `MemsetNodeParams`.
            Op::Memset(m) => unsafe {
                write_out(out, MemsetNodeParams {
                    dst: m.dst,
                    pitch: m.pitch,
                    value: m.value,
                    element_size: m.element_size,
                    width: m.width,
                    height: m.height,
                })
            },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphMemsetNodeSetParams(node: CUgraphNode, params: *const MemsetNodeParams) {
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's
        // CUDA_MEMSET_NODE_PARAMS, as cuda.h specifies for `cuGraphMemsetNodeSetParams`.
        let op = memset_op(unsafe { &*params })?;
        set_op(node, Op::Memset(op))
    }

    fn cuGraphHostNodeGetParams(node: CUgraphNode, out: *mut HostNodeParams) {
        non_null(out)?;
        match node_op(node)? {
            // SAFETY: `cuGraphHostNodeGetParams`'s caller passes `out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `HostNodeParams`.
            Op::Host { f, data } => unsafe {
                write_out(out, HostNodeParams {
                    // SAFETY: `f` was a non-null CUhostFn when stored.
                    f: Some(std::mem::transmute::<usize, unsafe extern "C" fn(*mut c_void)>(f)),
                    user_data: data as *mut c_void,
                })
            },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphHostNodeSetParams(node: CUgraphNode, params: *const HostNodeParams) {
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's `HostNodeParams`,
        // as cuda.h specifies for `cuGraphHostNodeSetParams`.
        let p = unsafe { &*params };
        set_op(node, host_op(p.f, p.user_data)?)
    }

    fn cuGraphChildGraphNodeGetGraph(node: CUgraphNode, ph_graph: *mut CUgraph) {
        non_null(ph_graph)?;
        match node_op(node)? {
            // SAFETY: `cuGraphChildGraphNodeGetGraph`'s caller passes `ph_graph` as cuda.h
            // specifies: NULL (refused by `write_out`) or valid for writing a `CUgraph`.
            Op::Child(c) => unsafe { write_out(ph_graph, c as CUgraph) },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphEventRecordNodeGetEvent(node: CUgraphNode, out: *mut CUevent) {
        non_null(out)?;
        match node_op(node)? {
            // SAFETY: `cuGraphEventRecordNodeGetEvent`'s caller passes `out` as cuda.h specifies:
            // NULL (refused by `write_out`) or valid for writing a `CUevent`.
            Op::EventRecord(e) => unsafe { write_out(out, e as CUevent) },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphEventRecordNodeSetEvent(node: CUgraphNode, event: CUevent) {
        let e = with_driver(|d| check_event(d, event))?;
        set_op(node, Op::EventRecord(e))
    }

    fn cuGraphEventWaitNodeGetEvent(node: CUgraphNode, out: *mut CUevent) {
        non_null(out)?;
        match node_op(node)? {
            // SAFETY: `cuGraphEventWaitNodeGetEvent`'s caller passes `out` as cuda.h specifies:
            // NULL (refused by `write_out`) or valid for writing a `CUevent`.
            Op::EventWait(e) => unsafe { write_out(out, e as CUevent) },
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        }
    }

    fn cuGraphEventWaitNodeSetEvent(node: CUgraphNode, event: CUevent) {
        let e = with_driver(|d| check_event(d, event))?;
        set_op(node, Op::EventWait(e))
    }

    fn cuGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, count: *mut usize) {
        let all = with_state(|s| Ok::<_, CUresult>(s.graph(raw(graph))?.nodes.clone()))?;
        // SAFETY: `count` is the caller's size_t (NULL refused inside) and `nodes` NULL or room for
        // `*count` node handles, as cuda.h specifies for `cuGraphGetNodes`.
        unsafe { write_list(nodes, count, &all) }
    }

    fn cuGraphGetRootNodes(graph: CUgraph, nodes: *mut CUgraphNode, count: *mut usize) {
        let roots = with_state(|s| {
            let g = s.graph(raw(graph))?;
            Ok::<_, CUresult>(g.nodes.iter().copied().filter(|n| !g.edges.iter().any(|e| e.1 == *n)).collect::<Vec<_>>())
        })?;
        // SAFETY: `count` is the caller's size_t (NULL refused inside) and `nodes` NULL or room for
        // `*count` node handles, as cuda.h specifies for `cuGraphGetRootNodes`.
        unsafe { write_list(nodes, count, &roots) }
    }

    fn cuGraphGetEdges(graph: CUgraph, from: *mut CUgraphNode, to: *mut CUgraphNode, count: *mut usize) {
        // SAFETY: the pointers `cuGraphGetEdges`'s caller passed, valid as cuda.h specifies;
        // `cuGraphGetEdges_v2` takes them with the same contract (its edge data, where it
        // has one, is NULL: none).
        unsafe { cuGraphGetEdges_v2(graph, from, to, std::ptr::null_mut(), count) }.into_result()
    }

    fn cuGraphGetEdges_v2(
        graph: CUgraph,
        from: *mut CUgraphNode,
        to: *mut CUgraphNode,
        edge_data: *mut EdgeData,
        count: *mut usize,
    ) {
        non_null(count)?;
        if from.is_null() != to.is_null() || (!edge_data.is_null() && from.is_null()) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let edges = with_state(|s| Ok::<_, CUresult>(s.graph(raw(graph))?.edges.clone()))?;
        let (a, b): (Vec<usize>, Vec<usize>) = edges.into_iter().unzip();
        // SAFETY: `count` is non-null (checked above) and points to the caller's `usize`, as cuda.h
        // specifies for `cuGraphGetEdges_v2`.
        let capacity = unsafe { count.read_unaligned() };
        // SAFETY: `count` was read above (non-null, `write_list` checks it again); `from` and `to` are NULL
        // or hold `*count` handles each, as `cuGraphGetEdges` specifies.
        unsafe {
            write_list(from, count, &a)?;
            if !to.is_null() {
                let mut c = capacity;
                write_list_with_edge_data(to, edge_data, &mut c, &b)?;
            }
        }
        Ok(())
    }

    fn cuGraphNodeGetDependencies(node: CUgraphNode, deps: *mut CUgraphNode, count: *mut usize) {
        let v = with_state(|s| s.dependencies(raw(node)))?;
        // SAFETY: `count` is the caller's size_t (NULL refused inside) and `deps` NULL or room for
        // `*count` node handles, as cuda.h specifies for `cuGraphNodeGetDependencies`.
        unsafe { write_list(deps, count, &v) }
    }

    fn cuGraphNodeGetDependencies_v2(node: CUgraphNode, deps: *mut CUgraphNode, edge_data: *mut EdgeData, count: *mut usize) {
        non_null(count)?;
        let v = with_state(|s| s.dependencies(raw(node)))?;
        // SAFETY: `count` is the caller's size_t (NULL refused inside), `deps` NULL or room for
        // `*count` node handles and `edge_data` NULL or room for `*count` edge-data
        // entries, as cuda.h specifies for `cuGraphNodeGetDependencies_v2`.
        unsafe { write_list_with_edge_data(deps, edge_data, count, &v) }
    }

    fn cuGraphNodeGetDependentNodes(node: CUgraphNode, out: *mut CUgraphNode, count: *mut usize) {
        let v = with_state(|s| s.dependents(raw(node)))?;
        // SAFETY: `count` is the caller's size_t (NULL refused inside) and `out` NULL or room for
        // `*count` node handles, as cuda.h specifies for `cuGraphNodeGetDependentNodes`.
        unsafe { write_list(out, count, &v) }
    }

    fn cuGraphNodeGetDependentNodes_v2(node: CUgraphNode, out: *mut CUgraphNode, edge_data: *mut EdgeData, count: *mut usize) {
        non_null(count)?;
        let v = with_state(|s| s.dependents(raw(node)))?;
        // SAFETY: `count` is the caller's size_t (NULL refused inside), `out` NULL or room for
        // `*count` node handles and `edge_data` NULL or room for `*count` edge-data
        // entries, as cuda.h specifies for `cuGraphNodeGetDependentNodes_v2`.
        unsafe { write_list_with_edge_data(out, edge_data, count, &v) }
    }

    /// Every edge must join two distinct nodes of `graph` and be new.
    fn cuGraphAddDependencies(graph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, n: usize) {
        // SAFETY: the pointers `cuGraphAddDependencies`'s caller passed, valid as cuda.h specifies;
        // `cuGraphAddDependencies_v2` takes them with the same contract (its edge data,
        // where it has one, is NULL: none).
        unsafe { cuGraphAddDependencies_v2(graph, from, to, std::ptr::null(), n) }.into_result()
    }

    fn cuGraphAddDependencies_v2(
        graph: CUgraph,
        from: *const CUgraphNode,
        to: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
    ) {
        // SAFETY: `edge_data` is NULL or holds `n` CUgraphEdgeData entries, as cuda.h specifies for
        // `cuGraphAddDependencies_v2`.
        unsafe { check_edge_data(edge_data, n) }?;
        with_state(|s| {
            // SAFETY: `from` and `to` each hold `n` node handles (cuda.h's contract for this call), which
            // is `edge_list`'s.
            let edges = unsafe { edge_list(s, graph, from, to, n) }?;
            let g = s.graph_mut(raw(graph))?;
            for (i, e) in edges.iter().enumerate() {
                if g.edges.contains(e) || edges[..i].contains(e) {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
            }
            g.edges.extend(edges);
            Ok(())
        })
    }

    /// Every edge must exist.
    fn cuGraphRemoveDependencies(graph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, n: usize) {
        // SAFETY: the pointers `cuGraphRemoveDependencies`'s caller passed, valid as cuda.h
        // specifies; `cuGraphRemoveDependencies_v2` takes them with the same contract (its
        // edge data, where it has one, is NULL: none).
        unsafe { cuGraphRemoveDependencies_v2(graph, from, to, std::ptr::null(), n) }.into_result()
    }

    fn cuGraphRemoveDependencies_v2(
        graph: CUgraph,
        from: *const CUgraphNode,
        to: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
    ) {
        // SAFETY: `edge_data` is NULL or holds `n` CUgraphEdgeData entries, as cuda.h specifies for
        // `cuGraphRemoveDependencies_v2`.
        unsafe { check_edge_data(edge_data, n) }?;
        with_state(|s| {
            // SAFETY: `from` and `to` each hold `n` node handles (cuda.h's contract for this call), which
            // is `edge_list`'s.
            let edges = unsafe { edge_list(s, graph, from, to, n) }?;
            let g = s.graph_mut(raw(graph))?;
            if !edges.iter().all(|e| g.edges.contains(e)) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            g.edges.retain(|e| !edges.contains(e));
            Ok(())
        })
    }

    /// Writes the graph (and its child graphs) as Graphviz DOT to `path`.
    fn cuGraphDebugDotPrint(graph: CUgraph, path: *const c_char, _flags: c_uint) {
        // SAFETY: `cuGraphDebugDotPrint`'s caller passes `path` as cuda.h specifies: NULL (refused
        // by `c_str`) or a NUL-terminated string.
        let path = unsafe { c_str(path) }?;
        let mut text = String::from("digraph prlx_graph {\ncompound=true;\n");
        with_state(|s| dot(s, raw(graph), "graph", &mut text))?;
        text.push_str("}\n");
        std::fs::write(path, text).map_err(|_| CUDA_ERROR_OPERATING_SYSTEM)
    }
}

crate::entry::aliases! {
    cuGraphAddNode_v3 = cuGraphAddNode_v2(
        ph: *mut CUgraphNode,
        graph: CUgraph,
        deps: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
        params: *mut GraphNodeParams,
    );
    cuGraphNodeSetParams_v2 = cuGraphNodeSetParams(node: CUgraphNode, params: *mut GraphNodeParams);
}

/// `CU_MEM_ALLOCATION_TYPE_PINNED` and `CU_MEM_LOCATION_TYPE_DEVICE`.
const ALLOCATION_TYPE_PINNED: u32 = 1;
const LOCATION_TYPE_DEVICE: u32 = 1;

/// The op of a `CUDA_MEM_ALLOC_NODE_PARAMS`: pinned device memory of a
/// device that exists, more than zero bytes.
///
/// # Safety
/// `p` must be NULL or valid.
unsafe fn alloc_from_params(p: *const MemAllocNodeParams) -> Result<Op, CUresult> {
    non_null(p)?;
    // SAFETY: non-null, the caller's struct.
    let params = unsafe { &*p };
    let props = &params.pool_props;
    if params.bytesize == 0
        || props.alloc_type != ALLOCATION_TYPE_PINNED
        || props.location_type != LOCATION_TYPE_DEVICE
    {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    crate::driver::with_context(|d, ctx| {
        if d.device_of(ctx) != props.location_id {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        alloc_op(d, ctx, params.bytesize)
    })
}

/// A free node frees a graph allocation.
fn free_op(dptr: u64) -> Result<Op, CUresult> {
    with_state(|s| {
        if s.graph_memory.contains_key(&dptr) {
            Ok(Op::MemFree(dptr))
        } else {
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    })
}

/// Writes an allocation node's parameters.
///
/// # Safety
/// `out` must be valid.
unsafe fn write_alloc_params(out: *mut MemAllocNodeParams, dptr: u64, bytes: usize) {
    // SAFETY: the caller's struct; plain data.
    unsafe {
        let mut props: MemPoolProps = std::mem::zeroed();
        props.alloc_type = ALLOCATION_TYPE_PINNED;
        props.location_type = LOCATION_TYPE_DEVICE;
        out.write_unaligned(MemAllocNodeParams {
            pool_props: props,
            access_descs: std::ptr::null(),
            access_desc_count: 0,
            bytesize: bytes,
            dptr,
        });
    }
}

/// `cuGraphKernelNodeSetParams`: the node must be a kernel node; its
/// attributes stay.
fn set_kernel(node: CUgraphNode, op: KernelOp) -> Result<(), CUresult> {
    with_state(|s| match &mut s.node_mut(raw(node))?.op {
        Op::Kernel(k) => {
            let (cooperative, attrs) = (k.cooperative, std::mem::take(&mut k.attrs));
            *k = op;
            k.cooperative = cooperative;
            k.attrs = attrs;
            Ok(())
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    })
}

/// `CU_LAUNCH_ATTRIBUTE_*` ids that a kernel node may carry.
const LAUNCH_ATTRIBUTE_LAST: u32 = 14;

/// Sets a kernel node's launch attribute. Cooperative is honoured; a
/// cluster of more than one block is not supported (as for launches);
/// the rest are scheduling hints, kept and read back.
fn set_attribute(k: &mut KernelOp, id: u32, value: [u8; 64]) -> Result<(), CUresult> {
    let word = |i: usize| u32::from_le_bytes(value[i * 4..i * 4 + 4].try_into().unwrap_or([0; 4]));
    match id {
        CU_LAUNCH_ATTRIBUTE_COOPERATIVE => k.cooperative = word(0) != 0,
        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION | CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION
            if (0..3).any(|i| word(i) > 1) =>
        {
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        1..=LAUNCH_ATTRIBUTE_LAST => {}
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    k.attrs.retain(|(a, _)| *a != id);
    k.attrs.push((id, value));
    Ok(())
}

fn get_attribute(k: &KernelOp, id: u32) -> Result<[u8; 64], CUresult> {
    if !(1..=LAUNCH_ATTRIBUTE_LAST).contains(&id) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut value = k
        .attrs
        .iter()
        .find(|(a, _)| *a == id)
        .map(|(_, v)| *v)
        .unwrap_or([0; 64]);
    if id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE {
        value[..4].copy_from_slice(&u32::from(k.cooperative).to_le_bytes());
    }
    Ok(value)
}

/// Writes a node's parameters as a `CUgraphNodeParams` (`cuGraphNodeGetParams`).
///
/// # Safety
/// `out` must be valid.
unsafe fn write_node_params(out: *mut GraphNodeParams, op: &Op, kernel_ptrs: &[usize]) {
    // SAFETY: the caller's struct; zeroed, then the union written by type.
    unsafe {
        std::ptr::write_bytes(out, 0, 1);
        (*out).type_ = op.node_type();
        let body = (*out).params.as_mut_ptr() as *mut u8;
        match op {
            Op::Kernel(k) => {
                let _ = kernel_ptrs;
                write_kernel_params(body as *mut KernelNodeParamsV2, k, true);
            }
            Op::Memcpy(c) => {
                let m = body as *mut MemcpyNodeParams;
                std::ptr::addr_of_mut!((*m).copy_params).write_unaligned(c.clone().0);
            }
            Op::Memset(m) => {
                (body as *mut MemsetNodeParamsV2).write_unaligned(MemsetNodeParamsV2 {
                    base: MemsetNodeParams {
                        dst: m.dst,
                        pitch: m.pitch,
                        value: m.value,
                        element_size: m.element_size,
                        width: m.width,
                        height: m.height,
                    },
                    ctx: std::ptr::null_mut(),
                })
            }
            Op::Host { f, data } => {
                (body as *mut HostNodeParamsV2).write_unaligned(HostNodeParamsV2 {
                    f: Some(std::mem::transmute::<
                        usize,
                        unsafe extern "C" fn(*mut c_void),
                    >(*f)),
                    user_data: *data as *mut c_void,
                    sync_mode: 0,
                    ctx: std::ptr::null_mut(),
                })
            }
            Op::Child(g) => {
                (body as *mut ChildGraphNodeParams).write_unaligned(ChildGraphNodeParams {
                    graph: *g as CUgraph,
                    ownership: 0,
                })
            }
            Op::Empty => {}
            Op::MemAlloc { dptr, bytes } => {
                write_alloc_params(body as *mut MemAllocNodeParams, *dptr, *bytes)
            }
            Op::MemFree(p) => (body as *mut u64).write_unaligned(*p),
            Op::EventRecord(e) | Op::EventWait(e) => (body as *mut EventNodeParams)
                .write_unaligned(EventNodeParams {
                    event: *e as CUevent,
                    ctx: std::ptr::null_mut(),
                }),
        }
    }
}

/// `CUDA_ERROR_OPERATING_SYSTEM`: the DOT file could not be written.
const CUDA_ERROR_OPERATING_SYSTEM: CUresult = 304;

/// Turns a returned `CUresult` back into a `Result`.
pub(crate) trait IntoResult {
    fn into_result(self) -> Result<(), CUresult>;
}

impl IntoResult for CUresult {
    fn into_result(self) -> Result<(), CUresult> {
        if self == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(self)
        }
    }
}

pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuGraphCreate": 10000 => cuGraphCreate;
        "cuGraphDestroy": 10000 => cuGraphDestroy;
        "cuGraphClone": 10000 => cuGraphClone;
        "cuGraphNodeFindInClone": 10000 => cuGraphNodeFindInClone;
        "cuGraphAddKernelNode": 10000 => cuGraphAddKernelNode, 12000 => cuGraphAddKernelNode_v2;
        "cuGraphAddMemcpyNode": 10000 => cuGraphAddMemcpyNode;
        "cuGraphAddMemsetNode": 10000 => cuGraphAddMemsetNode;
        "cuGraphAddHostNode": 10000 => cuGraphAddHostNode;
        "cuGraphAddChildGraphNode": 10000 => cuGraphAddChildGraphNode;
        "cuGraphAddEmptyNode": 10000 => cuGraphAddEmptyNode;
        "cuGraphAddEventRecordNode": 11010 => cuGraphAddEventRecordNode;
        "cuGraphAddEventWaitNode": 11010 => cuGraphAddEventWaitNode;
        "cuGraphAddNode": 12020 => cuGraphAddNode, 12030 => cuGraphAddNode_v2, 13040 => cuGraphAddNode_v3;
        "cuGraphNodeSetParams": 12020 => cuGraphNodeSetParams, 13040 => cuGraphNodeSetParams_v2;
        "cuGraphNodeGetType": 10000 => cuGraphNodeGetType;
        "cuGraphAddMemAllocNode": 11040 => cuGraphAddMemAllocNode;
        "cuGraphAddMemFreeNode": 11040 => cuGraphAddMemFreeNode;
        "cuGraphMemAllocNodeGetParams": 11040 => cuGraphMemAllocNodeGetParams;
        "cuGraphMemFreeNodeGetParams": 11040 => cuGraphMemFreeNodeGetParams;
        "cuDeviceGraphMemTrim": 11040 => cuDeviceGraphMemTrim;
        "cuDeviceGetGraphMemAttribute": 11040 => cuDeviceGetGraphMemAttribute;
        "cuDeviceSetGraphMemAttribute": 11040 => cuDeviceSetGraphMemAttribute;
        "cuGraphNodeGetParams": 13020 => cuGraphNodeGetParams;
        "cuGraphKernelNodeGetAttribute": 11000 => cuGraphKernelNodeGetAttribute;
        "cuGraphKernelNodeSetAttribute": 11000 => cuGraphKernelNodeSetAttribute;
        "cuGraphKernelNodeCopyAttributes": 11000 => cuGraphKernelNodeCopyAttributes;
        "cuGraphNodeGetContainingGraph": 13010 => cuGraphNodeGetContainingGraph;
        "cuGraphGetId": 13010 => cuGraphGetId;
        "cuGraphNodeGetLocalId": 13010 => cuGraphNodeGetLocalId;
        "cuGraphNodeGetToolsId": 13010 => cuGraphNodeGetToolsId;
        "cuGraphDestroyNode": 10000 => cuGraphDestroyNode;
        "cuGraphKernelNodeGetParams": 10000 => cuGraphKernelNodeGetParams, 12000 => cuGraphKernelNodeGetParams_v2;
        "cuGraphKernelNodeSetParams": 10000 => cuGraphKernelNodeSetParams, 12000 => cuGraphKernelNodeSetParams_v2;
        "cuGraphMemcpyNodeGetParams": 10000 => cuGraphMemcpyNodeGetParams;
        "cuGraphMemcpyNodeSetParams": 10000 => cuGraphMemcpyNodeSetParams;
        "cuGraphMemsetNodeGetParams": 10000 => cuGraphMemsetNodeGetParams;
        "cuGraphMemsetNodeSetParams": 10000 => cuGraphMemsetNodeSetParams;
        "cuGraphHostNodeGetParams": 10000 => cuGraphHostNodeGetParams;
        "cuGraphHostNodeSetParams": 10000 => cuGraphHostNodeSetParams;
        "cuGraphChildGraphNodeGetGraph": 10000 => cuGraphChildGraphNodeGetGraph;
        "cuGraphEventRecordNodeGetEvent": 11010 => cuGraphEventRecordNodeGetEvent;
        "cuGraphEventRecordNodeSetEvent": 11010 => cuGraphEventRecordNodeSetEvent;
        "cuGraphEventWaitNodeGetEvent": 11010 => cuGraphEventWaitNodeGetEvent;
        "cuGraphEventWaitNodeSetEvent": 11010 => cuGraphEventWaitNodeSetEvent;
        "cuGraphGetNodes": 10000 => cuGraphGetNodes;
        "cuGraphGetRootNodes": 10000 => cuGraphGetRootNodes;
        "cuGraphGetEdges": 10000 => cuGraphGetEdges, 12030 => cuGraphGetEdges_v2;
        "cuGraphNodeGetDependencies": 10000 => cuGraphNodeGetDependencies, 12030 => cuGraphNodeGetDependencies_v2;
        "cuGraphNodeGetDependentNodes": 10000 => cuGraphNodeGetDependentNodes, 12030 => cuGraphNodeGetDependentNodes_v2;
        "cuGraphAddDependencies": 10000 => cuGraphAddDependencies, 12030 => cuGraphAddDependencies_v2;
        "cuGraphRemoveDependencies": 10000 => cuGraphRemoveDependencies, 12030 => cuGraphRemoveDependencies_v2;
        "cuGraphDebugDotPrint": 11030 => cuGraphDebugDotPrint;
    }
}
