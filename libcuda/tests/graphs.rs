//! CUDA graphs and stream capture through the driver API: building and
//! querying graphs (the "query or fill" array protocol, edges, clones),
//! node parameters read back, instantiation failures, executable-graph
//! changes, and the capture rules that need the driver API to observe
//! (capture info and dependency updates, capture into an existing graph,
//! the per-thread capture modes across threads, the wrong thread).
//!
//! `tests/driver-api/graphs.c` does the same through `cuda.h`'s own
//! names and structs, under every header variant.
//!
//! The tests share one process and capture in global mode, which prohibits
//! unsafe calls on every thread, so they run one at a time.

mod common;

use cuda::api::array::*;
use cuda::api::context::*;
use cuda::api::device::*;
use cuda::api::graph::abi::*;
use cuda::api::graph::build::*;
use cuda::api::graph::capture::*;
use cuda::api::graph::exec::*;
use cuda::api::launch::*;
use cuda::api::memory::*;
use cuda::api::module::*;
use cuda::api::peer::*;
use cuda::api::stream::*;
use cuda::cu::*;
use std::ffi::{c_uint, c_void};
use std::ptr::{null, null_mut};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// `x[i] += v` for `i < n`.
const PTX: &str = r#"
.version 7.5
.target sm_80
.address_size 64
.visible .entry add_k(.param .u64 p, .param .u32 v, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [v];
    ld.param.u32 %r2, [n];
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ctaid.x;
    mov.u32 %r5, %ntid.x;
    mad.lo.u32 %r3, %r4, %r5, %r3;
    setp.ge.u32 %p1, %r3, %r2;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r3, 4;
    add.u64 %rd4, %rd2, %rd3;
    ld.global.u32 %r6, [%rd4];
    add.u32 %r7, %r6, %r1;
    st.global.u32 [%rd4], %r7;
DONE:
    ret;
}
"#;

const N: usize = 300;

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

fn ok(r: CUresult) {
    assert_eq!(r, CUDA_SUCCESS);
}

/// A context current on this thread and the `add_k` kernel.
fn setup() -> CUfunction {
    // SAFETY: out-pointers to live locals and `image`, a NUL-terminated PTX string that outlives the load.
    unsafe {
        ok(cuInit(0));
        let mut ctx: CUcontext = null_mut();
        ok(cuCtxCreate_v2(&mut ctx, 0, 0));
        let image = std::ffi::CString::new(PTX).unwrap();
        let mut module: CUmodule = null_mut();
        ok(cuModuleLoadData(&mut module, image.as_ptr().cast()));
        let mut f: CUfunction = null_mut();
        ok(cuModuleGetFunction(&mut f, module, c"add_k".as_ptr()));
        f
    }
}

fn alloc_zeroed() -> CUdeviceptr {
    // SAFETY: `d` is a live local; the memset covers the `N` words just allocated.
    unsafe {
        let mut d: CUdeviceptr = 0;
        ok(cuMemAlloc_v2(&mut d, N * 4));
        ok(cuMemsetD32_v2(d, 0, N));
        d
    }
}

fn read(d: CUdeviceptr) -> Vec<u32> {
    let mut out = vec![0u32; N];
    // SAFETY: `out` holds `N` u32s, the `N * 4` bytes copied.
    unsafe { ok(cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), d, N * 4)) };
    out
}

/// Kernel node parameters for `add_k(d, v, N)` (the arguments live in
/// `args`' storage, which must outlive the call that uses them).
struct KernelArgs {
    p: CUdeviceptr,
    v: u32,
    n: u32,
    ptrs: [*mut c_void; 3],
}

impl KernelArgs {
    fn new(p: CUdeviceptr, v: u32) -> Box<KernelArgs> {
        let mut a = Box::new(KernelArgs {
            p,
            v,
            n: N as u32,
            ptrs: [null_mut(); 3],
        });
        a.ptrs = [
            (&mut a.p as *mut CUdeviceptr).cast(),
            (&mut a.v as *mut u32).cast(),
            (&mut a.n as *mut u32).cast(),
        ];
        a
    }

    fn params(&mut self, f: CUfunction) -> KernelNodeParamsV2 {
        KernelNodeParamsV2 {
            func: f,
            grid: [(N as u32).div_ceil(128), 1, 1],
            block: [128, 1, 1],
            shared_mem_bytes: 0,
            kernel_params: self.ptrs.as_mut_ptr(),
            extra: null_mut(),
            kern: null_mut(),
            ctx: null_mut(),
        }
    }

    /// Launches `add_k` with these arguments on `stream`, over the same grid
    /// as [`KernelArgs::params`].
    fn launch(&mut self, f: CUfunction, stream: CUstream) {
        let p = self.params(f);
        // SAFETY: `kernel_params` points into `self`, alive for the call.
        ok(unsafe {
            cuLaunchKernel(
                f,
                p.grid[0],
                1,
                1,
                p.block[0],
                1,
                1,
                0,
                stream,
                p.kernel_params,
                null_mut(),
            )
        });
    }
}

unsafe fn empty(g: CUgraph, deps: &[CUgraphNode]) -> CUgraphNode {
    let mut n: CUgraphNode = null_mut();
    // SAFETY: `n` is a live local and `deps` a slice of `deps.len()` node handles.
    unsafe { ok(cuGraphAddEmptyNode(&mut n, g, deps.as_ptr(), deps.len())) };
    n
}

#[test]
fn graphs_are_built_queried_cloned_and_printed() {
    let _serial = serial();
    setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut g: CUgraph = null_mut();
        assert_eq!(
            cuGraphCreate(&mut g, 1),
            CUDA_ERROR_INVALID_VALUE,
            "flags must be 0"
        );
        ok(cuGraphCreate(&mut g, 0));
        let a = empty(g, &[]);
        let b = empty(g, &[a]);
        let c = empty(g, &[a]);
        let d = empty(g, &[b, c]);
        // Query, then fill a larger array: the rest is NULLed.
        let mut count = 0usize;
        ok(cuGraphGetNodes(g, null_mut(), &mut count));
        assert_eq!(count, 4);
        let mut nodes = [0x55usize as CUgraphNode; 6];
        count = 6;
        ok(cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut count));
        assert_eq!(count, 4);
        assert_eq!(&nodes[..4], &[a, b, c, d]);
        assert!(nodes[4].is_null() && nodes[5].is_null());
        // A smaller array gets what fits.
        count = 2;
        ok(cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut count));
        assert_eq!((count, nodes[0], nodes[1]), (2, a, b));
        let mut roots = [null_mut(); 4];
        count = 4;
        ok(cuGraphGetRootNodes(g, roots.as_mut_ptr(), &mut count));
        assert_eq!((count, roots[0]), (1, a));
        // Edges, with (all-ordinary) edge data.
        let (mut from, mut to) = ([null_mut(); 4], [null_mut(); 4]);
        let mut data = [EdgeData { bytes: [9; 8] }; 4];
        count = 4;
        ok(cuGraphGetEdges_v2(
            g,
            from.as_mut_ptr(),
            to.as_mut_ptr(),
            data.as_mut_ptr(),
            &mut count,
        ));
        assert_eq!(count, 4);
        assert_eq!((from[0], to[0], from[3], to[3]), (a, b, c, d));
        assert!(data.iter().all(|e| *e == EdgeData::default()));
        assert_eq!(
            cuGraphGetEdges(g, from.as_mut_ptr(), null_mut(), &mut count),
            CUDA_ERROR_INVALID_VALUE,
            "from without to"
        );
        let mut deps = [null_mut(); 2];
        count = 2;
        ok(cuGraphNodeGetDependencies(d, deps.as_mut_ptr(), &mut count));
        assert_eq!((count, deps), (2, [b, c]));
        count = 2;
        ok(cuGraphNodeGetDependentNodes(
            a,
            deps.as_mut_ptr(),
            &mut count,
        ));
        assert_eq!((count, deps), (2, [b, c]));
        // Edges: no duplicates, no self-loops, both ends in the graph.
        assert_eq!(
            cuGraphAddDependencies(g, &a, &b, 1),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuGraphAddDependencies(g, &a, &a, 1),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            cuGraphRemoveDependencies(g, &d, &a, 1),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut other: CUgraph = null_mut();
        ok(cuGraphCreate(&mut other, 0));
        let foreign = empty(other, &[]);
        assert_eq!(
            cuGraphAddDependencies(g, &a, &foreign, 1),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut x: CUgraphNode = null_mut();
        assert_eq!(
            cuGraphAddEmptyNode(&mut x, g, &foreign, 1),
            CUDA_ERROR_INVALID_VALUE,
            "a dependency from another graph"
        );
        ok(cuGraphRemoveDependencies(g, &b, &d, 1));
        count = 0;
        ok(cuGraphNodeGetDependencies(d, null_mut(), &mut count));
        assert_eq!(count, 1);
        ok(cuGraphAddDependencies(g, &b, &d, 1));
        // Types, containing graph.
        let mut ty: c_uint = 99;
        ok(cuGraphNodeGetType(d, &mut ty));
        assert_eq!(ty, NODE_EMPTY);
        let mut owner: CUgraph = null_mut();
        ok(cuGraphNodeGetContainingGraph(d, &mut owner));
        assert_eq!(owner, g);
        // A clone: the same shape, its own nodes, found from the originals.
        let mut copy: CUgraph = null_mut();
        ok(cuGraphClone(&mut copy, g));
        let mut d_copy: CUgraphNode = null_mut();
        ok(cuGraphNodeFindInClone(&mut d_copy, d, copy));
        assert_ne!(d_copy, d);
        count = 0;
        ok(cuGraphNodeGetDependencies(d_copy, null_mut(), &mut count));
        assert_eq!(count, 2);
        assert_eq!(
            cuGraphNodeFindInClone(&mut d_copy, foreign, copy),
            CUDA_ERROR_INVALID_VALUE
        );
        // Destroying a node removes its edges.
        ok(cuGraphDestroyNode(b));
        count = 0;
        ok(cuGraphGetEdges(g, null_mut(), null_mut(), &mut count));
        assert_eq!(count, 2);
        assert_eq!(cuGraphNodeGetType(b, &mut ty), CUDA_ERROR_INVALID_HANDLE);
        // DOT output.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.dot");
        let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        ok(cuGraphDebugDotPrint(copy, cpath.as_ptr(), 0));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("digraph") && text.matches("EMPTY").count() == 4,
            "{text}"
        );
        for graph in [g, other, copy] {
            ok(cuGraphDestroy(graph));
        }
        assert_eq!(cuGraphDestroy(g), CUDA_ERROR_INVALID_HANDLE);
    }
}

/// What `nodes_run_in_dependency_order_and_read_back_their_parameters`
/// runs: memset(7) -> add 5 -> copy to host -> host node (`look`) -> event
/// record, with the nodes, the event and what the memset and kernel were
/// given.
struct Pipeline {
    g: CUgraph,
    m: CUgraphNode,
    k: CUgraphNode,
    c: CUgraphNode,
    h: CUgraphNode,
    rec: CUgraphNode,
    event: CUevent,
    memset: MemsetNodeParams,
    args: Box<KernelArgs>,
}

/// The last word of the host buffer, as the host node `look` saw it.
static SEEN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The host node of [`build_pipeline`]: records the last of the `N` words at `p`.
unsafe extern "C" fn look(p: *mut c_void) {
    // SAFETY: `p` is the test's host buffer of `N` u32s.
    let v = unsafe { *(p as *const u32).add(N - 1) };
    SEEN.store(v, std::sync::atomic::Ordering::SeqCst);
}

/// Builds the [`Pipeline`] graph over device buffer `d` (`N` words) and
/// `host`, checking the calls that refuse bad parameters on the way.
///
/// # Safety
/// `host` must hold `N` words and outlive every launch of the graph.
unsafe fn build_pipeline(f: CUfunction, d: CUdeviceptr, host: &mut [u32]) -> Pipeline {
    // SAFETY: every call below gets out-pointers to live locals, node
    // parameters that are live locals, and `host` (`N` words).
    unsafe {
        let mut g: CUgraph = null_mut();
        ok(cuGraphCreate(&mut g, 0));
        // memset(7) -> add 5 -> copy to host -> host node sees it.
        let memset = MemsetNodeParams {
            dst: d,
            pitch: 0,
            value: 7,
            element_size: 4,
            width: N,
            height: 1,
        };
        let mut m: CUgraphNode = null_mut();
        ok(cuGraphAddMemsetNode(
            &mut m,
            g,
            null(),
            0,
            &memset,
            null_mut(),
        ));
        let bad = MemsetNodeParams {
            element_size: 3,
            ..memset
        };
        let mut x: CUgraphNode = null_mut();
        assert_eq!(
            cuGraphAddMemsetNode(&mut x, g, null(), 0, &bad, null_mut()),
            CUDA_ERROR_INVALID_VALUE
        );
        let mut args = KernelArgs::new(d, 5);
        let mut k: CUgraphNode = null_mut();
        ok(cuGraphAddKernelNode_v2(&mut k, g, &m, 1, &args.params(f)));
        args.v = 1000; // copied at creation: no effect
        let mut copy: CUDA_MEMCPY3D = std::mem::zeroed();
        copy.src_memory_type = CU_MEMORYTYPE_DEVICE;
        copy.src_device = d;
        copy.dst_memory_type = CU_MEMORYTYPE_HOST;
        copy.dst_host = host.as_mut_ptr().cast();
        copy.width_in_bytes = N * 4;
        copy.height = 1;
        copy.depth = 1;
        let mut c: CUgraphNode = null_mut();
        ok(cuGraphAddMemcpyNode(&mut c, g, &k, 1, &copy, null_mut()));
        let hp = HostNodeParams {
            f: Some(look),
            user_data: host.as_mut_ptr().cast(),
        };
        let mut h: CUgraphNode = null_mut();
        ok(cuGraphAddHostNode(&mut h, g, &c, 1, &hp));
        let mut event: CUevent = null_mut();
        ok(cuEventCreate(&mut event, 0));
        let mut rec: CUgraphNode = null_mut();
        ok(cuGraphAddEventRecordNode(&mut rec, g, &h, 1, event));
        let mut got_event: CUevent = null_mut();
        ok(cuGraphEventRecordNodeGetEvent(rec, &mut got_event));
        assert_eq!(got_event, event);
        Pipeline {
            g,
            m,
            k,
            c,
            h,
            rec,
            event,
            memset,
            args,
        }
    }
}

#[test]
fn nodes_run_in_dependency_order_and_read_back_their_parameters() {
    let _serial = serial();
    let f = setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let d = alloc_zeroed();
        let mut host = vec![0u32; N];
        let Pipeline {
            g,
            m,
            k,
            c,
            h,
            rec,
            event,
            memset,
            mut args,
        } = build_pipeline(f, d, &mut host);

        // Parameters read back: the copied arguments, v2 and v1 layouts.
        let mut back: KernelNodeParamsV2 = std::mem::zeroed();
        ok(cuGraphKernelNodeGetParams_v2(k, &mut back));
        assert_eq!((back.func, back.grid[0], back.block[0]), (f, 3, 128));
        assert_eq!(*(*back.kernel_params.add(1) as *const u32), 5);
        assert_eq!(*(*back.kernel_params as *const u64), d);
        let mut v1: KernelNodeParamsV1 = std::mem::zeroed();
        ok(cuGraphKernelNodeGetParams(k, &mut v1));
        assert_eq!(v1.func, f);
        let mut ms: MemsetNodeParams = std::mem::zeroed();
        ok(cuGraphMemsetNodeGetParams(m, &mut ms));
        assert_eq!((ms.value, ms.element_size, ms.width), (7, 4, N));
        assert_eq!(
            cuGraphMemsetNodeGetParams(k, &mut ms),
            CUDA_ERROR_INVALID_VALUE,
            "not a memset node"
        );

        let mut params = GraphInstantiateParams {
            flags: 0,
            upload_stream: null_mut(),
            err_node_out: 0x1 as CUgraphNode,
            result_out: 99,
        };
        let mut exec: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithParams(&mut exec, g, &mut params));
        assert_eq!(
            (params.result_out, params.err_node_out),
            (INSTANTIATE_SUCCESS, null_mut())
        );
        let mut stream: CUstream = null_mut();
        ok(cuStreamCreate(&mut stream, 0));
        ok(cuGraphLaunch(exec, stream));
        assert!(host.iter().all(|&v| v == 12), "{:?}", &host[..4]);
        assert_eq!(SEEN.load(std::sync::atomic::Ordering::SeqCst), 12);
        ok(cuEventQuery(event));

        // Executable-graph changes leave the graph alone.
        let newer = MemsetNodeParams {
            value: 100,
            ..memset
        };
        ok(cuGraphExecMemsetNodeSetParams(exec, m, &newer, null_mut()));
        let wider = MemsetNodeParams {
            element_size: 2,
            ..memset
        };
        assert_eq!(
            cuGraphExecMemsetNodeSetParams(exec, m, &wider, null_mut()),
            CUDA_ERROR_INVALID_VALUE,
            "a memset keeps its element size"
        );
        let mut args2 = KernelArgs::new(d, 1);
        ok(cuGraphExecKernelNodeSetParams_v2(exec, k, &args2.params(f)));
        assert_eq!(
            cuGraphExecKernelNodeSetParams_v2(exec, m, &args2.params(f)),
            CUDA_ERROR_INVALID_VALUE,
            "a kernel's parameters for a memset node"
        );
        ok(cuGraphLaunch(exec, stream));
        assert!(host.iter().all(|&v| v == 101));
        ok(cuGraphMemsetNodeGetParams(m, &mut ms));
        assert_eq!(ms.value, 7, "the graph keeps its own parameters");
        // Disabled: the kernel does nothing.
        ok(cuGraphNodeSetEnabled(exec, k, 0));
        assert_eq!(cuGraphNodeSetEnabled(exec, h, 0), CUDA_ERROR_INVALID_VALUE);
        ok(cuGraphLaunch(exec, stream));
        assert!(host.iter().all(|&v| v == 100));
        ok(cuGraphNodeSetEnabled(exec, k, 1));

        // cuGraphExecUpdate (the 10.2 form) from a clone with another value.
        let mut clone: CUgraph = null_mut();
        ok(cuGraphClone(&mut clone, g));
        let mut k2: CUgraphNode = null_mut();
        ok(cuGraphNodeFindInClone(&mut k2, k, clone));
        let mut args3 = KernelArgs::new(d, 40);
        ok(cuGraphKernelNodeSetParams_v2(k2, &args3.params(f)));
        let mut error_node: CUgraphNode = 0x1 as CUgraphNode;
        let mut result: c_uint = 99;
        ok(cuGraphExecUpdate(exec, clone, &mut error_node, &mut result));
        assert_eq!((result, error_node), (UPDATE_SUCCESS, null_mut()));
        ok(cuGraphLaunch(exec, stream));
        assert!(host.iter().all(|&v| v == 7 + 40), "{}", host[0]);
        // A different dependency: the topology changed, named by its nodes.
        let mut h2: CUgraphNode = null_mut();
        ok(cuGraphNodeFindInClone(&mut h2, h, clone));
        let mut c2: CUgraphNode = null_mut();
        ok(cuGraphNodeFindInClone(&mut c2, c, clone));
        ok(cuGraphRemoveDependencies(clone, &c2, &h2, 1));
        ok(cuGraphAddDependencies(clone, &k2, &h2, 1));
        let mut info = ExecUpdateResultInfo {
            result: 99,
            error_node: null_mut(),
            error_from_node: null_mut(),
        };
        assert_eq!(
            cuGraphExecUpdate_v2(exec, clone, &mut info),
            CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
        );
        assert_eq!(
            (info.result, info.error_node, info.error_from_node),
            (UPDATE_ERROR_TOPOLOGY_CHANGED, h2, k2)
        );

        // A cycle does not instantiate; the node and a log say why.
        ok(cuGraphAddDependencies(g, &rec, &m, 1));
        let mut log = [0u8; 200];
        let mut err_node: CUgraphNode = null_mut();
        let mut bad_exec: CUgraphExec = null_mut();
        assert_eq!(
            cuGraphInstantiate(
                &mut bad_exec,
                g,
                &mut err_node,
                log.as_mut_ptr().cast(),
                log.len()
            ),
            CUDA_ERROR_INVALID_VALUE
        );
        assert!(!err_node.is_null());
        assert!(String::from_utf8_lossy(&log).contains("cycle"));
        params.result_out = 0;
        assert_eq!(
            cuGraphInstantiateWithParams(&mut bad_exec, g, &mut params),
            CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(params.result_out, INSTANTIATE_INVALID_STRUCTURE);
        assert_eq!(
            cuGraphInstantiateWithFlags(&mut bad_exec, clone, INSTANTIATE_FLAG_UPLOAD),
            CUDA_ERROR_INVALID_VALUE,
            "upload is for cuGraphInstantiateWithParams"
        );

        ok(cuGraphExecDestroy(exec));
        assert_eq!(cuGraphLaunch(exec, stream), CUDA_ERROR_INVALID_HANDLE);
        ok(cuGraphDestroy(g));
        ok(cuGraphDestroy(clone));
        let _ = (&mut args, &mut args2, &mut args3);
    }
}

#[test]
fn generic_node_parameters_and_child_graphs() {
    let _serial = serial();
    let f = setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let d = alloc_zeroed();
        let mut child: CUgraph = null_mut();
        ok(cuGraphCreate(&mut child, 0));
        let mut args = KernelArgs::new(d, 3);
        // cuGraphAddNode with a CUgraphNodeParams of type kernel.
        let mut np: GraphNodeParams = std::mem::zeroed();
        np.type_ = NODE_KERNEL;
        let kp = args.params(f);
        std::ptr::copy_nonoverlapping(
            (&kp as *const KernelNodeParamsV2).cast::<u8>(),
            np.params.as_mut_ptr().cast::<u8>(),
            std::mem::size_of::<KernelNodeParamsV2>(),
        );
        let mut k: CUgraphNode = null_mut();
        ok(cuGraphAddNode(&mut k, child, null(), 0, &mut np));
        let mut g: CUgraph = null_mut();
        ok(cuGraphCreate(&mut g, 0));
        let mut c1: CUgraphNode = null_mut();
        ok(cuGraphAddChildGraphNode(&mut c1, g, null(), 0, child));
        let mut c2: CUgraphNode = null_mut();
        ok(cuGraphAddChildGraphNode(&mut c2, g, &c1, 1, child));
        let mut embedded: CUgraph = null_mut();
        ok(cuGraphChildGraphNodeGetGraph(c1, &mut embedded));
        assert_ne!(embedded, child, "the node holds a copy");
        assert_eq!(
            cuGraphDestroy(embedded),
            CUDA_ERROR_INVALID_VALUE,
            "owned by its node"
        );
        ok(cuGraphDestroy(child));
        let mut exec: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithFlags(&mut exec, g, 0));
        let mut flags = 99u64;
        ok(cuGraphExecGetFlags(exec, &mut flags));
        assert_eq!(flags, 0);
        ok(cuGraphLaunch(exec, null_mut()));
        assert!(read(d).iter().all(|&v| v == 6));
        // A node inside a child graph changed in the executable graph.
        let mut inner = [null_mut(); 1];
        let mut count = 1usize;
        ok(cuGraphGetNodes(embedded, inner.as_mut_ptr(), &mut count));
        let mut args2 = KernelArgs::new(d, 10);
        ok(cuGraphExecKernelNodeSetParams_v2(
            exec,
            inner[0],
            &args2.params(f),
        ));
        ok(cuGraphLaunch(exec, null_mut()));
        assert!(read(d).iter().all(|&v| v == 6 + 10 + 3));
        // Generic parameters read back; attributes kept and honoured.
        let mut back: GraphNodeParams = std::mem::zeroed();
        ok(cuGraphNodeGetParams(c1, &mut back));
        assert_eq!(back.type_, NODE_GRAPH);
        assert_eq!(back.params[0] as usize, embedded as usize);
        ok(cuGraphNodeGetParams(inner[0], &mut back));
        assert_eq!(
            (back.type_, back.params[0] as usize),
            (NODE_KERNEL, f as usize)
        );
        let mut value = [0u8; 64];
        value[0] = 1;
        ok(cuGraphKernelNodeSetAttribute(inner[0], 8, &value)); // priority: a hint
        let mut read_back = [9u8; 64];
        ok(cuGraphKernelNodeGetAttribute(inner[0], 8, &mut read_back));
        assert_eq!(read_back, value);
        ok(cuGraphKernelNodeGetAttribute(
            inner[0],
            CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
            &mut read_back,
        ));
        assert_eq!(read_back[0], 0);
        let mut cluster = [0u8; 64];
        cluster[0] = 2;
        assert_eq!(
            cuGraphKernelNodeSetAttribute(
                inner[0],
                CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                &cluster
            ),
            CUDA_ERROR_NOT_SUPPORTED
        );
        assert_eq!(
            cuGraphKernelNodeSetAttribute(inner[0], 99, &value),
            CUDA_ERROR_INVALID_VALUE
        );
        // A new memset value through cuGraphExecNodeSetParams, by type.
        let mut e = [null_mut(); 1];
        let mut one = 1usize;
        ok(cuGraphGetNodes(embedded, e.as_mut_ptr(), &mut one));
        let mut generic: GraphNodeParams = std::mem::zeroed();
        ok(cuGraphNodeGetParams(e[0], &mut generic));
        let kp = generic.params.as_mut_ptr() as *mut KernelNodeParamsV2;
        let mut args3 = KernelArgs::new(d, 100);
        (*kp).kernel_params = args3.ptrs.as_mut_ptr();
        ok(cuGraphExecNodeSetParams(exec, e[0], &mut generic));
        ok(cuGraphLaunch(exec, null_mut()));
        assert!(read(d).iter().all(|&v| v == 19 + 100 + 3));
        // An unsupported node kind is refused, not misread.
        np.type_ = 12; // batch memory operations
        assert_eq!(
            cuGraphAddNode(&mut k, g, null(), 0, &mut np),
            CUDA_ERROR_NOT_SUPPORTED
        );
        ok(cuGraphExecDestroy(exec));
        ok(cuGraphDestroy(g));
    }
}

#[test]
fn capture_info_dependency_updates_and_capture_into_a_graph() {
    let _serial = serial();
    let f = setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let d = alloc_zeroed();
        let mut s: CUstream = null_mut();
        ok(cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING));
        assert_eq!(cuStreamBeginCapture_v2(s, 3), CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            cuStreamBeginCapture_v2(CU_STREAM_LEGACY as CUstream, CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        );
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_GLOBAL));
        assert_eq!(
            cuStreamBeginCapture_v2(s, CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_ILLEGAL_STATE
        );
        let mut args = KernelArgs::new(d, 1);
        args.launch(f, s);
        args.launch(f, s);
        let mut status: c_uint = 9;
        let mut id = 0u64;
        let mut graph: CUgraph = null_mut();
        let mut deps: *const CUgraphNode = null();
        let mut edges: *const EdgeData = null();
        let mut count = 0usize;
        ok(cuStreamGetCaptureInfo_v3(
            s,
            &mut status,
            &mut id,
            &mut graph,
            &mut deps,
            &mut edges,
            &mut count,
        ));
        assert_eq!((status, count), (CAPTURE_STATUS_ACTIVE, 1));
        assert!(id != 0 && !graph.is_null() && !edges.is_null());
        assert_eq!(*edges, EdgeData::default());
        let second = *deps;
        assert_eq!(
            cuStreamGetCaptureInfo_v3(
                s,
                &mut status,
                null_mut(),
                null_mut(),
                null_mut(),
                &mut edges,
                null_mut()
            ),
            CUDA_ERROR_INVALID_VALUE,
            "edge data without dependencies"
        );
        // An empty set: the next node is a root.
        ok(cuStreamUpdateCaptureDependencies(
            s,
            null_mut(),
            0,
            SET_CAPTURE_DEPENDENCIES,
        ));
        args.launch(f, s);
        ok(cuStreamGetCaptureInfo_v2(
            s,
            &mut status,
            null_mut(),
            null_mut(),
            &mut deps,
            &mut count,
        ));
        let third = *deps;
        // Then depend on both.
        ok(cuStreamUpdateCaptureDependencies(
            s,
            &second,
            1,
            ADD_CAPTURE_DEPENDENCIES,
        ));
        assert_eq!(
            cuStreamUpdateCaptureDependencies(s, null_mut(), 0, 7),
            CUDA_ERROR_INVALID_VALUE
        );
        ok(cuStreamGetCaptureInfo_v2(
            s,
            &mut status,
            null_mut(),
            null_mut(),
            &mut deps,
            &mut count,
        ));
        assert_eq!(count, 2);
        // An external event record becomes a node.
        let mut event: CUevent = null_mut();
        ok(cuEventCreate(&mut event, 0));
        ok(cuEventRecordWithFlags(event, s, EVENT_EXTERNAL));
        let mut captured: CUgraph = null_mut();
        ok(cuStreamEndCapture(s, &mut captured));
        assert_eq!(captured, graph);
        assert!(read(d).iter().all(|&v| v == 0), "capture ran nothing");
        let mut roots = 0usize;
        ok(cuGraphGetRootNodes(captured, null_mut(), &mut roots));
        assert_eq!(roots, 2);
        let mut nodes = [null_mut(); 4];
        let mut n = 4usize;
        ok(cuGraphGetNodes(captured, nodes.as_mut_ptr(), &mut n));
        let mut ty = 0;
        ok(cuGraphNodeGetType(nodes[3], &mut ty));
        assert_eq!((n, nodes[2], ty), (4, third, NODE_EVENT_RECORD));
        assert_eq!(
            cuStreamUpdateCaptureDependencies(s, null_mut(), 0, 0),
            CUDA_ERROR_ILLEGAL_STATE,
            "not capturing"
        );
        ok(cuStreamGetCaptureInfo(s, &mut status, null_mut()));
        assert_eq!(status, CAPTURE_STATUS_NONE);

        // Capture into an existing graph, after one of its nodes.
        let tail = nodes[3];
        ok(cuStreamBeginCaptureToGraph(
            s,
            captured,
            &tail,
            null(),
            1,
            CAPTURE_MODE_RELAXED,
        ));
        args.launch(f, s);
        let mut same: CUgraph = null_mut();
        ok(cuStreamEndCapture(s, &mut same));
        assert_eq!(same, captured);
        n = 0;
        ok(cuGraphGetNodes(captured, null_mut(), &mut n));
        assert_eq!(n, 5);
        let mut exec: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithFlags(&mut exec, captured, 0));
        ok(cuGraphUpload(exec, s));
        ok(cuGraphLaunch(exec, s));
        assert!(read(d).iter().all(|&v| v == 4));
        ok(cuGraphExecDestroy(exec));
        ok(cuGraphDestroy(captured));

        // The per-thread default stream captures too.
        let pts = CU_STREAM_PER_THREAD as CUstream;
        ok(cuStreamBeginCapture_v2(pts, CAPTURE_MODE_GLOBAL));
        args.launch(f, pts);
        let mut status_pts: std::ffi::c_int = 0;
        ok(cuStreamIsCapturing(pts, &mut status_pts));
        assert_eq!(status_pts, CAPTURE_STATUS_ACTIVE as i32);
        ok(cuStreamEndCapture(pts, &mut graph));
        ok(cuGraphDestroy(graph));
        assert!(read(d).iter().all(|&v| v == 4));
    }
}

#[test]
fn capture_modes_govern_unsafe_calls_from_other_threads() {
    let _serial = serial();
    setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut ctx: CUcontext = null_mut();
        ok(cuCtxGetCurrent(&mut ctx));
        let mut s: CUstream = null_mut();
        ok(cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING));
        let ctx_bits = ctx as usize;
        // What cuMemAlloc returns on another thread (with its own mode).
        let other_thread_alloc = |mode: c_uint| {
            std::thread::spawn(move || {
                ok(cuCtxSetCurrent(ctx_bits as CUcontext));
                let mut m = mode;
                ok(cuThreadExchangeStreamCaptureMode(&mut m));
                let mut p: CUdeviceptr = 0;
                let r = cuMemAlloc_v2(&mut p, 64);
                if r == CUDA_SUCCESS {
                    ok(cuMemFree_v2(p));
                }
                r
            })
            .join()
            .unwrap()
        };
        // A global capture prohibits unsafe calls on every thread in
        // global mode, and is invalidated by them.
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_GLOBAL));
        assert_eq!(other_thread_alloc(CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
        assert_eq!(other_thread_alloc(CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
        assert_eq!(
            other_thread_alloc(CAPTURE_MODE_GLOBAL),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        );
        let mut status: std::ffi::c_int = 0;
        ok(cuStreamIsCapturing(s, &mut status));
        assert_eq!(status, CAPTURE_STATUS_INVALIDATED as i32);
        let mut g: CUgraph = null_mut();
        assert_eq!(
            cuStreamEndCapture(s, &mut g),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        );
        // A thread-local capture does not concern other threads.
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_THREAD_LOCAL));
        assert_eq!(other_thread_alloc(CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
        let mut p: CUdeviceptr = 0;
        assert_eq!(
            cuMemAlloc_v2(&mut p, 64),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
        );
        assert_eq!(
            cuStreamEndCapture(s, &mut g),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        );
        // A non-relaxed capture ends on the thread that began it.
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_THREAD_LOCAL));
        let s_bits = s as usize;
        let r = std::thread::spawn(move || {
            ok(cuCtxSetCurrent(ctx_bits as CUcontext));
            let mut g: CUgraph = null_mut();
            cuStreamEndCapture(s_bits as CUstream, &mut g)
        })
        .join()
        .unwrap();
        assert_eq!(r, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
        ok(cuStreamEndCapture(s, &mut g));
        ok(cuGraphDestroy(g));
        let mut bad: c_uint = 5;
        assert_eq!(
            cuThreadExchangeStreamCaptureMode(&mut bad),
            CUDA_ERROR_INVALID_VALUE
        );
        // cuCtxSynchronize is refused while a stream of the context captures.
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_RELAXED));
        assert_eq!(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        assert_eq!(
            cuStreamEndCapture(s, &mut g),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        );
        ok(cuCtxSynchronize());
    }
}

#[test]
fn array_and_peer_copies_are_captured() {
    let _serial = serial();
    setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let desc = CUDA_ARRAY_DESCRIPTOR {
            width: N,
            height: 0,
            format: 0x03, // CU_AD_FORMAT_UNSIGNED_INT32
            num_channels: 1,
        };
        let mut array: *mut c_void = null_mut();
        ok(cuArrayCreate_v2(
            (&mut array as *mut *mut c_void).cast(),
            &desc,
        ));
        let src: Vec<u32> = (0..N as u32).map(|i| i * 3).collect();
        let mut back = vec![0u32; N];
        let d = alloc_zeroed();
        let e = alloc_zeroed();
        let mut s: CUstream = null_mut();
        ok(cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING));
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_GLOBAL));
        ok(cuMemcpyHtoAAsync_v2(
            array.cast(),
            0,
            src.as_ptr().cast(),
            N * 4,
            s,
        ));
        ok(cuMemcpyAtoHAsync_v2(
            back.as_mut_ptr().cast(),
            array.cast(),
            4,
            (N - 1) * 4,
            s,
        ));
        ok(cuMemcpyHtoDAsync_v2(d, src.as_ptr().cast(), N * 4, s));
        ok(cuMemcpyPeerAsync(e, null_mut(), d, null_mut(), N * 4, s));
        let mut g: CUgraph = null_mut();
        ok(cuStreamEndCapture(s, &mut g));
        assert!(back.iter().all(|&v| v == 0), "nothing ran during capture");
        assert!(read(e).iter().all(|&v| v == 0));
        let mut exec: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithFlags(&mut exec, g, 0));
        ok(cuGraphLaunch(exec, s));
        assert_eq!(back[..N - 1], src[1..]);
        assert_eq!(read(e), src);
        ok(cuGraphExecDestroy(exec));
        ok(cuGraphDestroy(g));
        // A synchronous array copy runs on the legacy stream: allowed while
        // a non-blocking stream captures (a synchronous cudaMemcpy did so on
        // an H200), refused while a blocking stream captures, whose capture
        // it would join.
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_GLOBAL));
        ok(cuMemcpyHtoA_v2(array.cast(), 0, src.as_ptr().cast(), 4));
        ok(cuStreamEndCapture(s, &mut g));
        ok(cuGraphDestroy(g));
        let mut blocking: CUstream = null_mut();
        ok(cuStreamCreate(&mut blocking, 0));
        ok(cuStreamBeginCapture_v2(blocking, CAPTURE_MODE_GLOBAL));
        assert_eq!(
            cuMemcpyHtoA_v2(array.cast(), 0, src.as_ptr().cast(), 4),
            CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
        );
        assert_eq!(
            cuStreamEndCapture(blocking, &mut g),
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        );
        ok(cuStreamDestroy_v2(blocking));
    }
}

#[test]
fn user_objects_live_while_a_graph_or_executable_graph_holds_them() {
    use cuda::api::graph::user_object::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    let _serial = serial();
    setup();
    static DESTROYED: AtomicU32 = AtomicU32::new(0);
    static SEVEN: u32 = 7;
    static ONE: u32 = 1;
    unsafe extern "C" fn destroy(p: *mut c_void) {
        // SAFETY: one of the statics above.
        DESTROYED.fetch_add(unsafe { *(p as *const u32) }, Ordering::SeqCst);
    }
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut object: *mut c_void = null_mut();
        assert_eq!(
            cuUserObjectCreate(
                &mut object,
                &SEVEN as *const u32 as *mut c_void,
                Some(destroy),
                1,
                0
            ),
            CUDA_ERROR_INVALID_VALUE,
            "the no-destructor-sync flag is required"
        );
        ok(cuUserObjectCreate(
            &mut object,
            &SEVEN as *const u32 as *mut c_void,
            Some(destroy),
            1,
            1,
        ));
        let mut g: CUgraph = null_mut();
        ok(cuGraphCreate(&mut g, 0));
        empty(g, &[]);
        ok(cuGraphRetainUserObject(g, object, 2, 0));
        ok(cuUserObjectRelease(object, 1)); // the caller's reference
        let mut copy: CUgraph = null_mut();
        ok(cuGraphClone(&mut copy, g));
        let mut exec: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithFlags(&mut exec, g, 0));
        assert_eq!(
            cuGraphReleaseUserObject(g, object, 3),
            CUDA_ERROR_INVALID_VALUE
        );
        ok(cuGraphReleaseUserObject(g, object, 1));
        ok(cuGraphDestroy(g));
        ok(cuGraphDestroy(copy));
        assert_eq!(
            DESTROYED.load(Ordering::SeqCst),
            0,
            "the executable graph holds it"
        );
        ok(cuGraphLaunch(exec, null_mut()));
        ok(cuGraphExecDestroy(exec));
        assert_eq!(
            DESTROYED.load(Ordering::SeqCst),
            7,
            "destroyed with the last reference"
        );
        // A moved reference: the graph takes the caller's.
        ok(cuUserObjectCreate(
            &mut object,
            &ONE as *const u32 as *mut c_void,
            Some(destroy),
            1,
            1,
        ));
        ok(cuGraphCreate(&mut g, 0));
        ok(cuGraphRetainUserObject(g, object, 1, 1));
        ok(cuGraphDestroy(g));
        assert_eq!(DESTROYED.load(Ordering::SeqCst), 8);
        assert_eq!(
            cuUserObjectRetain(object, 1),
            CUDA_ERROR_INVALID_VALUE,
            "gone"
        );
    }
}

#[test]
fn a_graph_with_allocations_has_one_executable_graph_at_a_time() {
    let _serial = serial();
    setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let mut g: CUgraph = null_mut();
        ok(cuGraphCreate(&mut g, 0));
        let mut params: MemAllocNodeParams = std::mem::zeroed();
        params.pool_props.alloc_type = 1;
        params.pool_props.location_type = 1;
        params.bytesize = 4096;
        let mut alloc: CUgraphNode = null_mut();
        ok(cuGraphAddMemAllocNode(
            &mut alloc,
            g,
            null(),
            0,
            &mut params,
        ));
        assert_ne!(params.dptr, 0);
        let mut free: CUgraphNode = null_mut();
        ok(cuGraphAddMemFreeNode(&mut free, g, &alloc, 1, params.dptr));
        assert_eq!(
            cuGraphAddMemFreeNode(&mut free, g, &alloc, 1, params.dptr + 8),
            CUDA_ERROR_INVALID_VALUE,
            "not a graph allocation"
        );
        let (mut a, mut b) = (0u32, 0u32);
        ok(cuGraphNodeGetLocalId(alloc, &mut a));
        ok(cuGraphNodeGetLocalId(free, &mut b));
        assert_ne!(a, b);
        let mut first: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithFlags(&mut first, g, 0));
        let mut second: CUgraphExec = null_mut();
        assert_eq!(
            cuGraphInstantiateWithFlags(&mut second, g, 0),
            CUDA_ERROR_INVALID_VALUE
        );
        for _ in 0..3 {
            ok(cuGraphLaunch(first, null_mut()));
        }
        ok(cuGraphExecDestroy(first));
        ok(cuGraphInstantiateWithFlags(&mut second, g, 0));
        ok(cuGraphExecDestroy(second));
        ok(cuGraphDestroy(g));
    }
}

#[test]
fn the_c_program_runs_under_every_header_variant() {
    common::run_driver_api_program("graphs", &["graphs: all checks passed"]);
}

#[test]
fn destroying_the_origin_stream_ends_its_capture() {
    let _serial = serial();
    let f = setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let d = alloc_zeroed();
        let (mut s, mut side): (CUstream, CUstream) = (null_mut(), null_mut());
        ok(cuStreamCreate(&mut s, CU_STREAM_NON_BLOCKING));
        ok(cuStreamCreate(&mut side, CU_STREAM_NON_BLOCKING));
        let mut event: CUevent = null_mut();
        ok(cuEventCreate(&mut event, 0));
        ok(cuStreamBeginCapture_v2(s, CAPTURE_MODE_GLOBAL));
        ok(cuEventRecord(event, s));
        ok(cuStreamWaitEvent(side, event, 0));
        ok(cuStreamDestroy_v2(s));
        // The side stream is free again, and global mode no longer applies.
        let mut status: std::ffi::c_int = 9;
        ok(cuStreamIsCapturing(side, &mut status));
        assert_eq!(status, CAPTURE_STATUS_NONE as i32);
        let mut args = KernelArgs::new(d, 2);
        args.launch(f, side);
        assert!(read(d).iter().all(|&v| v == 2));
        ok(cuEventQuery(event));
    }
}

#[test]
fn executable_child_graphs_take_new_parameters_of_the_same_shape() {
    let _serial = serial();
    let f = setup();
    // SAFETY: every call below gets out-pointers to live locals, host buffers at least as long as the byte
    // counts given, NUL-terminated strings and handles this driver returned.
    unsafe {
        let d = alloc_zeroed();
        let make_child = |v: u32, extra: bool| {
            let mut child: CUgraph = null_mut();
            ok(cuGraphCreate(&mut child, 0));
            let mut args = KernelArgs::new(d, v);
            let mut k: CUgraphNode = null_mut();
            ok(cuGraphAddKernelNode_v2(
                &mut k,
                child,
                null(),
                0,
                &args.params(f),
            ));
            if extra {
                empty(child, &[k]);
            }
            child
        };
        let child = make_child(1, false);
        let mut g: CUgraph = null_mut();
        ok(cuGraphCreate(&mut g, 0));
        let mut node: CUgraphNode = null_mut();
        ok(cuGraphAddChildGraphNode(&mut node, g, null(), 0, child));
        let mut exec: CUgraphExec = null_mut();
        ok(cuGraphInstantiateWithFlags(&mut exec, g, 0));
        let same_shape = make_child(20, false);
        ok(cuGraphExecChildGraphNodeSetParams(exec, node, same_shape));
        ok(cuGraphLaunch(exec, null_mut()));
        assert!(read(d).iter().all(|&v| v == 20));
        let other_shape = make_child(300, true);
        assert_eq!(
            cuGraphExecChildGraphNodeSetParams(exec, node, other_shape),
            CUDA_ERROR_INVALID_VALUE
        );
        // The update of a whole graph whose child changed shape names the
        // child's node.
        let mut g2: CUgraph = null_mut();
        ok(cuGraphCreate(&mut g2, 0));
        let mut node2: CUgraphNode = null_mut();
        ok(cuGraphAddChildGraphNode(
            &mut node2,
            g2,
            null(),
            0,
            other_shape,
        ));
        let mut info: ExecUpdateResultInfo = std::mem::zeroed();
        assert_eq!(
            cuGraphExecUpdate_v2(exec, g2, &mut info),
            CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE
        );
        assert_eq!(info.result, UPDATE_ERROR_TOPOLOGY_CHANGED);
        ok(cuGraphLaunch(exec, null_mut()));
        assert!(read(d).iter().all(|&v| v == 40), "the last good parameters");
        for graph in [child, same_shape, other_shape, g, g2] {
            ok(cuGraphDestroy(graph));
        }
        ok(cuGraphExecDestroy(exec));
    }
}
