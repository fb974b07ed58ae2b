//! The exported CUDA graph entry points: instantiation, update and
//! destruction keep `graphs`' record of each executable graph; a graph
//! launch goes through the launch path (`launch::on_graph_launch`); stream
//! capture begins and ends are tracked (`stream_capture`).
//!
//! Safety: each exported function has exactly the contract of the function
//! of the same name in `cuda.h`.
#![allow(clippy::missing_safety_doc)]

use crate::ffi::*;
use crate::graphs::{self, CUgraph, CUgraphExec, CUgraphNode, NODE_KERNEL};
use crate::guard::guarded;
use crate::stream_capture;
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

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
        ptr = crate::driver::symbol(symbol);
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
        guarded(
            "cuGraphInstantiate",
            || (),
            || graphs::snapshot(exec, graph),
        );
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
            crate::launch::on_graph_launch(exec, runs_on, || unsafe { real(exec, stream) })
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
        guarded("cuGraphExecUpdate", || (), || graphs::snapshot(exec, graph));
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
        guarded(
            "cuGraphExecUpdate_v2",
            || (),
            || graphs::snapshot(exec, graph),
        );
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
        guarded(
            "cuGraphExecKernelNodeSetParams",
            || (),
            || graphs::set_node_params(exec, node, params),
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
        guarded(
            "cuGraphExecKernelNodeSetParams",
            || (),
            || graphs::set_node_params(exec, node, &v2),
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
        guarded(
            "cuGraphExecNodeSetParams",
            || (),
            || graphs::set_node_params(exec, node, kernel),
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
        graphs::forget(exec);
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
                stream_capture::began(stream);
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
                stream_capture::began(stream);
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
                stream_capture::began(stream);
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
            stream_capture::ended(stream);
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
}
