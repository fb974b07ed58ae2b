//! The real driver (and HIP runtime) entry points the shim forwards to.
//!
//! Found with `dlsym(RTLD_NEXT, …)` — the next definition after ours in the
//! lookup order: the emulator's `libcuda.so.1` in tests, the vendor's on a
//! GPU server. When the application loads the driver later with `dlopen`,
//! RTLD_NEXT misses it, so the library is opened by name as a fallback.
//! Symbols resolve on first use and are cached; a missing one stays `None`
//! and the wrapper answers with the error the real library would give when
//! absent.

use crate::ffi::*;
use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

/// Looks up `name` after ours, then in the named library.
fn resolve(library: &CStr, name: &CStr) -> *mut c_void {
    // SAFETY: dlsym/dlopen take valid NUL-terminated strings and may return null.
    unsafe {
        let next = libc::dlsym(libc::RTLD_NEXT, name.as_ptr());
        if !next.is_null() {
            return next;
        }
        let handle = libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        let handle = if handle.is_null() {
            libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL)
        } else {
            handle
        };
        if handle.is_null() {
            return std::ptr::null_mut();
        }
        libc::dlsym(handle, name.as_ptr())
    }
}

/// The driver's exported `name` (null when it has none).
pub fn symbol(name: &CStr) -> *mut c_void {
    resolve(c"libcuda.so.1", name)
}

macro_rules! driver_table {
    ($table:ident, $library:literal, { $($field:ident: $ty:ty = $sym:literal,)* }) => {
        #[allow(non_snake_case)]
        pub struct $table {
            $(pub $field: Option<$ty>,)*
        }

        impl $table {
            fn load() -> $table {
                $table {
                    $($field: {
                        let ptr = resolve($library, $sym);
                        // SAFETY: the symbol has this C signature in the library's header.
                        (!ptr.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, $ty>(ptr) })
                    },)*
                }
            }

            /// The address of the real definition of `name`, if it is one of ours.
            pub fn address_of(&self, name: &str) -> Option<*mut c_void> {
                match name {
                    $(n if n.as_bytes() == $sym.to_bytes() => self.$field.map(|f| f as *mut c_void),)*
                    _ => None,
                }
            }
        }
    };
}

driver_table!(Cuda, c"libcuda.so.1", {
    cuLaunchKernel: FnLaunchKernel = c"cuLaunchKernel",
    cuLaunchKernel_ptsz: FnLaunchKernel = c"cuLaunchKernel_ptsz",
    cuLaunchKernelEx: FnLaunchKernelEx = c"cuLaunchKernelEx",
    cuLaunchKernelEx_ptsz: FnLaunchKernelEx = c"cuLaunchKernelEx_ptsz",
    cuLaunchCooperativeKernel: FnLaunchCooperativeKernel = c"cuLaunchCooperativeKernel",
    cuLaunchCooperativeKernel_ptsz: FnLaunchCooperativeKernel = c"cuLaunchCooperativeKernel_ptsz",
    cuModuleLoad: FnModuleLoad = c"cuModuleLoad",
    cuModuleLoadData: FnModuleLoadData = c"cuModuleLoadData",
    cuModuleLoadDataEx: FnModuleLoadDataEx = c"cuModuleLoadDataEx",
    cuModuleLoadFatBinary: FnModuleLoadData = c"cuModuleLoadFatBinary",
    cuModuleGetFunction: FnModuleGetFunction = c"cuModuleGetFunction",
    cuModuleUnload: FnModuleUnload = c"cuModuleUnload",
    cuLibraryLoadData: FnLibraryLoadData = c"cuLibraryLoadData",
    cuLibraryGetKernel: FnLibraryGetKernel = c"cuLibraryGetKernel",
    cuLibraryGetModule: FnLibraryGetModule = c"cuLibraryGetModule",
    cuKernelGetFunction: FnKernelGetFunction = c"cuKernelGetFunction",
    cuGetProcAddress: FnGetProcAddress = c"cuGetProcAddress",
    cuGetProcAddress_v2: FnGetProcAddressV2 = c"cuGetProcAddress_v2",
    cuGetExportTable: FnGetExportTable = c"cuGetExportTable",
    cuModuleGetGlobal_v2: FnModuleGetGlobal = c"cuModuleGetGlobal_v2",
    cuLibraryGetGlobal: FnLibraryGetGlobal = c"cuLibraryGetGlobal",
    cuMemAlloc_v2: FnMemAlloc = c"cuMemAlloc_v2",
    cuMemFree_v2: FnMemFree = c"cuMemFree_v2",
    cuMemGetInfo_v2: FnMemGetInfo = c"cuMemGetInfo_v2",
    cuMemsetD8_v2: FnMemsetD8 = c"cuMemsetD8_v2",
    cuMemcpyHtoD_v2: FnMemcpyHtoD = c"cuMemcpyHtoD_v2",
    cuMemcpyDtoH_v2: FnMemcpyDtoH = c"cuMemcpyDtoH_v2",
    cuMemcpy2D_v2: FnMemcpy2D = c"cuMemcpy2D_v2",
    cuMemsetD8Async: FnMemsetD8Async = c"cuMemsetD8Async",
    cuMemcpyHtoDAsync_v2: FnMemcpyHtoDAsync = c"cuMemcpyHtoDAsync_v2",
    cuMemcpyDtoHAsync_v2: FnMemcpyDtoHAsync = c"cuMemcpyDtoHAsync_v2",
    cuMemcpy2DAsync_v2: FnMemcpy2DAsync = c"cuMemcpy2DAsync_v2",
    cuMemFreeAsync: FnMemFreeAsync = c"cuMemFreeAsync",
    cuStreamSynchronize: FnStreamSynchronize = c"cuStreamSynchronize",
    cuFuncGetParamInfo: FnFuncGetParamInfo = c"cuFuncGetParamInfo",
    cuFuncGetName: FnFuncGetName = c"cuFuncGetName",
    cuCtxGetDevice: FnCtxGetDevice = c"cuCtxGetDevice",
    cuDeviceGetAttribute: FnDeviceGetAttribute = c"cuDeviceGetAttribute",
    cuCtxGetCurrent: FnCtxGetCurrent = c"cuCtxGetCurrent",
    cuStreamGetCtx: FnStreamGetCtx = c"cuStreamGetCtx",
    cuStreamIsCapturing: FnStreamIsCapturing = c"cuStreamIsCapturing",
    cuGraphGetNodes: FnGraphGetNodes = c"cuGraphGetNodes",
    cuGraphNodeGetType: FnGraphNodeGetType = c"cuGraphNodeGetType",
    cuGraphKernelNodeGetParams_v2: FnGraphKernelNodeGetParams = c"cuGraphKernelNodeGetParams_v2",
    cuGraphKernelNodeGetParams: FnGraphKernelNodeGetParams = c"cuGraphKernelNodeGetParams",
    cuGraphChildGraphNodeGetGraph: FnGraphChildGraphNodeGetGraph = c"cuGraphChildGraphNodeGetGraph",
});

driver_table!(Hip, c"libamdhip64.so", {
    hipModuleLaunchKernel: hip_fns::FnModuleLaunchKernel = c"hipModuleLaunchKernel",
    hipLaunchKernel: hip_fns::FnLaunchKernel = c"hipLaunchKernel",
    hipModuleLoadData: hip_fns::FnModuleLoadData = c"hipModuleLoadData",
    hipModuleGetFunction: hip_fns::FnModuleGetFunction = c"hipModuleGetFunction",
});

pub fn cuda() -> &'static Cuda {
    static TABLE: OnceLock<Cuda> = OnceLock::new();
    TABLE.get_or_init(Cuda::load)
}

pub fn hip() -> &'static Hip {
    static TABLE: OnceLock<Hip> = OnceLock::new();
    TABLE.get_or_init(Hip::load)
}
