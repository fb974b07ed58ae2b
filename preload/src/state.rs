//! Process-wide state and the launch path every launch wrapper shares.
//!
//! Nothing here runs before the application's first CUDA call except
//! reading the configuration; the session directory and writer thread start
//! with the first recorded launch.

use crate::capture::{self, Geometry};
use crate::config::{Config, LogLevel};
use crate::driver;
use crate::ffi::*;
use crate::log;
use crate::registry::{CodeHandle, CodeInfo, FunctionInfo, Instrumented, ParamSlot, Registry};
use crate::sink::{Launch, Sink};
use prlx_session::LaunchRecord;
use std::ffi::{CStr, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

static CONFIG: OnceLock<Config> = OnceLock::new();
static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(|| Mutex::new(Registry::default()));
static SINK: OnceLock<Option<Sink>> = OnceLock::new();
/// Set in a child after fork(): the parent's writer thread and driver state
/// are not there, so the child passes every call through.
static FORKED_CHILD: AtomicBool = AtomicBool::new(false);

pub fn config() -> &'static Config {
    CONFIG.get_or_init(|| {
        let config = Config::from_env();
        // From the first CUDA call on, a forked child passes everything
        // through: the parent's driver state and writer thread are not its own.
        // SAFETY: registering a plain extern "C" handler.
        unsafe { libc::pthread_atfork(None, None, Some(in_forked_child)) };
        for warning in &config.warnings {
            if config.log >= LogLevel::Warn {
                eprintln!("[prlx] {warning}");
            }
        }
        config
    })
}

/// Whether the shim does anything but forward.
pub fn active() -> bool {
    !FORKED_CHILD.load(Ordering::Relaxed) && !config().disabled
}

extern "C" fn in_forked_child() {
    FORKED_CHILD.store(true, Ordering::Relaxed);
}

extern "C" fn at_exit() {
    if let Some(Some(sink)) = SINK.get() {
        if !FORKED_CHILD.load(Ordering::Relaxed) && !sink.flush(Duration::from_secs(60)) {
            eprintln!(
                "[prlx] the trace writer did not finish within 60 s; the session may be incomplete"
            );
        }
    }
}

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock poisons it; the data stays consistent
    // enough for bookkeeping, so keep going.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn sink() -> Option<&'static Sink> {
    SINK.get_or_init(|| {
        let config = config();
        match Sink::start(config) {
            Ok(sink) => {
                // SAFETY: registering plain extern "C" handlers.
                unsafe {
                    libc::atexit(at_exit);
                }
                // The sink says where the session goes, once it knows.
                Some(sink)
            }
            Err(e) => {
                log::log(LogLevel::Error, &format!("not recording: {e}"));
                None
            }
        }
    })
    .as_ref()
}

/// Runs `body`; a panic inside is logged once and answered with `fallback`.
pub fn guarded<T>(what: &str, fallback: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(_) => {
            log::once(
                LogLevel::Error,
                what,
                &format!("internal error in {what}; passing the call through"),
            );
            fallback()
        }
    }
}

// ---- code loading -------------------------------------------------------

/// What the shim learns from a module image it saw being loaded.
pub fn on_code_loaded(code: CodeHandle, image: Option<&[u8]>) {
    on_code_loaded_with(code, image, None);
}

/// [`on_code_loaded`] for an image `module_load` planned (and maybe rewrote).
pub fn on_code_loaded_with(
    code: CodeHandle,
    image: Option<&[u8]>,
    plan: Option<crate::module_load::Plan>,
) {
    use crate::module_load::CaptureMode;
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
fn pending_descriptor(
    code: CodeHandle,
    plan: Option<&mut crate::module_load::Plan>,
) -> Option<crate::registry::PendingDescriptor> {
    use crate::module_load::CaptureMode;
    let plan = plan?;
    let instrumenting = matches!(
        plan.mode,
        CaptureMode::Ptx | CaptureMode::Pass | CaptureMode::Substitute
    );
    if !matches!(code, CodeHandle::Library(_)) || !instrumenting || current_context().is_some() {
        return None;
    }
    ANY_PENDING.store(true, Ordering::Relaxed);
    Some(crate::registry::PendingDescriptor {
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

// ---- launches -----------------------------------------------------------

/// The application's arguments to one launch.
pub struct LaunchCall {
    pub function: CUfunction,
    pub geometry: Geometry,
    pub shared_bytes: u32,
    pub stream: CUstream,
    pub params: *mut *mut c_void,
    pub extra: *mut *mut c_void,
    /// A HIP launch: the handle means nothing to the CUDA driver.
    pub hip: bool,
}

/// Records (and, for instrumented modules, captures) one launch around
/// `launch`, which makes the real call. `launch` runs exactly once.
pub fn on_launch(call: LaunchCall, launch: impl FnOnce() -> CUresult) -> CUresult {
    if !active() {
        return launch();
    }
    forward_once("a launch", launch, |run| record_launch(&call, run))
}

/// Runs `record`, which makes the application's call through `run` (at
/// most once), so that `forward` runs exactly once whatever happens: a
/// panic while recording is logged once (naming `what`) and the call still
/// goes through (if `record` had not made it yet), its result returned.
pub(crate) fn forward_once<F: FnOnce() -> CUresult>(
    what: &str,
    forward: F,
    record: impl FnOnce(&mut dyn FnMut() -> CUresult),
) -> CUresult {
    let mut forward = Some(forward);
    let mut result: Option<CUresult> = None;
    let recorded = catch_unwind(AssertUnwindSafe(|| {
        let mut run = || -> CUresult {
            let r = forward.take().map_or(CUDA_SUCCESS, |f| f());
            result = Some(r);
            r
        };
        record(&mut run)
    }));
    if recorded.is_err() {
        log::once(
            LogLevel::Error,
            what,
            &format!("internal error while recording {what}; passing the call through"),
        );
    }
    match (result, forward.take()) {
        (Some(result), _) => result,
        (None, Some(forward)) => forward(),
        (None, None) => CUDA_SUCCESS, // unreachable: taking the call sets the result
    }
}

fn record_launch(call: &LaunchCall, run: &mut dyn FnMut() -> CUresult) {
    let config = config();
    // The filter is consulted on the borrowed name first: a launch it
    // excludes costs one lookup and one match, nothing more.
    let function = {
        let registry = registry();
        match registry.functions.get(&(call.function as usize)) {
            Some(f) if !config.wants(&f.name) => None,
            Some(f) => Some(Some(f.clone())),
            None => Some(None),
        }
    };
    let Some(function) = function else {
        run();
        return;
    };
    let (name, code) = match function {
        Some(f) => (f.name, Some(f.code)),
        None => identify(call.function, call.hip),
    };
    if let Some(code) = code {
        resolve_pending(code);
    }
    if !config.wants(&name) {
        run();
        return;
    }
    if !call.hip && crate::graphs::stream_is_capturing(call.stream) {
        // Not run now: a node of the graph being captured, recorded when
        // that graph is launched. Nothing else may touch the driver here.
        crate::graphs::note_captured_launch(&name);
        run();
        return;
    }
    let timestamp_ns = now_ns();
    let Some(sink) = sink() else {
        run();
        return;
    };
    let (seq, launch_index, instrumented, image_id, site_table) = {
        let mut registry = registry();
        if config
            .max_launches
            .is_some_and(|max| registry.launches_recorded >= max)
        {
            drop(registry);
            sink.count_dropped();
            run();
            return;
        }
        let seq = registry.launches_recorded;
        registry.launches_recorded += 1;
        let launch_index = registry.next_launch_index(&name);
        let code_info = code.and_then(|c| registry.code.get(&c));
        let instrumented = code_info.and_then(|c| c.instrumented.clone());
        let image_id = code_info.map_or(0, |c| c.image_id);
        let site_table = instrumented.as_ref().and_then(|i| i.site_table.clone());
        (seq, launch_index, instrumented, image_id, site_table)
    };
    let args_hash = if call.hip {
        // SAFETY: the launch's own argument list.
        unsafe { extra_buffer(call.extra) }
            .map(prlx_session::fnv1a64)
            .map(|h| format!("{h:#018x}"))
    } else {
        args_hash_for(call.function, &name, code, call.params, call.extra)
    };
    let (device, context) = if call.hip {
        (None, None)
    } else {
        device_and_context(call.stream)
    };
    let stack = crate::stack::capture_for(launch_index);

    let mut record = LaunchRecord {
        seq,
        kernel: name.clone(),
        // Demangled on the writer thread, once per name.
        demangled: None,
        launch_index,
        grid: call.geometry.grid,
        block: call.geometry.block,
        shared_bytes: call.shared_bytes,
        stream: call.stream as u64,
        args_hash,
        timestamp_ns,
        device,
        context,
        ..LaunchRecord::default()
    };
    // How this launch is captured (module_load); a kernel without a trace
    // says why, once.
    let (capture, capture_reason) = capture_of(code);
    record.capture = Some(capture.as_str().to_owned());
    if instrumented.is_none() && capture != crate::module_load::CaptureMode::Nvbit {
        crate::module_load::notice_metadata(&name, capture_reason.as_deref());
    }
    let mut site_table = site_table.map(|json| (image_id, json));
    let trace = match instrumented {
        None if capture == crate::module_load::CaptureMode::Nvbit => {
            let launched = run();
            record.result = launched as i32;
            match crate::nvbit::take_trace(call.function as usize)
                .filter(|_| launched == CUDA_SUCCESS)
            {
                Some(Ok((trace, sites))) => {
                    // The tool's map grows as it instruments: one file per version.
                    site_table = Some((prlx_session::fnv1a64(sites.as_bytes()), sites));
                    Some(trace)
                }
                Some(Err(e)) => {
                    record.capture_error = Some(e);
                    None
                }
                None => {
                    record.capture_error =
                        Some("the NVBit tool handed over no trace for this launch".into());
                    None
                }
            }
        }
        Some(_) if crate::graphs::any_capture_in_progress() => {
            // Allocations and copies would be illegal (global capture mode)
            // and could invalidate the application's capture.
            log::once(
                LogLevel::Warn,
                "capture-during-graph-capture",
                "a stream is being captured into a CUDA graph: launches meanwhile are recorded as metadata only",
            );
            record.capture_error =
                Some("not captured: a stream was being captured into a CUDA graph".into());
            record.result = run() as i32;
            None
        }
        Some(inst) => {
            let _serialised = inst.capture_lock.lock().unwrap_or_else(|p| p.into_inner());
            let (launched, captured) = capture::capture(
                if call.hip {
                    crate::hip::as_cuda()
                } else {
                    driver::cuda()
                },
                config,
                inst.descriptor,
                &name,
                call.geometry,
                call.stream,
                run,
            );
            record.result = launched as i32;
            match captured {
                Ok(trace) => Some(trace),
                Err(e) => {
                    log::once(
                        LogLevel::Warn,
                        "capture",
                        &format!("capture of {name} failed: {e}"),
                    );
                    record.capture_error = Some(e);
                    None
                }
            }
        }
        None => {
            record.result = run() as i32;
            None
        }
    };
    sink.submit(Launch {
        record,
        trace,
        site_table,
        stack,
    });
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The kernel's name and code for a launch handle the registry may not
/// know (then the driver names it: `cuFuncGetName`, or the HIP stub's symbol).
pub(crate) fn identify(function: *mut c_void, hip: bool) -> (String, Option<CodeHandle>) {
    if let Some(f) = registry().functions.get(&(function as usize)) {
        return (f.name.clone(), Some(f.code));
    }
    let name = if hip {
        symbol_name(function)
    } else {
        function_name(function)
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

/// The launch's argument hash ("0x…"): the packed bytes per the kernel's
/// parameter layout (from the PTX image, else `cuFuncGetParamInfo`,
/// looked up once per function), else the `extra` buffer.
pub(crate) fn args_hash_for(
    function: CUfunction,
    name: &str,
    code: Option<CodeHandle>,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Option<String> {
    let layout = {
        let registry = registry();
        let from_ptx = code
            .and_then(|c| registry.code.get(&c))
            .and_then(|c| c.ptx_params.get(name).cloned());
        match from_ptx {
            Some(layout) => Some(Some(layout)),
            None => registry.param_layouts.get(&(function as usize)).cloned(),
        }
    };
    let layout = match layout {
        Some(known) => known,
        None => {
            let asked = driver_param_layout(function);
            registry()
                .param_layouts
                .insert(function as usize, asked.clone());
            asked
        }
    };
    layout
        .as_deref()
        // SAFETY: the launch's own parameter list, laid out per `layout`.
        .and_then(|slots| unsafe { args_hash(slots, params, extra) })
        // SAFETY: the launch's own `extra` list.
        .or_else(|| unsafe { extra_buffer(extra) }.map(prlx_session::fnv1a64))
        .map(|h| format!("{h:#018x}"))
}

/// The device ordinal and context a launch on `stream` runs in: the
/// stream's context, else the current one.
fn device_and_context(stream: CUstream) -> (Option<i32>, Option<u64>) {
    let cuda = driver::cuda();
    let mut context: *mut c_void = std::ptr::null_mut();
    // SAFETY: out-pointers to locals; the application's stream handle.
    let found = unsafe {
        (!stream.is_null()
            && cuda
                .cuStreamGetCtx
                .is_some_and(|f| f(stream, &mut context) == CUDA_SUCCESS))
            || cuda
                .cuCtxGetCurrent
                .is_some_and(|f| f(&mut context) == CUDA_SUCCESS)
    };
    let context = (found && !context.is_null()).then_some(context as u64);
    let mut device = 0;
    // SAFETY: an out-pointer to a local.
    let device = cuda
        .cuCtxGetDevice
        .filter(|_| context.is_some())
        .and_then(|f| (unsafe { f(&mut device) } == CUDA_SUCCESS).then_some(device));
    (device, context)
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

/// One record per kernel node of a graph launch the driver accepted, with
/// the node's trace when it was captured (`graphs`).
pub(crate) fn record_graph_launch(
    exec: u64,
    stream: CUstream,
    nodes: &[crate::graphs::KernelNode],
    outcomes: Vec<crate::graphs::NodeOutcome>,
) {
    let config = config();
    if !nodes.iter().any(|n| config.wants(&n.name)) {
        return;
    }
    let Some(sink) = sink() else {
        return;
    };
    let timestamp_ns = now_ns();
    let (device, current_context) = device_and_context(stream);
    let mut stack = None;
    for ((index, node), outcome) in nodes.iter().enumerate().zip(outcomes) {
        if !config.wants(&node.name) {
            continue;
        }
        let (seq, launch_index) = {
            let mut registry = registry();
            if config
                .max_launches
                .is_some_and(|max| registry.launches_recorded >= max)
            {
                drop(registry);
                sink.count_dropped();
                continue;
            }
            let seq = registry.launches_recorded;
            registry.launches_recorded += 1;
            (seq, registry.next_launch_index(&node.name))
        };
        if stack.is_none() {
            stack = Some(crate::stack::capture_for(launch_index));
        }
        let (capture, capture_reason) = capture_of(node.code);
        let site_table = {
            let registry = registry();
            let info = node.code.and_then(|c| registry.code.get(&c));
            info.and_then(|i| {
                let table = i.instrumented.as_ref()?.site_table.clone()?;
                Some((i.image_id, table))
            })
        };
        if outcome.trace.is_none() && outcome.error.is_none() {
            crate::module_load::notice_metadata(&node.name, capture_reason.as_deref());
        }
        let record = LaunchRecord {
            seq,
            kernel: node.name.clone(),
            demangled: None,
            launch_index,
            grid: node.grid,
            block: node.block,
            shared_bytes: node.shared_bytes,
            stream: stream as u64,
            args_hash: node.args_hash.clone(),
            timestamp_ns,
            device,
            context: if node.context != 0 {
                Some(node.context)
            } else {
                current_context
            },
            graph_exec: Some(exec),
            graph_node: Some(index as u32),
            capture: Some(capture.as_str().to_owned()),
            capture_error: outcome.error,
            ..LaunchRecord::default()
        };
        sink.submit(Launch {
            record,
            trace: outcome.trace,
            site_table,
            stack: stack.clone().flatten(),
        });
    }
}

/// The capture mode of the module `code` names, and why it records metadata only.
fn capture_of(code: Option<CodeHandle>) -> (crate::module_load::CaptureMode, Option<String>) {
    let registry = registry();
    match code.and_then(|c| registry.code.get(&c)) {
        Some(info) => (info.capture, info.capture_reason.clone()),
        None => (crate::module_load::CaptureMode::Metadata, None),
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
    // SAFETY: dladdr only reads the address and fills `info`.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
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

/// Parameter layout from `cuFuncGetParamInfo` (CUDA 12.4+), when the driver has it.
fn driver_param_layout(function: CUfunction) -> Option<Vec<ParamSlot>> {
    let info = driver::cuda().cuFuncGetParamInfo?;
    let mut slots = Vec::new();
    for index in 0..4096 {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: out-pointers to locals.
        if unsafe { info(function, index, &mut offset, &mut size) } != CUDA_SUCCESS {
            break;
        }
        slots.push(ParamSlot { offset, size });
    }
    (!slots.is_empty()).then_some(slots)
}

/// FNV-1a over the packed argument bytes.
///
/// # Safety
/// `params`, when non-null, must be the launch's kernelParams: one valid
/// pointer per parameter of `slots`.
unsafe fn args_hash(
    slots: &[ParamSlot],
    params: *mut *mut c_void,
    _extra: *mut *mut c_void,
) -> Option<u64> {
    if params.is_null() {
        return None;
    }
    let total = slots.iter().map(|s| s.offset + s.size).max().unwrap_or(0);
    let mut packed = vec![0u8; total];
    for (i, slot) in slots.iter().enumerate() {
        // SAFETY: per the contract above.
        let arg = unsafe { *params.add(i) } as *const u8;
        if arg.is_null() {
            return None;
        }
        // SAFETY: the argument holds `slot.size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(arg, slot.size) };
        packed[slot.offset..slot.offset + slot.size].copy_from_slice(bytes);
    }
    Some(prlx_session::fnv1a64(&packed))
}

/// The argument buffer passed through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE).
///
/// # Safety
/// `extra`, when non-null, must be a CU_LAUNCH_PARAM_END-terminated list.
unsafe fn extra_buffer<'a>(extra: *mut *mut c_void) -> Option<&'a [u8]> {
    const END: usize = 0;
    const BUFFER_POINTER: usize = 1;
    const BUFFER_SIZE: usize = 2;
    if extra.is_null() {
        return None;
    }
    let (mut pointer, mut size) = (std::ptr::null::<u8>(), None);
    for i in (0..64).step_by(2) {
        // SAFETY: per the contract, pairs until END.
        let key = unsafe { *extra.add(i) } as usize;
        if key == END {
            break;
        }
        let value = unsafe { *extra.add(i + 1) };
        match key {
            BUFFER_POINTER => pointer = value as *const u8,
            BUFFER_SIZE if !value.is_null() => size = Some(unsafe { *(value as *const usize) }),
            _ => {}
        }
    }
    match (pointer.is_null(), size) {
        // SAFETY: the driver reads `size` bytes from `pointer` too.
        (false, Some(size)) => Some(unsafe { std::slice::from_raw_parts(pointer, size) }),
        _ => None,
    }
}

pub fn demangle(name: &str) -> Option<String> {
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    let text = symbol.demangle().ok()?;
    (text != name).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_cxx_kernel_names() {
        assert_eq!(
            demangle("_Z6reducePfi").as_deref(),
            Some("reduce(float*, int)")
        );
        assert_eq!(demangle("saxpy"), None);
    }

    #[test]
    fn hashes_packed_arguments() {
        let mut n: u32 = 7;
        let mut p: u64 = 0x1000;
        let mut params = [
            &mut n as *mut u32 as *mut c_void,
            &mut p as *mut u64 as *mut c_void,
        ];
        let slots = [
            ParamSlot { offset: 0, size: 4 },
            ParamSlot { offset: 8, size: 8 },
        ];
        let hash = unsafe { args_hash(&slots, params.as_mut_ptr(), std::ptr::null_mut()) }.unwrap();
        let mut packed = [0u8; 16];
        packed[..4].copy_from_slice(&7u32.to_le_bytes());
        packed[8..].copy_from_slice(&0x1000u64.to_le_bytes());
        assert_eq!(hash, prlx_session::fnv1a64(&packed));
    }

    #[test]
    fn reads_extra_argument_buffers() {
        let mut buffer = [1u8, 2, 3, 4];
        let mut size = buffer.len();
        // CU_LAUNCH_PARAM_BUFFER_POINTER (1) and _SIZE (2) are small integers cast to pointers.
        let (pointer_key, size_key) = (1usize, 2usize);
        let mut extra = [
            pointer_key as *mut c_void,
            buffer.as_mut_ptr() as *mut c_void,
            size_key as *mut c_void,
            &mut size as *mut usize as *mut c_void,
            std::ptr::null_mut(),
        ];
        let bytes = unsafe { extra_buffer(extra.as_mut_ptr()) }.unwrap();
        assert_eq!(bytes, &[1, 2, 3, 4]);
    }
}
