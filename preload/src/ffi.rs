//! The slice of `cuda.h` (and `hip_runtime_api.h`) the shim touches: the
//! signatures it wraps or calls, over the types `prlx-cuda-abi` shares with
//! the emulator's libcuda; HIP's own.
#![allow(non_camel_case_types, clippy::upper_case_acronyms)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub use prlx_cuda_abi::{
    CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST, CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_INITIALIZED,
    CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_UNKNOWN, CUDA_MEMCPY2D, CUDA_SUCCESS, CUdeviceptr,
    CUfunction, CUjit_option, CUkernel, CUlaunchConfig, CUlibrary, CUlibraryOption, CUmodule,
    CUresult, CUstream,
};

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
pub type FnLaunchCooperativeKernel = unsafe extern "C" fn(
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
pub type FnLibraryGetModule = unsafe extern "C" fn(*mut CUmodule, CUlibrary) -> CUresult;
pub type FnKernelGetFunction = unsafe extern "C" fn(*mut CUfunction, CUkernel) -> CUresult;
pub type FnGetProcAddress =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> CUresult;
pub type FnGetExportTable = unsafe extern "C" fn(*mut *const c_void, *const c_void) -> CUresult;
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
pub type FnMemsetD8Async = unsafe extern "C" fn(CUdeviceptr, u8, usize, CUstream) -> CUresult;
pub type FnMemcpyHtoDAsync =
    unsafe extern "C" fn(CUdeviceptr, *const c_void, usize, CUstream) -> CUresult;
pub type FnMemcpyDtoHAsync =
    unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize, CUstream) -> CUresult;
pub type FnMemcpy2DAsync = unsafe extern "C" fn(*const CUDA_MEMCPY2D, CUstream) -> CUresult;
pub type FnMemFreeAsync = unsafe extern "C" fn(CUdeviceptr, CUstream) -> CUresult;
pub type FnStreamSynchronize = unsafe extern "C" fn(CUstream) -> CUresult;
pub type FnFuncGetParamInfo =
    unsafe extern "C" fn(CUfunction, usize, *mut usize, *mut usize) -> CUresult;
pub type FnFuncGetName = unsafe extern "C" fn(*mut *const c_char, CUfunction) -> CUresult;
pub type FnDeviceGetAttribute = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CUresult;
pub type FnCtxGetDevice = unsafe extern "C" fn(*mut c_int) -> CUresult;

pub type FnCtxGetCurrent = unsafe extern "C" fn(*mut *mut c_void) -> CUresult;
pub type FnStreamGetCtx = unsafe extern "C" fn(CUstream, *mut *mut c_void) -> CUresult;
pub type FnStreamIsCapturing = unsafe extern "C" fn(CUstream, *mut c_int) -> CUresult;
pub type FnGraphGetNodes =
    unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *mut usize) -> CUresult;
pub type FnGraphNodeGetType = unsafe extern "C" fn(*mut c_void, *mut c_int) -> CUresult;
pub type FnGraphKernelNodeGetParams =
    unsafe extern "C" fn(*mut c_void, *mut crate::graphs::KernelNodeParams) -> CUresult;
pub type FnGraphChildGraphNodeGetGraph =
    unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> CUresult;

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
