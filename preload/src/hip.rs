//! HIP in the shim: modules the application loads with the HIP module API
//! are registered like CUDA modules (a module built by
//! `prlxctl compile --offload-arch=gfx…` defines `__prlx_desc` and
//! `__prlx_sites`), and launches of their kernels are captured by the same
//! code as CUDA launches ([`crate::capture`]), through a driver table whose
//! memory entry points are the HIP runtime's (`hip_driver::as_cuda`): `hipMalloc`,
//! `hipMemsetD8Async`, `hipMemcpyHtoDAsync`, `hipMemcpyDtoHAsync`,
//! `hipStreamSynchronize`. Errors they return are passed on as their
//! `hipError_t` values.
//!
//! Covered: `hipModuleLoadData`,
//! `hipModuleLoadDataEx`, `hipModuleLoad`, `hipModuleUnload`, and launches
//! through `hipModuleLaunchKernel`; and fat binaries clang's host code
//! registers (`__hipRegisterFatBinary`, `__hipRegisterFunction`), launched
//! with `<<<>>>`/`hipLaunchKernel`. The runtime hands out no module for a
//! fat binary, so the shim registers two variables of its own in it,
//! `__prlx_desc` and `__prlx_sites`, with host shadows it owns: on the first
//! launch `hipGetSymbolAddress` finds them in a pass-built code object (and
//! fails in any other, which is then recorded as metadata).

use crate::backend::Backend;
use crate::capture::Geometry;
use crate::config::LogLevel;
use crate::driver;
use crate::ffi::*;
use crate::guard::guarded;
use crate::hip_driver::runtime;
use crate::launch::{self, LaunchCall};
use crate::log;
use crate::process::active;
use crate::registry::{CaptureMode, CodeHandle, CodeInfo, Instrumented};
use crate::state;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Arc, Mutex, OnceLock};

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
    if !active() || module.is_null() {
        return;
    }
    guarded(
        "hipModuleLoadData",
        || (),
        || {
            let instrumented = quietly(|| find_descriptor(module));
            let mut info = CodeInfo::default();
            if let Some(found) = instrumented {
                info.image_id = prlx_session::fnv1a64(
                    found.site_table.as_deref().unwrap_or_default().as_bytes(),
                );
                info.capture = CaptureMode::Pass;
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
    if active() {
        guarded(
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
    if !handle.is_null() && active() {
        guarded("__hipRegisterFatBinary", || (), || register_shadows(handle));
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
    block_dim: *mut dim3,
    grid_dim: *mut dim3,
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
    if device_name.is_null() || !active() {
        return;
    }
    guarded(
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
    if !active() {
        return;
    }
    guarded(
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
            info.capture = CaptureMode::Pass;
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
/// `hipLaunchKernel`.
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
    let call = LaunchCall {
        function: function_address as *mut c_void,
        geometry: Geometry {
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
        },
        shared_bytes: shared as u32,
        stream,
        params: args,
        extra: std::ptr::null_mut(),
        backend: Backend::Hip,
    };
    launch::on_launch(call, forward) as hipError_t
}

// ---- the HIP module API and launches ---------------------------------------

/// Forwarded; the shim registers what it learns.
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLoadData(
    module: *mut hipModule_t,
    image: *const c_void,
) -> hipError_t {
    let Some(real) = driver::hip().hipModuleLoadData else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(module, image) };
    if result == HIP_SUCCESS && !module.is_null() {
        // SAFETY: the runtime wrote the handle.
        on_module_loaded(unsafe { *module });
    }
    result
}

/// Forwarded; the shim registers what it learns.
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut hipFunction_t,
    module: hipModule_t,
    name: *const c_char,
) -> hipError_t {
    let Some(real) = driver::hip().hipModuleGetFunction else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(function, module, name) };
    if result == HIP_SUCCESS {
        // SAFETY: the runtime answered the lookup.
        unsafe {
            state::after_lookup(
                "hipModuleGetFunction",
                function,
                name,
                CodeHandle::Module(module as usize),
            )
        };
    }
    result
}

/// Forwarded; the shim registers what it learns.
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    f: hipFunction_t,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> hipError_t {
    let Some(real) = driver::hip().hipModuleLaunchKernel else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let forward =
        || unsafe { real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) } as CUresult;
    let call = LaunchCall {
        function: f,
        geometry: Geometry {
            grid: [gx, gy, gz],
            block: [bx, by, bz],
        },
        shared_bytes: shared,
        stream,
        params,
        extra,
        backend: Backend::Hip,
    };
    launch::on_launch(call, forward) as hipError_t
}

/// Forwarded; the shim registers what it learns.
///
/// # Safety
/// As `hip_runtime_api.h` documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipLaunchKernel(
    function_address: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    let Some(real) = driver::hip().hipLaunchKernel else {
        return HIP_ERROR_NOT_INITIALIZED;
    };
    before_launch(function_address);
    // SAFETY: forwarding unchanged.
    let forward =
        || unsafe { real(function_address, grid, block, args, shared, stream) } as CUresult;
    let call = LaunchCall {
        function: function_address as *mut c_void,
        geometry: Geometry {
            grid: [grid.x, grid.y, grid.z],
            block: [block.x, block.y, block.z],
        },
        shared_bytes: shared as u32,
        stream,
        params: args,
        extra: std::ptr::null_mut(),
        backend: Backend::Hip,
    };
    launch::on_launch(call, forward) as hipError_t
}
