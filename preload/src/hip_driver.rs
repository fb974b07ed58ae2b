//! The HIP runtime's entry points the shim calls itself, found after ours
//! (the runtime the application linked) or in `libamdhip64.so.5`; and the
//! HIP runtime as a driver table ([`as_cuda`]), so that HIP launches are
//! captured by the same code as CUDA launches (`capture`): its
//! memory entry points are `hipMalloc`, `hipMemsetD8Async`,
//! `hipMemcpyHtoDAsync`, `hipMemcpyDtoHAsync`, `hipStreamSynchronize`.
//! Errors they return are passed on as their `hipError_t` values.

use crate::driver::Cuda;

use crate::ffi::*;
use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

/// The HIP runtime's entry points the shim calls itself.
pub(crate) struct Runtime {
    pub(crate) malloc: Option<hip_fns::FnMalloc>,
    pub(crate) free: Option<hip_fns::FnFree>,
    pub(crate) memset_d8: Option<hip_fns::FnMemsetD8>,
    pub(crate) memset_d8_async: Option<hip_fns::FnMemsetD8Async>,
    pub(crate) htod: Option<hip_fns::FnMemcpyHtoD>,
    pub(crate) htod_async: Option<hip_fns::FnMemcpyHtoDAsync>,
    pub(crate) dtoh: Option<hip_fns::FnMemcpyDtoH>,
    pub(crate) dtoh_async: Option<hip_fns::FnMemcpyDtoHAsync>,
    pub(crate) stream_synchronize: Option<hip_fns::FnStreamSynchronize>,
    pub(crate) module_get_global: Option<hip_fns::FnModuleGetGlobal>,
    pub(crate) module_load: Option<hip_fns::FnModuleLoad>,
    pub(crate) module_load_data_ex: Option<hip_fns::FnModuleLoadDataEx>,
    pub(crate) module_unload: Option<hip_fns::FnModuleUnload>,
    pub(crate) register_fat_binary: Option<hip_fns::FnRegisterFatBinary>,
    pub(crate) register_function: Option<hip_fns::FnRegisterFunction>,
    pub(crate) register_var: Option<hip_fns::FnRegisterVar>,
    pub(crate) get_symbol_address: Option<hip_fns::FnGetSymbolAddress>,
    pub(crate) get_symbol_size: Option<hip_fns::FnGetSymbolSize>,
    pub(crate) peek_at_last_error: Option<hip_fns::FnLastError>,
    pub(crate) get_last_error: Option<hip_fns::FnLastError>,
    pub(crate) launch_kernel_spt: Option<hip_fns::FnLaunchKernel>,
}

/// `name` after ours (the HIP runtime the application linked), else in
/// `libamdhip64.so.5` opened by name.
fn resolve(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym/dlopen take NUL-terminated strings and may return null.
    unsafe {
        let next = libc::dlsym(libc::RTLD_NEXT, name.as_ptr());
        if !next.is_null() {
            return next;
        }
        let handle = libc::dlopen(
            c"libamdhip64.so.5".as_ptr(),
            libc::RTLD_NOW | libc::RTLD_NOLOAD,
        );
        if handle.is_null() {
            return std::ptr::null_mut();
        }
        libc::dlsym(handle, name.as_ptr())
    }
}

macro_rules! hip_fn {
    ($name:literal, $ty:ty) => {{
        let ptr = resolve($name);
        // SAFETY: the symbol has this C signature in hip_runtime_api.h.
        (!ptr.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, $ty>(ptr) })
    }};
}

pub(crate) fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime {
        malloc: hip_fn!(c"hipMalloc", hip_fns::FnMalloc),
        free: hip_fn!(c"hipFree", hip_fns::FnFree),
        memset_d8: hip_fn!(c"hipMemsetD8", hip_fns::FnMemsetD8),
        memset_d8_async: hip_fn!(c"hipMemsetD8Async", hip_fns::FnMemsetD8Async),
        htod: hip_fn!(c"hipMemcpyHtoD", hip_fns::FnMemcpyHtoD),
        htod_async: hip_fn!(c"hipMemcpyHtoDAsync", hip_fns::FnMemcpyHtoDAsync),
        dtoh: hip_fn!(c"hipMemcpyDtoH", hip_fns::FnMemcpyDtoH),
        dtoh_async: hip_fn!(c"hipMemcpyDtoHAsync", hip_fns::FnMemcpyDtoHAsync),
        stream_synchronize: hip_fn!(c"hipStreamSynchronize", hip_fns::FnStreamSynchronize),
        module_get_global: hip_fn!(c"hipModuleGetGlobal", hip_fns::FnModuleGetGlobal),
        module_load: hip_fn!(c"hipModuleLoad", hip_fns::FnModuleLoad),
        module_load_data_ex: hip_fn!(c"hipModuleLoadDataEx", hip_fns::FnModuleLoadDataEx),
        module_unload: hip_fn!(c"hipModuleUnload", hip_fns::FnModuleUnload),
        register_fat_binary: hip_fn!(c"__hipRegisterFatBinary", hip_fns::FnRegisterFatBinary),
        register_function: hip_fn!(c"__hipRegisterFunction", hip_fns::FnRegisterFunction),
        register_var: hip_fn!(c"__hipRegisterVar", hip_fns::FnRegisterVar),
        get_symbol_address: hip_fn!(c"hipGetSymbolAddress", hip_fns::FnGetSymbolAddress),
        get_symbol_size: hip_fn!(c"hipGetSymbolSize", hip_fns::FnGetSymbolSize),
        peek_at_last_error: hip_fn!(c"hipPeekAtLastError", hip_fns::FnLastError),
        get_last_error: hip_fn!(c"hipGetLastError", hip_fns::FnLastError),
        launch_kernel_spt: hip_fn!(c"hipLaunchKernel_spt", hip_fns::FnLaunchKernel),
    })
}

/// What a missing HIP entry point reports (`hipErrorNotInitialized`).
const MISSING: CUresult = HIP_ERROR_NOT_INITIALIZED as CUresult;

// ---- the HIP runtime as a driver table -------------------------------------
//
// Each adapter has the `cuda.h` signature the capture code calls and
// forwards to the HIP function of the same meaning; device pointers are
// 64-bit integers on one side and `void*` on the other.

unsafe extern "C" fn mem_alloc(ptr: *mut CUdeviceptr, size: usize) -> CUresult {
    let Some(malloc) = runtime().malloc else {
        return MISSING;
    };
    let mut out: *mut c_void = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    let r = unsafe { malloc(&mut out, size) };
    // SAFETY: the caller's out-pointer.
    unsafe { *ptr = out as CUdeviceptr };
    r as CUresult
}

unsafe extern "C" fn mem_free(ptr: CUdeviceptr) -> CUresult {
    let Some(free) = runtime().free else {
        return MISSING;
    };
    // SAFETY: a pointer `mem_alloc` returned.
    unsafe { free(ptr as *mut c_void) as CUresult }
}

unsafe extern "C" fn memset_d8(dst: CUdeviceptr, value: u8, n: usize) -> CUresult {
    let Some(memset) = runtime().memset_d8 else {
        return MISSING;
    };
    // SAFETY: the capture's own device range.
    unsafe { memset(dst as *mut c_void, value, n) as CUresult }
}

unsafe extern "C" fn memset_d8_async(
    dst: CUdeviceptr,
    value: u8,
    n: usize,
    stream: CUstream,
) -> CUresult {
    let Some(memset) = runtime().memset_d8_async else {
        // SAFETY: as above, synchronously.
        return unsafe { memset_d8(dst, value, n) };
    };
    // SAFETY: the capture's own device range, on the launch's stream.
    unsafe { memset(dst as *mut c_void, value, n, stream) as CUresult }
}

unsafe extern "C" fn htod(dst: CUdeviceptr, src: *const c_void, n: usize) -> CUresult {
    let Some(copy) = runtime().htod else {
        return MISSING;
    };
    // SAFETY: a live host slice of `n` bytes into the capture's device range.
    unsafe { copy(dst as *mut c_void, src as *mut c_void, n) as CUresult }
}

unsafe extern "C" fn htod_async(
    dst: CUdeviceptr,
    src: *const c_void,
    n: usize,
    stream: CUstream,
) -> CUresult {
    let Some(copy) = runtime().htod_async else {
        // SAFETY: as above, synchronously.
        return unsafe { htod(dst, src, n) };
    };
    // SAFETY: as above, on the launch's stream.
    unsafe { copy(dst as *mut c_void, src as *mut c_void, n, stream) as CUresult }
}

unsafe extern "C" fn dtoh(dst: *mut c_void, src: CUdeviceptr, n: usize) -> CUresult {
    let Some(copy) = runtime().dtoh else {
        return MISSING;
    };
    // SAFETY: a live host buffer of `n` bytes from the capture's device range.
    unsafe { copy(dst, src as *mut c_void, n) as CUresult }
}

unsafe extern "C" fn dtoh_async(
    dst: *mut c_void,
    src: CUdeviceptr,
    n: usize,
    stream: CUstream,
) -> CUresult {
    let Some(copy) = runtime().dtoh_async else {
        // SAFETY: as above, synchronously.
        return unsafe { dtoh(dst, src, n) };
    };
    // SAFETY: as above, on the launch's stream.
    unsafe { copy(dst, src as *mut c_void, n, stream) as CUresult }
}

unsafe extern "C" fn stream_synchronize(stream: CUstream) -> CUresult {
    let Some(sync) = runtime().stream_synchronize else {
        return MISSING;
    };
    // SAFETY: the application's stream, just launched on.
    unsafe { sync(stream) as CUresult }
}

/// HIP has no contexts here: one fixed key keeps HIP's pooled trace
/// buffers apart from any CUDA context's.
unsafe extern "C" fn current_context(context: *mut *mut c_void) -> CUresult {
    // SAFETY: the caller's out-pointer.
    unsafe { *context = 0x4849_5000 as *mut c_void };
    CUDA_SUCCESS
}

/// The HIP runtime's memory and stream calls behind the driver table the
/// capture code takes. Every other entry is absent (`None`).
pub fn as_cuda() -> &'static Cuda {
    static TABLE: OnceLock<Cuda> = OnceLock::new();
    TABLE.get_or_init(|| {
        // SAFETY: `driver_table!` declares every field of `Cuda` as an
        // `Option` of a function pointer, for which all-zero bytes are `None`.
        let mut table: Cuda = unsafe { std::mem::zeroed() };
        table.cuMemAlloc_v2 = Some(mem_alloc);
        table.cuMemFree_v2 = Some(mem_free);
        table.cuMemsetD8_v2 = Some(memset_d8);
        table.cuMemsetD8Async = Some(memset_d8_async);
        table.cuMemcpyHtoD_v2 = Some(htod);
        table.cuMemcpyHtoDAsync_v2 = Some(htod_async);
        table.cuMemcpyDtoH_v2 = Some(dtoh);
        table.cuMemcpyDtoHAsync_v2 = Some(dtoh_async);
        table.cuStreamSynchronize = Some(stream_synchronize);
        table.cuCtxGetCurrent = Some(current_context);
        table
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_driver_table_has_exactly_the_hip_backed_entries() {
        let table = as_cuda();
        assert!(table.cuMemAlloc_v2.is_some() && table.cuStreamSynchronize.is_some());
        assert!(table.cuMemcpyDtoHAsync_v2.is_some() && table.cuMemsetD8Async.is_some());
        assert!(table.cuLaunchKernel.is_none() && table.cuModuleGetGlobal_v2.is_none());
        let mut context = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        assert_eq!(unsafe { current_context(&mut context) }, CUDA_SUCCESS);
        assert!(!context.is_null());
    }
}
