//! The `nvbit` capture mode: prlx's NVBit tool (`nvbit-tool/`) instruments
//! SASS, and its traces become launches of the shim's session.
//!
//! The interface is `nvbit-tool/src/prlx_nvbit_abi.h`: the tool is found by
//! its exported `prlx_nvbit_abi_version` — looked up globally, then in every
//! loaded object (`CUDA_INJECTION64_PATH` loads the tool with local symbol
//! scope, where a global lookup does not reach) — and attached once. NVBit
//! runs inside the driver call, so when the shim's forwarded launch returns
//! the tool has finished that launch's trace; the shim takes it
//! (`prlx_nvbit_take_trace`) and submits it like its own captures.

use crate::capture::CapturedTrace;
use prlx_trace::{TraceFile, flags};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

/// `PRLX_NVBIT_ABI_VERSION`.
const ABI_VERSION: u32 = 1;

type FnVersion = unsafe extern "C" fn() -> u32;
type FnAttach = unsafe extern "C" fn();
type FnTake =
    unsafe extern "C" fn(*mut c_void, *mut *mut u8, *mut usize, *mut *mut c_char) -> c_int;
type FnFree = unsafe extern "C" fn(*mut c_void);

/// The loaded tool's entry points.
pub struct Tool {
    take: FnTake,
    free: FnFree,
}

/// The tool, once found and attached. Looked for once, when the first
/// module is planned: modules load into a context, after `cuInit`, which is
/// when the driver loads an injected tool (an `LD_PRELOAD`ed one is there
/// from the start). One search walks every loaded object, so it is not
/// repeated per module.
pub fn tool() -> Option<&'static Tool> {
    static TOOL: OnceLock<Option<Tool>> = OnceLock::new();
    TOOL.get_or_init(find).as_ref()
}

fn find() -> Option<Tool> {
    let handle = symbol_owner(c"prlx_nvbit_abi_version")?;
    let sym = |name: &CStr| {
        // SAFETY: a handle from dlopen (or RTLD_DEFAULT) and a C string.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!p.is_null()).then_some(p)
    };
    let version = sym(c"prlx_nvbit_abi_version")?;
    // SAFETY: each symbol has the signature prlx_nvbit_abi.h declares.
    let (version, attach, take, free) = unsafe {
        (
            std::mem::transmute::<*mut c_void, FnVersion>(version),
            std::mem::transmute::<*mut c_void, FnAttach>(sym(c"prlx_nvbit_attach")?),
            std::mem::transmute::<*mut c_void, FnTake>(sym(c"prlx_nvbit_take_trace")?),
            std::mem::transmute::<*mut c_void, FnFree>(sym(c"prlx_nvbit_free")?),
        )
    };
    // SAFETY: the tool's own functions, no arguments.
    if unsafe { version() } != ABI_VERSION {
        crate::log::once(
            crate::config::LogLevel::Warn,
            "nvbit-abi",
            "an NVBit tool of another interface version is loaded; not using it",
        );
        return None;
    }
    // SAFETY: as above.
    unsafe { attach() };
    crate::log::log(
        crate::config::LogLevel::Info,
        "the prlx NVBit tool is loaded: kernels without PTX are captured from SASS",
    );
    Some(Tool { take, free })
}

/// A handle under which `symbol` resolves: the global scope, else the first
/// loaded object that defines it.
fn symbol_owner(symbol: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym only looks the name up.
    if !unsafe { libc::dlsym(libc::RTLD_DEFAULT, symbol.as_ptr()) }.is_null() {
        return Some(libc::RTLD_DEFAULT);
    }
    let mut names: Vec<std::ffi::CString> = Vec::new();
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid info; `data` is our Vec.
        unsafe {
            let names = &mut *(data as *mut Vec<std::ffi::CString>);
            let name = (*info).dlpi_name;
            if !name.is_null() && *name != 0 {
                names.push(CStr::from_ptr(name).to_owned());
            }
        }
        0
    }
    // SAFETY: the callback only copies names into the Vec passed as data.
    unsafe { libc::dl_iterate_phdr(Some(collect), &mut names as *mut _ as *mut c_void) };
    for name in names {
        // SAFETY: RTLD_NOLOAD only returns a handle to an already loaded object.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if handle.is_null() {
            continue;
        }
        // SAFETY: a live handle and a C string.
        if !unsafe { libc::dlsym(handle, symbol.as_ptr()) }.is_null() {
            return Some(handle); // kept open: the tool stays loaded anyway
        }
        // SAFETY: balances the dlopen above.
        unsafe { libc::dlclose(handle) };
    }
    None
}

/// The trace the tool made of the launch of `function` that just returned,
/// and the tool's site map (JSON).
pub(crate) fn take_trace(function: usize) -> Option<Result<(CapturedTrace, String), String>> {
    let tool = tool()?;
    let (mut trace, mut len, mut map) = (std::ptr::null_mut(), 0usize, std::ptr::null_mut());
    // SAFETY: out-pointers to locals; the tool fills all three or none.
    if unsafe { (tool.take)(function as *mut c_void, &mut trace, &mut len, &mut map) } == 0
        || trace.is_null()
    {
        return None;
    }
    // SAFETY: the tool handed over `len` bytes and a NUL-terminated map.
    let bytes = unsafe { std::slice::from_raw_parts(trace, len) }.to_vec();
    let site_map = if map.is_null() {
        "[]".to_string()
    } else {
        // SAFETY: a NUL-terminated string from the tool.
        unsafe { CStr::from_ptr(map) }
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: buffers the tool allocated, freed once by its own free.
    unsafe {
        (tool.free)(trace as *mut c_void);
        if !map.is_null() {
            (tool.free)(map as *mut c_void);
        }
    }
    Some(decode(bytes).map(|t| (t, site_map)))
}

/// The tool's `.prlx` bytes as the shim's captured trace (validated by
/// prlx-trace's reader; re-encoded compressed by the writer).
fn decode(bytes: Vec<u8>) -> Result<CapturedTrace, String> {
    let file = TraceFile::from_bytes("<nvbit tool trace>", bytes)
        .map_err(|e| format!("the NVBit tool's trace is invalid: {e}"))?;
    let mut header = *file.header();
    // No history or snapshot sections come from SASS instrumentation.
    header.flags &= !(flags::COMPRESS | flags::HISTORY | flags::SNAPSHOT);
    header.history_depth = 0;
    header.snapshot_depth = 0;
    let warps = file
        .warps()
        .map(|w| (*w.header, w.events.to_vec()))
        .collect();
    Ok(CapturedTrace {
        header,
        warps,
        history: Vec::new(),
        snapshot: Vec::new(),
        copy_nanos: 0,
        copy_calls: 0,
        truncation: None,
    })
}
