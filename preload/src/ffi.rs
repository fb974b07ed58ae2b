//! The slice of `cuda.h` (and `hip_runtime_api.h`) the shim touches: the
//! signatures it wraps or calls, over the types `prlx-cuda-abi` shares with
//! the emulator's libcuda; HIP's from `prlx-hip-abi`, which the emulated
//! HIP runtime shares.
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
pub type FnMemGetInfo = unsafe extern "C" fn(*mut usize, *mut usize) -> CUresult;

pub type FnCtxGetCurrent = unsafe extern "C" fn(*mut *mut c_void) -> CUresult;
pub type FnStreamGetCtx = unsafe extern "C" fn(CUstream, *mut *mut c_void) -> CUresult;
pub type FnStreamIsCapturing = unsafe extern "C" fn(CUstream, *mut c_int) -> CUresult;
pub type FnGraphGetNodes =
    unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *mut usize) -> CUresult;
pub type FnGraphNodeGetType = unsafe extern "C" fn(*mut c_void, *mut c_int) -> CUresult;
pub type FnGraphKernelNodeGetParams =
    unsafe extern "C" fn(*mut c_void, *mut KernelNodeParams) -> CUresult;
pub type FnGraphChildGraphNodeGetGraph =
    unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> CUresult;

pub type CUcontext = *mut c_void;

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

// HIP (libamdhip64): the ABI `prlx-hip-abi` shares with the emulated HIP
// runtime; hipError_t is a C enum, hipSuccess = 0.
pub use prlx_hip_abi::fns as hip_fns;
pub use prlx_hip_abi::{
    dim3, hipError_t, hipErrorNotInitialized as HIP_ERROR_NOT_INITIALIZED, hipFunction_t,
    hipModule_t, hipStream_t, hipSuccess as HIP_SUCCESS,
};
