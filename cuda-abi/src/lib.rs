//! The C types and constants of `cuda.h` (CUDA 12.9 / 13.0) that prlx's
//! driver (`libcuda/`, the emulator as `libcuda.so.1`) exports and its
//! capture shim (`preload/`) calls, with the header's names and values —
//! one definition of each layout, checked against the header's offsets.
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    clippy::upper_case_acronyms
)]

use std::ffi::c_void;

/// `CUresult`: a C enum, passed as a 32-bit unsigned value.
pub type CUresult = u32;
pub type CUdevice = i32;
pub type CUdeviceptr = u64;
/// The 32-bit device pointer of the legacy (pre-3.2, `_v1`) entry points.
pub type CUdeviceptr_v1 = u32;
pub type CUcontext = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUfunction = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUevent = *mut c_void;
pub type CUlinkState = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUkernel = *mut c_void;
/// `CUjit_option` and `CUlibraryOption`: C enums.
pub type CUjit_option = u32;
pub type CUlibraryOption = u32;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_INVALID_VALUE: CUresult = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_NO_DEVICE: CUresult = 100;
pub const CUDA_ERROR_INVALID_DEVICE: CUresult = 101;
pub const CUDA_ERROR_INVALID_IMAGE: CUresult = 200;
pub const CUDA_ERROR_INVALID_CONTEXT: CUresult = 201;
pub const CUDA_ERROR_NO_BINARY_FOR_GPU: CUresult = 209;
pub const CUDA_ERROR_INVALID_PTX: CUresult = 218;
pub const CUDA_ERROR_INVALID_SOURCE: CUresult = 300;
pub const CUDA_ERROR_FILE_NOT_FOUND: CUresult = 301;
pub const CUDA_ERROR_INVALID_HANDLE: CUresult = 400;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;
pub const CUDA_ERROR_NOT_READY: CUresult = 600;
pub const CUDA_ERROR_ILLEGAL_ADDRESS: CUresult = 700;
pub const CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: CUresult = 701;
pub const CUDA_ERROR_LAUNCH_TIMEOUT: CUresult = 702;
pub const CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE: CUresult = 708;
pub const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: CUresult = 712;
pub const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED: CUresult = 713;
pub const CUDA_ERROR_CONTEXT_IS_DESTROYED: CUresult = 709;
pub const CUDA_ERROR_ILLEGAL_INSTRUCTION: CUresult = 715;
pub const CUDA_ERROR_MISALIGNED_ADDRESS: CUresult = 716;
pub const CUDA_ERROR_LAUNCH_FAILED: CUresult = 719;
pub const CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: CUresult = 720;
pub const CUDA_ERROR_NOT_SUPPORTED: CUresult = 801;
/// A launch's cluster shape does not fit the grid, the kernel or the device.
pub const CUDA_ERROR_INVALID_CLUSTER_SIZE: CUresult = 912;
pub const CUDA_ERROR_UNKNOWN: CUresult = 999;

// CUjit_option
pub const CU_JIT_WALL_TIME: u32 = 2;
pub const CU_JIT_INFO_LOG_BUFFER: u32 = 3;
pub const CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES: u32 = 4;
pub const CU_JIT_ERROR_LOG_BUFFER: u32 = 5;
pub const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: u32 = 6;
/// One past the last `CUjit_option` the CUDA 12.9 header defines.
pub const CU_JIT_NUM_OPTIONS: u32 = 34;

// CUjitInputType
pub const CU_JIT_INPUT_CUBIN: u32 = 0;
pub const CU_JIT_INPUT_PTX: u32 = 1;
pub const CU_JIT_INPUT_FATBINARY: u32 = 2;
pub const CU_JIT_INPUT_OBJECT: u32 = 3;
pub const CU_JIT_INPUT_LIBRARY: u32 = 4;

// CUfunction_attribute
pub const CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: i32 = 0;
pub const CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: i32 = 1;
pub const CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: i32 = 2;
pub const CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: i32 = 3;
pub const CU_FUNC_ATTRIBUTE_NUM_REGS: i32 = 4;
pub const CU_FUNC_ATTRIBUTE_PTX_VERSION: i32 = 5;
pub const CU_FUNC_ATTRIBUTE_BINARY_VERSION: i32 = 6;
pub const CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: i32 = 7;
pub const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
pub const CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: i32 = 9;
/// The cluster attributes (sm_90 and later): whether the kernel must be
/// launched with clusters (`.explicitcluster`), its compile-time cluster
/// shape (`.reqnctapercluster`; 0 without), whether clusters of more than 8
/// CTAs are allowed, and the cluster scheduling policy.
pub const CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: i32 = 10;
pub const CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: i32 = 11;
pub const CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: i32 = 12;
pub const CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: i32 = 13;
pub const CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: i32 = 14;
/// Whether the function's graph nodes can be updated from the device (CUDA 13).
pub const CU_FUNC_ATTRIBUTE_DEVICE_NODE_UPDATE_SUPPORTED: i32 = 16;
/// The function's `CUsharedMemoryMode` (CUDA 13); cudart 13's
/// `cudaFuncGetAttributes` asks for it, so refusing it fails the call.
pub const CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE: i32 = 17;
/// The largest `CUshared_memory_mode` value (prefer oversized shared memory).
pub const CU_SHARED_MEMORY_MODE_LAST: i32 = 4;
/// The last `CUfunction_attribute` (the shared memory mode).
pub const CU_FUNC_ATTRIBUTE_LAST: i32 = CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE;

// CUlaunchAttributeID
pub const CU_LAUNCH_ATTRIBUTE_IGNORE: u32 = 0;
pub const CU_LAUNCH_ATTRIBUTE_COOPERATIVE: u32 = 2;
pub const CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: u32 = 4;
pub const CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION: u32 = 11;
/// The last `CUlaunchAttributeID` the CUDA 12.9 header defines.
pub const CU_LAUNCH_ATTRIBUTE_LAST: u32 = 14;

// cuLaunchKernel `extra` markers.
pub const CU_LAUNCH_PARAM_END: usize = 0;
pub const CU_LAUNCH_PARAM_BUFFER_POINTER: usize = 1;
pub const CU_LAUNCH_PARAM_BUFFER_SIZE: usize = 2;

// Stream handles with special meaning.
pub const CU_STREAM_LEGACY: usize = 1;
pub const CU_STREAM_PER_THREAD: usize = 2;
pub const CU_STREAM_NON_BLOCKING: u32 = 1;

// CUevent_flags
pub const CU_EVENT_DISABLE_TIMING: u32 = 2;
pub const CU_EVENT_FLAGS_MASK: u32 = 0x7;

pub const CU_CTX_FLAGS_MASK: u32 = 0xFF;

// CUdriverProcAddress_flags and CUdriverProcAddressQueryResult
pub const CU_GET_PROC_ADDRESS_LEGACY_STREAM: u64 = 1;
pub const CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM: u64 = 2;
pub const CU_GET_PROC_ADDRESS_SUCCESS: i32 = 0;
pub const CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND: i32 = 1;
pub const CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT: i32 = 2;

// CUlimit
pub const CU_LIMIT_STACK_SIZE: u32 = 0;
pub const CU_LIMIT_PRINTF_FIFO_SIZE: u32 = 1;
pub const CU_LIMIT_MALLOC_HEAP_SIZE: u32 = 2;
pub const CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED: u32 = 9;

// CUmemorytype
pub const CU_MEMORYTYPE_HOST: u32 = 1;
pub const CU_MEMORYTYPE_DEVICE: u32 = 2;
pub const CU_MEMORYTYPE_ARRAY: u32 = 3;
pub const CU_MEMORYTYPE_UNIFIED: u32 = 4;

/// `CUDA_MEMCPY2D` (the `_v2` layout, with `size_t` fields).
#[repr(C)]
pub struct CUDA_MEMCPY2D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub src_pitch: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub dst_pitch: usize,
    pub width_in_bytes: usize,
    pub height: usize,
}

/// `CUDA_MEMCPY3D` (the `_v2` layout, with `size_t` fields).
#[repr(C)]
pub struct CUDA_MEMCPY3D {
    pub src_x_in_bytes: usize,
    pub src_y: usize,
    pub src_z: usize,
    pub src_lod: usize,
    pub src_memory_type: u32,
    pub src_host: *const c_void,
    pub src_device: CUdeviceptr,
    pub src_array: *mut c_void,
    pub reserved0: *mut c_void,
    pub src_pitch: usize,
    pub src_height: usize,
    pub dst_x_in_bytes: usize,
    pub dst_y: usize,
    pub dst_z: usize,
    pub dst_lod: usize,
    pub dst_memory_type: u32,
    pub dst_host: *mut c_void,
    pub dst_device: CUdeviceptr,
    pub dst_array: *mut c_void,
    pub reserved1: *mut c_void,
    pub dst_pitch: usize,
    pub dst_height: usize,
    pub width_in_bytes: usize,
    pub height: usize,
    pub depth: usize,
}

/// `CUuuid`.
#[repr(C)]
pub struct CUuuid {
    pub bytes: [u8; 16],
}

/// `CUdevprop` (`cuDeviceGetProperties`).
#[repr(C)]
pub struct CUdevprop {
    pub max_threads_per_block: i32,
    pub max_threads_dim: [i32; 3],
    pub max_grid_size: [i32; 3],
    pub shared_mem_per_block: i32,
    pub total_constant_memory: i32,
    pub simd_width: i32,
    pub mem_pitch: i32,
    pub regs_per_block: i32,
    pub clock_rate: i32,
    pub texture_align: i32,
}

/// `CUlaunchAttribute`: a 4-byte id, padding to 8, then a 64-byte value union.
#[repr(C)]
pub struct CUlaunchAttribute {
    pub id: u32,
    pub pad: [u8; 4],
    pub value: [u8; 64],
}

/// `CUlaunchConfig` (`cuLaunchKernelEx`).
#[repr(C)]
pub struct CUlaunchConfig {
    pub grid_dim: [u32; 3],
    pub block_dim: [u32; 3],
    pub shared_mem_bytes: u32,
    pub h_stream: CUstream,
    pub attrs: *mut CUlaunchAttribute,
    pub num_attrs: u32,
}

/// `CUexecAffinityParam` (`cuCtxCreate_v3`): a type tag and a 4-byte union.
#[repr(C)]
pub struct CUexecAffinityParam {
    pub kind: u32,
    pub param: u32,
}

/// `CUctxCreateParams` (`cuCtxCreate_v4`).
#[repr(C)]
pub struct CUctxCreateParams {
    pub exec_affinity_params: *mut CUexecAffinityParam,
    pub num_exec_affinity_params: i32,
    pub cig_params: *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_cuda_h() {
        assert_eq!(std::mem::size_of::<CUlaunchAttribute>(), 72);
        assert_eq!(std::mem::offset_of!(CUlaunchConfig, h_stream), 32);
        assert_eq!(std::mem::offset_of!(CUlaunchConfig, attrs), 40);
        assert_eq!(std::mem::offset_of!(CUlaunchConfig, num_attrs), 48);
        assert_eq!(std::mem::size_of::<CUdevprop>(), 14 * 4);
        assert_eq!(std::mem::size_of::<CUctxCreateParams>(), 24);
        assert_eq!(std::mem::size_of::<CUDA_MEMCPY2D>(), 128);
        assert_eq!(std::mem::offset_of!(CUDA_MEMCPY2D, dst_x_in_bytes), 56);
        assert_eq!(std::mem::size_of::<CUDA_MEMCPY3D>(), 200);
        assert_eq!(std::mem::offset_of!(CUDA_MEMCPY3D, dst_x_in_bytes), 88);
        assert_eq!(std::mem::offset_of!(CUDA_MEMCPY3D, width_in_bytes), 176);
    }
}
