//! HIP in the shim: modules the application loads with the HIP module API
//! are registered like CUDA modules (a module built by
//! `prlxctl compile --offload-arch=gfx…` defines `__prlx_desc` and
//! `__prlx_sites`), and launches of their kernels are captured by the same
//! code as CUDA launches ([`crate::capture`]), through a driver table whose
//! memory entry points are the HIP runtime's ([`as_cuda`]): `hipMalloc`,
//! `hipMemsetD8Async`, `hipMemcpyHtoDAsync`, `hipMemcpyDtoHAsync`,
//! `hipStreamSynchronize`. Errors they return are passed on as their
//! `hipError_t` values.
//!
//! Covered: `hipModuleLoadData` (hooked in [`crate::hooks`]),
//! `hipModuleLoadDataEx`, `hipModuleLoad`, `hipModuleUnload`, and launches
//! through `hipModuleLaunchKernel`; and fat binaries clang's host code
//! registers (`__hipRegisterFatBinary`, `__hipRegisterFunction`), launched
//! with `<<<>>>`/`hipLaunchKernel`. The runtime hands out no module for a
//! fat binary, so the shim registers two variables of its own in it,
//! `__prlx_desc` and `__prlx_sites`, with host shadows it owns: on the first
//! launch `hipGetSymbolAddress` finds them in a pass-built code object (and
//! fails in any other, which is then recorded as metadata).

use crate::config::LogLevel;
use crate::driver::Cuda;
use crate::ffi::*;
use crate::log;
use crate::registry::{CodeHandle, CodeInfo, Instrumented};
use crate::state;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex, OnceLock};

type FnMalloc = unsafe extern "C" fn(*mut *mut c_void, usize) -> hipError_t;
type FnFree = unsafe extern "C" fn(*mut c_void) -> hipError_t;
type FnMemsetD8 = unsafe extern "C" fn(*mut c_void, u8, usize) -> hipError_t;
type FnMemsetD8Async = unsafe extern "C" fn(*mut c_void, u8, usize, hipStream_t) -> hipError_t;
type FnHtoD = unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> hipError_t;
type FnHtoDAsync = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, hipStream_t) -> hipError_t;
type FnDtoH = unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> hipError_t;
type FnDtoHAsync = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, hipStream_t) -> hipError_t;
type FnStreamSynchronize = unsafe extern "C" fn(hipStream_t) -> hipError_t;
type FnModuleGetGlobal =
    unsafe extern "C" fn(*mut *mut c_void, *mut usize, hipModule_t, *const c_char) -> hipError_t;
type FnModuleLoad = unsafe extern "C" fn(*mut hipModule_t, *const c_char) -> hipError_t;
type FnModuleLoadDataEx = unsafe extern "C" fn(
    *mut hipModule_t,
    *const c_void,
    c_uint,
    *mut c_int,
    *mut *mut c_void,
) -> hipError_t;
type FnModuleUnload = unsafe extern "C" fn(hipModule_t) -> hipError_t;
type FnRegisterFatBinary = unsafe extern "C" fn(*const c_void) -> *mut *mut c_void;
type FnRegisterFunction = unsafe extern "C" fn(
    *mut *mut c_void,
    *const c_void,
    *mut c_char,
    *const c_char,
    c_uint,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_int,
);
type FnRegisterVar = unsafe extern "C" fn(
    *mut *mut c_void,
    *mut c_void,
    *mut c_char,
    *const c_char,
    c_int,
    usize,
    c_int,
    c_int,
);
type FnGetSymbolAddress = unsafe extern "C" fn(*mut *mut c_void, *const c_void) -> hipError_t;
type FnGetSymbolSize = unsafe extern "C" fn(*mut usize, *const c_void) -> hipError_t;
type FnLastError = unsafe extern "C" fn() -> hipError_t;
type FnLaunchKernelSpt = unsafe extern "C" fn(
    *const c_void,
    dim3,
    dim3,
    *mut *mut c_void,
    usize,
    hipStream_t,
) -> hipError_t;

/// The HIP runtime's entry points the shim calls itself.
struct Runtime {
    malloc: Option<FnMalloc>,
    free: Option<FnFree>,
    memset_d8: Option<FnMemsetD8>,
    memset_d8_async: Option<FnMemsetD8Async>,
    htod: Option<FnHtoD>,
    htod_async: Option<FnHtoDAsync>,
    dtoh: Option<FnDtoH>,
    dtoh_async: Option<FnDtoHAsync>,
    stream_synchronize: Option<FnStreamSynchronize>,
    module_get_global: Option<FnModuleGetGlobal>,
    module_load: Option<FnModuleLoad>,
    module_load_data_ex: Option<FnModuleLoadDataEx>,
    module_unload: Option<FnModuleUnload>,
    register_fat_binary: Option<FnRegisterFatBinary>,
    register_function: Option<FnRegisterFunction>,
    register_var: Option<FnRegisterVar>,
    get_symbol_address: Option<FnGetSymbolAddress>,
    get_symbol_size: Option<FnGetSymbolSize>,
    peek_at_last_error: Option<FnLastError>,
    get_last_error: Option<FnLastError>,
    launch_kernel_spt: Option<FnLaunchKernelSpt>,
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

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| Runtime {
        malloc: hip_fn!(c"hipMalloc", FnMalloc),
        free: hip_fn!(c"hipFree", FnFree),
        memset_d8: hip_fn!(c"hipMemsetD8", FnMemsetD8),
        memset_d8_async: hip_fn!(c"hipMemsetD8Async", FnMemsetD8Async),
        htod: hip_fn!(c"hipMemcpyHtoD", FnHtoD),
        htod_async: hip_fn!(c"hipMemcpyHtoDAsync", FnHtoDAsync),
        dtoh: hip_fn!(c"hipMemcpyDtoH", FnDtoH),
        dtoh_async: hip_fn!(c"hipMemcpyDtoHAsync", FnDtoHAsync),
        stream_synchronize: hip_fn!(c"hipStreamSynchronize", FnStreamSynchronize),
        module_get_global: hip_fn!(c"hipModuleGetGlobal", FnModuleGetGlobal),
        module_load: hip_fn!(c"hipModuleLoad", FnModuleLoad),
        module_load_data_ex: hip_fn!(c"hipModuleLoadDataEx", FnModuleLoadDataEx),
        module_unload: hip_fn!(c"hipModuleUnload", FnModuleUnload),
        register_fat_binary: hip_fn!(c"__hipRegisterFatBinary", FnRegisterFatBinary),
        register_function: hip_fn!(c"__hipRegisterFunction", FnRegisterFunction),
        register_var: hip_fn!(c"__hipRegisterVar", FnRegisterVar),
        get_symbol_address: hip_fn!(c"hipGetSymbolAddress", FnGetSymbolAddress),
        get_symbol_size: hip_fn!(c"hipGetSymbolSize", FnGetSymbolSize),
        peek_at_last_error: hip_fn!(c"hipPeekAtLastError", FnLastError),
        get_last_error: hip_fn!(c"hipGetLastError", FnLastError),
        launch_kernel_spt: hip_fn!(c"hipLaunchKernel_spt", FnLaunchKernelSpt),
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

// ---- modules ----------------------------------------------------------------

/// Runs the shim's own HIP lookups without leaving their failures (a module
/// without `__prlx_desc`) for the application's `hipGetLastError`: when the
/// thread had no pending error before, it has none after. A pending error
/// of the application's stays an error (possibly another code).
fn quietly<T>(lookups: impl FnOnce() -> T) -> T {
    let (Some(peek), Some(take)) = (runtime().peek_at_last_error, runtime().get_last_error) else {
        return lookups();
    };
    // SAFETY: no arguments; the calling thread's own error state.
    let clean = unsafe { peek() } == HIP_SUCCESS;
    let result = lookups();
    if clean {
        // SAFETY: as above.
        unsafe { take() };
    }
    result
}

fn get_global(module: hipModule_t, name: &CStr) -> Option<(u64, usize)> {
    let get = runtime().module_get_global?;
    let (mut address, mut bytes): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
    // SAFETY: out-pointers to locals; a module the runtime just loaded.
    let result = unsafe { get(&mut address, &mut bytes, module, name.as_ptr()) };
    (result == HIP_SUCCESS && !address.is_null()).then_some((address as u64, bytes))
}

/// The module's descriptor and embedded site table, if the pass built it.
fn find_descriptor(module: hipModule_t) -> Option<Instrumented> {
    let (descriptor, bytes) = get_global(module, c"__prlx_desc")?;
    if bytes < std::mem::size_of::<crate::capture::Descriptor>() {
        log::once(
            LogLevel::Warn,
            "hip-desc-size",
            "__prlx_desc is smaller than the descriptor layout; not capturing",
        );
        return None;
    }
    let site_table = get_global(module, c"__prlx_sites").and_then(|(address, bytes)| {
        let copy = runtime().dtoh?;
        let mut buf = vec![0u8; bytes];
        // SAFETY: `buf` holds `bytes` bytes; the global is that large.
        let ok =
            unsafe { copy(buf.as_mut_ptr().cast(), address as *mut c_void, bytes) } == HIP_SUCCESS;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        ok.then(|| String::from_utf8(buf).ok()).flatten()
    });
    Some(Instrumented {
        descriptor,
        site_table,
        capture_lock: Arc::new(Mutex::new(())),
    })
}

/// Registers a module the HIP runtime loaded: captured by the pass when it
/// defines `__prlx_desc`, else recorded as metadata.
pub fn on_module_loaded(module: hipModule_t) {
    if !state::active() || module.is_null() {
        return;
    }
    state::guarded(
        "hipModuleLoadData",
        || (),
        || {
            let instrumented = quietly(|| find_descriptor(module));
            let mut info = CodeInfo::default();
            if let Some(found) = instrumented {
                info.image_id = prlx_session::fnv1a64(
                    found.site_table.as_deref().unwrap_or_default().as_bytes(),
                );
                info.capture = crate::module_load::CaptureMode::Pass;
                info.instrumented = Some(Arc::new(found));
                log::log(LogLevel::Info, "loaded a HIP module captured by pass");
            } else {
                info.capture_reason = Some(
                    "the HIP module was not built by prlxctl compile --offload-arch (no __prlx_desc)"
                        .to_owned(),
                );
            }
            state::register_code(CodeHandle::Module(module as usize), info);
        },
    );
}

/// `hipModuleLoadDataEx`: as `hipModuleLoadData`.
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadDataEx(
    module: *mut hipModule_t,
    image: *const c_void,
    num_options: c_uint,
    options: *mut c_int,
    values: *mut *mut c_void,
) -> hipError_t {
    let Some(real) = runtime().module_load_data_ex else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(module, image, num_options, options, values) };
    if result == HIP_SUCCESS && !module.is_null() {
        // SAFETY: the runtime wrote the handle.
        on_module_loaded(unsafe { *module });
    }
    result
}

/// `hipModuleLoad`: a code object (or bundle) from a file.
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoad(
    module: *mut hipModule_t,
    path: *const c_char,
) -> hipError_t {
    let Some(real) = runtime().module_load else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(module, path) };
    if result == HIP_SUCCESS && !module.is_null() {
        // SAFETY: the runtime wrote the handle.
        on_module_loaded(unsafe { *module });
    }
    result
}

/// `hipModuleUnload`: forgets the module and its functions first (the
/// runtime may reuse the handle).
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleUnload(module: hipModule_t) -> hipError_t {
    let Some(real) = runtime().module_unload else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    if state::active() {
        state::guarded(
            "hipModuleUnload",
            || (),
            || state::on_code_unloaded(CodeHandle::Module(module as usize)),
        );
    }
    // SAFETY: forwarding unchanged.
    unsafe { real(module) }
}

// ---- fat binaries registered by clang's host code --------------------------

/// The host shadows the shim registers in one fat binary. Their addresses
/// are what `hipGetSymbolAddress` takes; the bytes are never used.
struct Shadows {
    descriptor: Box<[u8; 64]>,
    sites: Box<[u8; 8]>,
    /// Whether the first launch looked the variables up already.
    resolved: bool,
}

#[derive(Default)]
struct FatBinaries {
    /// Fat binary handle → its shadows.
    shadows: std::collections::HashMap<usize, Shadows>,
    /// Host stub → the fat binary that registered it.
    functions: std::collections::HashMap<usize, usize>,
}

fn fat_binaries() -> std::sync::MutexGuard<'static, FatBinaries> {
    static TABLE: OnceLock<Mutex<FatBinaries>> = OnceLock::new();
    TABLE
        .get_or_init(|| Mutex::new(FatBinaries::default()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Registers `__prlx_desc` and `__prlx_sites` in the fat binary `handle`.
fn register_shadows(handle: *mut *mut c_void) {
    let Some(register_var) = runtime().register_var else {
        return;
    };
    let mut shadows = Shadows {
        descriptor: Box::new([0; 64]),
        sites: Box::new([0; 8]),
        resolved: false,
    };
    for (name, shadow, size) in [
        (c"__prlx_desc", shadows.descriptor.as_mut_ptr(), 64),
        (c"__prlx_sites", shadows.sites.as_mut_ptr(), 0),
    ] {
        // SAFETY: as clang's host code calls it: the handle just returned,
        // a host shadow that lives as long as the process (boxed, kept in
        // the table), the device-side name.
        unsafe {
            register_var(
                handle,
                shadow.cast(),
                name.as_ptr() as *mut c_char,
                name.as_ptr(),
                0,
                size,
                0,
                0,
            )
        };
    }
    fat_binaries().shadows.insert(handle as usize, shadows);
}

/// `__hipRegisterFatBinary`: forwarded, then the shim's variables are
/// registered in the fat binary (see the module documentation).
///
/// # Safety
/// As clang's host code calls it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let Some(real) = runtime().register_fat_binary else {
        return std::ptr::null_mut();
    };
    // SAFETY: forwarding unchanged.
    let handle = unsafe { real(data) };
    if !handle.is_null() && state::active() {
        state::guarded("__hipRegisterFatBinary", || (), || register_shadows(handle));
    }
    handle
}

/// `__hipRegisterFunction`: forwarded, then the host stub is named (the
/// kernel's device name) and tied to its fat binary.
///
/// # Safety
/// As clang's host code calls it.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __hipRegisterFunction(
    modules: *mut *mut c_void,
    host_function: *const c_void,
    device_function: *mut c_char,
    device_name: *const c_char,
    thread_limit: c_uint,
    tid: *mut c_void,
    bid: *mut c_void,
    block_dim: *mut c_void,
    grid_dim: *mut c_void,
    warp_size: *mut c_int,
) {
    let Some(real) = runtime().register_function else {
        return;
    };
    // SAFETY: forwarding unchanged.
    unsafe {
        real(
            modules,
            host_function,
            device_function,
            device_name,
            thread_limit,
            tid,
            bid,
            block_dim,
            grid_dim,
            warp_size,
        )
    };
    if device_name.is_null() || !state::active() {
        return;
    }
    state::guarded(
        "__hipRegisterFunction",
        || (),
        || {
            // SAFETY: clang passes the kernel's NUL-terminated name.
            let name = unsafe { CStr::from_ptr(device_name) };
            state::on_function(
                host_function as *mut c_void,
                name,
                CodeHandle::Module(modules as usize),
            );
            fat_binaries()
                .functions
                .insert(host_function as usize, modules as usize);
        },
    );
}

/// Before `hipLaunchKernel` records a launch: on the first launch of a
/// kernel of a registered fat binary, finds out whether that fat binary was
/// built with the pass (its `__prlx_desc`, through the shadow) and
/// registers it as captured or as metadata.
pub fn before_launch(host_function: *const c_void) {
    if !state::active() {
        return;
    }
    state::guarded(
        "hipLaunchKernel",
        || (),
        || resolve_fat_binary(host_function),
    );
}

fn resolve_fat_binary(host_function: *const c_void) {
    let (handle, descriptor_shadow, sites_shadow) = {
        let mut table = fat_binaries();
        let Some(&handle) = table.functions.get(&(host_function as usize)) else {
            return;
        };
        let Some(shadows) = table.shadows.get_mut(&handle) else {
            return;
        };
        if shadows.resolved {
            return;
        }
        shadows.resolved = true;
        (
            handle,
            shadows.descriptor.as_ptr() as usize,
            shadows.sites.as_ptr() as usize,
        )
    };
    let lookup = |shadow: usize| -> Option<(u64, usize)> {
        let address_of = runtime().get_symbol_address?;
        let size_of = runtime().get_symbol_size?;
        let (mut address, mut size): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
        // SAFETY: out-pointers to locals; a shadow registered in this fat binary.
        let found = unsafe {
            address_of(&mut address, shadow as *const c_void) == HIP_SUCCESS
                && size_of(&mut size, shadow as *const c_void) == HIP_SUCCESS
        };
        (found && !address.is_null()).then_some((address as u64, size))
    };
    let mut info = CodeInfo::default();
    let (descriptor, sites) = quietly(|| (lookup(descriptor_shadow), lookup(sites_shadow)));
    match descriptor {
        Some((descriptor, bytes)) if bytes >= std::mem::size_of::<crate::capture::Descriptor>() => {
            let site_table = sites.and_then(|(address, bytes)| {
                let copy = runtime().dtoh?;
                let mut buf = vec![0u8; bytes];
                // SAFETY: `buf` holds `bytes` bytes; the global is that large.
                let ok = unsafe { copy(buf.as_mut_ptr().cast(), address as *mut c_void, bytes) }
                    == HIP_SUCCESS;
                let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
                buf.truncate(end);
                ok.then(|| String::from_utf8(buf).ok()).flatten()
            });
            info.image_id =
                prlx_session::fnv1a64(site_table.as_deref().unwrap_or_default().as_bytes());
            info.capture = crate::module_load::CaptureMode::Pass;
            info.instrumented = Some(Arc::new(Instrumented {
                descriptor,
                site_table,
                capture_lock: Arc::new(Mutex::new(())),
            }));
            log::log(
                LogLevel::Info,
                "a registered HIP fat binary is captured by pass",
            );
        }
        _ => {
            info.capture_reason = Some(
                "the HIP fat binary was not built by prlxctl compile --offload-arch (no __prlx_desc)"
                    .to_owned(),
            );
        }
    }
    state::register_code(CodeHandle::Module(handle), info);
}

/// `hipLaunchKernel_spt` (`-fgpu-default-stream=per-thread` builds): as
/// `hipLaunchKernel` in [`crate::hooks`].
///
/// # Safety
/// As `hip_runtime_api.h` documents for `hipLaunchKernel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipLaunchKernel_spt(
    function_address: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    let Some(real) = runtime().launch_kernel_spt else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    before_launch(function_address);
    // SAFETY: forwarding unchanged.
    let forward =
        || unsafe { real(function_address, grid, block, args, shared, stream) } as CUresult;
    let call = state::LaunchCall {
        function: function_address as *mut c_void,
        geometry: crate::capture::Geometry {
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
        },
        shared_bytes: shared as u32,
        stream,
        params: args,
        extra: std::ptr::null_mut(),
        hip: true,
    };
    state::on_launch(call, forward) as hipError_t
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
