//! Modules (`cuModuleLoad*`, `cuModuleGet*`) and PTX linking (`cuLink*`).

use crate::cu::*;
use crate::driver::{Driver, Function, LinkState, Module, as_handle, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, c_str, exports, non_null, write_optional, write_out};
use crate::image::{self, Image};
use crate::jit::JitLogs;
use crate::link::{self, LinkInput};
use prlx_emulator::EmuError;
use std::collections::HashMap;
use std::ffi::{CString, c_char, c_int, c_uint, c_void};

/// The name load diagnostics use for images passed by pointer.
const IN_MEMORY_SOURCE: &str = "module.ptx";

/// Loads an image into `ctx`, writing the outcome to the JIT logs (and, on
/// failure, a one-line diagnostic to stderr, since many programs never look
/// at the log).
pub fn load_image(
    d: &mut Driver,
    ctx: usize,
    image: Image,
    source_name: &str,
    logs: &JitLogs,
) -> Result<CUmodule, CUresult> {
    let (text, machine_code) = match image {
        Image::Ptx(text) => (text, None),
        // Loads as a module of its variables only; its kernels are refused
        // at lookup.
        Image::MachineCodeOnly(mc) => (mc.variables_ptx(), Some(mc)),
        Image::Unsupported(m) => return Err(load_failure(logs, CUDA_ERROR_NO_BINARY_FOR_GPU, m)),
        Image::Invalid(m) => return Err(load_failure(logs, CUDA_ERROR_INVALID_IMAGE, m)),
    };
    match d.device.load_module(&text, source_name) {
        Ok(emu) => {
            // SAFETY: the log buffers come from this call's own options.
            unsafe { logs.report("", "") };
            Ok(d.modules.insert(Module {
                ctx,
                emu,
                functions: HashMap::new(),
                machine_code,
            }))
        }
        Err(e) => Err(load_failure(logs, CUDA_ERROR_INVALID_PTX, e.to_string())),
    }
}

/// Reports a failed load to the JIT logs and stderr; returns `code`.
fn load_failure(logs: &JitLogs, code: CUresult, message: String) -> CUresult {
    // SAFETY: the log buffers come from the load call's own options.
    unsafe { logs.report(&message, "") };
    super::logs::error(&format!(
        "prlx libcuda: {}: {message}",
        crate::error_table::name_str(code)
    ));
    code
}

/// `CUmoduleLoadingMode` from `CUDA_MODULE_LOADING`: 1 eager, 2 lazy (the default).
fn loading_mode() -> c_int {
    match std::env::var("CUDA_MODULE_LOADING") {
        Ok(v) if v.eq_ignore_ascii_case("EAGER") => 1,
        _ => 2,
    }
}

/// Kernels and variables already reported as having no PTX: one stderr
/// line each per process.
static REPORTED_NO_PTX: std::sync::Mutex<Option<std::collections::HashSet<String>>> =
    std::sync::Mutex::new(None);

/// The most kernels named on stderr: `CUDA_MODULE_LOADING=EAGER` makes the
/// CUDA runtime look up every kernel of every library at start-up (16k for
/// PyTorch), and a launch is refused at lookup, so only the first ones can
/// be named. Lazily (the default) only the kernels a program uses are.
const MAX_NAMED_NO_PTX: usize = 100;

/// `CUDA_ERROR_NO_BINARY_FOR_GPU` for kernel or variable `name` of a
/// machine-code-only module, with one stderr line (`message`) naming it the
/// first time.
fn no_binary(name: &str, message: impl FnOnce() -> String) -> CUresult {
    let mut reported = REPORTED_NO_PTX
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let reported = reported.get_or_insert_with(Default::default);
    let count = reported.len();
    if count <= MAX_NAMED_NO_PTX && reported.insert(name.to_string()) {
        if count < MAX_NAMED_NO_PTX {
            eprintln!("prlx libcuda: CUDA_ERROR_NO_BINARY_FOR_GPU: {}", message());
        } else {
            eprintln!(
                "prlx libcuda: CUDA_ERROR_NO_BINARY_FOR_GPU: {MAX_NAMED_NO_PTX} kernels without \
                 PTX named; further ones are refused silently (CUDA_MODULE_LOADING=EAGER \
                 looks every kernel up at start-up; unset it to see the ones used)"
            );
        }
    }
    CUDA_ERROR_NO_BINARY_FOR_GPU
}

fn load_data(module: *mut CUmodule, image: *const c_void, logs: JitLogs) -> Result<(), CUresult> {
    with_context(|d, ctx| {
        non_null(module)?;
        non_null(image)?;
        // SAFETY: the driver API requires `image` to be a valid image.
        let img = unsafe { image::read(image.cast(), d.sm()) };
        let m = load_image(d, ctx, img, IN_MEMORY_SOURCE, &logs)?;
        // SAFETY: `module` is NULL or valid by `load_data`'s `# Safety` contract (writable for a
        // `CUmodule`); `write_out` refuses NULL.
        unsafe { write_out(module, m) }
    })
}

/// The handle of kernel `name` in `hmod`: the same handle every time.
pub fn function_handle(d: &mut Driver, hmod: CUmodule, name: &str) -> Result<CUfunction, CUresult> {
    let m = d.modules.get(hmod).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if let Some(f) = m.functions.get(name) {
        return Ok(as_handle(*f));
    }
    let emu = match d.device.get_function(m.emu, name) {
        Ok(f) => f,
        Err(EmuError::NotFound(_))
            if m.machine_code.as_ref().is_some_and(|mc| mc.defines(name)) =>
        {
            let mc = m.machine_code.as_ref().expect("checked");
            return Err(no_binary(name, || mc.refusal(name)));
        }
        Err(e) => return Err(emu_error(e)),
    };
    let info = d.device.kernel_info(emu).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let default_dynamic = d
        .device
        .config()
        .max_shared_per_block
        .saturating_sub(info.static_shared_bytes);
    let f = d.functions.insert(Function {
        module: hmod as usize,
        emu,
        name: CString::new(name).map_err(|_| CUDA_ERROR_INVALID_VALUE)?,
        max_dynamic_shared: default_dynamic,
        carveout: -1,
        shared_memory_mode: 0,
        non_portable_cluster: false,
        cache_config: 0,
    });
    if let Some(m) = d.modules.get_mut(hmod) {
        m.functions.insert(name.to_string(), f as usize);
    }
    Ok(f)
}

pub fn emu_error(e: EmuError) -> CUresult {
    match e {
        EmuError::NotFound(_) => CUDA_ERROR_NOT_FOUND,
        EmuError::InvalidHandle(_) => CUDA_ERROR_INVALID_HANDLE,
        EmuError::OutOfMemory { .. } => CUDA_ERROR_OUT_OF_MEMORY,
        EmuError::Unsupported(_) => CUDA_ERROR_NOT_SUPPORTED,
        _ => CUDA_ERROR_INVALID_VALUE,
    }
}

pub fn get_global(d: &Driver, hmod: CUmodule, name: &str) -> Result<(u64, u64), CUresult> {
    let m = d.modules.get(hmod).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    match d.device.get_global(m.emu, name) {
        // A machine-code-only module's variables live in code that cannot
        // be loaded; their initial values are unknown.
        Err(EmuError::NotFound(_))
            if m.machine_code
                .as_ref()
                .is_some_and(|mc| mc.defines_variable(name)) =>
        {
            let mc = m.machine_code.as_ref().expect("checked");
            Err(no_binary(name, || mc.variable_refusal(name)))
        }
        other => other.map_err(emu_error),
    }
}

fn link_state(d: &mut Driver, state: CUlinkState) -> Result<&mut LinkState, CUresult> {
    d.links.get_mut(state).ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// Adds one input's bytes to a link.
fn add_link_input(
    state: CUlinkState,
    input_type: c_uint,
    bytes: &[u8],
    name: &str,
    options: JitLogs,
) -> Result<(), CUresult> {
    with_context(|d, _| {
        let sm = d.sm();
        let ls = link_state(d, state)?;
        let image = match input_type {
            CU_JIT_INPUT_PTX => {
                let text = bytes.split(|b| *b == 0).next().unwrap_or_default();
                match std::str::from_utf8(text) {
                    Ok(s) => Image::Ptx(s.to_string()),
                    Err(e) => Image::Invalid(format!("{name}: PTX input is not UTF-8: {e}")),
                }
            }
            CU_JIT_INPUT_FATBINARY => image::ptx_from_fatbin(bytes, sm),
            CU_JIT_INPUT_CUBIN | CU_JIT_INPUT_OBJECT | CU_JIT_INPUT_LIBRARY => {
                Image::Unsupported(format!(
                    "{name}: link input type {input_type} holds machine code; the prlx emulator links PTX only"
                ))
            }
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        };
        let (code, message) = match image {
            Image::Ptx(ptx) => {
                ls.inputs.push(LinkInput {
                    name: name.to_string(),
                    ptx,
                });
                return Ok(());
            }
            Image::Unsupported(m) => (CUDA_ERROR_NOT_SUPPORTED, m),
            Image::MachineCodeOnly(mc) => (CUDA_ERROR_NOT_SUPPORTED, mc.describe()),
            Image::Invalid(m) => (CUDA_ERROR_INVALID_IMAGE, m),
        };
        // SAFETY: log buffers from cuLinkCreate and this call's options.
        unsafe {
            ls.logs.report(&message, "");
            options.report(&message, "");
        }
        Err(code)
    })
}

exports! {
    fn cuModuleLoad(module: *mut CUmodule, fname: *const c_char) {
        with_context(|d, ctx| {
            non_null(module)?;
            // SAFETY: a C string from the caller.
            let path = unsafe { c_str(fname) }?;
            let mut bytes = std::fs::read(path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
            bytes.push(0);
            // SAFETY: NUL-terminated just above.
            let img = unsafe { image::read(bytes.as_ptr(), d.sm()) };
            let source = std::path::Path::new(path)
                .file_name()
                .map_or(path.to_string(), |f| f.to_string_lossy().into_owned());
            let m = load_image(d, ctx, img, &source, &JitLogs::default())?;
            // SAFETY: `cuModuleLoad`'s caller passes `module` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUmodule`.
            unsafe { write_out(module, m) }
        })
    }

    fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) {
        load_data(module, image, JitLogs::default())
    }

    fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
    ) {
        // SAFETY: the arrays hold `num_options` entries by the API contract.
        let logs = unsafe { JitLogs::parse(num_options, options, option_values) }?;
        load_data(module, image, logs)
    }

    /// Accepts a fatbinary (or its wrapper) holding uncompressed PTX, or PTX text.
    fn cuModuleLoadFatBinary(module: *mut CUmodule, fat_cubin: *const c_void) {
        load_data(module, fat_cubin, JitLogs::default())
    }

    fn cuModuleUnload(hmod: CUmodule) {
        with_context(|d, _| {
            if !d.modules.contains(hmod) {
                return Err(CUDA_ERROR_INVALID_HANDLE);
            }
            d.unload_module(hmod as usize);
            Ok(())
        })
    }

    fn cuModuleGetFunction(hfunc: *mut CUfunction, hmod: CUmodule, name: *const c_char) {
        with_context(|d, _| {
            non_null(hfunc)?;
            // SAFETY: a C string from the caller.
            let name = unsafe { c_str(name) }?;
            let f = function_handle(d, hmod, name)?;
            // SAFETY: `cuModuleGetFunction`'s caller passes `hfunc` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUfunction`.
            unsafe { write_out(hfunc, f) }
        })
    }

    fn cuModuleGetGlobal_v2(
        dptr: *mut CUdeviceptr,
        bytes: *mut usize,
        hmod: CUmodule,
        name: *const c_char,
    ) {
        with_context(|d, _| {
            // SAFETY: a C string from the caller.
            let name = unsafe { c_str(name) }?;
            let (addr, size) = get_global(d, hmod, name)?;
            // SAFETY: `cuModuleGetGlobal_v2`'s caller passes `dptr` and `bytes` as cuda.h specifies: each
            // NULL (skipped by `write_optional`) or writable for its type.
            unsafe {
                write_optional(dptr, addr);
                write_optional(bytes, size as usize);
            }
            Ok(())
        })
    }

    /// Legacy 32-bit form: fails with `CUDA_ERROR_NOT_SUPPORTED` because
    /// emulated device addresses do not fit in 32 bits.
    fn cuModuleGetGlobal(
        dptr: *mut CUdeviceptr_v1,
        bytes: *mut c_uint,
        hmod: CUmodule,
        name: *const c_char,
    ) {
        with_context(|d, _| {
            // SAFETY: a C string from the caller.
            let name = unsafe { c_str(name) }?;
            let (addr, size) = get_global(d, hmod, name)?;
            let addr = CUdeviceptr_v1::try_from(addr).map_err(|_| CUDA_ERROR_NOT_SUPPORTED)?;
            // SAFETY: `cuModuleGetGlobal`'s caller passes `dptr` and `bytes` as cuda.h specifies: each NULL
            // (skipped by `write_optional`) or writable for its type.
            unsafe {
                write_optional(dptr, addr);
                write_optional(bytes, size as c_uint);
            }
            Ok(())
        })
    }

    /// `CU_MODULE_LAZY_LOADING` (2) unless `CUDA_MODULE_LOADING=EAGER`, as
    /// CUDA 12.2+ drivers on Linux. Modules are parsed whole at load either
    /// way; what the mode changes is the CUDA runtime's behaviour: lazily,
    /// it looks kernels up at their first launch, so the kernels of
    /// machine-code-only libraries are refused only if they are used.
    fn cuModuleGetLoadingMode(mode: *mut c_int) {
        // SAFETY: `cuModuleGetLoadingMode`'s caller passes `mode` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `c_int`.
        crate::driver::with_driver(|_| unsafe { write_out(mode, loading_mode()) })
    }

    fn cuLinkCreate_v2(
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
        state_out: *mut CUlinkState,
    ) {
        // SAFETY: the arrays hold `num_options` entries by the API contract.
        let logs = unsafe { JitLogs::parse(num_options, options, option_values) }?;
        with_context(|d, ctx| {
            non_null(state_out)?;
            let state = d.links.insert(LinkState {
                ctx,
                logs,
                inputs: Vec::new(),
                image: None,
            });
            // SAFETY: `cuLinkCreate_v2`'s caller passes `state_out` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUlinkState`.
            unsafe { write_out(state_out, state) }
        })
    }

    fn cuLinkAddData_v2(
        state: CUlinkState,
        input_type: c_uint,
        data: *mut c_void,
        size: usize,
        name: *const c_char,
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
    ) {
        non_null(data)?;
        if size == 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the arrays hold `num_options` entries by the API contract.
        let logs = unsafe { JitLogs::parse(num_options, options, option_values) }?;
        // SAFETY: `cuLinkAddData_v2`'s caller passes `name` as cuda.h specifies: NULL (refused by `c_str`)
        // or a NUL-terminated string.
        let name = if name.is_null() { "input.ptx" } else { unsafe { c_str(name) }? };
        // SAFETY: `data` holds `size` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, size) };
        add_link_input(state, input_type, bytes, name, logs)
    }

    fn cuLinkAddFile_v2(
        state: CUlinkState,
        input_type: c_uint,
        path: *const c_char,
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
    ) {
        // SAFETY: the arrays hold `num_options` entries by the API contract.
        let logs = unsafe { JitLogs::parse(num_options, options, option_values) }?;
        // SAFETY: `cuLinkAddFile_v2`'s caller passes `path` as cuda.h specifies: NULL (refused by `c_str`)
        // or a NUL-terminated string.
        let path = unsafe { c_str(path) }?;
        let bytes = std::fs::read(path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.to_string(), |f| f.to_string_lossy().into_owned());
        add_link_input(state, input_type, &bytes, &name, logs)
    }

    /// Joins the PTX inputs and checks that the result loads; the "cubin"
    /// handed out is that PTX, which `cuModuleLoadData` accepts.
    fn cuLinkComplete(state: CUlinkState, cubin_out: *mut *mut c_void, size_out: *mut usize) {
        with_context(|d, _| {
            non_null(cubin_out)?;
            non_null(size_out)?;
            let ls = d.links.get(state).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            if ls.inputs.is_empty() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let name = match ls.inputs.as_slice() {
                [only] => only.name.clone(),
                _ => "linked.ptx".to_string(),
            };
            let ptx = link::link(&ls.inputs);
            let logs = ls.logs;
            match d.device.load_module(&ptx, &name) {
                Ok(m) => {
                    let _ = d.device.unload_module(m);
                    // SAFETY: log buffers from cuLinkCreate.
                    unsafe { logs.report("", "") };
                }
                Err(e) => {
                    let msg = e.to_string();
                    // SAFETY: `logs` holds the log buffers (and sizes) the application gave `cuLinkCreate`,
                    // valid until `cuLinkDestroy`, as cuda.h requires.
                    unsafe { logs.report(&msg, "") };
                    eprintln!("prlx libcuda: CUDA_ERROR_INVALID_PTX: {msg}");
                    return Err(CUDA_ERROR_INVALID_PTX);
                }
            }
            let mut image = ptx.into_bytes();
            image.push(0);
            let ls = link_state(d, state)?;
            let image = ls.image.insert(image);
            // SAFETY: `cuLinkComplete`'s caller passes `cubin_out` and `size_out` as cuda.h specifies;
            // `write_out` refuses NULL. The image lives in the link state until `cuLinkDestroy`.
            unsafe {
                write_out(cubin_out, image.as_mut_ptr() as *mut c_void)?;
                write_out(size_out, image.len())
            }
        })
    }

    fn cuLinkDestroy(state: CUlinkState) {
        crate::driver::with_driver(|d| {
            d.links.remove(state).map(|_| ()).ok_or(CUDA_ERROR_INVALID_HANDLE)
        })
    }
}

aliases! {
    cuLinkCreate = cuLinkCreate_v2(
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
        state_out: *mut CUlinkState,
    );
    cuLinkAddData = cuLinkAddData_v2(
        state: CUlinkState,
        input_type: c_uint,
        data: *mut c_void,
        size: usize,
        name: *const c_char,
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
    );
    cuLinkAddFile = cuLinkAddFile_v2(
        state: CUlinkState,
        input_type: c_uint,
        path: *const c_char,
        num_options: c_uint,
        options: *mut c_uint,
        option_values: *mut *mut c_void,
    );
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuModuleLoad": 2000 => cuModuleLoad;
        "cuModuleLoadData": 2000 => cuModuleLoadData;
        "cuModuleLoadDataEx": 2010 => cuModuleLoadDataEx;
        "cuModuleLoadFatBinary": 2000 => cuModuleLoadFatBinary;
        "cuModuleUnload": 2000 => cuModuleUnload;
        "cuModuleGetFunction": 2000 => cuModuleGetFunction;
        "cuModuleGetGlobal": 2000 => cuModuleGetGlobal, 3020 => cuModuleGetGlobal_v2;
        "cuModuleGetLoadingMode": 11070 => cuModuleGetLoadingMode;
        "cuLinkCreate": 5050 => cuLinkCreate, 6050 => cuLinkCreate_v2;
        "cuLinkAddData": 5050 => cuLinkAddData, 6050 => cuLinkAddData_v2;
        "cuLinkAddFile": 5050 => cuLinkAddFile, 6050 => cuLinkAddFile_v2;
        "cuLinkComplete": 5050 => cuLinkComplete;
        "cuLinkDestroy": 5050 => cuLinkDestroy;
    }
}
