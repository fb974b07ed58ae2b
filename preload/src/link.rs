//! The module-loading roads besides `cuModuleLoad*`/`cuLibraryLoadData`:
//! `cuLibraryLoadFromFile`, and the JIT linker (`cuLinkCreate`,
//! `cuLinkAddData`, `cuLinkAddFile`, `cuLinkComplete`, `cuLinkDestroy`).
//!
//! A library file is read and planned like an image in memory
//! (`module_load`): a rewritten image goes to `cuLibraryLoadData` with the
//! application's options.
//!
//! A link is instrumented input by input: every PTX input (`CU_JIT_INPUT_PTX`,
//! data or file; a `CU_JIT_INPUT_FATBINARY` with a PTX entry becomes its
//! rewritten PTX) is rewritten before the linker sees it, all of them into one
//! site table so that ids are unique in the linked image. The first rewritten
//! input defines the recording runtime and `__prlx_desc` visibly; the others
//! declare them `.extern` (so the link, ours or nvlink, resolves one
//! descriptor). Other inputs (cubins, fatbinaries, libraries) pass through.
//! The image `cuLinkComplete` hands out is remembered: when the application
//! loads it, its launches are captured as `ptx` with the link's site table.
//! A link with a pass-built PTX input (one defining `__prlx_desc`) is not
//! rewritten further: it records by itself.
#![allow(clippy::missing_safety_doc)]

use crate::config::LogLevel;
use crate::ffi::*;
use crate::guard::guarded;
use crate::log;
use crate::module_load;
use crate::process::active;
use crate::registry::CaptureMode;
use crate::registry::ParamSlot;
use crate::state;
use prlx_ptx_instrument::{Runtime, SiteTable};
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_uint, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

pub type CUlinkState = *mut c_void;

/// `CU_JIT_INPUT_PTX`, `CU_JIT_INPUT_FATBINARY`.
const INPUT_PTX: c_uint = 1;
const INPUT_FATBINARY: c_uint = 2;

/// Whether inputs of this type may be rewritten: PTX, and fatbinaries
/// carrying PTX (handed to the linker as their rewritten PTX instead).
fn rewritable(input_type: c_uint) -> bool {
    matches!(input_type, INPUT_PTX | INPUT_FATBINARY)
}

/// A link being built.
#[derive(Default)]
struct Link {
    sites: SiteTable,
    /// An input defining the runtime was accepted by the linker.
    runtime_defined: bool,
    /// Rewritten inputs the linker accepted.
    instrumented: u32,
    /// An input was built with the pass: nothing more is rewritten.
    pass_built: bool,
    params: HashMap<String, Vec<ParamSlot>>,
}

/// Links being built, by link state.
static LINKS: LazyLock<Mutex<HashMap<usize, Link>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn links() -> MutexGuard<'static, HashMap<usize, Link>> {
    LINKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// What to hand the linker for one input: the rewritten PTX (NUL-terminated,
/// a `CU_JIT_INPUT_PTX` input whatever the original's type) and which
/// runtime it carries, or None to pass the input through.
fn rewrite_input(state: usize, input_type: c_uint, data: &[u8]) -> Option<(Vec<u8>, Runtime)> {
    if !rewritable(input_type) || !active() {
        return None;
    }
    let policy = module_load::policy();
    // A vendor library's link inputs are linked as given (PRLX_CAPTURE_LIBS).
    if module_load::caller::skip_reason(&policy.libs, data.as_ptr().cast()).is_some() {
        return None;
    }
    let from_fatbin;
    let text = if input_type == INPUT_FATBINARY {
        from_fatbin = module_load::fatbin_ptx(data).ok()??;
        from_fatbin.as_str()
    } else {
        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
        std::str::from_utf8(&data[..end]).ok()?
    };
    let module = prlx_ptx::parse(text, "<link input>").ok()?;
    let mut links = links();
    let link = links.entry(state).or_default();
    link.params
        .extend(crate::registry::ptx_module_param_layouts(&module));
    let defines_descriptor = module.items.iter().any(|i| {
        matches!(i, prlx_ptx::Item::Variable(v) if v.name == prlx_ptx_instrument::runtime::DESCRIPTOR)
    });
    if defines_descriptor {
        link.pass_built = true;
    }
    if link.pass_built || !module_load::allows(policy, CaptureMode::Ptx) {
        return None;
    }
    let runtime = if link.runtime_defined {
        Runtime::LinkExtern
    } else {
        Runtime::LinkDefine
    };
    match prlx_ptx_instrument::instrument_link_input(
        &module,
        text,
        &policy.options,
        &mut link.sites,
        runtime,
    ) {
        Ok((ptx, _kernels)) => {
            let mut bytes = ptx.into_bytes();
            bytes.push(0);
            Some((bytes, runtime))
        }
        Err(e) => {
            log::log(
                LogLevel::Warn,
                &format!("could not instrument a PTX input of a link: {e}; linking it unchanged"),
            );
            None
        }
    }
}

/// After the linker took (or refused) a rewritten input.
fn input_added(state: usize, runtime: Runtime, accepted: bool) {
    let mut links = links();
    let link = links.entry(state).or_default();
    if accepted {
        link.instrumented += 1;
        link.runtime_defined |= runtime == Runtime::LinkDefine;
    }
}

/// Adds one input: rewritten when it is PTX (or a fatbinary carrying PTX),
/// else (or if the linker refuses the rewrite) as given. `add` calls the
/// real function with an input type and data.
fn add_input(
    state: CUlinkState,
    input_type: c_uint,
    data: &[u8],
    mut add: impl FnMut(c_uint, *mut c_void, usize) -> CUresult,
    original: impl FnOnce() -> CUresult,
) -> CUresult {
    let rewritten = guarded(
        "cuLinkAddData",
        || None,
        || rewrite_input(state as usize, input_type, data),
    );
    let Some((mut bytes, runtime)) = rewritten else {
        return original();
    };
    let result = add(INPUT_PTX, bytes.as_mut_ptr() as *mut c_void, bytes.len());
    input_added(state as usize, runtime, result == CUDA_SUCCESS);
    if result == CUDA_SUCCESS {
        return result;
    }
    log::once(
        LogLevel::Warn,
        "instrumented-link-input",
        &format!(
            "the linker refused an instrumented PTX input (CUresult {result}); linked the original unchanged"
        ),
    );
    original()
}

// ---- the wrappers --------------------------------------------------------

macro_rules! cell {
    ($name:ident) => {
        static $name: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
    };
}
cell!(REAL_LIBRARY_LOAD_FROM_FILE);
cell!(REAL_LINK_ADD_DATA);
cell!(REAL_LINK_ADD_DATA_V2);
cell!(REAL_LINK_ADD_FILE);
cell!(REAL_LINK_ADD_FILE_V2);
cell!(REAL_LINK_COMPLETE);
cell!(REAL_LINK_DESTROY);

/// The real function: the one a `cuGetProcAddress`/`dlsym` answer handed
/// over, else the library's exported symbol.
fn real<T: Copy>(cell: &AtomicPtr<c_void>, symbol: &CStr) -> Option<T> {
    debug_assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
    let mut ptr = cell.load(Ordering::Relaxed);
    if ptr.is_null() {
        ptr = crate::driver::symbol(symbol);
        cell.store(ptr, Ordering::Relaxed);
    }
    // SAFETY: T is the function pointer type of `symbol` (callers name both).
    (!ptr.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, T>(&ptr) })
}

type FnLibraryLoadFromFile = unsafe extern "C" fn(
    *mut CUlibrary,
    *const c_char,
    *mut CUjit_option,
    *mut *mut c_void,
    c_uint,
    *mut CUlibraryOption,
    *mut *mut c_void,
    c_uint,
) -> CUresult;
type FnLinkAddData = unsafe extern "C" fn(
    CUlinkState,
    c_uint,
    *mut c_void,
    usize,
    *const c_char,
    c_uint,
    *mut CUjit_option,
    *mut *mut c_void,
) -> CUresult;
type FnLinkAddFile = unsafe extern "C" fn(
    CUlinkState,
    c_uint,
    *const c_char,
    c_uint,
    *mut CUjit_option,
    *mut *mut c_void,
) -> CUresult;
type FnLinkComplete = unsafe extern "C" fn(CUlinkState, *mut *mut c_void, *mut usize) -> CUresult;
type FnLinkDestroy = unsafe extern "C" fn(CUlinkState) -> CUresult;

/// `cuLibraryLoadFromFile`: the file is read and planned like
/// `cuLibraryLoadData`'s image; a rewritten image is loaded with
/// `cuLibraryLoadData` and the application's options.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLibraryLoadFromFile(
    library: *mut CUlibrary,
    file_name: *const c_char,
    jit_options: *mut CUjit_option,
    jit_values: *mut *mut c_void,
    num_jit: c_uint,
    lib_options: *mut CUlibraryOption,
    lib_values: *mut *mut c_void,
    num_lib: c_uint,
) -> CUresult {
    let Some(real) =
        real::<FnLibraryLoadFromFile>(&REAL_LIBRARY_LOAD_FROM_FILE, c"cuLibraryLoadFromFile")
    else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding the caller's arguments unchanged.
    let original = || unsafe {
        real(
            library,
            file_name,
            jit_options,
            jit_values,
            num_jit,
            lib_options,
            lib_values,
            num_lib,
        )
    };
    let image = (active() && !file_name.is_null())
        .then(|| {
            // SAFETY: the caller's path, a C string.
            let path = unsafe { CStr::from_ptr(file_name) };
            std::fs::read(path.to_string_lossy().as_ref()).ok()
        })
        .flatten();
    let load_data = crate::driver::cuda().cuLibraryLoadData;
    let (Some(mut bytes), Some(load_data)) = (image, load_data) else {
        return original();
    };
    bytes.push(0);
    // SAFETY: a NUL-terminated copy of the file; the loads forward the
    // caller's arguments, or its options with the rewritten image.
    let (result, plan) = unsafe {
        module_load::load(bytes.as_ptr() as *const c_void, original, |rewritten| {
            load_data(
                library,
                rewritten,
                jit_options,
                jit_values,
                num_jit,
                lib_options,
                lib_values,
                num_lib,
            )
        })
    };
    let image = &bytes[..bytes.len() - 1];
    // SAFETY: the caller's out-parameter, written on success.
    unsafe { state::library_loaded("cuLibraryLoadFromFile", result, library, Some(image), plan) };
    result
}

/// `name` as a C string literal.
macro_rules! cname {
    ($name:ident) => {
        // SAFETY: the literal ends with its only NUL.
        unsafe { CStr::from_bytes_with_nul_unchecked(concat!(stringify!($name), "\0").as_bytes()) }
    };
}

macro_rules! link_add_data {
    ($name:ident, $cell:ident) => {
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "C" fn $name(
            state: CUlinkState,
            input_type: c_uint,
            data: *mut c_void,
            size: usize,
            name: *const c_char,
            num_options: c_uint,
            options: *mut CUjit_option,
            values: *mut *mut c_void,
        ) -> CUresult {
            let Some(add_data) = real::<FnLinkAddData>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            // SAFETY: forwarding the caller's arguments, or its data rewritten.
            let add = |kind: c_uint, d: *mut c_void, n: usize| unsafe {
                add_data(state, kind, d, n, name, num_options, options, values)
            };
            if data.is_null() || size == 0 || !active() {
                return add(input_type, data, size);
            }
            // SAFETY: `data` holds `size` bytes (the API's contract).
            let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, size) };
            add_input(state, input_type, bytes, add, || {
                add(input_type, data, size)
            })
        }
    };
}

macro_rules! link_add_file {
    ($name:ident, $cell:ident, $add_data:ident, $add_data_cell:ident) => {
        /// A PTX (or fatbinary) file is read and added as data (named as the file).
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            state: CUlinkState,
            input_type: c_uint,
            path: *const c_char,
            num_options: c_uint,
            options: *mut CUjit_option,
            values: *mut *mut c_void,
        ) -> CUresult {
            let add_data = real::<FnLinkAddData>(&$add_data_cell, cname!($add_data));
            let Some(add_file) = real::<FnLinkAddFile>(&$cell, cname!($name)) else {
                return CUDA_ERROR_NOT_INITIALIZED;
            };
            let original = || {
                // SAFETY: `add_file` is the driver's entry for this name, of
                // this signature; the closure runs inside this hook with the
                // application's arguments unchanged, so they carry the
                // application's own contract with the driver.
                unsafe { add_file(state, input_type, path, num_options, options, values) }
            };
            if !rewritable(input_type) || path.is_null() || !active() {
                return original();
            }
            let Some(add_data) = add_data else {
                return original();
            };
            // SAFETY: the caller's path, a C string.
            let path_text = unsafe { CStr::from_ptr(path) }
                .to_string_lossy()
                .into_owned();
            let Ok(bytes) = std::fs::read(&path_text) else {
                return original(); // the driver reports the missing file
            };
            let name = std::ffi::CString::new(
                std::path::Path::new(&path_text)
                    .file_name()
                    .map_or(path_text.clone(), |f| f.to_string_lossy().into_owned()),
            )
            .unwrap_or_default();
            // SAFETY: the rewritten data with the caller's options.
            let add = |kind: c_uint, d: *mut c_void, n: usize| unsafe {
                add_data(
                    state,
                    kind,
                    d,
                    n,
                    name.as_ptr(),
                    num_options,
                    options,
                    values,
                )
            };
            add_input(state, input_type, &bytes, add, original)
        }
    };
}

link_add_data!(cuLinkAddData, REAL_LINK_ADD_DATA);
link_add_data!(cuLinkAddData_v2, REAL_LINK_ADD_DATA_V2);
link_add_file!(
    cuLinkAddFile,
    REAL_LINK_ADD_FILE,
    cuLinkAddData,
    REAL_LINK_ADD_DATA
);
link_add_file!(
    cuLinkAddFile_v2,
    REAL_LINK_ADD_FILE_V2,
    cuLinkAddData_v2,
    REAL_LINK_ADD_DATA_V2
);

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLinkComplete(
    state: CUlinkState,
    cubin_out: *mut *mut c_void,
    size_out: *mut usize,
) -> CUresult {
    let Some(real) = real::<FnLinkComplete>(&REAL_LINK_COMPLETE, c"cuLinkComplete") else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(state, cubin_out, size_out) };
    if result == CUDA_SUCCESS && !cubin_out.is_null() && !size_out.is_null() {
        // SAFETY: the driver wrote both out-parameters.
        let image = unsafe { *cubin_out } as usize;
        guarded(
            "cuLinkComplete",
            || (),
            || {
                let links = links();
                let Some(link) = links.get(&(state as usize)) else {
                    return;
                };
                if link.instrumented == 0 || link.pass_built {
                    return;
                }
                log::log(
                    LogLevel::Info,
                    &format!(
                        "instrumented {} PTX inputs of a link; its image records",
                        link.instrumented
                    ),
                );
                module_load::remember_linked(
                    state as usize,
                    image,
                    link.sites.to_json(),
                    link.params.clone(),
                );
            },
        );
    }
    result
}

/// The linked image dies with its link state.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLinkDestroy(state: CUlinkState) -> CUresult {
    let Some(real) = real::<FnLinkDestroy>(&REAL_LINK_DESTROY, c"cuLinkDestroy") else {
        return CUDA_ERROR_NOT_INITIALIZED;
    };
    // SAFETY: forwarding unchanged.
    let result = unsafe { real(state) };
    if result == CUDA_SUCCESS {
        links().remove(&(state as usize));
        module_load::forget_linked(state as usize);
    }
    result
}

/// The wrapper exported as `symbol` (for `dlsym` on a driver handle).
pub(crate) fn export_wrapper(symbol: &[u8]) -> Option<(&'static AtomicPtr<c_void>, *mut c_void)> {
    Some(match symbol {
        b"cuLibraryLoadFromFile" => (
            &REAL_LIBRARY_LOAD_FROM_FILE,
            cuLibraryLoadFromFile as *mut c_void,
        ),
        b"cuLinkAddData" => (&REAL_LINK_ADD_DATA, cuLinkAddData as *mut c_void),
        b"cuLinkAddData_v2" => (&REAL_LINK_ADD_DATA_V2, cuLinkAddData_v2 as *mut c_void),
        b"cuLinkAddFile" => (&REAL_LINK_ADD_FILE, cuLinkAddFile as *mut c_void),
        b"cuLinkAddFile_v2" => (&REAL_LINK_ADD_FILE_V2, cuLinkAddFile_v2 as *mut c_void),
        b"cuLinkComplete" => (&REAL_LINK_COMPLETE, cuLinkComplete as *mut c_void),
        b"cuLinkDestroy" => (&REAL_LINK_DESTROY, cuLinkDestroy as *mut c_void),
        _ => return None,
    })
}

/// The wrapper for a `cuGetProcAddress` answer (`symbol` is the base name):
/// from CUDA 6.5 `cuLinkAddData`/`cuLinkAddFile` mean the `_v2` functions.
pub(crate) fn proc_wrapper(
    symbol: &[u8],
    cuda_version: std::ffi::c_int,
) -> Option<(&'static AtomicPtr<c_void>, *mut c_void)> {
    let export: &[u8] = match symbol {
        b"cuLinkAddData" if cuda_version >= 6050 => b"cuLinkAddData_v2",
        b"cuLinkAddFile" if cuda_version >= 6050 => b"cuLinkAddFile_v2",
        other => other,
    };
    export_wrapper(export)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_entry_points_pick_the_abi_of_the_requested_version() {
        let w = |s: &[u8], v| proc_wrapper(s, v).map(|(_, w)| w);
        assert_eq!(
            w(b"cuLinkAddData", 12000),
            Some(cuLinkAddData_v2 as *mut c_void)
        );
        assert_eq!(
            w(b"cuLinkAddData", 6000),
            Some(cuLinkAddData as *mut c_void)
        );
        assert_eq!(
            w(b"cuLinkAddFile", 12000),
            Some(cuLinkAddFile_v2 as *mut c_void)
        );
        assert_eq!(
            w(b"cuLibraryLoadFromFile", 12000),
            Some(cuLibraryLoadFromFile as *mut c_void)
        );
        assert_eq!(w(b"cuLinkCreate", 12000), None);
    }
}
