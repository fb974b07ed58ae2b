//! CUDA graphs: what an executable graph will run.
//!
//! An executable graph's kernel nodes are read when it is instantiated
//! (`cuGraphGetNodes`, `cuGraphNodeGetType`, `cuGraphKernelNodeGetParams`,
//! child graphs followed) and kept up to date through `cuGraphExecUpdate`
//! and `cuGraphExecKernelNodeSetParams` (the wrappers are in
//! `graph_hooks`); every graph launch records one launch per kernel node
//! (kernel, geometry, argument hash, the graph and node index, its own
//! launch index) and traces the nodes whose modules record (`launch`).
//!
//! Not covered: device-side graph launches (invisible to a host shim) and
//! conditional nodes' bodies (CUDA 12.3+; their kernels are not listed).

use crate::backend::Backend;
use crate::config::LogLevel;
use crate::driver;
use crate::ffi::*;
use crate::log;
use crate::registry::CodeHandle;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{LazyLock, Mutex, MutexGuard};

pub type CUgraph = *mut c_void;
pub type CUgraphExec = *mut c_void;
pub type CUgraphNode = *mut c_void;

/// `CU_GRAPH_NODE_TYPE_KERNEL`, `CU_GRAPH_NODE_TYPE_GRAPH`.
pub(crate) const NODE_KERNEL: c_int = 0;
const NODE_GRAPH: c_int = 4;
/// Child graphs nest at most this deep (the driver's own limit is lower).
const MAX_NESTING: u32 = 16;

/// One kernel node of an executable graph, as the shim records it.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelNode {
    /// The node in the source graph (what `cuGraphExecKernelNodeSetParams` names).
    pub node: usize,
    pub name: String,
    pub code: Option<CodeHandle>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub args_hash: Option<String>,
    pub context: u64,
}

/// Executable graph → its kernel nodes, in the source graph's node order.
static EXECS: LazyLock<Mutex<HashMap<usize, Vec<KernelNode>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn execs() -> MutexGuard<'static, HashMap<usize, Vec<KernelNode>>> {
    EXECS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The kernel nodes of `exec`, if the shim saw it instantiated.
pub(crate) fn nodes_of(exec: CUgraphExec) -> Option<Vec<KernelNode>> {
    execs().get(&(exec as usize)).cloned()
}

/// `exec` was destroyed.
pub(crate) fn forget(exec: CUgraphExec) {
    execs().remove(&(exec as usize));
}

/// The kernel nodes of `graph` (children followed), in the driver's node order.
fn kernel_nodes(graph: CUgraph, depth: u32, out: &mut Vec<KernelNode>) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err("child graphs nest too deep".into());
    }
    let cuda = driver::cuda();
    let get_nodes = cuda
        .cuGraphGetNodes
        .ok_or("the driver has no cuGraphGetNodes")?;
    let node_type = cuda
        .cuGraphNodeGetType
        .ok_or("the driver has no cuGraphNodeGetType")?;
    let mut count = 0usize;
    // SAFETY: a null array asks for the count.
    let r = unsafe { get_nodes(graph, std::ptr::null_mut(), &mut count) };
    if r != CUDA_SUCCESS {
        return Err(format!("cuGraphGetNodes failed with CUresult {r}"));
    }
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: `nodes` holds `count` entries.
    let r = unsafe { get_nodes(graph, nodes.as_mut_ptr(), &mut count) };
    if r != CUDA_SUCCESS {
        return Err(format!("cuGraphGetNodes failed with CUresult {r}"));
    }
    nodes.truncate(count);
    for node in nodes {
        let mut kind: c_int = -1;
        // SAFETY: a node of the graph; an out-pointer to a local.
        if unsafe { node_type(node, &mut kind) } != CUDA_SUCCESS {
            continue;
        }
        match kind {
            NODE_KERNEL => {
                if let Some(params) = kernel_node_params(node) {
                    out.push(describe_node(node as usize, &params));
                }
            }
            NODE_GRAPH => {
                let Some(child_of) = cuda.cuGraphChildGraphNodeGetGraph else {
                    continue;
                };
                let mut child: CUgraph = std::ptr::null_mut();
                // SAFETY: a child-graph node; an out-pointer to a local.
                if unsafe { child_of(node, &mut child) } == CUDA_SUCCESS && !child.is_null() {
                    kernel_nodes(child, depth + 1, out)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn kernel_node_params(node: CUgraphNode) -> Option<KernelNodeParams> {
    let cuda = driver::cuda();
    let mut params = KernelNodeParams::default();
    // SAFETY: `params` has the v2 layout the _v2 function fills; the v1
    // function fills its prefix.
    let r = unsafe {
        match (
            cuda.cuGraphKernelNodeGetParams_v2,
            cuda.cuGraphKernelNodeGetParams,
        ) {
            (Some(v2), _) => v2(node, &mut params),
            (None, Some(v1)) => v1(node, &mut params),
            (None, None) => return None,
        }
    };
    (r == CUDA_SUCCESS).then_some(params)
}

fn describe_node(node: usize, p: &KernelNodeParams) -> KernelNode {
    let function = if p.func.is_null() { p.kern } else { p.func };
    let (name, code) = crate::state::identify(function, Backend::Cuda);
    let args_hash = crate::args::for_launch(function, &name, code, p.kernel_params, p.extra);
    KernelNode {
        node,
        name,
        code,
        grid: p.grid,
        block: p.block,
        shared_bytes: p.shared_bytes,
        args_hash,
        context: p.ctx as u64,
    }
}

/// Reads `graph` into the record of `exec` (on instantiation and update).
pub(crate) fn snapshot(exec: CUgraphExec, graph: CUgraph) {
    if !crate::process::active() {
        return;
    }
    let mut nodes = Vec::new();
    match kernel_nodes(graph, 0, &mut nodes) {
        Ok(()) => {
            execs().insert(exec as usize, nodes);
        }
        Err(e) => {
            log::once(
                LogLevel::Warn,
                "graph-read",
                &format!("cannot read a CUDA graph's kernels ({e}); its launches are not recorded"),
            );
            execs().remove(&(exec as usize));
        }
    }
}

pub(crate) fn set_node_params(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const KernelNodeParams,
) {
    if params.is_null() || !crate::process::active() {
        return;
    }
    // SAFETY: the caller's parameters, just accepted by the driver; only
    // the v1 prefix is read unless `v2` says the struct is v2 (see callers).
    let p = unsafe { *params };
    let described = describe_node(node as usize, &p);
    if let Some(nodes) = execs().get_mut(&(exec as usize)) {
        for n in nodes.iter_mut().filter(|n| n.node == node as usize) {
            *n = described.clone();
        }
    }
}
