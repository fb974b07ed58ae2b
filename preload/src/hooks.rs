//! The exported entry points: the driver (and HIP) functions the shim
//! interposes. Each forwards to the real function and tells `state` what it
//! saw; every body is guarded so a shim failure passes the call through.
//!
//! Applications reach these either by symbol (dynamic linking puts ours
//! first under LD_PRELOAD) or through `cuGetProcAddress`, which returns the
//! same wrappers. A wrapper calls the real function it stands for: the one
//! `cuGetProcAddress` returned for that entry point when it was asked, else
//! the library's exported symbol.
//!
//! Safety: each exported function has exactly the contract of the function
//! of the same name in `cuda.h` (or `hip_runtime_api.h`).
#![allow(clippy::missing_safety_doc)]

use crate::backend::Backend;
use crate::capture::Geometry;
use crate::driver;
use crate::ffi::*;
use crate::guard::guarded;
use crate::launch::{self, LaunchCall};
use crate::module_load;
use crate::process::active;
use crate::registry::CodeHandle;
use crate::state;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

/// The real functions `cuGetProcAddress` handed out, one per wrapped entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    LaunchKernel,
    LaunchKernelPtsz,
    LaunchKernelEx,
    LaunchKernelExPtsz,
    ModuleLoad,
    ModuleLoadData,
    ModuleLoadDataEx,
    ModuleLoadFatBinary,
    ModuleGetFunction,
    ModuleUnload,
    LibraryLoadData,
    LibraryGetKernel,
    KernelGetFunction,
    GetProcAddress,
    GetProcAddressV2,
    LaunchCooperativeKernel,
    LaunchCooperativeKernelPtsz,
    GetExportTable,
    LibraryGetModule,
}
const SLOTS: usize = 19;
static PROC_ADDRESSES: [AtomicPtr<c_void>; SLOTS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// The real function for `slot`: from cuGetProcAddress if seen, else the symbol.
fn real(slot: Slot, symbol: Option<*mut c_void>) -> Option<*mut c_void> {
    let seen = PROC_ADDRESSES[slot as usize].load(Ordering::Relaxed);
    if !seen.is_null() { Some(seen) } else { symbol }
}

macro_rules! real_fn {
    ($slot:ident, $field:ident, $ty:ty) => {
        real(Slot::$slot, driver::cuda().$field.map(|f| f as *mut c_void))
            // SAFETY: both sources hold a function of this entry point's signature.
            .map(|p| unsafe { std::mem::transmute::<*mut c_void, $ty>(p) })
    };
}

/// Reads a C string argument without trusting it to be non-null.
unsafe fn c_str<'a>(ptr: *const c_char) -> Option<&'a CStr> {
    // SAFETY: non-null C strings from the caller are NUL-terminated per the API.
    (!ptr.is_null()).then(|| unsafe { CStr::from_ptr(ptr) })
}

// ---- launches -----------------------------------------------------------

/// `CU_STREAM_PER_THREAD`: what stream 0 means to a `_ptsz` entry point.
const STREAM_PER_THREAD: usize = 0x2;

/// The stream a launch runs on, as the shim must name it for its own
/// stream-ordered work: a `_ptsz` entry point's null stream is the calling
/// thread's default stream, not the legacy one.
fn launch_stream(stream: CUstream, per_thread: bool) -> CUstream {
    if per_thread && stream.is_null() {
        STREAM_PER_THREAD as CUstream
    } else {
        stream
    }
}

/// Records one CUDA launch of `function` (geometry, stream, arguments as the
/// application passed them) around `forward`, the real call. Every launch
/// entry point comes here; they differ only in how they unpack arguments.
/// `stream` is already the one the launch runs on (`launch_stream`);
/// `arguments` are the `kernelParams` and `extra` lists.
fn launch(
    function: CUfunction,
    geometry: Geometry,
    shared_bytes: c_uint,
    stream: CUstream,
    (params, extra): (*mut *mut c_void, *mut *mut c_void),
    forward: impl FnOnce() -> CUresult,
) -> CUresult {
    state::debug(|| format!("launch of {function:p}"));
    let call = LaunchCall {
        function,
        geometry,
        shared_bytes,
        stream,
        params,
        extra,
        backend: Backend::Cuda,
    };
    launch::on_launch(call, forward)
}

/// `cuLaunchKernel` and its per-thread-default-stream twin: one signature,
/// each with its own real function.
macro_rules! launch_kernel_export {
    ($name:ident, $slot:ident, $per_thread:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            f: CUfunction,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shared: c_uint,
            stream: CUstream,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> CUresult {
            let Some(real) = real_fn!($slot, $name, FnLaunchKernel) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            let forward = || {
                // SAFETY: `real` is the driver's entry for this name, of this
                // signature; the closure runs inside this hook with the
                // application's arguments unchanged, so they carry the
                // application's own contract with the driver.
                unsafe { real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) }
            };
            let geometry = Geometry {
                grid: [gx, gy, gz],
                block: [bx, by, bz],
            };
            let stream = launch_stream(stream, $per_thread);
            launch(f, geometry, shared, stream, (params, extra), forward)
        }
    };
}
launch_kernel_export!(cuLaunchKernel, LaunchKernel, false);
launch_kernel_export!(cuLaunchKernel_ptsz, LaunchKernelPtsz, true);

/// `cuLaunchCooperativeKernel` and its per-thread twin: `cuLaunchKernel`
/// without `extra`.
macro_rules! launch_cooperative_export {
    ($name:ident, $slot:ident, $per_thread:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            f: CUfunction,
            gx: c_uint,
            gy: c_uint,
            gz: c_uint,
            bx: c_uint,
            by: c_uint,
            bz: c_uint,
            shared: c_uint,
            stream: CUstream,
            params: *mut *mut c_void,
        ) -> CUresult {
            let Some(real) = real_fn!($slot, $name, FnLaunchCooperativeKernel) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding the caller's arguments unchanged.
            let forward = || unsafe { real(f, gx, gy, gz, bx, by, bz, shared, stream, params) };
            let geometry = Geometry {
                grid: [gx, gy, gz],
                block: [bx, by, bz],
            };
            let (stream, extra) = (launch_stream(stream, $per_thread), std::ptr::null_mut());
            launch(f, geometry, shared, stream, (params, extra), forward)
        }
    };
}
launch_cooperative_export!(cuLaunchCooperativeKernel, LaunchCooperativeKernel, false);
launch_cooperative_export!(
    cuLaunchCooperativeKernel_ptsz,
    LaunchCooperativeKernelPtsz,
    true
);

/// `cuLaunchKernelEx` and its per-thread twin: the geometry comes in a
/// `CUlaunchConfig`.
macro_rules! launch_kernel_ex_export {
    ($name:ident, $slot:ident, $per_thread:expr) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            config: *const CUlaunchConfig,
            f: CUfunction,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> CUresult {
            let Some(real) = real_fn!($slot, $name, FnLaunchKernelEx) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding the caller's arguments unchanged.
            let forward = || unsafe { real(config, f, params, extra) };
            if config.is_null() {
                return forward(); // the driver reports the invalid value
            }
            // SAFETY: non-null, points at the caller's CUlaunchConfig.
            let c = unsafe { &*config };
            let geometry = Geometry {
                grid: c.grid_dim,
                block: c.block_dim,
            };
            let (shared, stream) = (c.shared_mem_bytes, launch_stream(c.h_stream, $per_thread));
            launch(f, geometry, shared, stream, (params, extra), forward)
        }
    };
}
launch_kernel_ex_export!(cuLaunchKernelEx, LaunchKernelEx, false);
launch_kernel_ex_export!(cuLaunchKernelEx_ptsz, LaunchKernelExPtsz, true);

// ---- modules and libraries ---------------------------------------------

/// A module image as bytes: PTX text up to its NUL, else a bounded prefix
/// (enough to identify it; cubins and fatbins are not parsed here).
unsafe fn image_bytes<'a>(image: *const c_void) -> Option<&'a [u8]> {
    if image.is_null() {
        return None;
    }
    // SAFETY: images are either NUL-terminated PTX or binaries with headers
    // far longer than the probe; stop at the first NUL or the cap.
    let text = unsafe { CStr::from_ptr(image as *const c_char) }.to_bytes();
    Some(text)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoad(module: *mut CUmodule, fname: *const c_char) -> CUresult {
    let Some(real) = real_fn!(ModuleLoad, cuModuleLoad, FnModuleLoad) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // The file's image, to instrument before the driver sees it.
    let image = if active() {
        // SAFETY: the caller's path string.
        unsafe { c_str(fname) }.and_then(|p| std::fs::read(p.to_string_lossy().as_ref()).ok())
    } else {
        None
    };
    let load_data = real_fn!(ModuleLoadData, cuModuleLoadData, FnModuleLoadData);
    let (result, plan) = match (&image, load_data) {
        (Some(bytes), Some(load_data)) => {
            let mut owned = bytes.clone();
            owned.push(0);
            // SAFETY: a NUL-terminated copy of the file; the loads forward the
            // caller's arguments or the rewritten image.
            unsafe {
                module_load::load(
                    owned.as_ptr() as *const c_void,
                    || real(module, fname),
                    |rewritten| load_data(module, rewritten),
                )
            }
        }
        // SAFETY: forwarding unchanged.
        _ => (unsafe { real(module, fname) }, None),
    };
    state::module_loaded(result, module, image.as_deref(), plan);
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> CUresult {
    let Some(real) = real_fn!(ModuleLoadData, cuModuleLoadData, FnModuleLoadData) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: the caller's image; the loads forward its arguments or the rewritten image.
    let (result, plan) = unsafe {
        module_load::load(
            image,
            || real(module, image),
            |rewritten| real(module, rewritten),
        )
    };
    // SAFETY: the driver accepted the image.
    state::module_loaded(result, module, unsafe { image_bytes(image) }, plan);
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut CUmodule,
    image: *const c_void,
    num_options: c_uint,
    options: *mut CUjit_option,
    values: *mut *mut c_void,
) -> CUresult {
    let Some(real) = real_fn!(ModuleLoadDataEx, cuModuleLoadDataEx, FnModuleLoadDataEx) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: the caller's image; the loads forward its arguments or the rewritten image.
    let (result, plan) = unsafe {
        module_load::load(
            image,
            || real(module, image, num_options, options, values),
            |rewritten| real(module, rewritten, num_options, options, values),
        )
    };
    // SAFETY: the driver accepted the image.
    state::module_loaded(result, module, unsafe { image_bytes(image) }, plan);
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadFatBinary(
    module: *mut CUmodule,
    fat: *const c_void,
) -> CUresult {
    let Some(real) = real_fn!(ModuleLoadFatBinary, cuModuleLoadFatBinary, FnModuleLoadData) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // A rewritten fatbinary is PTX text, which cuModuleLoadData takes.
    let load_data = real_fn!(ModuleLoadData, cuModuleLoadData, FnModuleLoadData);
    // SAFETY: the caller's fatbinary; the loads forward its arguments or the rewritten image.
    let (result, plan) = unsafe {
        module_load::load(
            fat,
            || real(module, fat),
            |rewritten| match load_data {
                Some(load_data) => load_data(module, rewritten),
                None => CUDA_ERROR_NOT_INITIALIZED,
            },
        )
    };
    state::module_loaded(result, module, None, plan);
    result
}

/// A lookup by name in loaded code (`cuModuleGetFunction`,
/// `cuLibraryGetKernel`): forwarded, and on success the handle is named.
macro_rules! lookup_export {
    ($name:ident, $slot:ident, $fn_ty:ty, $out:ty, $code_ty:ty, $code:ident) => {
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            out: *mut $out,
            code: $code_ty,
            name: *const c_char,
        ) -> CUresult {
            let Some(real) = real_fn!($slot, $name, $fn_ty) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding unchanged.
            let result = unsafe { real(out, code, name) };
            if result == CUDA_SUCCESS {
                let handle = CodeHandle::$code(code as usize);
                // SAFETY: the driver answered the lookup.
                unsafe { state::after_lookup(stringify!($name), out, name, handle) };
            }
            result
        }
    };
}
lookup_export!(
    cuModuleGetFunction,
    ModuleGetFunction,
    FnModuleGetFunction,
    CUfunction,
    CUmodule,
    Module
);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleUnload(module: CUmodule) -> CUresult {
    let Some(real) = real_fn!(ModuleUnload, cuModuleUnload, FnModuleUnload) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(module) };
    if result == CUDA_SUCCESS {
        guarded(
            "cuModuleUnload",
            || (),
            || state::on_code_unloaded(CodeHandle::Module(module as usize)),
        );
    }
    result
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLibraryLoadData(
    library: *mut CUlibrary,
    code: *const c_void,
    jit_options: *mut CUjit_option,
    jit_values: *mut *mut c_void,
    num_jit: c_uint,
    lib_options: *mut CUlibraryOption,
    lib_values: *mut *mut c_void,
    num_lib: c_uint,
) -> CUresult {
    let Some(real) = real_fn!(LibraryLoadData, cuLibraryLoadData, FnLibraryLoadData) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    let load = |image: *const c_void| {
        // SAFETY: the caller's arguments, with its image or the rewritten one.
        unsafe {
            real(
                library,
                image,
                jit_options,
                jit_values,
                num_jit,
                lib_options,
                lib_values,
                num_lib,
            )
        }
    };
    // SAFETY: the caller's image.
    let (result, plan) = unsafe { module_load::load(code, || load(code), load) };
    // SAFETY: the driver accepted the image (when it says so).
    let image = (result == CUDA_SUCCESS)
        .then(|| unsafe { image_bytes(code) })
        .flatten();
    // SAFETY: the caller's out-parameter, written on success.
    unsafe { state::library_loaded("cuLibraryLoadData", result, library, image, plan) };
    result
}

lookup_export!(
    cuLibraryGetKernel,
    LibraryGetKernel,
    FnLibraryGetKernel,
    CUkernel,
    CUlibrary,
    Library
);

/// `cuLibraryGetModule`: the library's module in the current context.
/// cudart 12.x looks its kernels up there (`cuModuleGetFunction`), so
/// the module is remembered as the library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLibraryGetModule(module: *mut CUmodule, library: CUlibrary) -> CUresult {
    let Some(real) = real_fn!(LibraryGetModule, cuLibraryGetModule, FnLibraryGetModule) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(module, library) };
    if result == CUDA_SUCCESS && !module.is_null() {
        // SAFETY: the driver wrote the handle.
        let handle = unsafe { *module } as usize;
        state::debug(|| format!("cuLibraryGetModule({library:p}) = {handle:#x}"));
        let (alias, code) = (
            CodeHandle::Module(handle),
            CodeHandle::Library(library as usize),
        );
        guarded(
            "cuLibraryGetModule",
            || (),
            || state::on_code_alias(alias, code),
        );
    }
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuKernelGetFunction(
    function: *mut CUfunction,
    kernel: CUkernel,
) -> CUresult {
    let Some(real) = real_fn!(KernelGetFunction, cuKernelGetFunction, FnKernelGetFunction) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(function, kernel) };
    if result == CUDA_SUCCESS && !function.is_null() {
        // SAFETY: the driver wrote the handle.
        let handle = unsafe { *function };
        state::debug(|| format!("cuKernelGetFunction({kernel:p}) = {handle:p}"));
        guarded(
            "cuKernelGetFunction",
            || (),
            || state::on_alias(handle, kernel),
        );
    }
    result
}

// ---- cuGetProcAddress -----------------------------------------------------

const PER_THREAD_DEFAULT_STREAM: u64 = 1 << 1;

/// Our wrapper for the entry point `symbol` resolves to, and its slot.
fn wrapper_for(symbol: &[u8], cuda_version: c_int, flags: u64) -> Option<(Slot, *mut c_void)> {
    let ptsz = flags & PER_THREAD_DEFAULT_STREAM != 0;
    Some(match symbol {
        b"cuLaunchKernel" if ptsz => (Slot::LaunchKernelPtsz, cuLaunchKernel_ptsz as *mut c_void),
        b"cuLaunchKernel" => (Slot::LaunchKernel, cuLaunchKernel as *mut c_void),
        b"cuLaunchKernelEx" if ptsz => (
            Slot::LaunchKernelExPtsz,
            cuLaunchKernelEx_ptsz as *mut c_void,
        ),
        b"cuLaunchKernelEx" => (Slot::LaunchKernelEx, cuLaunchKernelEx as *mut c_void),
        b"cuModuleLoad" => (Slot::ModuleLoad, cuModuleLoad as *mut c_void),
        b"cuModuleLoadData" => (Slot::ModuleLoadData, cuModuleLoadData as *mut c_void),
        b"cuModuleLoadDataEx" => (Slot::ModuleLoadDataEx, cuModuleLoadDataEx as *mut c_void),
        b"cuModuleLoadFatBinary" => (
            Slot::ModuleLoadFatBinary,
            cuModuleLoadFatBinary as *mut c_void,
        ),
        b"cuModuleGetFunction" => (Slot::ModuleGetFunction, cuModuleGetFunction as *mut c_void),
        b"cuModuleUnload" => (Slot::ModuleUnload, cuModuleUnload as *mut c_void),
        b"cuLibraryLoadData" => (Slot::LibraryLoadData, cuLibraryLoadData as *mut c_void),
        b"cuLibraryGetKernel" => (Slot::LibraryGetKernel, cuLibraryGetKernel as *mut c_void),
        b"cuKernelGetFunction" => (Slot::KernelGetFunction, cuKernelGetFunction as *mut c_void),
        b"cuLaunchCooperativeKernel" if ptsz => (
            Slot::LaunchCooperativeKernelPtsz,
            cuLaunchCooperativeKernel_ptsz as *mut c_void,
        ),
        b"cuLaunchCooperativeKernel" => (
            Slot::LaunchCooperativeKernel,
            cuLaunchCooperativeKernel as *mut c_void,
        ),
        // From CUDA 12.0 the name resolves to the five-argument _v2.
        b"cuGetProcAddress" if cuda_version >= 12000 => {
            (Slot::GetProcAddressV2, cuGetProcAddress_v2 as *mut c_void)
        }
        b"cuGetProcAddress" => (Slot::GetProcAddress, cuGetProcAddress as *mut c_void),
        b"cuGetExportTable" => (Slot::GetExportTable, cuGetExportTable as *mut c_void),
        b"cuLibraryGetModule" => (Slot::LibraryGetModule, cuLibraryGetModule as *mut c_void),
        _ => return None,
    })
}

/// The wrapper exported as `symbol` (a library symbol name, with its
/// `_ptsz`/`_v2` suffix) and the cell its real function is remembered in:
/// for `dlsym` lookups through a handle of the driver (`dl`).
pub(crate) fn export_wrapper(symbol: &[u8]) -> Option<(&'static AtomicPtr<c_void>, *mut c_void)> {
    let found = match symbol {
        b"cuLaunchKernel_ptsz" => wrapper_for(b"cuLaunchKernel", 0, PER_THREAD_DEFAULT_STREAM),
        b"cuLaunchKernelEx_ptsz" => wrapper_for(b"cuLaunchKernelEx", 0, PER_THREAD_DEFAULT_STREAM),
        b"cuLaunchCooperativeKernel_ptsz" => {
            wrapper_for(b"cuLaunchCooperativeKernel", 0, PER_THREAD_DEFAULT_STREAM)
        }
        b"cuGetProcAddress_v2" => wrapper_for(b"cuGetProcAddress", 12000, 0),
        b"cuGetProcAddress" => wrapper_for(b"cuGetProcAddress", 11000, 0),
        other => wrapper_for(other, 12000, 0),
    };
    match found {
        Some((slot, wrapper)) => Some((&PROC_ADDRESSES[slot as usize], wrapper)),
        None => crate::graph_hooks::export_wrapper(symbol)
            .or_else(|| crate::link::export_wrapper(symbol)),
    }
}

/// `PRLX_LOG=debug`: every lookup, which is how to see the entry points and
/// versions a runtime asks a driver for.
fn log_lookup(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    result: CUresult,
) {
    if !crate::log::enabled(crate::config::LogLevel::Debug) {
        return;
    }
    // SAFETY: the caller's symbol string and out-pointer, as the driver read them.
    let name = unsafe { c_str(symbol) }.map(|n| n.to_string_lossy().into_owned());
    let found = if result == CUDA_SUCCESS && !pfn.is_null() {
        // SAFETY: the caller's out-pointer, non-null, into which the
        // successful lookup just wrote the function pointer; reading it is
        // what the caller will do next.
        unsafe { *pfn }
    } else {
        std::ptr::null_mut()
    };
    crate::log::log(
        crate::config::LogLevel::Debug,
        &format!(
            "cuGetProcAddress({}, {version}, {flags}) = {result}, {found:p}",
            name.as_deref().unwrap_or("NULL")
        ),
    );
}

/// After the real lookup: hand out our wrapper, remembering the real function.
fn substitute(symbol: *const c_char, pfn: *mut *mut c_void, cuda_version: c_int, flags: u64) {
    // SAFETY: the caller's symbol string, just read by the driver.
    let Some(name) = (unsafe { c_str(symbol) }) else {
        return;
    };
    if pfn.is_null() {
        return;
    }
    // SAFETY: the driver wrote the out-pointer.
    let found = unsafe { *pfn };
    if found.is_null() || !active() {
        return;
    }
    let picked = match wrapper_for(name.to_bytes(), cuda_version, flags) {
        Some((slot, wrapper)) => Some((&PROC_ADDRESSES[slot as usize], wrapper)),
        None => crate::graph_hooks::proc_wrapper(name.to_bytes(), cuda_version, flags)
            .or_else(|| crate::link::proc_wrapper(name.to_bytes(), cuda_version)),
    };
    if let Some((cell, wrapper)) = picked {
        // A driver whose own references are interposed (no -Bsymbolic) hands
        // back our wrapper itself; then the exported symbol is the real one.
        if found != wrapper {
            cell.store(found, Ordering::Relaxed);
        }
        // SAFETY: writing the caller's out-pointer.
        unsafe { *pfn = wrapper };
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
) -> CUresult {
    let Some(real) = real_fn!(GetProcAddress, cuGetProcAddress, FnGetProcAddress) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(symbol, pfn, cuda_version, flags) };
    guarded(
        "cuGetProcAddress",
        || (),
        || log_lookup(symbol, pfn, cuda_version, flags, result),
    );
    if result == CUDA_SUCCESS {
        guarded(
            "cuGetProcAddress",
            || (),
            || substitute(symbol, pfn, cuda_version, flags),
        );
    }
    result
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
    status: *mut c_int,
) -> CUresult {
    let Some(real) = real_fn!(GetProcAddressV2, cuGetProcAddress_v2, FnGetProcAddressV2) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(symbol, pfn, cuda_version, flags, status) };
    guarded(
        "cuGetProcAddress_v2",
        || (),
        || log_lookup(symbol, pfn, cuda_version, flags, result),
    );
    if result == CUDA_SUCCESS {
        guarded(
            "cuGetProcAddress_v2",
            || (),
            || substitute(symbol, pfn, cuda_version, flags),
        );
    }
    result
}

/// `cuGetExportTable`: the driver's private tables; the runtime interface
/// table loads modules (`export_table`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetExportTable(
    table: *mut *const c_void,
    id: *const c_void,
) -> CUresult {
    let Some(real) = real_fn!(GetExportTable, cuGetExportTable, FnGetExportTable) else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(table, id) };
    if result == CUDA_SUCCESS {
        guarded(
            "cuGetExportTable",
            || (),
            // SAFETY: the driver answered with success.
            || unsafe { crate::export_table::after_get(table, id) },
        );
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_address_versions_and_streams() {
        assert_eq!(
            wrapper_for(b"cuLaunchKernel", 12000, 0).unwrap().0,
            Slot::LaunchKernel
        );
        assert_eq!(
            wrapper_for(b"cuLaunchKernel", 12000, PER_THREAD_DEFAULT_STREAM)
                .unwrap()
                .0,
            Slot::LaunchKernelPtsz
        );
        assert_eq!(
            wrapper_for(b"cuGetProcAddress", 12000, 0).unwrap().0,
            Slot::GetProcAddressV2
        );
        assert_eq!(
            wrapper_for(b"cuGetProcAddress", 11080, 0).unwrap().0,
            Slot::GetProcAddress
        );
        assert!(wrapper_for(b"cuMemAlloc", 12000, 0).is_none());
        assert_eq!(SLOTS, Slot::LibraryGetModule as usize + 1);
        let (_, module) = export_wrapper(b"cuLibraryGetModule").unwrap();
        assert_eq!(module, cuLibraryGetModule as *mut c_void);
        let (_, table) = export_wrapper(b"cuGetExportTable").unwrap();
        assert_eq!(table, cuGetExportTable as *mut c_void);
        // dlsym names carry the variant in the symbol.
        let (_, ptsz) = export_wrapper(b"cuLaunchKernel_ptsz").unwrap();
        assert_eq!(ptsz, cuLaunchKernel_ptsz as *mut c_void);
        let (_, v2) = export_wrapper(b"cuGetProcAddress_v2").unwrap();
        assert_eq!(v2, cuGetProcAddress_v2 as *mut c_void);
        let (_, v1) = export_wrapper(b"cuGetProcAddress").unwrap();
        assert_eq!(v1, cuGetProcAddress as *mut c_void);
        assert!(export_wrapper(b"cuMemAlloc_v2").is_none());
    }
}
