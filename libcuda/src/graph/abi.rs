//! The graph and stream-capture types of `cuda.h` (CUDA 12.9 / 13), with the
//! header's layouts (checked below against its sizes and offsets).

use crate::cu::*;
use std::ffi::c_void;

pub type CUgraph = *mut c_void;
pub type CUgraphNode = *mut c_void;
pub type CUgraphExec = *mut c_void;
/// `CUhostFn`.
pub type HostFn = Option<unsafe extern "C" fn(*mut c_void)>;

// CUgraphNodeType
pub const NODE_KERNEL: u32 = 0;
pub const NODE_MEMCPY: u32 = 1;
pub const NODE_MEMSET: u32 = 2;
pub const NODE_HOST: u32 = 3;
pub const NODE_GRAPH: u32 = 4;
pub const NODE_EMPTY: u32 = 5;
pub const NODE_WAIT_EVENT: u32 = 6;
pub const NODE_EVENT_RECORD: u32 = 7;
pub const NODE_MEM_ALLOC: u32 = 10;
pub const NODE_MEM_FREE: u32 = 11;

// CUstreamCaptureStatus
pub const CAPTURE_STATUS_NONE: u32 = 0;
pub const CAPTURE_STATUS_ACTIVE: u32 = 1;
pub const CAPTURE_STATUS_INVALIDATED: u32 = 2;

// CUstreamCaptureMode
pub const CAPTURE_MODE_GLOBAL: u32 = 0;
pub const CAPTURE_MODE_THREAD_LOCAL: u32 = 1;
pub const CAPTURE_MODE_RELAXED: u32 = 2;

// CUstreamUpdateCaptureDependencies_flags
pub const ADD_CAPTURE_DEPENDENCIES: u32 = 0;
pub const SET_CAPTURE_DEPENDENCIES: u32 = 1;

/// `CU_EVENT_RECORD_EXTERNAL` / `CU_EVENT_WAIT_EXTERNAL`: during capture,
/// make an event record (wait) node instead of a capture-internal event.
pub const EVENT_EXTERNAL: u32 = 1;

// CUgraphExecUpdateResult
pub const UPDATE_SUCCESS: u32 = 0;
pub const UPDATE_ERROR: u32 = 1;
pub const UPDATE_ERROR_TOPOLOGY_CHANGED: u32 = 2;
pub const UPDATE_ERROR_NODE_TYPE_CHANGED: u32 = 3;
pub const UPDATE_ERROR_PARAMETERS_CHANGED: u32 = 5;
pub const UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE: u32 = 7;

// CUgraphInstantiateResult
pub const INSTANTIATE_SUCCESS: u32 = 0;
pub const INSTANTIATE_ERROR: u32 = 1;
pub const INSTANTIATE_INVALID_STRUCTURE: u32 = 2;

// CUgraphInstantiate_flags
pub const INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH: u64 = 1;
pub const INSTANTIATE_FLAG_UPLOAD: u64 = 2;
pub const INSTANTIATE_FLAG_DEVICE_LAUNCH: u64 = 4;
pub const INSTANTIATE_FLAG_USE_NODE_PRIORITY: u64 = 8;

// Error codes of capture and graphs.
pub const CUDA_ERROR_ILLEGAL_STATE: CUresult = 401;
pub const CUDA_ERROR_LOSSY_QUERY: CUresult = 402;
pub const CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: CUresult = 900;
pub const CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: CUresult = 901;
pub const CUDA_ERROR_STREAM_CAPTURE_MERGE: CUresult = 902;
pub const CUDA_ERROR_STREAM_CAPTURE_UNMATCHED: CUresult = 903;
pub const CUDA_ERROR_STREAM_CAPTURE_UNJOINED: CUresult = 904;
pub const CUDA_ERROR_STREAM_CAPTURE_ISOLATION: CUresult = 905;
pub const CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: CUresult = 906;
pub const CUDA_ERROR_CAPTURED_EVENT: CUresult = 907;
pub const CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: CUresult = 908;
pub const CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE: CUresult = 910;

/// `CUDA_KERNEL_NODE_PARAMS_v1` (CUDA 10.0 ABI).
#[repr(C)]
pub struct KernelNodeParamsV1 {
    pub func: CUfunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
}

/// `CUDA_KERNEL_NODE_PARAMS_v2` (and `_v3`, which has the same layout): a
/// `CUkernel` is used when `func` is NULL.
#[repr(C)]
pub struct KernelNodeParamsV2 {
    pub func: CUfunction,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_mem_bytes: u32,
    pub kernel_params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    pub kern: CUkernel,
    pub ctx: CUcontext,
}

/// `CUDA_MEMSET_NODE_PARAMS` (v1; v2 appends a context).
#[repr(C)]
pub struct MemsetNodeParams {
    pub dst: CUdeviceptr,
    pub pitch: usize,
    pub value: u32,
    pub element_size: u32,
    pub width: usize,
    pub height: usize,
}

/// `CUDA_MEMSET_NODE_PARAMS_v2`.
#[repr(C)]
pub struct MemsetNodeParamsV2 {
    pub base: MemsetNodeParams,
    pub ctx: CUcontext,
}

/// `CUDA_HOST_NODE_PARAMS` (v1).
#[repr(C)]
pub struct HostNodeParams {
    pub f: HostFn,
    pub user_data: *mut c_void,
}

/// `CUDA_HOST_NODE_PARAMS_v2`.
#[repr(C)]
pub struct HostNodeParamsV2 {
    pub f: HostFn,
    pub user_data: *mut c_void,
    pub sync_mode: u32,
    pub ctx: CUcontext,
}

/// `CUDA_MEMCPY_NODE_PARAMS`.
#[repr(C)]
pub struct MemcpyNodeParams {
    pub flags: i32,
    pub reserved: i32,
    pub copy_ctx: CUcontext,
    pub copy_params: CUDA_MEMCPY3D,
}

/// `CUDA_CHILD_GRAPH_NODE_PARAMS`.
#[repr(C)]
pub struct ChildGraphNodeParams {
    pub graph: CUgraph,
    /// `CUgraphChildGraphNodeOwnership`: 0 clone, 1 move (13.x).
    pub ownership: u32,
}

/// `CUDA_EVENT_RECORD_NODE_PARAMS` / `CUDA_EVENT_WAIT_NODE_PARAMS`.
#[repr(C)]
pub struct EventNodeParams {
    pub event: CUevent,
    pub ctx: CUcontext,
}

/// `CUmemPoolProps` (the pool an allocation node's memory comes from).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct MemPoolProps {
    pub alloc_type: u32,
    pub handle_types: u32,
    pub location_type: u32,
    pub location_id: i32,
    pub win32_security_attributes: *mut c_void,
    pub max_size: usize,
    pub usage: u16,
    pub reserved: [u8; 54],
}

/// `CUDA_MEM_ALLOC_NODE_PARAMS` (v1 and v2 share this layout).
#[repr(C)]
pub struct MemAllocNodeParams {
    pub pool_props: MemPoolProps,
    pub access_descs: *const c_void,
    pub access_desc_count: usize,
    pub bytesize: usize,
    pub dptr: CUdeviceptr,
}

/// `CUgraphNodeParams` (`cuGraphAddNode`): a type, then a 232-byte union.
#[repr(C)]
pub struct GraphNodeParams {
    pub type_: u32,
    pub reserved0: [i32; 3],
    pub params: [u64; 29],
    pub reserved2: i64,
}

/// `CUgraphEdgeData`: ports and type, all zero for an ordinary edge.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeData {
    pub bytes: [u8; 8],
}

/// `CUDA_GRAPH_INSTANTIATE_PARAMS`.
#[repr(C)]
pub struct GraphInstantiateParams {
    pub flags: u64,
    pub upload_stream: CUstream,
    pub err_node_out: CUgraphNode,
    pub result_out: u32,
}

/// `CUgraphExecUpdateResultInfo`.
#[repr(C)]
pub struct ExecUpdateResultInfo {
    pub result: u32,
    pub error_node: CUgraphNode,
    pub error_from_node: CUgraphNode,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_cuda_h() {
        assert_eq!(size_of::<KernelNodeParamsV1>(), 56);
        assert_eq!(offset_of!(KernelNodeParamsV1, kernel_params), 40);
        assert_eq!(size_of::<KernelNodeParamsV2>(), 72);
        assert_eq!(offset_of!(KernelNodeParamsV2, kern), 56);
        assert_eq!(size_of::<MemsetNodeParams>(), 40);
        assert_eq!(size_of::<MemsetNodeParamsV2>(), 48);
        assert_eq!(size_of::<HostNodeParamsV2>(), 32);
        assert_eq!(size_of::<MemcpyNodeParams>(), 216);
        assert_eq!(size_of::<GraphNodeParams>(), 256);
        assert_eq!(offset_of!(GraphNodeParams, params), 16);
        assert_eq!(size_of::<EdgeData>(), 8);
        assert_eq!(size_of::<MemPoolProps>(), 88);
        assert_eq!(size_of::<MemAllocNodeParams>(), 120);
        assert_eq!(size_of::<GraphInstantiateParams>(), 32);
        assert_eq!(size_of::<ExecUpdateResultInfo>(), 24);
    }
}
