//! The stream-capture entry points: `cuStreamBeginCapture*`,
//! `cuStreamEndCapture`, `cuStreamGetCaptureInfo*`,
//! `cuStreamUpdateCaptureDependencies*`, `cuThreadExchangeStreamCaptureMode`.
//! What capture does, and the hooks every stream-ordered call asks, are
//! `graph::capture`.

use crate::cu::*;
use crate::driver::with_driver;
use crate::entry::{ProcEntry, aliases, exports, non_null, procs, write_out};
use crate::graph::abi::*;
use crate::graph::capture::*;
use crate::graph::{check_edge_data, read_nodes};
use std::ffi::c_uint;

exports! {
    /// The CUDA 10.0 form: capture in `CU_STREAM_CAPTURE_MODE_GLOBAL`.
    fn cuStreamBeginCapture(stream: CUstream) {
        begin(stream, CAPTURE_MODE_GLOBAL, None)
    }

    fn cuStreamBeginCapture_v2(stream: CUstream, mode: c_uint) {
        begin(stream, mode, None)
    }

    /// Capture into an existing graph, after `deps`; the graph stays the
    /// caller's (an invalidated capture does not destroy it).
    fn cuStreamBeginCaptureToGraph(
        stream: CUstream,
        graph: CUgraph,
        deps: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
        mode: c_uint,
    ) {
        // SAFETY: `edge_data` is NULL or holds `n` CUgraphEdgeData entries, as cuda.h specifies for
        // `cuStreamBeginCaptureToGraph`.
        unsafe { check_edge_data(edge_data, n) }?;
        // SAFETY: `deps` holds `n` node handles (or is unused when `n` is 0), as cuda.h specifies for this
        // call.
        let deps = unsafe { read_nodes(deps, n) }?;
        begin(stream, mode, Some((graph as usize, deps)))
    }

    fn cuStreamEndCapture(stream: CUstream, ph_graph: *mut CUgraph) {
        non_null(ph_graph)?;
        match end(stream) {
            // SAFETY: `ph_graph` is non-null (checked above) and, as cuda.h specifies for
            // `cuStreamEndCapture`, valid for writing a `CUgraph`.
            Ok(g) => unsafe { write_out(ph_graph, g as CUgraph) },
            Err(code) => {
                if matches!(code, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED | CUDA_ERROR_STREAM_CAPTURE_UNJOINED) {
                    // SAFETY: `cuStreamEndCapture`'s caller passes `ph_graph` as cuda.h specifies: NULL
                    // (refused by `write_out`) or valid for writing a `CUgraph`.
                    unsafe { write_out(ph_graph, std::ptr::null_mut()) }?;
                }
                Err(code)
            }
        }
    }

    fn cuStreamGetCaptureInfo(stream: CUstream, status: *mut c_uint, id: *mut u64) {
        // SAFETY: `status`, `id` and the other out-parameters are NULL or writable, as cuda.h
        // specifies for `cuStreamGetCaptureInfo`, which is `capture_info`'s contract.
        unsafe {
            capture_info(stream, status, id, std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut())
        }
    }

    fn cuStreamGetCaptureInfo_v2(
        stream: CUstream,
        status: *mut c_uint,
        id: *mut u64,
        graph: *mut CUgraph,
        deps: *mut *const CUgraphNode,
        count: *mut usize,
    ) {
        // SAFETY: `status`, `id` and the other out-parameters are NULL or writable, as cuda.h
        // specifies for `cuStreamGetCaptureInfo_v2`, which is `capture_info`'s contract.
        unsafe { capture_info(stream, status, id, graph, deps, std::ptr::null_mut(), count) }
    }

    fn cuStreamGetCaptureInfo_v3(
        stream: CUstream,
        status: *mut c_uint,
        id: *mut u64,
        graph: *mut CUgraph,
        deps: *mut *const CUgraphNode,
        edges: *mut *const EdgeData,
        count: *mut usize,
    ) {
        // SAFETY: `status`, `id` and the other out-parameters are NULL or writable, as cuda.h
        // specifies for `cuStreamGetCaptureInfo_v3`, which is `capture_info`'s contract.
        unsafe { capture_info(stream, status, id, graph, deps, edges, count) }
    }

    fn cuStreamUpdateCaptureDependencies(stream: CUstream, deps: *const CUgraphNode, n: usize, flags: c_uint) {
        // SAFETY: `deps` holds `n` node handles, as cuda.h specifies for
        // `cuStreamUpdateCaptureDependencies`, which is `update_dependencies`' contract.
        unsafe { update_dependencies(stream, deps, n, flags) }
    }

    fn cuStreamUpdateCaptureDependencies_v2(
        stream: CUstream,
        deps: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
        flags: c_uint,
    ) {
        // SAFETY: `edge_data` is NULL or holds `n` CUgraphEdgeData entries, as cuda.h specifies for
        // `cuStreamUpdateCaptureDependencies_v2`.
        unsafe { check_edge_data(edge_data, n) }?;
        // SAFETY: `deps` holds `n` node handles, as cuda.h specifies, which is `update_dependencies`'
        // contract.
        unsafe { update_dependencies(stream, deps, n, flags) }
    }

    fn cuThreadExchangeStreamCaptureMode(mode: *mut c_uint) {
        with_driver(|_| Ok(()))?;
        non_null(mode)?;
        // SAFETY: `mode` is non-null (checked above) and points to the caller's `c_uint`, as cuda.h
        // specifies for `cuThreadExchangeStreamCaptureMode`.
        let new = unsafe { mode.read_unaligned() };
        if new > CAPTURE_MODE_RELAXED {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let old = exchange_thread_mode(new);
        // SAFETY: `cuThreadExchangeStreamCaptureMode`'s caller passes `mode` as cuda.h specifies:
        // NULL (refused by `write_out`) or valid for writing a `c_uint`.
        unsafe { write_out(mode, old) }
    }
}

aliases! {
    cuStreamBeginCapture_ptsz = cuStreamBeginCapture(stream: CUstream);
    cuStreamBeginCapture_v2_ptsz = cuStreamBeginCapture_v2(stream: CUstream, mode: c_uint);
    cuStreamBeginCaptureToGraph_ptsz = cuStreamBeginCaptureToGraph(
        stream: CUstream,
        graph: CUgraph,
        deps: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
        mode: c_uint,
    );
    cuStreamEndCapture_ptsz = cuStreamEndCapture(stream: CUstream, ph_graph: *mut CUgraph);
    cuStreamGetCaptureInfo_ptsz = cuStreamGetCaptureInfo(stream: CUstream, status: *mut c_uint, id: *mut u64);
    cuStreamGetCaptureInfo_v2_ptsz = cuStreamGetCaptureInfo_v2(
        stream: CUstream,
        status: *mut c_uint,
        id: *mut u64,
        graph: *mut CUgraph,
        deps: *mut *const CUgraphNode,
        count: *mut usize,
    );
    cuStreamGetCaptureInfo_v3_ptsz = cuStreamGetCaptureInfo_v3(
        stream: CUstream,
        status: *mut c_uint,
        id: *mut u64,
        graph: *mut CUgraph,
        deps: *mut *const CUgraphNode,
        edges: *mut *const EdgeData,
        count: *mut usize,
    );
    cuStreamUpdateCaptureDependencies_ptsz = cuStreamUpdateCaptureDependencies(stream: CUstream, deps: *const CUgraphNode, n: usize, flags: c_uint);
    cuStreamUpdateCaptureDependencies_v2_ptsz = cuStreamUpdateCaptureDependencies_v2(
        stream: CUstream,
        deps: *const CUgraphNode,
        edge_data: *const EdgeData,
        n: usize,
        flags: c_uint,
    );
}

pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuStreamBeginCapture":
            10000 => cuStreamBeginCapture,
            10010 => cuStreamBeginCapture_v2,
            @ptds 10000 => cuStreamBeginCapture_ptsz,
            @ptds 10010 => cuStreamBeginCapture_v2_ptsz;
        "cuStreamBeginCaptureToGraph":
            12030 => cuStreamBeginCaptureToGraph,
            @ptds 12030 => cuStreamBeginCaptureToGraph_ptsz;
        "cuStreamEndCapture": 10000 => cuStreamEndCapture, @ptds 10000 => cuStreamEndCapture_ptsz;
        "cuStreamGetCaptureInfo":
            10010 => cuStreamGetCaptureInfo,
            11030 => cuStreamGetCaptureInfo_v2,
            12030 => cuStreamGetCaptureInfo_v3,
            @ptds 10010 => cuStreamGetCaptureInfo_ptsz,
            @ptds 11030 => cuStreamGetCaptureInfo_v2_ptsz,
            @ptds 12030 => cuStreamGetCaptureInfo_v3_ptsz;
        "cuStreamUpdateCaptureDependencies":
            11030 => cuStreamUpdateCaptureDependencies,
            12030 => cuStreamUpdateCaptureDependencies_v2,
            @ptds 11030 => cuStreamUpdateCaptureDependencies_ptsz,
            @ptds 12030 => cuStreamUpdateCaptureDependencies_v2_ptsz;
        "cuThreadExchangeStreamCaptureMode": 10010 => cuThreadExchangeStreamCaptureMode;
    }
}
