//! CUDA graphs and stream capture.
//!
//! A kernel launched on a stream that is being captured does not run: it
//! becomes a node of a graph, and runs each time an executable graph made
//! from it is launched. So:
//!
//! - Captures are tracked (`cuStreamBeginCapture*` / `cuStreamEndCapture`
//!   wrapped, and `cuStreamIsCapturing` asked per launch). While any stream
//!   captures, the shim issues no driver call that capture forbids — no
//!   allocation, copy or synchronisation (in the global capture mode they
//!   are illegal from *any* thread and would invalidate the application's
//!   capture). A launch on a capturing stream is not recorded as a launch;
//!   its kernel is recorded when its graph runs. Said once.
//! - An executable graph's kernel nodes are read when it is instantiated
//!   (`cuGraphGetNodes`, `cuGraphNodeGetType`, `cuGraphKernelNodeGetParams`,
//!   child graphs followed), kept up to date through `cuGraphExecUpdate`
//!   and `cuGraphExecKernelNodeSetParams`, and every `cuGraphLaunch`
//!   records one launch per kernel node (kernel, geometry, argument hash,
//!   the graph and node index, its own launch index).
//! - Kernel nodes are traced like direct launches: before the graph is
//!   launched, each node whose module records (pass-built or instrumented
//!   at load) gets fresh trace buffers bound to its module's descriptor, on
//!   the graph launch's own stream; after it, that stream (not the device)
//!   is synchronised and the traces copied back. Several kernel nodes of one
//!   module (the usual graph: a module per translation unit) each get an
//!   entry of the module's launch table (`prlx_ptx_instrument::runtime::
//!   LAUNCH_TABLE`, in modules instrumented at load), which the node's grid
//!   claims by kernel and geometry; a pass-built module has one descriptor
//!   only, and then its nodes record without a trace (`capture_error` says
//!   why).
//!
//! Not covered: device-side graph launches (invisible to a host shim) and
//! conditional nodes' bodies (CUDA 12.3+; their kernels are not listed).
#![allow(clippy::missing_safety_doc)]

use crate::config::LogLevel;
use crate::driver;
use crate::ffi::*;
use crate::log;
use crate::state;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use crate::registry::Instrumented;

pub type CUgraph = *mut c_void;
pub type CUgraphExec = *mut c_void;
pub type CUgraphNode = *mut c_void;
pub type CUcontext = *mut c_void;

/// `CU_GRAPH_NODE_TYPE_KERNEL`, `CU_GRAPH_NODE_TYPE_GRAPH`.
const NODE_KERNEL: c_int = 0;
const NODE_GRAPH: c_int = 4;
/// `CU_STREAM_CAPTURE_STATUS_NONE`.
const CAPTURE_NONE: c_int = 0;
/// Child graphs nest at most this deep (the driver's own limit is lower).
const MAX_NESTING: u32 = 16;

/// `CUDA_KERNEL_NODE_PARAMS_v2` (v1 is its prefix, up to `extra`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KernelNodeParams {
    pub func: CUfunction,
    pub grid: [c_uint; 3],
    pub block: [c_uint; 3],
    pub shared_bytes: c_uint,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: CUkernel,
    pub ctx: CUcontext,
}

impl Default for KernelNodeParams {
    fn default() -> KernelNodeParams {
        KernelNodeParams {
            func: std::ptr::null_mut(),
            grid: [0; 3],
            block: [0; 3],
            shared_bytes: 0,
            kernel_params: std::ptr::null_mut(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx: std::ptr::null_mut(),
        }
    }
}

/// One kernel node of an executable graph, as the shim records it.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelNode {
    /// The node in the source graph (what `cuGraphExecKernelNodeSetParams` names).
    pub node: usize,
    pub name: String,
    pub code: Option<crate::registry::CodeHandle>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub args_hash: Option<String>,
    pub context: u64,
}

#[derive(Default)]
struct Graphs {
    /// Executable graph → its kernel nodes, in the source graph's node order.
    execs: HashMap<usize, Vec<KernelNode>>,
    /// Streams between a successful begin and the matching end of capture.
    capturing: HashSet<usize>,
}

static GRAPHS: LazyLock<Mutex<Graphs>> = LazyLock::new(|| Mutex::new(Graphs::default()));
/// `Graphs::capturing.len()`, readable without the lock on every launch.
static CAPTURES: AtomicUsize = AtomicUsize::new(0);

fn graphs() -> MutexGuard<'static, Graphs> {
    GRAPHS.lock().unwrap_or_else(|p| p.into_inner())
}

// ---- stream capture ------------------------------------------------------

/// Whether some stream is capturing: the shim must not allocate, copy or
/// synchronise (only metadata may be recorded).
pub fn any_capture_in_progress() -> bool {
    CAPTURES.load(Ordering::Relaxed) > 0
}

/// Whether a launch on `stream` is being captured into a graph rather than
/// run. Asks the driver when it can (captures begun through a road the
/// shim did not see count too); an error answer (the legacy stream while
/// another stream captures) counts as capturing.
pub(crate) fn stream_is_capturing(stream: CUstream) -> bool {
    if let Some(is_capturing) = driver::cuda().cuStreamIsCapturing {
        let mut status: c_int = CAPTURE_NONE;
        // SAFETY: the application's stream handle; an out-pointer to a local.
        let result = unsafe { is_capturing(stream, &mut status) };
        return result != CUDA_SUCCESS || status != CAPTURE_NONE;
    }
    any_capture_in_progress() && graphs().capturing.contains(&(stream as usize))
}

/// Called for a launch on a capturing stream: said once.
pub fn note_captured_launch(kernel: &str) {
    log::once(
        LogLevel::Info,
        "stream-capture",
        &format!(
            "{kernel} was launched on a stream being captured into a CUDA graph: it is recorded (metadata only) each time the graph is launched"
        ),
    );
}

fn capture_began(stream: CUstream) {
    let mut g = graphs();
    g.capturing.insert(stream as usize);
    CAPTURES.store(g.capturing.len(), Ordering::Relaxed);
}

fn capture_ended(stream: CUstream) {
    let mut g = graphs();
    g.capturing.remove(&(stream as usize));
    CAPTURES.store(g.capturing.len(), Ordering::Relaxed);
}

// ---- reading a graph -----------------------------------------------------

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
    let (name, code) = state::identify(function, false);
    let args_hash = state::args_hash_for(function, &name, code, p.kernel_params, p.extra);
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
fn snapshot(exec: CUgraphExec, graph: CUgraph) {
    if !state::active() {
        return;
    }
    let mut nodes = Vec::new();
    match kernel_nodes(graph, 0, &mut nodes) {
        Ok(()) => {
            graphs().execs.insert(exec as usize, nodes);
        }
        Err(e) => {
            log::once(
                LogLevel::Warn,
                "graph-read",
                &format!("cannot read a CUDA graph's kernels ({e}); its launches are not recorded"),
            );
            graphs().execs.remove(&(exec as usize));
        }
    }
}

fn set_node_params(exec: CUgraphExec, node: CUgraphNode, params: *const KernelNodeParams) {
    if params.is_null() || !state::active() {
        return;
    }
    // SAFETY: the caller's parameters, just accepted by the driver; only
    // the v1 prefix is read unless `v2` says the struct is v2 (see callers).
    let p = unsafe { *params };
    let described = describe_node(node as usize, &p);
    if let Some(nodes) = graphs().execs.get_mut(&(exec as usize)) {
        for n in nodes.iter_mut().filter(|n| n.node == node as usize) {
            *n = described.clone();
        }
    }
}

/// What became of one kernel node's trace in a graph launch.
#[derive(Default)]
pub(crate) struct NodeOutcome {
    pub trace: Option<crate::capture::CapturedTrace>,
    /// Why the node has no trace although its module records.
    pub error: Option<String>,
}

/// A graph launch: every kernel node whose module records (built with the
/// pass, or instrumented at load) gets trace buffers of its own, bound on
/// the launch's stream before the graph runs — to its module's descriptor,
/// or with several nodes of one module to an entry of its launch table
/// ([`trace_plans`]) — and copied back after it (`capture::arm`,
/// `Armed::collect`); then one record per kernel node, each with its own
/// launch index. Nothing is armed while any stream captures (the calls
/// would be illegal) or when the graph goes into a capture.
fn launch_graph(
    exec: CUgraphExec,
    stream: CUstream,
    forward: impl FnOnce() -> CUresult,
) -> CUresult {
    if !state::active() {
        return forward();
    }
    state::forward_once("a CUDA graph launch", forward, |run| {
        record_graph_launch(exec, stream, run)
    })
}

fn record_graph_launch(exec: CUgraphExec, stream: CUstream, run: &mut dyn FnMut() -> CUresult) {
    if stream_is_capturing(stream) {
        // A graph launched into a capture becomes a child graph node: it
        // runs (and is recorded) with the outer graph.
        note_captured_launch("a CUDA graph");
        run();
        return;
    }
    let nodes = graphs().execs.get(&(exec as usize)).cloned();
    let Some(nodes) = nodes else {
        log::once(
            LogLevel::Info,
            "graph-unknown",
            "a CUDA graph instantiated before the shim saw it was launched; its kernels are not recorded",
        );
        run();
        return;
    };
    let config = state::config();
    let recording: Vec<Option<Arc<Instrumented>>> = nodes
        .iter()
        .map(|n| n.code.and_then(state::instrumented_of))
        .collect();
    let mut outcomes: Vec<NodeOutcome> = nodes.iter().map(|_| NodeOutcome::default()).collect();
    let plans = trace_plans(&nodes, &recording, &mut outcomes);
    // Serialised with direct launches of the same modules (in one order).
    let mut locks: Vec<&Arc<Instrumented>> = plans.iter().map(|p| &p.module).collect();
    locks.sort_by_key(|inst| inst.descriptor);
    let _held: Vec<_> = locks
        .iter()
        .map(|inst| inst.capture_lock.lock().unwrap_or_else(|p| p.into_inner()))
        .collect();
    let cuda = driver::cuda();
    let mut armed = Vec::new();
    for plan in &plans {
        for (entry, &index) in plan.nodes.iter().enumerate() {
            let node = &nodes[index];
            let geometry = crate::capture::Geometry {
                grid: node.grid,
                block: node.block,
            };
            let descriptor = plan.module.descriptor;
            let armed_node = match plan.table {
                None => crate::capture::arm(cuda, config, descriptor, &node.name, geometry, stream),
                Some(table) => {
                    let entry = entry as u32;
                    crate::capture::arm_table_entry(
                        cuda, config, table, entry, &node.name, geometry, stream,
                    )
                }
            };
            match armed_node {
                Ok(a) => armed.push((index, a)),
                Err(e) => outcomes[index].error = Some(e),
            }
        }
        if plan.table.is_some() {
            let count = plan.nodes.len() as u32;
            if let Err(e) =
                crate::capture::set_launch_count(cuda, stream, plan.module.descriptor, count)
            {
                for &index in &plan.nodes {
                    outcomes[index].error = Some(e.clone());
                }
            }
        }
    }
    let launched = run();
    let mut traces = Vec::new();
    if launched == CUDA_SUCCESS {
        traces = armed
            .into_iter()
            .map(|(index, a)| (index, a.collect()))
            .collect();
    } else {
        drop(armed); // the buffers released, the descriptors cleared
    }
    for plan in plans.iter().filter(|p| p.table.is_some()) {
        let count = plan.nodes.len() as u32;
        let table = plan.table.unwrap_or_default();
        if let Err(e) =
            crate::capture::clear_launch_table(cuda, stream, plan.module.descriptor, table, count)
        {
            log::once(
                LogLevel::Warn,
                "launch-table",
                &format!("could not clear a module's launch table after a graph launch: {e}"),
            );
        }
    }
    if launched != CUDA_SUCCESS {
        return;
    }
    for (index, collected) in traces {
        match collected {
            Ok(trace) => outcomes[index].trace = Some(trace),
            Err(e) => {
                log::once(
                    LogLevel::Warn,
                    "graph-capture",
                    &format!("capture of graph node {} failed: {e}", nodes[index].name),
                );
                outcomes[index].error = Some(e);
            }
        }
    }
    state::record_graph_launch(exec as u64, stream, &nodes, outcomes);
}

/// How one module records during a graph launch.
struct TracePlan {
    module: Arc<Instrumented>,
    /// Its launch table, when several of its nodes record at once.
    table: Option<u64>,
    /// The nodes that get traces, in node order (table entry order).
    nodes: Vec<usize>,
}

/// Groups the recording kernel nodes by module: a module with one kernel
/// node in the graph records through its descriptor; several nodes of one
/// module each claim an entry of its launch table (modules instrumented at
/// load have one); a pass-built module has one descriptor only, and its
/// nodes record without a trace, saying why. Nothing is armed while a
/// stream captures.
fn trace_plans(
    nodes: &[KernelNode],
    recording: &[Option<Arc<Instrumented>>],
    outcomes: &mut [NodeOutcome],
) -> Vec<TracePlan> {
    use prlx_ptx_instrument::runtime::LAUNCH_TABLE_ENTRIES;
    let config = state::config();
    let mut modules: Vec<(Arc<Instrumented>, Vec<usize>)> = Vec::new();
    for (index, inst) in recording.iter().enumerate() {
        let Some(inst) = inst else { continue };
        match modules
            .iter_mut()
            .find(|(m, _)| m.descriptor == inst.descriptor)
        {
            Some((_, members)) => members.push(index),
            None => modules.push((inst.clone(), vec![index])),
        }
    }
    let mut plans = Vec::new();
    for (module, members) in modules {
        let fail = |outcomes: &mut [NodeOutcome], why: String| {
            for &index in &members {
                outcomes[index].error = Some(why.clone());
            }
        };
        if any_capture_in_progress() {
            fail(
                outcomes,
                "not captured: a stream was being captured into a CUDA graph".into(),
            );
            continue;
        }
        let table = if members.len() > 1 {
            match nodes[members[0]].code.and_then(state::launch_table_of) {
                Some(table) => Some(table),
                None => {
                    fail(
                        outcomes,
                        format!(
                            "not traced: {} kernel nodes of this CUDA graph belong to one module built with the pass, which has one trace descriptor",
                            members.len()
                        ),
                    );
                    continue;
                }
            }
        } else {
            None
        };
        // Unwanted nodes get no entry: their grids record nothing. So do
        // nodes past the table's entries (the first ones in node order —
        // for a captured sequence, the order they run in — are traced).
        let mut wanted: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| config.wants(&nodes[i].name))
            .collect();
        if table.is_some() && wanted.len() > LAUNCH_TABLE_ENTRIES as usize {
            for &index in &wanted[LAUNCH_TABLE_ENTRIES as usize..] {
                outcomes[index].error = Some(format!(
                    "not traced: only {LAUNCH_TABLE_ENTRIES} kernel nodes of one module are traced per graph launch (its launch table's entries), and this graph has {}",
                    wanted.len()
                ));
            }
            wanted.truncate(LAUNCH_TABLE_ENTRIES as usize);
        }
        if !wanted.is_empty() {
            plans.push(TracePlan {
                module,
                table,
                nodes: wanted,
            });
        }
    }
    plans
}

// ---- the wrappers --------------------------------------------------------

macro_rules! cell {
    ($name:ident) => {
        static $name: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    };
}
cell!(REAL_GRAPH_LAUNCH);
cell!(REAL_GRAPH_LAUNCH_PTSZ);
cell!(REAL_INSTANTIATE_V1);
cell!(REAL_INSTANTIATE_V2);
cell!(REAL_INSTANTIATE_WITH_FLAGS);
cell!(REAL_INSTANTIATE_WITH_PARAMS);
cell!(REAL_INSTANTIATE_WITH_PARAMS_PTSZ);
cell!(REAL_EXEC_UPDATE_V1);
cell!(REAL_EXEC_UPDATE_V2);
cell!(REAL_EXEC_SET_KERNEL_V1);
cell!(REAL_EXEC_SET_KERNEL_V2);
cell!(REAL_EXEC_DESTROY);
cell!(REAL_EXEC_NODE_SET_PARAMS);
cell!(REAL_BEGIN_CAPTURE_V1);
cell!(REAL_BEGIN_CAPTURE_V1_PTSZ);
cell!(REAL_BEGIN_CAPTURE_V2);
cell!(REAL_BEGIN_CAPTURE_V2_PTSZ);
cell!(REAL_BEGIN_CAPTURE_TO_GRAPH);
cell!(REAL_BEGIN_CAPTURE_TO_GRAPH_PTSZ);
cell!(REAL_END_CAPTURE);
cell!(REAL_END_CAPTURE_PTSZ);

/// `name` as a C string literal.
macro_rules! cname {
    ($name:ident) => {
        // SAFETY: the literal ends with its only NUL.
        unsafe {
            std::ffi::CStr::from_bytes_with_nul_unchecked(
                concat!(stringify!($name), "\0").as_bytes(),
            )
        }
    };
}

/// The real function: the one a `cuGetProcAddress`/`dlsym` answer handed
/// over, else the library's exported symbol.
fn real<T: Copy>(cell: &AtomicPtr<c_void>, symbol: &std::ffi::CStr) -> Option<T> {
    debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    let mut ptr = cell.load(Ordering::Relaxed);
    if ptr.is_null() {
        ptr = driver::symbol(symbol);
        cell.store(ptr, Ordering::Relaxed);
    }
    // SAFETY: T is the function pointer type of `symbol` (callers name both).
    (!ptr.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, T>(&ptr) })
}

type FnGraphLaunch = unsafe extern "C" fn(CUgraphExec, CUstream) -> CUresult;
type FnInstantiate5 = unsafe extern "C" fn(
    *mut CUgraphExec,
    CUgraph,
    *mut CUgraphNode,
    *mut c_char,
    usize,
) -> CUresult;
type FnInstantiateFlags = unsafe extern "C" fn(*mut CUgraphExec, CUgraph, u64) -> CUresult;
type FnInstantiateParams = unsafe extern "C" fn(*mut CUgraphExec, CUgraph, *mut c_void) -> CUresult;
type FnExecUpdateV1 =
    unsafe extern "C" fn(CUgraphExec, CUgraph, *mut CUgraphNode, *mut c_int) -> CUresult;
type FnExecUpdateV2 = unsafe extern "C" fn(CUgraphExec, CUgraph, *mut c_void) -> CUresult;
type FnExecSetKernel =
    unsafe extern "C" fn(CUgraphExec, CUgraphNode, *const KernelNodeParams) -> CUresult;
type FnExecDestroy = unsafe extern "C" fn(CUgraphExec) -> CUresult;
type FnExecNodeSetParams =
    unsafe extern "C" fn(CUgraphExec, CUgraphNode, *mut GraphNodeParams) -> CUresult;

/// The head of `CUgraphNodeParams` (CUDA 12.2): the node type, then (after
/// three reserved ints) a union whose kernel member has the layout of
/// `CUDA_KERNEL_NODE_PARAMS_v2`.
#[repr(C)]
pub struct GraphNodeParams {
    pub node_type: c_int,
    pub reserved: [c_int; 3],
    pub kernel: KernelNodeParams,
}
type FnBeginCaptureV1 = unsafe extern "C" fn(CUstream) -> CUresult;
type FnBeginCaptureV2 = unsafe extern "C" fn(CUstream, c_int) -> CUresult;
type FnBeginCaptureToGraph = unsafe extern "C" fn(
    CUstream,
    CUgraph,
    *const CUgraphNode,
    *const c_void,
    usize,
    c_int,
) -> CUresult;
type FnEndCapture = unsafe extern "C" fn(CUstream, *mut CUgraph) -> CUresult;

fn after_instantiate(result: CUresult, exec: *mut CUgraphExec, graph: CUgraph) {
    if result == CUDA_SUCCESS && !exec.is_null() {
        // SAFETY: the driver wrote the new handle.
        let exec = unsafe { *exec };
        state::guarded("cuGraphInstantiate", || (), || snapshot(exec, graph));
    }
}

/// `CU_STREAM_PER_THREAD`: what stream 0 means to a `_ptsz` entry point.
const STREAM_PER_THREAD: usize = 0x2;

/// `cuGraphLaunch` and its per-thread-default-stream twin. The shim's own
/// work for the launch goes on the stream the graph runs on: for the
/// `_ptsz` twin, a null stream is the calling thread's default stream.
macro_rules! graph_launch {
    ($name:ident, $cell:ident, $per_thread:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(exec: CUgraphExec, stream: CUstream) -> CUresult {
            let Some(real) = real::<FnGraphLaunch>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            let runs_on = if $per_thread && stream.is_null() {
                STREAM_PER_THREAD as CUstream
            } else {
                stream
            };
            // SAFETY: forwarding unchanged.
            launch_graph(exec, runs_on, || unsafe { real(exec, stream) })
        }
    };
}
graph_launch!(cuGraphLaunch, REAL_GRAPH_LAUNCH, false);
graph_launch!(cuGraphLaunch_ptsz, REAL_GRAPH_LAUNCH_PTSZ, true);

macro_rules! instantiate5 {
    ($name:ident, $cell:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            exec: *mut CUgraphExec,
            graph: CUgraph,
            error_node: *mut CUgraphNode,
            log_buffer: *mut c_char,
            log_size: usize,
        ) -> CUresult {
            let Some(real) = real::<FnInstantiate5>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(exec, graph, error_node, log_buffer, log_size) };
            after_instantiate(result, exec, graph);
            result
        }
    };
}
instantiate5!(cuGraphInstantiate, REAL_INSTANTIATE_V1);
instantiate5!(cuGraphInstantiate_v2, REAL_INSTANTIATE_V2);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphInstantiateWithFlags(
    exec: *mut CUgraphExec,
    graph: CUgraph,
    flags: u64,
) -> CUresult {
    let Some(real) =
        real::<FnInstantiateFlags>(&REAL_INSTANTIATE_WITH_FLAGS, c"cuGraphInstantiateWithFlags")
    else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec, graph, flags) };
    after_instantiate(result, exec, graph);
    result
}

macro_rules! instantiate_params {
    ($name:ident, $cell:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            exec: *mut CUgraphExec,
            graph: CUgraph,
            params: *mut c_void,
        ) -> CUresult {
            let Some(real) = real::<FnInstantiateParams>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(exec, graph, params) };
            after_instantiate(result, exec, graph);
            result
        }
    };
}
instantiate_params!(cuGraphInstantiateWithParams, REAL_INSTANTIATE_WITH_PARAMS);
instantiate_params!(
    cuGraphInstantiateWithParams_ptsz,
    REAL_INSTANTIATE_WITH_PARAMS_PTSZ
);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecUpdate(
    exec: CUgraphExec,
    graph: CUgraph,
    error_node: *mut CUgraphNode,
    update_result: *mut c_int,
) -> CUresult {
    let Some(real) = real::<FnExecUpdateV1>(&REAL_EXEC_UPDATE_V1, c"cuGraphExecUpdate") else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec, graph, error_node, update_result) };
    if result == CUDA_SUCCESS {
        state::guarded("cuGraphExecUpdate", || (), || snapshot(exec, graph));
    }
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecUpdate_v2(
    exec: CUgraphExec,
    graph: CUgraph,
    result_info: *mut c_void,
) -> CUresult {
    let Some(real) = real::<FnExecUpdateV2>(&REAL_EXEC_UPDATE_V2, c"cuGraphExecUpdate_v2") else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec, graph, result_info) };
    if result == CUDA_SUCCESS {
        state::guarded("cuGraphExecUpdate_v2", || (), || snapshot(exec, graph));
    }
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecKernelNodeSetParams_v2(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const KernelNodeParams,
) -> CUresult {
    let Some(real) = real::<FnExecSetKernel>(
        &REAL_EXEC_SET_KERNEL_V2,
        c"cuGraphExecKernelNodeSetParams_v2",
    ) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec, node, params) };
    if result == CUDA_SUCCESS {
        state::guarded(
            "cuGraphExecKernelNodeSetParams",
            || (),
            || set_node_params(exec, node, params),
        );
    }
    result
}

/// The v1 parameters lack `kern` and `ctx`: copied into a v2 struct first.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecKernelNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *const KernelNodeParams,
) -> CUresult {
    let Some(real) =
        real::<FnExecSetKernel>(&REAL_EXEC_SET_KERNEL_V1, c"cuGraphExecKernelNodeSetParams")
    else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec, node, params) };
    if result == CUDA_SUCCESS && !params.is_null() {
        // SAFETY: a v1 struct: everything up to `extra` (the fields read).
        let v2 = unsafe {
            let p = params as *const u8;
            let mut v2 = KernelNodeParams::default();
            let prefix = std::mem::offset_of!(KernelNodeParams, kern);
            std::ptr::copy_nonoverlapping(p, &mut v2 as *mut KernelNodeParams as *mut u8, prefix);
            v2
        };
        state::guarded(
            "cuGraphExecKernelNodeSetParams",
            || (),
            || set_node_params(exec, node, &v2),
        );
    }
    result
}

/// The generic form (CUDA 12.2+): a kernel node's new parameters are
/// recorded like `cuGraphExecKernelNodeSetParams`'.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecNodeSetParams(
    exec: CUgraphExec,
    node: CUgraphNode,
    params: *mut GraphNodeParams,
) -> CUresult {
    let Some(real) =
        real::<FnExecNodeSetParams>(&REAL_EXEC_NODE_SET_PARAMS, c"cuGraphExecNodeSetParams")
    else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec, node, params) };
    // SAFETY: the caller's parameters, just accepted by the driver.
    if result == CUDA_SUCCESS && !params.is_null() && unsafe { (*params).node_type } == NODE_KERNEL
    {
        // SAFETY: a kernel node's parameters: the union holds the kernel member.
        let kernel = unsafe { std::ptr::addr_of!((*params).kernel) };
        state::guarded(
            "cuGraphExecNodeSetParams",
            || (),
            || set_node_params(exec, node, kernel),
        );
    }
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGraphExecDestroy(exec: CUgraphExec) -> CUresult {
    let Some(real) = real::<FnExecDestroy>(&REAL_EXEC_DESTROY, c"cuGraphExecDestroy") else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(exec) };
    if result == CUDA_SUCCESS {
        graphs().execs.remove(&(exec as usize));
    }
    result
}

macro_rules! begin_capture_v1 {
    ($name:ident, $cell:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(stream: CUstream) -> CUresult {
            let Some(real) = real::<FnBeginCaptureV1>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(stream) };
            if result == CUDA_SUCCESS {
                capture_began(stream);
            }
            result
        }
    };
}
begin_capture_v1!(cuStreamBeginCapture, REAL_BEGIN_CAPTURE_V1);
begin_capture_v1!(cuStreamBeginCapture_ptsz, REAL_BEGIN_CAPTURE_V1_PTSZ);

macro_rules! begin_capture_v2 {
    ($name:ident, $cell:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(stream: CUstream, mode: c_int) -> CUresult {
            let Some(real) = real::<FnBeginCaptureV2>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(stream, mode) };
            if result == CUDA_SUCCESS {
                capture_began(stream);
            }
            result
        }
    };
}
begin_capture_v2!(cuStreamBeginCapture_v2, REAL_BEGIN_CAPTURE_V2);
begin_capture_v2!(cuStreamBeginCapture_v2_ptsz, REAL_BEGIN_CAPTURE_V2_PTSZ);

macro_rules! begin_capture_to_graph {
    ($name:ident, $cell:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            stream: CUstream,
            graph: CUgraph,
            dependencies: *const CUgraphNode,
            edge_data: *const c_void,
            count: usize,
            mode: c_int,
        ) -> CUresult {
            let Some(real) = real::<FnBeginCaptureToGraph>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(stream, graph, dependencies, edge_data, count, mode) };
            if result == CUDA_SUCCESS {
                capture_began(stream);
            }
            result
        }
    };
}
begin_capture_to_graph!(cuStreamBeginCaptureToGraph, REAL_BEGIN_CAPTURE_TO_GRAPH);
begin_capture_to_graph!(
    cuStreamBeginCaptureToGraph_ptsz,
    REAL_BEGIN_CAPTURE_TO_GRAPH_PTSZ
);

macro_rules! end_capture {
    ($name:ident, $cell:ident) => {
        /// Ends the capture whatever the result (an invalidated capture
        /// ends with an error too).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(stream: CUstream, graph: *mut CUgraph) -> CUresult {
            let Some(real) = real::<FnEndCapture>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(stream, graph) };
            capture_ended(stream);
            result
        }
    };
}
end_capture!(cuStreamEndCapture, REAL_END_CAPTURE);
end_capture!(cuStreamEndCapture_ptsz, REAL_END_CAPTURE_PTSZ);

/// The wrapper exported as `symbol` (for `dlsym` on a driver handle).
pub(crate) fn export_wrapper(symbol: &[u8]) -> Option<(&'static AtomicPtr<c_void>, *mut c_void)> {
    Some(match symbol {
        b"cuGraphLaunch" => (&REAL_GRAPH_LAUNCH, cuGraphLaunch as *mut c_void),
        b"cuGraphLaunch_ptsz" => (&REAL_GRAPH_LAUNCH_PTSZ, cuGraphLaunch_ptsz as *mut c_void),
        b"cuGraphInstantiate" => (&REAL_INSTANTIATE_V1, cuGraphInstantiate as *mut c_void),
        b"cuGraphInstantiate_v2" => (&REAL_INSTANTIATE_V2, cuGraphInstantiate_v2 as *mut c_void),
        b"cuGraphInstantiateWithFlags" => (
            &REAL_INSTANTIATE_WITH_FLAGS,
            cuGraphInstantiateWithFlags as *mut c_void,
        ),
        b"cuGraphInstantiateWithParams" => (
            &REAL_INSTANTIATE_WITH_PARAMS,
            cuGraphInstantiateWithParams as *mut c_void,
        ),
        b"cuGraphInstantiateWithParams_ptsz" => (
            &REAL_INSTANTIATE_WITH_PARAMS_PTSZ,
            cuGraphInstantiateWithParams_ptsz as *mut c_void,
        ),
        b"cuGraphExecUpdate" => (&REAL_EXEC_UPDATE_V1, cuGraphExecUpdate as *mut c_void),
        b"cuGraphExecUpdate_v2" => (&REAL_EXEC_UPDATE_V2, cuGraphExecUpdate_v2 as *mut c_void),
        b"cuGraphExecKernelNodeSetParams" => (
            &REAL_EXEC_SET_KERNEL_V1,
            cuGraphExecKernelNodeSetParams as *mut c_void,
        ),
        b"cuGraphExecKernelNodeSetParams_v2" => (
            &REAL_EXEC_SET_KERNEL_V2,
            cuGraphExecKernelNodeSetParams_v2 as *mut c_void,
        ),
        b"cuGraphExecDestroy" => (&REAL_EXEC_DESTROY, cuGraphExecDestroy as *mut c_void),
        b"cuGraphExecNodeSetParams" => (
            &REAL_EXEC_NODE_SET_PARAMS,
            cuGraphExecNodeSetParams as *mut c_void,
        ),
        b"cuStreamBeginCapture" => (&REAL_BEGIN_CAPTURE_V1, cuStreamBeginCapture as *mut c_void),
        b"cuStreamBeginCapture_ptsz" => (
            &REAL_BEGIN_CAPTURE_V1_PTSZ,
            cuStreamBeginCapture_ptsz as *mut c_void,
        ),
        b"cuStreamBeginCapture_v2" => (
            &REAL_BEGIN_CAPTURE_V2,
            cuStreamBeginCapture_v2 as *mut c_void,
        ),
        b"cuStreamBeginCapture_v2_ptsz" => (
            &REAL_BEGIN_CAPTURE_V2_PTSZ,
            cuStreamBeginCapture_v2_ptsz as *mut c_void,
        ),
        b"cuStreamBeginCaptureToGraph" => (
            &REAL_BEGIN_CAPTURE_TO_GRAPH,
            cuStreamBeginCaptureToGraph as *mut c_void,
        ),
        b"cuStreamBeginCaptureToGraph_ptsz" => (
            &REAL_BEGIN_CAPTURE_TO_GRAPH_PTSZ,
            cuStreamBeginCaptureToGraph_ptsz as *mut c_void,
        ),
        b"cuStreamEndCapture" => (&REAL_END_CAPTURE, cuStreamEndCapture as *mut c_void),
        b"cuStreamEndCapture_ptsz" => (
            &REAL_END_CAPTURE_PTSZ,
            cuStreamEndCapture_ptsz as *mut c_void,
        ),
        _ => return None,
    })
}

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
const PER_THREAD_DEFAULT_STREAM: u64 = 1 << 1;

/// The wrapper for a `cuGetProcAddress` answer: `symbol` is the base name;
/// the requested CUDA version picks the ABI as `cuda.h` maps it (12.0:
/// `cuGraphInstantiate` → `…WithFlags`, `cuGraphExecUpdate` and
/// `cuGraphExecKernelNodeSetParams` → `_v2`; 10.1: `cuStreamBeginCapture`
/// → `_v2`), the flags the per-thread-stream variant.
pub(crate) fn proc_wrapper(
    symbol: &[u8],
    cuda_version: c_int,
    flags: u64,
) -> Option<(&'static AtomicPtr<c_void>, *mut c_void)> {
    let ptsz = flags & PER_THREAD_DEFAULT_STREAM != 0;
    let export: &[u8] = match symbol {
        b"cuGraphLaunch" if ptsz => b"cuGraphLaunch_ptsz",
        b"cuGraphInstantiate" if cuda_version >= 12000 => b"cuGraphInstantiateWithFlags",
        b"cuGraphInstantiate" if cuda_version >= 11000 => b"cuGraphInstantiate_v2",
        b"cuGraphInstantiateWithParams" if ptsz => b"cuGraphInstantiateWithParams_ptsz",
        b"cuGraphExecUpdate" if cuda_version >= 12000 => b"cuGraphExecUpdate_v2",
        b"cuGraphExecKernelNodeSetParams" if cuda_version >= 12000 => {
            b"cuGraphExecKernelNodeSetParams_v2"
        }
        b"cuStreamBeginCapture" if cuda_version >= 10010 && ptsz => b"cuStreamBeginCapture_v2_ptsz",
        b"cuStreamBeginCapture" if cuda_version >= 10010 => b"cuStreamBeginCapture_v2",
        b"cuStreamBeginCapture" if ptsz => b"cuStreamBeginCapture_ptsz",
        b"cuStreamBeginCaptureToGraph" if ptsz => b"cuStreamBeginCaptureToGraph_ptsz",
        b"cuStreamEndCapture" if ptsz => b"cuStreamEndCapture_ptsz",
        other => other,
    };
    export_wrapper(export)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_answers_pick_the_abi_of_the_requested_version() {
        let w = |s: &[u8], v, f| proc_wrapper(s, v, f).map(|(_, w)| w);
        assert_eq!(
            w(b"cuGraphInstantiate", 12000, 0),
            Some(cuGraphInstantiateWithFlags as *mut c_void)
        );
        assert_eq!(
            w(b"cuGraphInstantiate", 11040, 0),
            Some(cuGraphInstantiate_v2 as *mut c_void)
        );
        assert_eq!(
            w(b"cuGraphInstantiate", 10000, 0),
            Some(cuGraphInstantiate as *mut c_void)
        );
        assert_eq!(
            w(b"cuGraphLaunch", 12000, PER_THREAD_DEFAULT_STREAM),
            Some(cuGraphLaunch_ptsz as *mut c_void)
        );
        assert_eq!(
            w(b"cuStreamBeginCapture", 12000, PER_THREAD_DEFAULT_STREAM),
            Some(cuStreamBeginCapture_v2_ptsz as *mut c_void)
        );
        assert_eq!(
            w(b"cuGraphExecUpdate", 11000, 0),
            Some(cuGraphExecUpdate as *mut c_void)
        );
        assert_eq!(w(b"cuGraphCreate", 12000, 0), None);
    }

    #[test]
    fn kernel_node_params_have_the_cuda_h_layout() {
        assert_eq!(std::mem::offset_of!(KernelNodeParams, kernel_params), 40);
        assert_eq!(std::mem::offset_of!(KernelNodeParams, kern), 56);
        assert_eq!(std::mem::size_of::<KernelNodeParams>(), 72);
        assert_eq!(std::mem::offset_of!(GraphNodeParams, kernel), 16);
    }

    #[test]
    fn captures_are_counted_per_stream() {
        let s = 0x5150 as CUstream;
        capture_began(s);
        capture_began(s);
        assert!(any_capture_in_progress());
        capture_ended(s);
        assert!(!graphs().capturing.contains(&(s as usize)));
    }
}
