//! The slice of `cuda.h` (and `hip_runtime_api.h`) the shim touches: handle
//! types, the signatures it wraps or calls, and result codes.
#![allow(non_camel_case_types, clippy::upper_case_acronyms)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type CUresult = u32;
pub type CUdeviceptr = u64;
pub type CUfunction = *mut c_void;
pub type CUmodule = *mut c_void;
pub type CUlibrary = *mut c_void;
pub type CUkernel = *mut c_void;
pub type CUstream = *mut c_void;
pub type CUjit_option = c_uint;
pub type CUlibraryOption = c_uint;

pub const CUDA_SUCCESS: CUresult = 0;
pub const CUDA_ERROR_NOT_INITIALIZED: CUresult = 3;
pub const CUDA_ERROR_NOT_FOUND: CUresult = 500;

#[repr(C)]
pub struct CUlaunchConfig {
    pub grid_dim_x: c_uint,
    pub grid_dim_y: c_uint,
    pub grid_dim_z: c_uint,
    pub block_dim_x: c_uint,
    pub block_dim_y: c_uint,
    pub block_dim_z: c_uint,
    pub shared_mem_bytes: c_uint,
    pub h_stream: CUstream,
    pub attrs: *mut c_void,
    pub num_attrs: c_uint,
}

pub type FnLaunchKernel = unsafe extern "C" fn(
    CUfunction,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    CUstream,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CUresult;
pub type FnLaunchKernelEx = unsafe extern "C" fn(
    *const CUlaunchConfig,
    CUfunction,
    *mut *mut c_void,
    *mut *mut c_void,
) -> CUresult;
pub type FnModuleLoad = unsafe extern "C" fn(*mut CUmodule, *const c_char) -> CUresult;
pub type FnModuleLoadData = unsafe extern "C" fn(*mut CUmodule, *const c_void) -> CUresult;
pub type FnModuleLoadDataEx = unsafe extern "C" fn(
    *mut CUmodule,
    *const c_void,
    c_uint,
    *mut CUjit_option,
    *mut *mut c_void,
) -> CUresult;
pub type FnModuleGetFunction =
    unsafe extern "C" fn(*mut CUfunction, CUmodule, *const c_char) -> CUresult;
pub type FnModuleUnload = unsafe extern "C" fn(CUmodule) -> CUresult;
pub type FnLibraryLoadData = unsafe extern "C" fn(
    *mut CUlibrary,
    *const c_void,
    *mut CUjit_option,
    *mut *mut c_void,
    c_uint,
    *mut CUlibraryOption,
    *mut *mut c_void,
    c_uint,
) -> CUresult;
pub type FnLibraryGetKernel =
    unsafe extern "C" fn(*mut CUkernel, CUlibrary, *const c_char) -> CUresult;
pub type FnKernelGetFunction = unsafe extern "C" fn(*mut CUfunction, CUkernel) -> CUresult;
pub type FnGetProcAddress =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> CUresult;
pub type FnGetProcAddressV2 =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> CUresult;

// Called by the capture path, never wrapped.
pub type FnModuleGetGlobal =
    unsafe extern "C" fn(*mut CUdeviceptr, *mut usize, CUmodule, *const c_char) -> CUresult;
pub type FnLibraryGetGlobal =
    unsafe extern "C" fn(*mut CUdeviceptr, *mut usize, CUlibrary, *const c_char) -> CUresult;
pub type FnMemAlloc = unsafe extern "C" fn(*mut CUdeviceptr, usize) -> CUresult;
pub type FnMemFree = unsafe extern "C" fn(CUdeviceptr) -> CUresult;
pub type FnMemsetD8 = unsafe extern "C" fn(CUdeviceptr, u8, usize) -> CUresult;
pub type FnMemcpyHtoD = unsafe extern "C" fn(CUdeviceptr, *const c_void, usize) -> CUresult;
pub type FnMemcpyDtoH = unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize) -> CUresult;
pub type FnMemcpy2D = unsafe extern "C" fn(*const CUDA_MEMCPY2D) -> CUresult;

/// `CUmemorytype` values used by the capture's strided copies.
pub const CU_MEMORYTYPE_HOST: u32 = 1;
pub const CU_MEMORYTYPE_DEVICE: u32 = 2;

/// `CUDA_MEMCPY2D` as `cuda.h` lays it out for `cuMemcpy2D_v2` (`size_t` fields).
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
const _: () = assert!(std::mem::size_of::<CUDA_MEMCPY2D>() == 128);
const _: () = assert!(std::mem::offset_of!(CUDA_MEMCPY2D, dst_x_in_bytes) == 56);
pub type FnStreamSynchronize = unsafe extern "C" fn(CUstream) -> CUresult;
pub type FnFuncGetParamInfo =
    unsafe extern "C" fn(CUfunction, usize, *mut usize, *mut usize) -> CUresult;
pub type FnFuncGetName = unsafe extern "C" fn(*mut *const c_char, CUfunction) -> CUresult;
pub type FnDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CUresult;
pub type FnCtxGetDevice = unsafe extern "C" fn(*mut c_int) -> CUresult;

// HIP (libamdhip64): hipError_t is a C enum; hipSuccess = 0.
pub type hipError_t = c_int;
pub type hipModule_t = *mut c_void;
pub type hipFunction_t = *mut c_void;
pub type hipStream_t = *mut c_void;
pub const HIP_SUCCESS: hipError_t = 0;
/// `hipErrorNotInitialized`.
pub const HIP_ERROR_NOT_INITIALIZED: hipError_t = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct dim3 {
    pub x: u32,
    pub y: u32,
    pub z: u32,
}

pub type FnHipModuleLaunchKernel = unsafe extern "C" fn(
    hipFunction_t,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    hipStream_t,
    *mut *mut c_void,
    *mut *mut c_void,
) -> hipError_t;
pub type FnHipLaunchKernel = unsafe extern "C" fn(
    *const c_void,
    dim3,
    dim3,
    *mut *mut c_void,
    usize,
    hipStream_t,
) -> hipError_t;
pub type FnHipModuleLoadData = unsafe extern "C" fn(*mut hipModule_t, *const c_void) -> hipError_t;
pub type FnHipModuleGetFunction =
    unsafe extern "C" fn(*mut hipFunction_t, hipModule_t, *const c_char) -> hipError_t;
