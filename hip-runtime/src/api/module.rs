//! Code objects in and kernels out: the registration calls clang's host code
//! makes before `main` (`__hipRegisterFatBinary`, `__hipRegisterFunction`,
//! `__hipRegisterVar`), the `<<<>>>` path (`__hipPushCallConfiguration`,
//! `__hipPopCallConfiguration`, `hipLaunchKernel`), the module API
//! (`hipModuleLoadData`, `hipModuleGetFunction`, `hipModuleLaunchKernel`, …),
//! function attributes and occupancy.
//!
//! A launch builds the kernarg segment from the kernel's metadata: explicit
//! arguments at their `.offset`s (from `kernelParams`/`args`, or the
//! `HIP_LAUNCH_PARAM_BUFFER_POINTER` buffer), hidden arguments by
//! `prlx_rdna::fill_hidden_args` (code object v5 implicit arguments), then
//! runs the kernel to completion on the emulator.

use crate::abi::*;
use crate::entry::{c_str, exports, non_null, write_out};
use crate::runtime::{Runtime, runtime};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_uint, c_void};

/// Launch geometry and arguments.
pub struct LaunchRequest<'a> {
    pub grid: dim3,
    pub block: dim3,
    pub dynamic_lds: usize,
    pub stream: hipStream_t,
    pub args: KernelArgs<'a>,
}

/// Where the explicit arguments come from.
pub enum KernelArgs<'a> {
    /// One pointer per explicit argument (`kernelParams`, `hipLaunchKernel`'s `args`).
    Pointers(*const *mut c_void),
    /// The explicit arguments laid out already (`extra`'s buffer).
    Buffer(&'a [u8]),
}

/// Kernarg segments are padded to this (see [`launch`]).
const KERNARG_ALIGN: usize = 64;

/// The largest LDS allocation of a gfx1100 workgroup.
const MAX_LDS: usize = 64 << 10;

/// Points `hidden_hostcall_buffer` and `hidden_heap_v1` (device `printf`,
/// `malloc`/`free`) at the runtime's hostcall buffer and device heap.
fn set_hostcall_args(
    rt: &mut Runtime,
    kernel: &prlx_rdna::Kernel,
    kernarg: &mut [u8],
) -> Result<(), hipError_t> {
    for arg in kernel.hidden_args() {
        let pick = match arg.value_kind.as_str() {
            "hidden_hostcall_buffer" => |a: crate::hostcall::HostcallAddrs| a.buffer,
            "hidden_heap_v1" => |a: crate::hostcall::HostcallAddrs| a.heap,
            _ => continue,
        };
        let addrs = rt.gpu.hostcall().map_err(|message| {
            eprintln!("prlx hip: kernel {}: {message}", kernel.name);
            hipErrorOutOfMemory
        })?;
        let (start, size) = (arg.offset as usize, (arg.size as usize).min(8));
        if let Some(dst) = kernarg.get_mut(start..start + size) {
            dst.copy_from_slice(&pick(addrs).to_le_bytes()[..size]);
        }
    }
    Ok(())
}

/// Runs `function` (a `hipFunction_t` handle) to completion.
pub fn launch(
    rt: &mut Runtime,
    function: u64,
    request: &LaunchRequest<'_>,
) -> Result<(), hipError_t> {
    rt.healthy()?;
    rt.check_stream(request.stream)?;
    let Some(f) = rt.functions.get(&function).cloned() else {
        return Err(hipErrorInvalidResourceHandle);
    };
    let module = rt
        .modules
        .get(&f.module)
        .ok_or(hipErrorInvalidResourceHandle)?;
    let kernel = module
        .code
        .kernel(&f.name)
        .ok_or(hipErrorInvalidDeviceFunction)?
        .clone();
    let grid = [request.grid.x, request.grid.y, request.grid.z];
    let block = [request.block.x, request.block.y, request.block.z];
    let threads: u64 = block.iter().map(|&d| d as u64).product();
    if grid.contains(&0)
        || block.contains(&0)
        || threads > kernel.max_flat_workgroup_size.min(1024) as u64
    {
        return Err(hipErrorInvalidConfiguration);
    }
    if kernel.group_segment_fixed_size as usize + request.dynamic_lds > MAX_LDS {
        return Err(hipErrorInvalidValue);
    }
    let explicit_end = kernel
        .explicit_args()
        .map(|a| (a.offset + a.size) as usize)
        .max()
        .unwrap_or(0);
    // Scalar loads fetch the last arguments in 8- to 64-byte pieces and may
    // read past the segment's end, which a GPU's kernarg pool tolerates: the
    // segment is padded with zeros to a 64-byte multiple, plus 64 bytes.
    let segment = (kernel.kernarg_segment_size as usize).max(explicit_end);
    let mut kernarg = vec![0u8; segment.next_multiple_of(KERNARG_ALIGN) + KERNARG_ALIGN];
    match request.args {
        KernelArgs::Pointers(pointers) => {
            if explicit_end > 0 && pointers.is_null() {
                return Err(hipErrorInvalidValue);
            }
            for (index, arg) in kernel.explicit_args().enumerate() {
                let (offset, size) = (arg.offset as usize, arg.size as usize);
                // SAFETY: the caller passes one valid pointer per kernel
                // parameter, each to a value of the parameter's size.
                let value = unsafe {
                    let p = *pointers.add(index);
                    if p.is_null() {
                        return Err(hipErrorInvalidValue);
                    }
                    std::slice::from_raw_parts(p as *const u8, size)
                };
                kernarg[offset..offset + size].copy_from_slice(value);
            }
        }
        KernelArgs::Buffer(bytes) => {
            let n = bytes.len().min(kernarg.len());
            kernarg[..n].copy_from_slice(&bytes[..n]);
        }
    }
    let dims = prlx_rdna::LaunchDims {
        grid,
        block,
        dynamic_lds: request.dynamic_lds as u32,
    };
    prlx_rdna::fill_hidden_args(&kernel, &dims, &mut kernarg);
    set_hostcall_args(rt, &kernel, &mut kernarg)?;
    if let Err(message) = rt.sync_managed(true) {
        eprintln!("prlx hip: managed memory: {message}");
        return Err(hipErrorIllegalAddress);
    }
    let module = &rt.modules[&f.module];
    let outcome = rt.gpu.launch(&module.code, &f.name, &dims, &kernarg);
    if let Err(message) = rt.sync_managed(false) {
        eprintln!("prlx hip: managed memory: {message}");
    }
    if let Err((code, message)) = outcome {
        eprintln!("prlx hip: kernel {} failed: {message}", f.name);
        if code == hipErrorIllegalAddress || code == hipErrorLaunchFailure {
            rt.sticky = Some(code);
        }
        return Err(code);
    }
    Ok(())
}

// ---- registration (clang's host code, before main) ----------------------------

/// Reads a fat binary wrapper and keeps its bundle; returns its handle.
fn register_fat_binary(data: *const c_void) -> Result<u64, String> {
    if data.is_null() {
        return Err("__hipRegisterFatBinary: NULL wrapper".into());
    }
    // SAFETY: clang passes its `__hip_fatbin_wrapper`, a FatbinWrapper.
    let wrapper = unsafe { &*(data as *const FatbinWrapper) };
    if wrapper.magic != HIP_FATBIN_MAGIC {
        return Err(format!(
            "__hipRegisterFatBinary: wrapper magic {:#x} is not HIPF ({HIP_FATBIN_MAGIC:#x})",
            wrapper.magic
        ));
    }
    let binary = wrapper.binary as *const u8;
    if binary.is_null() {
        return Err("__hipRegisterFatBinary: the wrapper holds no binary".into());
    }
    // SAFETY: the wrapper points to the offload bundle of `.hip_fatbin`.
    let len = unsafe { crate::bundle::image_len(binary) }.map_err(|e| e.to_string())?;
    // SAFETY: `image_len` found `len` bytes of image there.
    let image = unsafe { std::slice::from_raw_parts(binary, len) }.to_vec();
    let mut rt = runtime();
    let handle = rt.handle();
    rt.fatbins.insert(
        handle,
        crate::runtime::FatBinary {
            image,
            module: None,
        },
    );
    Ok(handle)
}

/// Registers a fat binary; the returned handle is passed back to the other
/// registration calls. A wrapper that cannot be read is named on stderr and
/// yields a handle whose kernels fail to launch (`hipErrorNoBinaryForGpu`).
///
/// # Safety
/// `data` must be clang's fat binary wrapper.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterFatBinary(data: *const c_void) -> *mut *mut c_void {
    let outcome = std::panic::catch_unwind(|| match register_fat_binary(data) {
        Ok(handle) => handle,
        Err(message) => {
            eprintln!("prlx hip: {message}");
            let mut rt = runtime();
            let handle = rt.handle();
            rt.fatbins.insert(
                handle,
                crate::runtime::FatBinary {
                    image: Vec::new(),
                    module: Some(Err(hipErrorNoBinaryForGpu)),
                },
            );
            handle
        }
    });
    outcome.unwrap_or(0) as *mut *mut c_void
}

/// Records which kernel a host stub launches.
///
/// # Safety
/// `device_name` must be a NUL-terminated string.
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
    let _ = (
        device_function,
        thread_limit,
        tid,
        bid,
        block_dim,
        grid_dim,
        warp_size,
    );
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: clang passes the kernel's mangled name.
        let Ok(name) = (unsafe { c_str(device_name) }) else {
            return;
        };
        runtime()
            .host_functions
            .insert(host_function as usize, (modules as u64, name.to_string()));
    });
}

/// Records a `__device__`/`__constant__` variable's host shadow.
///
/// # Safety
/// `device_var` must be a NUL-terminated string.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn __hipRegisterVar(
    modules: *mut *mut c_void,
    var: *mut c_void,
    host_var: *mut c_char,
    device_var: *const c_char,
    ext: c_int,
    size: usize,
    constant: c_int,
    global: c_int,
) {
    let _ = (host_var, ext, constant, global);
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: clang passes the variable's device-side name.
        let Ok(name) = (unsafe { c_str(device_var) }) else {
            return;
        };
        runtime().variables.insert(
            var as usize,
            crate::runtime::Variable {
                fatbin: modules as u64,
                name: name.to_string(),
                size,
            },
        );
    });
}

/// Allocates a `__managed__` variable: managed memory holding its initial
/// value, its address stored in the host's pointer `pointer` now and in the
/// code object's pointer variable `name` when the fat binary is loaded.
///
/// # Safety
/// `pointer` must be the host's pointer variable, `init_value` `size`
/// readable bytes, `name` a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipRegisterManagedVar(
    modules: *mut c_void,
    pointer: *mut *mut c_void,
    init_value: *const c_void,
    name: *const c_char,
    size: usize,
    align: c_uint,
) {
    let _ = align;
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: clang passes the variable's name.
        let Ok(name) = (unsafe { c_str(name) }) else {
            return;
        };
        let mut address: *mut c_void = std::ptr::null_mut();
        if super::memory::malloc_managed(&mut address, size, 1).is_err() {
            eprintln!("prlx hip: cannot allocate __managed__ variable {name} ({size} bytes)");
            return;
        }
        // SAFETY: `address` is a fresh host mapping of `size` bytes; the
        // initial value and the pointer are clang's globals.
        unsafe {
            if !init_value.is_null() {
                std::ptr::copy_nonoverlapping(init_value as *const u8, address as *mut u8, size);
            }
            if !pointer.is_null() {
                *pointer = address;
            }
        }
        runtime()
            .managed_variables
            .push(crate::runtime::ManagedVariable {
                fatbin: modules as u64,
                name: name.to_string(),
                address: address as u64,
            });
    });
}

/// Forgets a fat binary, its module and its registrations (at exit).
///
/// # Safety
/// `modules` must be a handle `__hipRegisterFatBinary` returned.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipUnregisterFatBinary(modules: *mut *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        let mut rt = runtime();
        let fatbin = modules as u64;
        if let Some(entry) = rt.fatbins.remove(&fatbin)
            && let Some(Ok(module)) = entry.module
        {
            unload(&mut rt, module);
        }
        rt.host_functions.retain(|_, (f, _)| *f != fatbin);
        rt.variables.retain(|_, v| v.fatbin != fatbin);
        rt.managed_variables.retain(|v| v.fatbin != fatbin);
    });
}

fn unload(rt: &mut Runtime, module: u64) -> bool {
    let Some(m) = rt.modules.remove(&module) else {
        return false;
    };
    for handle in m.functions.values() {
        rt.functions.remove(handle);
    }
    rt.gpu.unload(m.code);
    true
}

// ---- <<<>>> -----------------------------------------------------------------

struct CallConfiguration {
    grid: dim3,
    block: dim3,
    shared: usize,
    stream: hipStream_t,
}

thread_local! {
    static CALL_CONFIGURATIONS: RefCell<Vec<CallConfiguration>> = const { RefCell::new(Vec::new()) };
}

fn launch_host_function(
    function_address: *const c_void,
    request: &LaunchRequest<'_>,
) -> Result<(), hipError_t> {
    non_null(function_address)?;
    let mut rt = runtime();
    let function = rt.host_function(function_address as usize)?;
    launch(&mut rt, function, request)
}

exports! {
    fn __hipPushCallConfiguration(grid: dim3, block: dim3, shared: usize, stream: hipStream_t) {
        CALL_CONFIGURATIONS.with(|c| c.borrow_mut().push(CallConfiguration { grid, block, shared, stream }));
        Ok(())
    }

    fn __hipPopCallConfiguration(grid: *mut dim3, block: *mut dim3, shared: *mut usize, stream: *mut hipStream_t) {
        let Some(config) = CALL_CONFIGURATIONS.with(|c| c.borrow_mut().pop()) else {
            return Err(hipErrorMissingConfiguration);
        };
        // SAFETY: out-pointers per clang's host stub.
        unsafe {
            write_out(grid, config.grid)?;
            write_out(block, config.block)?;
            write_out(shared, config.shared)?;
            write_out(stream, config.stream)
        }
    }

    fn hipLaunchKernel(function_address: *const c_void, grid: dim3, block: dim3, args: *mut *mut c_void, shared: usize, stream: hipStream_t) {
        launch_host_function(function_address, &LaunchRequest {
            grid, block, dynamic_lds: shared, stream, args: KernelArgs::Pointers(args),
        })
    }

    /// `hipExtLaunchKernel`: a launch bracketed by two optional events.
    fn hipExtLaunchKernel(function_address: *const c_void, grid: dim3, block: dim3, args: *mut *mut c_void, shared: usize, stream: hipStream_t, start: hipEvent_t, stop: hipEvent_t, flags: c_int) {
        let _ = flags;
        super::stream::record_optional(start)?;
        launch_host_function(function_address, &LaunchRequest {
            grid, block, dynamic_lds: shared, stream, args: KernelArgs::Pointers(args),
        })?;
        super::stream::record_optional(stop)
    }

    // ---- module API ----------------------------------------------------------

    fn hipModuleLoadData(module: *mut hipModule_t, image: *const c_void) {
        load_data(module, image)
    }

    fn hipModuleLoadDataEx(module: *mut hipModule_t, image: *const c_void, num_options: c_uint, options: *mut c_int, option_values: *mut *mut c_void) {
        let _ = (num_options, options, option_values);
        load_data(module, image)
    }

    fn hipModuleLoad(module: *mut hipModule_t, path: *const c_char) {
        non_null(module)?;
        // SAFETY: a NUL-terminated path per the C API.
        let path = unsafe { c_str(path) }?;
        let image = std::fs::read(path).map_err(|e| {
            eprintln!("prlx hip: hipModuleLoad: {path}: {e}");
            hipErrorFileNotFound
        })?;
        let handle = runtime().load_module(&image).map_err(|message| {
            eprintln!("prlx hip: hipModuleLoad: {path}: {message}");
            hipErrorInvalidImage
        })?;
        // SAFETY: checked non-null.
        unsafe { write_out(module, handle as hipModule_t) }
    }

    fn hipModuleUnload(module: hipModule_t) {
        if unload(&mut runtime(), module as u64) { Ok(()) } else { Err(hipErrorInvalidResourceHandle) }
    }

    fn hipModuleGetFunction(function: *mut hipFunction_t, module: hipModule_t, name: *const c_char) {
        non_null(function)?;
        // SAFETY: a NUL-terminated name per the C API.
        let name = unsafe { c_str(name) }?;
        let handle = runtime().function(module as u64, name)?;
        // SAFETY: checked non-null.
        unsafe { write_out(function, handle as hipFunction_t) }
    }

    fn hipModuleGetGlobal(device_ptr: *mut hipDeviceptr_t, bytes: *mut usize, module: hipModule_t, name: *const c_char) {
        // SAFETY: a NUL-terminated name per the C API.
        let name = unsafe { c_str(name) }?;
        let rt = runtime();
        let m = rt.modules.get(&(module as u64)).ok_or(hipErrorInvalidResourceHandle)?;
        let (addr, size) = m.code.symbol(name).ok_or(hipErrorNotFound)?;
        // SAFETY: optional out-pointers per the C API.
        unsafe {
            if !device_ptr.is_null() {
                device_ptr.write_unaligned(addr as hipDeviceptr_t);
            }
            if !bytes.is_null() {
                bytes.write_unaligned(size as usize);
            }
        }
        Ok(())
    }

    fn hipModuleLaunchKernel(function: hipFunction_t, grid_x: c_uint, grid_y: c_uint, grid_z: c_uint, block_x: c_uint, block_y: c_uint, block_z: c_uint, shared: c_uint, stream: hipStream_t, params: *mut *mut c_void, extra: *mut *mut c_void) {
        let grid = dim3 { x: grid_x, y: grid_y, z: grid_z };
        let block = dim3 { x: block_x, y: block_y, z: block_z };
        // SAFETY: `extra` is NULL or a HIP_LAUNCH_PARAM_END-terminated list.
        let buffer = unsafe { extra_buffer(extra) }?;
        let args = match (&buffer, params.is_null()) {
            (Some(bytes), true) => KernelArgs::Buffer(bytes),
            (None, _) => KernelArgs::Pointers(params),
            (Some(_), false) => return Err(hipErrorInvalidValue),
        };
        launch(&mut runtime(), function as u64, &LaunchRequest {
            grid, block, dynamic_lds: shared as usize, stream, args,
        })
    }

    fn hipFuncGetAttribute(value: *mut c_int, attribute: c_int, function: hipFunction_t) {
        let attrs = function_attributes(&runtime(), function as u64)?;
        let answer = match attribute {
            HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => attrs.maxThreadsPerBlock,
            HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => attrs.sharedSizeBytes as c_int,
            HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES => attrs.constSizeBytes as c_int,
            HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => attrs.localSizeBytes as c_int,
            HIP_FUNC_ATTRIBUTE_NUM_REGS => attrs.numRegs,
            HIP_FUNC_ATTRIBUTE_PTX_VERSION => attrs.ptxVersion,
            HIP_FUNC_ATTRIBUTE_BINARY_VERSION => attrs.binaryVersion,
            HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA => attrs.cacheModeCA,
            HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => attrs.maxDynamicSharedSizeBytes,
            HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => attrs.preferredShmemCarveout,
            _ => return Err(hipErrorInvalidValue),
        };
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(value, answer) }
    }

    fn hipFuncGetAttributes(attributes: *mut hipFuncAttributes, function_address: *const c_void) {
        non_null(function_address)?;
        let mut rt = runtime();
        let function = rt.host_function(function_address as usize)?;
        let attrs = function_attributes(&rt, function)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(attributes, attrs) }
    }

    /// Accepted and checked; the emulator has no cache or carve-out to tune.
    fn hipFuncSetAttribute(function_address: *const c_void, attribute: c_int, value: c_int) {
        let _ = (attribute, value);
        non_null(function_address)?;
        runtime().host_function(function_address as usize).map(|_| ())
    }

    fn hipFuncSetCacheConfig(function_address: *const c_void, config: c_int) {
        let _ = config;
        non_null(function_address)?;
        runtime().host_function(function_address as usize).map(|_| ())
    }

    fn hipFuncSetSharedMemConfig(function_address: *const c_void, config: c_int) {
        let _ = config;
        non_null(function_address)?;
        runtime().host_function(function_address as usize).map(|_| ())
    }

    fn hipOccupancyMaxPotentialBlockSize(grid_size: *mut c_int, block_size: *mut c_int, function_address: *const c_void, dynamic_lds: usize, block_limit: c_int) {
        non_null(function_address)?;
        let mut rt = runtime();
        let function = rt.host_function(function_address as usize)?;
        max_potential_block_size(&rt, function, grid_size, block_size, dynamic_lds, block_limit)
    }

    fn hipModuleOccupancyMaxPotentialBlockSize(grid_size: *mut c_int, block_size: *mut c_int, function: hipFunction_t, dynamic_lds: usize, block_limit: c_int) {
        max_potential_block_size(&runtime(), function as u64, grid_size, block_size, dynamic_lds, block_limit)
    }

    fn hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks: *mut c_int, function_address: *const c_void, block_size: c_int, dynamic_lds: usize) {
        non_null(function_address)?;
        let mut rt = runtime();
        let function = rt.host_function(function_address as usize)?;
        let answer = active_blocks(&rt, function, block_size, dynamic_lds)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(blocks, answer) }
    }

    fn hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(blocks: *mut c_int, function: hipFunction_t, block_size: c_int, dynamic_lds: usize) {
        let answer = active_blocks(&runtime(), function as u64, block_size, dynamic_lds)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(blocks, answer) }
    }
}

fn load_data(module: *mut hipModule_t, image: *const c_void) -> Result<(), hipError_t> {
    non_null(module)?;
    non_null(image)?;
    // SAFETY: the caller passes a complete image (code object or bundle).
    let len = unsafe { crate::bundle::image_len(image as *const u8) }.map_err(|e| {
        eprintln!("prlx hip: hipModuleLoadData: {e}");
        hipErrorInvalidImage
    })?;
    // SAFETY: `image_len` found `len` bytes of image there.
    let bytes = unsafe { std::slice::from_raw_parts(image as *const u8, len) };
    let handle = runtime().load_module(bytes).map_err(|message| {
        eprintln!("prlx hip: hipModuleLoadData: {message}");
        hipErrorInvalidImage
    })?;
    // SAFETY: checked non-null.
    unsafe { write_out(module, handle as hipModule_t) }
}

/// The argument buffer of an `extra` list, if it holds one.
///
/// # Safety
/// `extra` must be NULL or a `HIP_LAUNCH_PARAM_END`-terminated list of
/// (marker, value) pairs whose buffer pointer and size pointer are valid.
unsafe fn extra_buffer<'a>(extra: *mut *mut c_void) -> Result<Option<&'a [u8]>, hipError_t> {
    if extra.is_null() {
        return Ok(None);
    }
    let (mut pointer, mut size): (*const u8, Option<usize>) = (std::ptr::null(), None);
    let mut at = 0;
    loop {
        // SAFETY: the list is terminated by HIP_LAUNCH_PARAM_END.
        let marker = unsafe { *extra.add(at) } as usize;
        match marker {
            HIP_LAUNCH_PARAM_END => break,
            HIP_LAUNCH_PARAM_BUFFER_POINTER => {
                // SAFETY: a value follows each marker.
                pointer = unsafe { *extra.add(at + 1) } as *const u8;
            }
            HIP_LAUNCH_PARAM_BUFFER_SIZE => {
                // SAFETY: the value is a pointer to a size_t.
                let size_ptr = unsafe { *extra.add(at + 1) } as *const usize;
                non_null(size_ptr)?;
                // SAFETY: checked non-null.
                size = Some(unsafe { size_ptr.read_unaligned() });
            }
            _ => return Err(hipErrorInvalidValue),
        }
        at += 2;
    }
    match (pointer.is_null(), size) {
        (false, Some(n)) => {
            // SAFETY: the buffer holds `n` bytes per the C API.
            Ok(Some(unsafe { std::slice::from_raw_parts(pointer, n) }))
        }
        _ => Err(hipErrorInvalidValue),
    }
}

fn function_attributes(rt: &Runtime, function: u64) -> Result<hipFuncAttributes, hipError_t> {
    let f = rt
        .functions
        .get(&function)
        .ok_or(hipErrorInvalidResourceHandle)?;
    let kernel = rt.modules[&f.module]
        .code
        .kernel(&f.name)
        .ok_or(hipErrorInvalidDeviceFunction)?;
    Ok(hipFuncAttributes {
        binaryVersion: 110,
        cacheModeCA: 0,
        constSizeBytes: 0,
        localSizeBytes: kernel.private_segment_fixed_size as usize,
        maxDynamicSharedSizeBytes: (MAX_LDS - kernel.group_segment_fixed_size as usize) as c_int,
        maxThreadsPerBlock: kernel.max_flat_workgroup_size.min(1024) as c_int,
        numRegs: kernel.descriptor.vgpr_count() as c_int,
        preferredShmemCarveout: -1,
        ptxVersion: 110,
        sharedSizeBytes: kernel.group_segment_fixed_size as usize,
    })
}

/// Workgroups of `block_size` threads one compute unit holds: limited by
/// its 2048 threads (64 Wave32 waves) and 128 KiB of LDS (two 64 KiB halves).
fn active_blocks(
    rt: &Runtime,
    function: u64,
    block_size: c_int,
    dynamic_lds: usize,
) -> Result<c_int, hipError_t> {
    let attrs = function_attributes(rt, function)?;
    if block_size <= 0 || block_size > attrs.maxThreadsPerBlock {
        return Err(hipErrorInvalidValue);
    }
    let by_threads = 2048 / block_size;
    let lds = attrs.sharedSizeBytes + dynamic_lds;
    let by_lds = (2 * MAX_LDS)
        .checked_div(lds)
        .map_or(c_int::MAX, |n| n.min(c_int::MAX as usize) as c_int);
    Ok(by_threads.min(by_lds).min(32))
}

fn max_potential_block_size(
    rt: &Runtime,
    function: u64,
    grid_size: *mut c_int,
    block_size: *mut c_int,
    dynamic_lds: usize,
    block_limit: c_int,
) -> Result<(), hipError_t> {
    non_null(grid_size)?;
    non_null(block_size)?;
    let attrs = function_attributes(rt, function)?;
    let mut block = attrs.maxThreadsPerBlock;
    if block_limit > 0 {
        block = block.min(block_limit);
    }
    let per_cu = active_blocks(rt, function, block, dynamic_lds)?;
    let grid = per_cu * super::device::properties().multiProcessorCount;
    // SAFETY: checked non-null.
    unsafe {
        write_out(block_size, block)?;
        write_out(grid_size, grid)
    }
}
