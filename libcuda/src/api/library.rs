//! Context-independent loading (`cuLibrary*`, `cuKernel*`, CUDA 12).
//!
//! A library is a module that belongs to no context, so it outlives the
//! contexts it is used from. As on NVIDIA's driver (checked on an H200,
//! driver 580.159.04, see `docs/cudart-roads.md`):
//!
//! - a `CUkernel` is a handle of its own, not a `CUfunction`:
//!   `cuKernelGetFunction` (which needs a current context) returns the
//!   context's function, the same one `cuModuleGetFunction` finds in
//!   `cuLibraryGetModule`'s module; a `CUkernel` may still be passed to
//!   `cuLaunchKernel` directly;
//! - `cuLibraryGetGlobal` and `cuLibraryGetModule` need a current context
//!   (`CUDA_ERROR_INVALID_CONTEXT` without one); `cuLibraryLoadData`,
//!   `cuLibraryGetKernel`, `cuLibraryGetManaged` and `cuKernelGetName` do
//!   not.
//!
//! The CUDA runtime loads its modules here, often before any context
//! exists, so whatever looks a library's globals up at load time (the
//! capture shim) must be ready to be refused.

use super::launch::{function_attribute, set_function_attribute};
use super::module::{function_handle, get_global, load_image};
use crate::cu::*;
use crate::driver::{Library, as_handle, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{c_str, exports, non_null, write_optional, write_out};
use crate::image;
use crate::jit::JitLogs;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// No context owns a library's module.
const NO_CONTEXT: usize = 0;

/// The number of `CUlibraryOption`s CUDA 12.9 defines.
const LIBRARY_OPTION_COUNT: c_uint = 2;

fn check_library_options(options: *const c_uint, num: c_uint) -> Result<(), CUresult> {
    if num == 0 {
        return Ok(());
    }
    non_null(options)?;
    for i in 0..num as usize {
        // SAFETY: `options` holds `num` entries.
        if unsafe { *options.add(i) } >= LIBRARY_OPTION_COUNT {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
    }
    Ok(())
}

/// Loads an image as a library.
///
/// # Safety
/// `image` must be a valid module image.
unsafe fn load_library(
    library: *mut *mut c_void,
    image: *const u8,
    source_name: &str,
    logs: JitLogs,
) -> Result<(), CUresult> {
    with_driver(|d| {
        non_null(library)?;
        // SAFETY: forwarded contract.
        let img = unsafe { image::read(image, d.sm()) };
        let module = load_image(d, NO_CONTEXT, img, source_name, &logs)?;
        let lib = d.libraries.insert(Library {
            module: module as usize,
        });
        // SAFETY: `library` is NULL or valid by `load_library`'s `# Safety` contract (writable for a `*mut
        // c_void`); `write_out` refuses NULL.
        unsafe { write_out(library, lib) }
    })
}

/// The key a library kernel's own handle is kept under in its module's
/// function map (no PTX name starts with a NUL).
fn kernel_key(name: &str) -> String {
    format!("\0kernel {name}")
}

/// The `CUkernel` of `name` in a library's `module`: a handle distinct
/// from the module's `CUfunction` of that name (the same one each time),
/// which every call taking a function also accepts.
fn kernel_handle(
    d: &mut crate::driver::Driver,
    module: CUmodule,
    name: &str,
) -> Result<*mut c_void, CUresult> {
    let f = function_handle(d, module, name)?;
    let key = kernel_key(name);
    if let Some(&k) = d.modules.get(module).and_then(|m| m.functions.get(&key)) {
        return Ok(as_handle(k));
    }
    let func = d.function(f)?;
    let kernel = crate::driver::Function {
        module: func.module,
        emu: func.emu,
        name: func.name.clone(),
        max_dynamic_shared: func.max_dynamic_shared,
        carveout: func.carveout,
        shared_memory_mode: func.shared_memory_mode,
        non_portable_cluster: func.non_portable_cluster,
        cache_config: func.cache_config,
    };
    let k = d.functions.insert(kernel);
    if let Some(m) = d.modules.get_mut(module) {
        m.functions.insert(key, k as usize);
    }
    Ok(k)
}

/// The module's `CUfunction` behind a kernel handle (or a function handle).
fn kernel_function(
    d: &mut crate::driver::Driver,
    kernel: *mut c_void,
) -> Result<CUfunction, CUresult> {
    let func = d.function(kernel)?;
    let module = as_handle(func.module);
    let name = func
        .name
        .to_str()
        .map_err(|_| CUDA_ERROR_INVALID_HANDLE)?
        .to_owned();
    function_handle(d, module, &name)
}

/// What NVIDIA's driver reports for a kernel node of a library's kernel
/// (given as its `CUkernel`, or as a `CUfunction` of a library's module):
/// the current context's `CUfunction`, the `CUkernel`, and the context.
/// None when `handle` is neither or no context is current.
pub(crate) fn node_function_of_kernel(
    handle: *mut c_void,
) -> Option<(CUfunction, *mut c_void, CUcontext)> {
    with_driver(|d| {
        let ctx = d.current_context()?;
        let func = d.function(handle)?;
        let name = func
            .name
            .to_str()
            .map_err(|_| CUDA_ERROR_INVALID_HANDLE)?
            .to_owned();
        let module = as_handle(func.module);
        if d.libraries
            .handles_where(|l| l.module == module as usize)
            .is_empty()
        {
            return Err(CUDA_ERROR_INVALID_HANDLE);
        }
        let kernel = kernel_handle(d, module, &name)?;
        Ok((function_handle(d, module, &name)?, kernel, as_handle(ctx)))
    })
    .ok()
}

fn library_module(d: &crate::driver::Driver, library: *mut c_void) -> Result<CUmodule, CUresult> {
    let lib = d.libraries.get(library).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let module = as_handle(lib.module);
    if d.modules.contains(module) {
        Ok(module)
    } else {
        Err(CUDA_ERROR_INVALID_HANDLE)
    }
}

exports! {
    fn cuLibraryLoadData(
        library: *mut *mut c_void,
        code: *const c_void,
        jit_options: *mut c_uint,
        jit_option_values: *mut *mut c_void,
        num_jit_options: c_uint,
        library_options: *mut c_uint,
        library_option_values: *mut *mut c_void,
        num_library_options: c_uint,
    ) {
        non_null(code)?;
        let _ = library_option_values;
        check_library_options(library_options, num_library_options)?;
        // SAFETY: the arrays hold `num_jit_options` entries by the API contract.
        let logs = unsafe { JitLogs::parse(num_jit_options, jit_options, jit_option_values) }?;
        // SAFETY: `library` is the caller's out-pointer and `code` its NUL-terminated PTX or image (checked
        // non-null above), as cuda.h specifies for `cuLibraryLoadData`.
        unsafe { load_library(library, code.cast(), "library.ptx", logs) }
    }

    fn cuLibraryLoadFromFile(
        library: *mut *mut c_void,
        file_name: *const c_char,
        jit_options: *mut c_uint,
        jit_option_values: *mut *mut c_void,
        num_jit_options: c_uint,
        library_options: *mut c_uint,
        library_option_values: *mut *mut c_void,
        num_library_options: c_uint,
    ) {
        // SAFETY: `cuLibraryLoadFromFile`'s caller passes `file_name` as cuda.h specifies: NULL (refused by
        // `c_str`) or a NUL-terminated string.
        let path = unsafe { c_str(file_name) }?;
        let _ = library_option_values;
        check_library_options(library_options, num_library_options)?;
        // SAFETY: as above.
        let logs = unsafe { JitLogs::parse(num_jit_options, jit_options, jit_option_values) }?;
        let mut bytes = std::fs::read(path).map_err(|_| CUDA_ERROR_FILE_NOT_FOUND)?;
        bytes.push(0);
        let name = std::path::Path::new(path)
            .file_name()
            .map_or(path.to_string(), |f| f.to_string_lossy().into_owned());
        // SAFETY: NUL-terminated above.
        unsafe { load_library(library, bytes.as_ptr(), &name, logs) }
    }

    fn cuLibraryUnload(library: *mut c_void) {
        with_driver(|d| {
            let lib = d.libraries.remove(library).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            d.unload_module(lib.module);
            Ok(())
        })
    }

    fn cuLibraryGetModule(p_mod: *mut CUmodule, library: *mut c_void) {
        with_driver(|d| {
            non_null(p_mod)?;
            d.current_context()?;
            let module = library_module(d, library)?;
            // SAFETY: `cuLibraryGetModule`'s caller passes `p_mod` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUmodule`.
            unsafe { write_out(p_mod, module) }
        })
    }

    fn cuLibraryGetKernel(p_kernel: *mut *mut c_void, library: *mut c_void, name: *const c_char) {
        with_driver(|d| {
            non_null(p_kernel)?;
            // SAFETY: `cuLibraryGetKernel`'s caller passes `name` as cuda.h specifies: NULL (refused by
            // `c_str`) or a NUL-terminated string.
            let name = unsafe { c_str(name) }?;
            let module = library_module(d, library)?;
            let k = kernel_handle(d, module, name)?;
            // SAFETY: `cuLibraryGetKernel`'s caller passes `p_kernel` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `*mut c_void`.
            unsafe { write_out(p_kernel, k) }
        })
    }

    fn cuLibraryGetGlobal(dptr: *mut CUdeviceptr, bytes: *mut usize, library: *mut c_void, name: *const c_char) {
        with_driver(|d| {
            d.current_context()?;
            // SAFETY: `cuLibraryGetGlobal`'s caller passes `name` as cuda.h specifies: NULL (refused by
            // `c_str`) or a NUL-terminated string.
            let name = unsafe { c_str(name) }?;
            let module = library_module(d, library)?;
            let (addr, size) = get_global(d, module, name)?;
            // SAFETY: `cuLibraryGetGlobal`'s caller passes `dptr` and `bytes` as cuda.h specifies: NULL
            // (skipped by `write_optional`) or writable for their types.
            unsafe {
                write_optional(dptr, addr);
                write_optional(bytes, size as usize);
            }
            Ok(())
        })
    }

    /// A `__managed__` variable: the emulator placed it at its own host
    /// address, so the pointer is valid on the host and in kernels.
    fn cuLibraryGetManaged(dptr: *mut CUdeviceptr, bytes: *mut usize, library: *mut c_void, name: *const c_char) {
        with_driver(|d| {
            // SAFETY: `cuLibraryGetManaged`'s caller passes `name` as cuda.h specifies: NULL (refused by
            // `c_str`) or a NUL-terminated string.
            let name = unsafe { c_str(name) }?;
            let module = library_module(d, library)?;
            let (addr, size) = get_global(d, module, name)?;
            if !d.device.mem_is_host_backed(addr) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: `cuLibraryGetManaged`'s caller passes `dptr` and `bytes` as cuda.h specifies: NULL
            // (skipped by `write_optional`) or writable for their types.
            unsafe {
                write_optional(dptr, addr);
                write_optional(bytes, size as usize);
            }
            Ok(())
        })
    }

    fn cuKernelGetFunction(p_func: *mut CUfunction, kernel: *mut c_void) {
        with_driver(|d| {
            non_null(p_func)?;
            d.current_context()?;
            let f = kernel_function(d, kernel)?;
            // SAFETY: `cuKernelGetFunction`'s caller passes `p_func` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUfunction`.
            unsafe { write_out(p_func, f) }
        })
    }

    fn cuKernelGetLibrary(p_lib: *mut *mut c_void, kernel: *mut c_void) {
        with_driver(|d| {
            non_null(p_lib)?;
            let module = d.function(kernel)?.module;
            let lib = d
                .libraries
                .handles_where(|l| l.module == module)
                .first()
                .copied()
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            // SAFETY: `cuKernelGetLibrary`'s caller passes `p_lib` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `*mut c_void`.
            unsafe { write_out(p_lib, lib) }
        })
    }

    fn cuKernelGetName(name: *mut *const c_char, kernel: *mut c_void) {
        with_driver(|d| {
            non_null(name)?;
            let p = d.function(kernel)?.name.as_ptr();
            // SAFETY: `cuKernelGetName`'s caller passes `name` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `*const c_char`.
            unsafe { write_out(name, p) }
        })
    }

    fn cuKernelGetAttribute(pi: *mut c_int, attrib: c_int, kernel: *mut c_void, dev: CUdevice) {
        with_driver(|d| {
            non_null(pi)?;
            crate::driver::check_device(dev)?;
            let v = function_attribute(d, kernel, attrib)?;
            // SAFETY: `cuKernelGetAttribute`'s caller passes `pi` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(pi, v) }
        })
    }

    fn cuKernelSetAttribute(attrib: c_int, value: c_int, kernel: *mut c_void, dev: CUdevice) {
        with_driver(|d| {
            crate::driver::check_device(dev)?;
            set_function_attribute(d, kernel, attrib, value)?;
            // The kernel's attributes are its functions' too.
            let f = kernel_function(d, kernel)?;
            set_function_attribute(d, f, attrib, value)
        })
    }

    fn cuKernelSetCacheConfig(kernel: *mut c_void, config: c_uint, dev: CUdevice) {
        with_driver(|d| {
            crate::driver::check_device(dev)?;
            if config > 3 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            d.function(kernel)?;
            let function = kernel_function(d, kernel)?;
            for handle in [kernel, function] {
                if let Some(f) = d.functions.get_mut(handle) {
                    f.cache_config = config;
                }
            }
            Ok(())
        })
    }

    fn cuKernelGetParamInfo(kernel: *mut c_void, param_index: usize, param_offset: *mut usize, param_size: *mut usize) {
        with_driver(|d| {
            let emu = d.function(kernel)?.emu;
            let info = d.device.kernel_info(emu).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let p = info.params.get(param_index).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuKernelGetParamInfo`'s caller passes `param_offset` and `param_size` as cuda.h
            // specifies: NULL (skipped by `write_optional`) or writable for a `usize`.
            unsafe {
                write_optional(param_offset, p.offset as usize);
                write_optional(param_size, p.size as usize);
            }
            Ok(())
        })
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuLibraryLoadData": 12000 => cuLibraryLoadData;
        "cuLibraryLoadFromFile": 12000 => cuLibraryLoadFromFile;
        "cuLibraryUnload": 12000 => cuLibraryUnload;
        "cuLibraryGetModule": 12000 => cuLibraryGetModule;
        "cuLibraryGetKernel": 12000 => cuLibraryGetKernel;
        "cuLibraryGetGlobal": 12000 => cuLibraryGetGlobal;
        "cuLibraryGetManaged": 12000 => cuLibraryGetManaged;
        "cuKernelGetFunction": 12000 => cuKernelGetFunction;
        "cuKernelGetLibrary": 12050 => cuKernelGetLibrary;
        "cuKernelGetName": 12030 => cuKernelGetName;
        "cuKernelGetAttribute": 12000 => cuKernelGetAttribute;
        "cuKernelSetAttribute": 12000 => cuKernelSetAttribute;
        "cuKernelSetCacheConfig": 12000 => cuKernelSetCacheConfig;
        "cuKernelGetParamInfo": 12040 => cuKernelGetParamInfo;
    }
}
