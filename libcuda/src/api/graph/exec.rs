//! Executable graphs: `cuGraphInstantiate*`, `cuGraphLaunch`,
//! `cuGraphExec*SetParams`, `cuGraphExecUpdate`.
//!
//! An executable graph is a snapshot of its graph's nodes and edges (later
//! changes to the graph do not affect it). A launch runs its nodes one at a
//! time in a topological order, on the launch stream, through the entry
//! points the same stream work would use: all work here completes before
//! the call that issues it returns, so that order is the stream order. A
//! graph launched into a capturing stream becomes a child graph node of the
//! capture instead.

use super::build::{IntoResult, copy_op, kernel_from_params, memset_op, op_from_node_params};
use crate::api::launch::cuLaunchKernelEx;
use crate::api::memory2d::{
    cuMemcpy3DAsync_v2, cuMemsetD2D8Async, cuMemsetD2D16Async, cuMemsetD2D32Async,
};
use crate::api::stream::{cuEventRecord, cuLaunchHostFunc};
use crate::cu::*;
use crate::driver::with_driver;
use crate::entry::{ProcEntry, procs};
use crate::entry::{exports, non_null, write_optional, write_out};
use crate::graph::abi::*;
use crate::graph::capture;
use crate::graph::model::{Exec, ExecGraph, ExecNode, ExecOp, KernelOp, Op, with_state};
use std::ffi::{c_char, c_uint, c_void};
use std::sync::Arc;

fn raw<T>(p: *mut T) -> usize {
    p as usize
}

/// Instantiates `graph`: the new executable graph's handle, or the error and
/// the node that caused it.
fn instantiate(graph: CUgraph, flags: u64) -> Result<usize, (CUresult, Option<usize>)> {
    with_driver(|_| Ok(())).map_err(|e| (e, None))?;
    let known = INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
        | INSTANTIATE_FLAG_UPLOAD
        | INSTANTIATE_FLAG_DEVICE_LAUNCH
        | INSTANTIATE_FLAG_USE_NODE_PRIORITY;
    if flags & !known != 0
        || flags & INSTANTIATE_FLAG_DEVICE_LAUNCH != 0
            && flags & INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH != 0
    {
        return Err((CUDA_ERROR_INVALID_VALUE, None));
    }
    with_state(|s| {
        let g = s.graph(raw(graph)).map_err(|e| (e, None))?;
        if g.capture.is_some() {
            // Still being captured.
            return Err((CUDA_ERROR_INVALID_VALUE, None));
        }
        let root = s.instantiate(raw(graph))?;
        // A graph with allocation nodes has one executable graph at a time
        // (its allocations' addresses are the graph's).
        let mut allocations = Vec::new();
        root.allocations(&mut allocations);
        if allocations
            .iter()
            .any(|p| s.graph_memory.get(p).is_some_and(|m| m.exec.is_some()))
        {
            return Err((CUDA_ERROR_INVALID_VALUE, None));
        }
        let id = s.next_id();
        let mut user_refs = std::collections::BTreeMap::new();
        s.user_refs(raw(graph), &mut user_refs);
        for (o, n) in &user_refs {
            s.retain_object(*o, *n).map_err(|e| (e, None))?;
        }
        let exec = s.execs.insert(Exec {
            root: Arc::new(root),
            flags,
            id,
            user_refs,
        }) as usize;
        for p in allocations {
            if let Some(m) = s.graph_memory.get_mut(&p) {
                m.exec = Some(exec);
            }
        }
        Ok(exec)
    })
}

/// Launches a kernel node with `cuLaunchKernelEx` (the cooperative
/// attribute set for a captured cooperative launch).
fn launch_kernel(k: &KernelOp, stream: CUstream) -> Result<(), CUresult> {
    let mut size = k.args.len();
    let mut extra = [
        CU_LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
        k.args.as_ptr() as *mut c_void,
        CU_LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
        &mut size as *mut usize as *mut c_void,
        CU_LAUNCH_PARAM_END as *mut c_void,
    ];
    let mut cooperative = CUlaunchAttribute {
        id: CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
        pad: [0; 4],
        value: [0; 64],
    };
    cooperative.value[0] = 1;
    let config = CUlaunchConfig {
        grid_dim: k.grid,
        block_dim: k.block,
        shared_mem_bytes: k.shared,
        h_stream: stream,
        attrs: &mut cooperative,
        num_attrs: u32::from(k.cooperative),
    };
    // SAFETY: `extra` names the node's own packed buffer and its size.
    unsafe {
        cuLaunchKernelEx(
            &config,
            k.func as CUfunction,
            std::ptr::null_mut(),
            extra.as_mut_ptr(),
        )
    }
    .into_result()
}

/// Runs an executable graph's nodes in order on `stream`.
fn run(graph: &ExecGraph, stream: CUstream) -> Result<(), CUresult> {
    for &i in &graph.order {
        let node = &graph.nodes[i];
        if !node.enabled {
            continue;
        }
        match &node.op {
            ExecOp::Kernel(k) => launch_kernel(k, stream)?,
            // SAFETY: the copy was described by the application, which
            // keeps its host buffers alive while the graph can run.
            ExecOp::Memcpy(c) => unsafe { cuMemcpy3DAsync_v2(&c.0, stream) }.into_result()?,
            ExecOp::Memset(m) => {
                let (dst, pitch, w, h) = (m.dst, m.pitch, m.width, m.height);
                // SAFETY: plain values.
                unsafe {
                    match m.element_size {
                        1 => cuMemsetD2D8Async(dst, pitch, m.value as u8, w, h, stream),
                        2 => cuMemsetD2D16Async(dst, pitch, m.value as u16, w, h, stream),
                        _ => cuMemsetD2D32Async(dst, pitch, m.value, w, h, stream),
                    }
                }
                .into_result()?
            }
            ExecOp::Host { f, data } => {
                // SAFETY: a non-null CUhostFn, stored when the node was made.
                let f: unsafe extern "C" fn(*mut c_void) = unsafe { std::mem::transmute(*f) };
                // SAFETY: the application's function and argument.
                unsafe { cuLaunchHostFunc(stream, Some(f), *data as *mut c_void) }.into_result()?;
            }
            ExecOp::Child(child) => run(child, stream)?,
            // All earlier work is complete: a wait has nothing to wait for.
            ExecOp::Empty | ExecOp::EventWait(_) => {}
            ExecOp::MemAlloc { dptr, .. } => with_state(|s| {
                if let Some(m) = s.graph_memory.get_mut(dptr) {
                    m.live = true;
                }
                s.note_graph_memory();
            }),
            ExecOp::MemFree(dptr) => with_state(|s| {
                if let Some(m) = s.graph_memory.get_mut(dptr) {
                    m.live = false;
                }
            }),
            ExecOp::EventRecord(e) => {
                // SAFETY: plain handles.
                unsafe { cuEventRecord(*e as CUevent, stream) }.into_result()?
            }
        }
    }
    Ok(())
}

/// Runs `f` on the exec node standing for graph node `node` (copying the
/// executable graph first if a launch is using it).
fn with_exec_node<R>(
    exec: CUgraphExec,
    node: CUgraphNode,
    f: impl FnOnce(&mut ExecNode) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    with_state(|s| {
        if !s.nodes.contains(node) {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let e = s.execs.get_mut(exec).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let n = Arc::make_mut(&mut e.root)
            .find_mut(raw(node))
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        f(n)
    })
}

/// Why an update cannot be applied: the result code and the nodes to report.
struct UpdateFailure {
    result: u32,
    node: usize,
    from: usize,
}

fn fail(result: u32, node: usize) -> UpdateFailure {
    UpdateFailure {
        result,
        node,
        from: 0,
    }
}

/// Checks that `new` (instantiated from the update graph) pairs with `old`
/// node for node, in creation order, with the same dependencies and types,
/// and only changes parameters the driver lets an update change.
fn check_update(old: &ExecGraph, new: &ExecGraph) -> Result<(), UpdateFailure> {
    if old.nodes.len() != new.nodes.len() {
        return Err(fail(UPDATE_ERROR_TOPOLOGY_CHANGED, 0));
    }
    for (o, n) in old.nodes.iter().zip(&new.nodes) {
        let this = n.origins[0];
        if o.deps.len() != n.deps.len() {
            return Err(fail(UPDATE_ERROR_TOPOLOGY_CHANGED, this));
        }
        if let Some(j) = (0..n.deps.len()).find(|j| o.deps[*j] != n.deps[*j]) {
            return Err(UpdateFailure {
                result: UPDATE_ERROR_TOPOLOGY_CHANGED,
                node: this,
                from: new.nodes[n.deps[j]].origins[0],
            });
        }
        match (&o.op, &n.op) {
            (a, b) if a.node_type() != b.node_type() => {
                return Err(fail(UPDATE_ERROR_NODE_TYPE_CHANGED, this));
            }
            (ExecOp::Kernel(a), ExecOp::Kernel(b)) if a.cooperative != b.cooperative => {
                return Err(fail(UPDATE_ERROR_PARAMETERS_CHANGED, this));
            }
            (ExecOp::Memcpy(a), ExecOp::Memcpy(b))
                if a.0.src_memory_type != b.0.src_memory_type
                    || a.0.dst_memory_type != b.0.dst_memory_type =>
            {
                return Err(fail(UPDATE_ERROR_PARAMETERS_CHANGED, this));
            }
            // A 2D memset may change only its address and value; any memset
            // keeps its element size.
            (ExecOp::Memset(a), ExecOp::Memset(b))
                if a.element_size != b.element_size
                    || (a.height > 1 || b.height > 1)
                        && (a.width, a.height, a.pitch) != (b.width, b.height, b.pitch) =>
            {
                return Err(fail(UPDATE_ERROR_PARAMETERS_CHANGED, this));
            }
            (ExecOp::Child(a), ExecOp::Child(b)) => check_update(a, b)?,
            (ExecOp::MemAlloc { dptr: a, .. }, ExecOp::MemAlloc { dptr: b, .. })
            | (ExecOp::MemFree(a), ExecOp::MemFree(b))
                if a != b =>
            {
                return Err(fail(UPDATE_ERROR_PARAMETERS_CHANGED, this));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Takes `new`'s parameters into `old` (already checked to pair), keeping
/// each node's enabled state and remembering the new nodes as its origins.
fn apply_update(old: &mut ExecGraph, new: ExecGraph) {
    for (o, n) in old.nodes.iter_mut().zip(new.nodes) {
        for origin in n.origins {
            if !o.origins.contains(&origin) {
                o.origins.push(origin);
            }
        }
        match (&mut o.op, n.op) {
            (ExecOp::Child(a), ExecOp::Child(b)) => apply_update(a, b),
            (op, new_op) => *op = new_op,
        }
    }
}

/// `cuGraphExecUpdate`: the result code and, on failure, the offending nodes.
fn update(exec: CUgraphExec, graph: CUgraph) -> Result<(), (CUresult, UpdateFailure)> {
    let invalid = |code| (code, fail(UPDATE_ERROR, 0));
    with_driver(|_| Ok(())).map_err(invalid)?;
    with_state(|s| {
        if !s.execs.contains(exec) {
            return Err(invalid(CUDA_ERROR_INVALID_VALUE));
        }
        let new = s
            .instantiate(raw(graph))
            .map_err(|(code, _)| invalid(code))?;
        let e = s
            .execs
            .get_mut(exec)
            .ok_or(invalid(CUDA_ERROR_INVALID_VALUE))?;
        check_update(&e.root, &new).map_err(|f| (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, f))?;
        apply_update(Arc::make_mut(&mut e.root), new);
        Ok(())
    })
}

/// The exec op for a `cuGraphExecNodeSetParams`/`*SetParams` change of
/// `node`, which must keep its type.
fn set_exec_op(exec: CUgraphExec, node: CUgraphNode, op: Op) -> Result<(), CUresult> {
    let new = match op {
        Op::Kernel(k) => ExecOp::Kernel(k),
        Op::Memcpy(c) => ExecOp::Memcpy(c),
        Op::Memset(m) => ExecOp::Memset(m),
        Op::Host { f, data } => ExecOp::Host { f, data },
        Op::Empty => ExecOp::Empty,
        Op::EventRecord(e) => ExecOp::EventRecord(e),
        Op::EventWait(e) => ExecOp::EventWait(e),
        // Memory nodes cannot change in an executable graph.
        Op::MemAlloc { .. } | Op::MemFree(_) => return Err(CUDA_ERROR_INVALID_VALUE),
        Op::Child(c) => {
            // Only the parameters inside may change, not the child's shape.
            let child = with_state(|s| s.instantiate(c).map_err(|(code, _)| code))?;
            return with_exec_node(exec, node, |n| match &mut n.op {
                ExecOp::Child(old) => {
                    check_update(old, &child).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
                    apply_update(old, child);
                    Ok(())
                }
                _ => Err(CUDA_ERROR_INVALID_VALUE),
            });
        }
    };
    with_exec_node(exec, node, |n| {
        match (&n.op, &new) {
            (a, b) if a.node_type() != b.node_type() => return Err(CUDA_ERROR_INVALID_VALUE),
            (ExecOp::Memcpy(a), ExecOp::Memcpy(b))
                if a.0.src_memory_type != b.0.src_memory_type
                    || a.0.dst_memory_type != b.0.dst_memory_type =>
            {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            (ExecOp::Memset(a), ExecOp::Memset(b))
                if a.element_size != b.element_size
                    || (a.height > 1 || b.height > 1)
                        && (a.width, a.height, a.pitch) != (b.width, b.height, b.pitch) =>
            {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            _ => {}
        }
        // A kernel keeps its attributes (cooperative among them).
        let kept = match &n.op {
            ExecOp::Kernel(k) => Some((k.cooperative, k.attrs.clone())),
            _ => None,
        };
        n.op = new;
        if let (ExecOp::Kernel(k), Some((cooperative, attrs))) = (&mut n.op, kept) {
            k.cooperative = cooperative;
            k.attrs = attrs;
        }
        Ok(())
    })
}

/// Writes an instantiation failure to `cuGraphInstantiate`'s log buffer.
///
/// # Safety
/// `log` must be NULL or hold `size` bytes.
unsafe fn write_log(log: *mut c_char, size: usize, message: &str) {
    if log.is_null() || size == 0 {
        return;
    }
    let n = message.len().min(size - 1);
    // SAFETY: the caller's buffer holds `size` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr(), log as *mut u8, n);
        *log.add(n) = 0;
    }
}

exports! {
    fn cuGraphInstantiate(
        ph_exec: *mut CUgraphExec,
        graph: CUgraph,
        ph_error_node: *mut CUgraphNode,
        log: *mut c_char,
        log_size: usize,
    ) {
        non_null(ph_exec)?;
        match instantiate(graph, 0) {
            Ok(e) => {
                // SAFETY: `cuGraphInstantiate`'s caller passes `ph_error_node` as cuda.h specifies:
                // NULL (skipped by `write_optional`) or valid for writing a `CUgraphNode`.
                unsafe { write_optional(ph_error_node, std::ptr::null_mut()) };
                // SAFETY: `log` is NULL or a buffer of `log_size` bytes, as cuda.h specifies for
                // `cuGraphInstantiate`, which is `write_log`'s contract.
                unsafe { write_log(log, log_size, "") };
                // SAFETY: `cuGraphInstantiate`'s caller passes `ph_exec` as cuda.h specifies: NULL (refused
                // by `write_out`) or valid for writing a `CUgraphExec`.
                unsafe { write_out(ph_exec, e as CUgraphExec) }
            }
            Err((code, node)) => {
                // SAFETY: `cuGraphInstantiate`'s caller passes `ph_error_node` as cuda.h specifies:
                // NULL (skipped by `write_optional`) or valid for writing a `CUgraphNode`.
                unsafe { write_optional(ph_error_node, node.unwrap_or(0) as CUgraphNode) };
                let message = match node {
                    Some(n) => format!("graph instantiation failed: node {n:#x} is on a dependency cycle"),
                    None => format!("graph instantiation failed: {}", crate::error_table::name_str(code)),
                };
                // SAFETY: `log` is NULL or a buffer of `log_size` bytes, as cuda.h specifies for
                // `cuGraphInstantiate`, which is `write_log`'s contract.
                unsafe { write_log(log, log_size, &message) };
                Err(code)
            }
        }
    }

    fn cuGraphInstantiateWithFlags(ph_exec: *mut CUgraphExec, graph: CUgraph, flags: u64) {
        non_null(ph_exec)?;
        // The upload flag belongs to cuGraphInstantiateWithParams.
        if flags & INSTANTIATE_FLAG_UPLOAD != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let e = instantiate(graph, flags).map_err(|(code, _)| code)?;
        // SAFETY: `cuGraphInstantiateWithFlags`'s caller passes `ph_exec` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `CUgraphExec`.
        unsafe { write_out(ph_exec, e as CUgraphExec) }
    }

    fn cuGraphInstantiateWithParams(ph_exec: *mut CUgraphExec, graph: CUgraph, params: *mut GraphInstantiateParams) {
        non_null(ph_exec)?;
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's
        // `GraphInstantiateParams`, as cuda.h specifies for `cuGraphInstantiateWithParams`.
        let p = unsafe { &mut *params };
        if p.flags & INSTANTIATE_FLAG_UPLOAD != 0 {
            with_driver(|d| d.check_stream(p.upload_stream))?;
        }
        match instantiate(graph, p.flags) {
            Ok(e) => {
                p.result_out = INSTANTIATE_SUCCESS;
                p.err_node_out = std::ptr::null_mut();
                // SAFETY: `cuGraphInstantiateWithParams`'s caller passes `ph_exec` as cuda.h
                // specifies: NULL (refused by `write_out`) or valid for writing a
                // `CUgraphExec`.
                unsafe { write_out(ph_exec, e as CUgraphExec) }
            }
            Err((code, node)) => {
                p.result_out = if node.is_some() { INSTANTIATE_INVALID_STRUCTURE } else { INSTANTIATE_ERROR };
                p.err_node_out = node.unwrap_or(0) as CUgraphNode;
                Err(code)
            }
        }
    }

    fn cuGraphExecDestroy(exec: CUgraphExec) {
        with_state(|s| {
            let e = s.execs.remove(exec).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            s.release_refs(e.user_refs);
            for m in s.graph_memory.values_mut() {
                if m.exec == Some(exec as usize) {
                    m.exec = None;
                }
            }
            Ok(())
        })
    }

    fn cuGraphExecGetFlags(exec: CUgraphExec, flags: *mut u64) {
        non_null(flags)?;
        let f = with_state(|s| s.execs.get(exec).map(|e| e.flags).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        // SAFETY: `cuGraphExecGetFlags`'s caller passes `flags` as cuda.h specifies: NULL (refused
        // by `write_out`) or valid for writing a `u64`.
        unsafe { write_out(flags, f) }
    }

    fn cuGraphExecGetId(exec: CUgraphExec, id: *mut c_uint) {
        non_null(id)?;
        let v = with_state(|s| s.execs.get(exec).map(|e| e.id).ok_or(CUDA_ERROR_INVALID_HANDLE))?;
        // SAFETY: `cuGraphExecGetId`'s caller passes `id` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `c_uint`.
        unsafe { write_out(id, v) }
    }

    /// Runs the graph's nodes on `stream` in a topological order (or, on a
    /// capturing stream, adds the graph as a child graph node).
    fn cuGraphLaunch(exec: CUgraphExec, stream: CUstream) {
        with_driver(|d| {
            d.current_context()?;
            d.check_stream(stream)
        })?;
        let (root, flags) = with_state(|s| {
            s.execs.get(exec).map(|e| (Arc::clone(&e.root), e.flags)).ok_or(CUDA_ERROR_INVALID_HANDLE)
        })?;
        if let Some(r) = capture::intercept_graph(stream, &root) {
            return r;
        }
        // Its allocations from the last launch must have been freed, unless
        // the graph frees them itself on launch.
        let mut allocations = Vec::new();
        root.allocations(&mut allocations);
        if !allocations.is_empty() {
            with_state(|s| {
                let live: Vec<u64> = allocations
                    .iter()
                    .copied()
                    .filter(|p| s.graph_memory.get(p).is_some_and(|m| m.live))
                    .collect();
                if live.is_empty() {
                    return Ok(());
                }
                if flags & INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH == 0 {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                for p in live {
                    if let Some(m) = s.graph_memory.get_mut(&p) {
                        m.live = false;
                    }
                }
                Ok(())
            })?;
        }
        run(&root, stream)
    }

    /// Nothing to upload: the emulator's device memory is this process's.
    fn cuGraphUpload(exec: CUgraphExec, stream: CUstream) {
        with_driver(|d| d.check_stream(stream))?;
        with_state(|s| if s.execs.contains(exec) { Ok(()) } else { Err(CUDA_ERROR_INVALID_HANDLE) })
    }

    fn cuGraphExecKernelNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const KernelNodeParamsV1) {
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_KERNEL_NODE_PARAMS (v1
        // layout, a prefix of v2), whose `kernelParams`/`extra` describe the kernel's
        // arguments as cuda.h specifies for `cuGraphExecKernelNodeSetParams`.
        unsafe { exec_kernel_set(exec, node, params as *const KernelNodeParamsV2, false) }
    }

    fn cuGraphExecKernelNodeSetParams_v2(exec: CUgraphExec, node: CUgraphNode, params: *const KernelNodeParamsV2) {
        // SAFETY: `params` is NULL (refused inside) or the caller's CUDA_KERNEL_NODE_PARAMS_v2,
        // whose `kernelParams`/`extra` describe the kernel's arguments as cuda.h specifies
        // for `cuGraphExecKernelNodeSetParams_v2`.
        unsafe { exec_kernel_set(exec, node, params, true) }
    }

    fn cuGraphExecMemcpyNodeSetParams(exec: CUgraphExec, node: CUgraphNode, copy: *const CUDA_MEMCPY3D, _ctx: CUcontext) {
        // SAFETY: `copy` is NULL (refused by `copy_op`) or the caller's CUDA_MEMCPY3D, as cuda.h
        // specifies for `cuGraphExecMemcpyNodeSetParams`.
        let op = unsafe { copy_op(copy) }?;
        set_exec_op(exec, node, Op::Memcpy(op))
    }

    fn cuGraphExecMemsetNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const MemsetNodeParams, _ctx: CUcontext) {
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's
        // CUDA_MEMSET_NODE_PARAMS, as cuda.h specifies for
        // `cuGraphExecMemsetNodeSetParams`.
        let op = memset_op(unsafe { &*params })?;
        set_exec_op(exec, node, Op::Memset(op))
    }

    fn cuGraphExecHostNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const HostNodeParams) {
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's `HostNodeParams`,
        // as cuda.h specifies for `cuGraphExecHostNodeSetParams`.
        let p = unsafe { &*params };
        let f = p.f.ok_or(CUDA_ERROR_INVALID_VALUE)?;
        set_exec_op(exec, node, Op::Host { f: f as usize, data: p.user_data as usize })
    }

    /// The child's topology must be the one instantiated; its parameters
    /// are taken.
    fn cuGraphExecChildGraphNodeSetParams(exec: CUgraphExec, node: CUgraphNode, child: CUgraph) {
        with_state(|s| s.graph(raw(child)).map(|_| ()))?;
        set_exec_op(exec, node, Op::Child(raw(child)))
    }

    /// Any node type's new parameters, as `cuGraphAddNode` takes them.
    fn cuGraphExecNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *mut GraphNodeParams) {
        non_null(params)?;
        // SAFETY: `params` is non-null (checked above) and points to the caller's
        // `GraphNodeParams`, as cuda.h specifies for `cuGraphExecNodeSetParams`.
        let p = unsafe { &*params };
        if matches!(p.type_, NODE_MEM_ALLOC | NODE_MEM_FREE) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if p.type_ == NODE_GRAPH {
            // The child's parameters are taken, not a copy of the graph made.
            // SAFETY: `p.type_` is NODE_GRAPH, so the caller's union holds a
            // CUDA_CHILD_GRAPH_NODE_PARAMS (cuda.h's layout for that type).
            let child = unsafe { (*(p.params.as_ptr() as *const ChildGraphNodeParams)).graph };
            // SAFETY: `exec`, `node` and `child` are handles passed by value; the call has no pointer
            // arguments to honour.
            return unsafe { cuGraphExecChildGraphNodeSetParams(exec, node, child) }.into_result();
        }
        // SAFETY: `params` is the caller's CUgraphNodeParams (checked non-null above), whose `type` names
        // the union member `op_from_node_params` reads.
        let op = unsafe { op_from_node_params(params) }?;
        set_exec_op(exec, node, op)
    }

    fn cuGraphExecEventRecordNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent) {
        with_driver(|d| if d.events.contains(event) { Ok(()) } else { Err(CUDA_ERROR_INVALID_HANDLE) })?;
        set_exec_op(exec, node, Op::EventRecord(raw(event)))
    }

    fn cuGraphExecEventWaitNodeSetEvent(exec: CUgraphExec, node: CUgraphNode, event: CUevent) {
        with_driver(|d| if d.events.contains(event) { Ok(()) } else { Err(CUDA_ERROR_INVALID_HANDLE) })?;
        set_exec_op(exec, node, Op::EventWait(raw(event)))
    }

    /// Kernel, memcpy and memset nodes may be disabled (they then do nothing).
    fn cuGraphNodeSetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: c_uint) {
        with_exec_node(exec, node, |n| match n.op {
            ExecOp::Kernel(_) | ExecOp::Memcpy(_) | ExecOp::Memset(_) => {
                n.enabled = enabled != 0;
                Ok(())
            }
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })
    }

    fn cuGraphNodeGetEnabled(exec: CUgraphExec, node: CUgraphNode, enabled: *mut c_uint) {
        non_null(enabled)?;
        let v = with_exec_node(exec, node, |n| match n.op {
            ExecOp::Kernel(_) | ExecOp::Memcpy(_) | ExecOp::Memset(_) => Ok(n.enabled),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })?;
        // SAFETY: `cuGraphNodeGetEnabled`'s caller passes `enabled` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `c_uint`.
        unsafe { write_out(enabled, c_uint::from(v)) }
    }

    fn cuGraphExecUpdate(exec: CUgraphExec, graph: CUgraph, error_node: *mut CUgraphNode, result: *mut c_uint) {
        let mut info = ExecUpdateResultInfo {
            result: UPDATE_SUCCESS,
            error_node: std::ptr::null_mut(),
            error_from_node: std::ptr::null_mut(),
        };
        // SAFETY: the pointers `cuGraphExecUpdate`'s caller passed, valid as cuda.h specifies;
        // `cuGraphExecUpdate_v2` takes them with the same contract (its edge data, where it
        // has one, is NULL: none).
        let r = unsafe { cuGraphExecUpdate_v2(exec, graph, &mut info) };
        // SAFETY: `error_node` and `result` are the caller's optional out-parameters: NULL (skipped by
        // `write_optional`) or writable, as cuda.h specifies for `cuGraphExecUpdate`.
        unsafe {
            write_optional(error_node, info.error_node);
            write_optional(result, info.result);
        }
        r.into_result()
    }

    fn cuGraphExecUpdate_v2(exec: CUgraphExec, graph: CUgraph, info: *mut ExecUpdateResultInfo) {
        non_null(info)?;
        let (code, out) = match update(exec, graph) {
            Ok(()) => (CUDA_SUCCESS, ExecUpdateResultInfo {
                result: UPDATE_SUCCESS,
                error_node: std::ptr::null_mut(),
                error_from_node: std::ptr::null_mut(),
            }),
            Err((code, f)) => (code, ExecUpdateResultInfo {
                result: f.result,
                error_node: f.node as CUgraphNode,
                error_from_node: f.from as CUgraphNode,
            }),
        };
        // SAFETY: `cuGraphExecUpdate_v2`'s caller passes `info` as cuda.h specifies: NULL (refused
        // by `write_out`) or valid for writing a `ExecUpdateResultInfo`.
        unsafe { write_out(info, out) }?;
        code.into_result()
    }
}

/// `cuGraphExecKernelNodeSetParams`: the function may change (within its
/// context), not whether the launch is cooperative.
///
/// # Safety
/// `params` NULL or valid in the layout `v2` names.
unsafe fn exec_kernel_set(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const KernelNodeParamsV2,
    v2: bool,
) -> Result<(), CUresult> {
    non_null(params)?;
    // SAFETY: forwarded contract.
    let op = with_driver(|d| unsafe { kernel_from_params(d, params, v2) })?;
    set_exec_op(exec, node, Op::Kernel(op))
}

pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuGraphInstantiate": 10000 => cuGraphInstantiate, 11000 => cuGraphInstantiate_v2;
        "cuGraphInstantiateWithFlags": 11040 => cuGraphInstantiateWithFlags;
        "cuGraphInstantiateWithParams": 12000 => cuGraphInstantiateWithParams, @ptds 12000 => cuGraphInstantiateWithParams_ptsz;
        "cuGraphExecDestroy": 10000 => cuGraphExecDestroy;
        "cuGraphExecGetFlags": 12000 => cuGraphExecGetFlags;
        "cuGraphExecGetId": 13010 => cuGraphExecGetId;
        "cuGraphLaunch": 10000 => cuGraphLaunch, @ptds 10000 => cuGraphLaunch_ptsz;
        "cuGraphUpload": 11010 => cuGraphUpload, @ptds 11010 => cuGraphUpload_ptsz;
        "cuGraphExecKernelNodeSetParams": 10010 => cuGraphExecKernelNodeSetParams, 12000 => cuGraphExecKernelNodeSetParams_v2;
        "cuGraphExecMemcpyNodeSetParams": 10020 => cuGraphExecMemcpyNodeSetParams;
        "cuGraphExecMemsetNodeSetParams": 10020 => cuGraphExecMemsetNodeSetParams;
        "cuGraphExecHostNodeSetParams": 10020 => cuGraphExecHostNodeSetParams;
        "cuGraphExecChildGraphNodeSetParams": 11010 => cuGraphExecChildGraphNodeSetParams;
        "cuGraphExecNodeSetParams": 12020 => cuGraphExecNodeSetParams;
        "cuGraphExecEventRecordNodeSetEvent": 11010 => cuGraphExecEventRecordNodeSetEvent;
        "cuGraphExecEventWaitNodeSetEvent": 11010 => cuGraphExecEventWaitNodeSetEvent;
        "cuGraphNodeSetEnabled": 11060 => cuGraphNodeSetEnabled;
        "cuGraphNodeGetEnabled": 11060 => cuGraphNodeGetEnabled;
        "cuGraphExecUpdate": 10020 => cuGraphExecUpdate, 12000 => cuGraphExecUpdate_v2;
    }
}

crate::entry::aliases! {
    cuGraphInstantiate_v2 = cuGraphInstantiate(
        ph_exec: *mut CUgraphExec,
        graph: CUgraph,
        ph_error_node: *mut CUgraphNode,
        log: *mut c_char,
        log_size: usize,
    );
    cuGraphInstantiateWithParams_ptsz = cuGraphInstantiateWithParams(ph_exec: *mut CUgraphExec, graph: CUgraph, params: *mut GraphInstantiateParams);
    cuGraphLaunch_ptsz = cuGraphLaunch(exec: CUgraphExec, stream: CUstream);
    cuGraphUpload_ptsz = cuGraphUpload(exec: CUgraphExec, stream: CUstream);
}
