//! What the shim knows of loaded code, and what it learns as code loads.
//!
//! The registry of loaded modules and libraries, their functions and
//! kernels ([`crate::registry`]) lives here, behind one lock; the hooks
//! report loads, lookups and unloads, and the launch path (`launch`)
//! asks which kernel a launch handle is ([`identify`]) and whether its module
//! records ([`instrumented_of`]).

use crate::backend::Backend;
use crate::capture;
use crate::config::LogLevel;
use crate::driver;
use crate::ffi::*;
use crate::guard::guarded;
use crate::log;
use crate::module_load::Plan;
use crate::process::active;
use crate::registry::{
    CaptureMode, CodeHandle, CodeInfo, FunctionInfo, Instrumented, PendingDescriptor, Registry,
};
use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));

pub(crate) fn registry() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock poisons it; the data stays consistent
    // enough for bookkeeping, so keep going.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// After a module load the driver answered (`cuModuleLoad*`, the runtime
/// interface's loads): the new module's image and plan are registered.
pub(crate) fn module_loaded(
    result: CUresult,
    module: *mut CUmodule,
    image: Option<&[u8]>,
    plan: Option<Plan>,
) {
    if result == CUDA_SUCCESS && !module.is_null() {
        // SAFETY: the driver wrote the new handle.
        let handle = unsafe { *module } as usize;
        debug(|| format!("module {handle:#x} loaded"));
        guarded(
            "module load",
            || (),
            || on_code_loaded_with(CodeHandle::Module(handle), image, plan),
        );
    }
}

/// After a library load (`cuLibraryLoadData`, `cuLibraryLoadFromFile`):
/// the new library's image and plan are registered.
///
/// # Safety
/// `library` is the caller's out-parameter, written by the driver when
/// `result` is success.
pub(crate) unsafe fn library_loaded(
    what: &str,
    result: CUresult,
    library: *mut CUlibrary,
    image: Option<&[u8]>,
    plan: Option<Plan>,
) {
    if result == CUDA_SUCCESS && !library.is_null() {
        // SAFETY: per the contract.
        let handle = unsafe { *library } as usize;
        debug(|| format!("{what}: library {handle:#x} loaded"));
        guarded(
            what,
            || (),
            || on_code_loaded_with(CodeHandle::Library(handle), image, plan),
        );
    }
}

/// After a successful lookup of a function (or kernel) by name: remember
/// which code it belongs to and what it is called.
///
/// # Safety
/// `out` and `name` are the caller's arguments to a lookup the driver just
/// answered with success: `out` holds the new handle, `name` is a C string.
pub(crate) unsafe fn after_lookup(
    what: &str,
    out: *mut *mut c_void,
    name: *const c_char,
    code: CodeHandle,
) {
    if out.is_null() || name.is_null() {
        return;
    }
    // SAFETY: per the contract above: a non-null C string, and the new handle.
    let (name, handle) = unsafe { (CStr::from_ptr(name), *out) };
    debug(|| format!("{what}({code:?}, {name:?}) = {handle:p}"));
    guarded(what, || (), || on_function(handle, name, code));
}

/// `PRLX_LOG=debug`: what the driver's entry points were asked and gave.
pub(crate) fn debug(message: impl FnOnce() -> String) {
    if active() && log::enabled(LogLevel::Debug) {
        log::log(LogLevel::Debug, &message());
    }
}

/// What the shim learns from a module image it saw being loaded.
pub fn on_code_loaded(code: CodeHandle, image: Option<&[u8]>) {
    on_code_loaded_with(code, image, None);
}

/// [`on_code_loaded`] for an image `module_load` planned (and maybe rewrote).
pub fn on_code_loaded_with(code: CodeHandle, image: Option<&[u8]>, plan: Option<Plan>) {
    if !active() {
        return;
    }
    let mut info = CodeInfo {
        image_id: prlx_session::fnv1a64(image.map(|i| &i[..i.len().min(1 << 16)]).unwrap_or(&[])),
        ..CodeInfo::default()
    };
    let mut plan = plan;
    match plan.as_mut().and_then(|p| p.params.take()) {
        Some(params) => info.ptx_params = params,
        None => {
            if let Some(text) = image.and_then(ptx_text) {
                info.ptx_params = crate::registry::ptx_param_layouts(text);
            }
        }
    }
    let wanted = plan
        .as_ref()
        .is_none_or(|p| p.mode != CaptureMode::Metadata);
    let found = find_descriptor(code).filter(|_| wanted);
    if found.is_none() {
        info.pending = pending_descriptor(code, plan.as_mut());
    }
    info.instrumented = found.map(|mut found| {
        if let Some(table) = plan.as_mut().and_then(|p| p.site_table.take()) {
            found.site_table = Some(table);
        }
        Arc::new(found)
    });
    match plan {
        Some(plan) => {
            // The NVBit tool records without a descriptor.
            info.capture = if info.instrumented.is_some() || plan.mode == CaptureMode::Nvbit {
                plan.mode
            } else {
                CaptureMode::Metadata
            };
            info.capture_reason = plan.reason;
        }
        None if info.instrumented.is_some() => info.capture = CaptureMode::Pass,
        None => {}
    }
    if info.instrumented.is_some() {
        log::log(
            LogLevel::Info,
            &format!("loaded a module captured by {}", info.capture.as_str()),
        );
    }
    registry().code.insert(code, info);
}

/// Set once a library waits for its descriptor: launches only look when so.
static ANY_PENDING: AtomicBool = AtomicBool::new(false);

/// A library the shim instrumented whose descriptor the driver would not
/// look up at load (no current context): to look up at its first launch.
fn pending_descriptor(code: CodeHandle, plan: Option<&mut Plan>) -> Option<PendingDescriptor> {
    let plan = plan?;
    let instrumenting = matches!(
        plan.mode,
        CaptureMode::Ptx | CaptureMode::Pass | CaptureMode::Substitute
    );
    if !matches!(code, CodeHandle::Library(_)) || !instrumenting || current_context().is_some() {
        return None;
    }
    ANY_PENDING.store(true, Ordering::Relaxed);
    Some(PendingDescriptor {
        mode: plan.mode,
        site_table: plan.site_table.take(),
    })
}

/// The current context, if any.
fn current_context() -> Option<usize> {
    let get = driver::cuda().cuCtxGetCurrent?;
    let mut ctx = std::ptr::null_mut();
    // SAFETY: an out-pointer to a local.
    let ok = unsafe { get(&mut ctx) } == CUDA_SUCCESS;
    (ok && !ctx.is_null()).then_some(ctx as usize)
}

/// Marks that a library waits for its descriptor, as a load before any
/// context would (tests of the launch path register such code by hand).
#[cfg(test)]
pub(crate) fn note_pending() {
    ANY_PENDING.store(true, Ordering::Relaxed);
}

/// Whether some library waits for its descriptor ([`resolve_pending`] has
/// work to do for some launch).
pub(crate) fn any_pending() -> bool {
    ANY_PENDING.load(Ordering::Relaxed)
}

/// Looks up the descriptor of a library that waits for one (see
/// [`pending_descriptor`]), now that a launch runs in a context.
pub(crate) fn resolve_pending(code: CodeHandle) {
    if !ANY_PENDING.load(Ordering::Relaxed) {
        return;
    }
    let pending = registry()
        .code
        .get_mut(&code)
        .and_then(|i| i.pending.take());
    let Some(pending) = pending else {
        return;
    };
    let found = find_descriptor(code);
    let mut registry = registry();
    let Some(info) = registry.code.get_mut(&code) else {
        return;
    };
    match found {
        Some(mut found) => {
            if pending.site_table.is_some() {
                found.site_table = pending.site_table;
            }
            info.instrumented = Some(Arc::new(found));
            info.capture = pending.mode;
            info.capture_reason = None;
            log::log(
                LogLevel::Info,
                &format!(
                    "loaded a module captured by {} (looked up at its first launch)",
                    pending.mode.as_str()
                ),
            );
        }
        None => {
            info.capture_reason = Some(
                "the instrumented library's descriptor (__prlx_desc) could not be looked up".into(),
            );
        }
    }
}

/// The image as PTX text, if it is PTX (NUL-terminated, starts like PTX).
fn ptx_text(image: &[u8]) -> Option<&str> {
    let end = image.iter().position(|&b| b == 0).unwrap_or(image.len());
    let text = std::str::from_utf8(&image[..end]).ok()?;
    (text.contains(".entry") && (text.contains(".version") || text.contains(".target")))
        .then_some(text)
}

fn get_global(code: CodeHandle, name: &CStr) -> Option<(u64, usize)> {
    let cuda = driver::cuda();
    let (mut address, mut bytes) = (0u64, 0usize);
    // SAFETY: out-pointers to locals, a live handle from a successful load.
    let result = unsafe {
        match code {
            CodeHandle::Module(m) => {
                cuda.cuModuleGetGlobal_v2?(&mut address, &mut bytes, m as CUmodule, name.as_ptr())
            }
            CodeHandle::Library(l) => {
                cuda.cuLibraryGetGlobal?(&mut address, &mut bytes, l as CUlibrary, name.as_ptr())
            }
        }
    };
    (result == CUDA_SUCCESS).then_some((address, bytes))
}

fn find_descriptor(code: CodeHandle) -> Option<Instrumented> {
    let (descriptor, bytes) = get_global(code, c"__prlx_desc")?;
    if bytes < std::mem::size_of::<capture::Descriptor>() {
        log::once(
            LogLevel::Warn,
            "desc-size",
            "__prlx_desc is smaller than the descriptor layout; not capturing",
        );
        return None;
    }
    let site_table = get_global(code, c"__prlx_sites").and_then(|(address, bytes)| {
        let mut buf = vec![0u8; bytes];
        let copy = driver::cuda().cuMemcpyDtoH_v2?;
        // SAFETY: `buf` holds `bytes` bytes; the global is that large.
        let ok = unsafe { copy(buf.as_mut_ptr() as *mut c_void, address, bytes) } == CUDA_SUCCESS;
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

pub fn on_function(handle: *mut c_void, name: &CStr, code: CodeHandle) {
    if !active() || handle.is_null() {
        return;
    }
    let mut registry = registry();
    let info = FunctionInfo {
        name: name.to_string_lossy().into_owned(),
        code: registry.canonical(code),
    };
    registry.functions.insert(handle as usize, info);
}

/// `alias` is another handle of `code` (`cuLibraryGetModule`): functions
/// looked up in it belong to `code`.
pub fn on_code_alias(alias: CodeHandle, code: CodeHandle) {
    if !active() || alias == code {
        return;
    }
    let mut registry = registry();
    let code = registry.canonical(code);
    registry.code_aliases.insert(alias, code);
}

/// `cuKernelGetFunction`: the function inherits the kernel's identity.
pub fn on_alias(function: *mut c_void, kernel: *mut c_void) {
    if !active() {
        return;
    }
    let mut registry = registry();
    if let Some(info) = registry.functions.get(&(kernel as usize)).cloned() {
        registry.functions.insert(function as usize, info);
    }
}

/// Registers code a runtime other than CUDA loaded (`hip`).
pub(crate) fn register_code(code: CodeHandle, info: CodeInfo) {
    registry().code.insert(code, info);
}

pub fn on_code_unloaded(code: CodeHandle) {
    if active() {
        registry().forget_code(code);
    }
}

/// The kernel's name and code for a launch handle the registry may not
/// know (then the driver names it: `cuFuncGetName`, or the HIP stub's symbol).
pub(crate) fn identify(function: *mut c_void, backend: Backend) -> (String, Option<CodeHandle>) {
    if let Some(f) = registry().functions.get(&(function as usize)) {
        return (f.name.clone(), Some(f.code));
    }
    let name = match backend {
        Backend::Cuda => function_name(function),
        Backend::Hip => symbol_name(function),
    };
    if let Some(found) = name
        .as_deref()
        .and_then(|n| function_of_kernel(function, n))
    {
        return (found.name, Some(found.code));
    }
    (name.unwrap_or_else(|| "<unknown kernel>".into()), None)
}

/// A `CUfunction` the shim never saw handed out that is a known kernel's
/// function in the current context: NVIDIA's driver reports the
/// context's `CUfunction` (not the `CUkernel` the runtime launched) for a
/// kernel node of a captured graph, and `cuKernelGetFunction` may be called
/// where the shim does not see it. Checked with `cuKernelGetFunction`,
/// never guessed from the name alone; remembered once found.
fn function_of_kernel(function: *mut c_void, name: &str) -> Option<FunctionInfo> {
    let get_function = driver::cuda().cuKernelGetFunction?;
    let candidates = registry().library_kernels_named(name);
    for (kernel, info) in candidates {
        let mut found: CUfunction = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; a kernel handle the driver gave out.
        let result = unsafe { get_function(&mut found, kernel as CUkernel) };
        log::log(
            LogLevel::Debug,
            &format!("{function:p} ({name}): kernel {kernel:#x} has function {found:p} ({result})"),
        );
        if result == CUDA_SUCCESS && found == function {
            registry().functions.insert(function as usize, info.clone());
            return Some(info);
        }
    }
    None
}

/// The recording state of the module `code`, when its launches record.
pub(crate) fn instrumented_of(code: CodeHandle) -> Option<Arc<Instrumented>> {
    resolve_pending(code);
    registry().code.get(&code)?.instrumented.clone()
}

/// The device address of the module's launch table
/// (`prlx_ptx_instrument::runtime::LAUNCH_TABLE`: modules instrumented at
/// load have one, pass-built ones do not).
pub(crate) fn launch_table_of(code: CodeHandle) -> Option<u64> {
    use prlx_ptx_instrument::runtime::{LAUNCH_ENTRY_BYTES, LAUNCH_TABLE_ENTRIES};
    let (address, bytes) = get_global(code, c"__prlx_launches")?;
    (bytes as u64 >= u64::from(LAUNCH_TABLE_ENTRIES * LAUNCH_ENTRY_BYTES)).then_some(address)
}

/// The capture mode of the module `code` names, and why it records metadata only.
pub(crate) fn capture_of(code: Option<CodeHandle>) -> (CaptureMode, Option<String>) {
    let registry = registry();
    match code.and_then(|c| registry.code.get(&c)) {
        Some(info) => (info.capture, info.capture_reason.clone()),
        None => (CaptureMode::Metadata, None),
    }
}

fn function_name(function: CUfunction) -> Option<String> {
    let get_name = driver::cuda().cuFuncGetName?;
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: out-pointer to a local; the driver returns a string it owns.
    if unsafe { get_name(&mut name, function) } != CUDA_SUCCESS || name.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated per the API.
    Some(
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned(),
    )
}

/// The symbol at `address` (HIP's host-side kernel stubs carry the kernel's name).
fn symbol_name(address: *mut c_void) -> Option<String> {
    // SAFETY: `Dl_info` is a C struct of pointers and ints, for which
    // all zeroes (null pointers) is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only compares the address against the loaded objects'
    // ranges (any value is accepted; one in no object gives 0) and writes
    // `info`, a live local.
    if unsafe { libc::dladdr(address, &mut info) } == 0 || info.dli_sname.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated.
    Some(
        unsafe { CStr::from_ptr(info.dli_sname) }
            .to_string_lossy()
            .into_owned(),
    )
}
