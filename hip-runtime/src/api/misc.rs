//! The remaining small entry points of HIP 5.2's library: kernel names by
//! handle, the stream's device, channel descriptors, the precompiled-header
//! query, the extended module launches (exported C++-mangled), and the
//! half-precision conversions the library exports for host code.

use crate::abi::*;
use crate::runtime::runtime;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::Mutex;

/// Interned kernel names: `hipKernelNameRef` hands out pointers that stay
/// valid (one allocation per distinct name, for the process's life).
fn intern(name: &str) -> *const c_char {
    static NAMES: Mutex<Vec<&'static CStr>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = names.iter().find(|n| n.to_bytes() == name.as_bytes()) {
        return found.as_ptr();
    }
    let Ok(owned) = CString::new(name) else {
        return std::ptr::null();
    };
    let leaked: &'static CStr = Box::leak(owned.into_boxed_c_str());
    names.push(leaked);
    leaked.as_ptr()
}

fn guarded_ptr(body: impl FnOnce() -> *const c_char) -> *const c_char {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(std::ptr::null())
}

/// The kernel's (mangled) name, or NULL for an unknown handle.
#[unsafe(no_mangle)]
pub extern "C" fn hipKernelNameRef(function: hipFunction_t) -> *const c_char {
    guarded_ptr(|| {
        let rt = runtime();
        rt.functions
            .get(&(function as u64))
            .map_or(std::ptr::null(), |f| intern(&f.name))
    })
}

/// The name of the kernel a host stub launches, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn hipKernelNameRefByPtr(
    host_function: *const c_void,
    stream: hipStream_t,
) -> *const c_char {
    let _ = stream;
    guarded_ptr(|| {
        let rt = runtime();
        rt.host_functions
            .get(&(host_function as usize))
            .map_or(std::ptr::null(), |(_, name)| intern(name))
    })
}

/// API names are a profiler's concern: there are none here.
#[unsafe(no_mangle)]
pub extern "C" fn hipApiName(id: u32) -> *const c_char {
    let _ = id;
    c"unknown".as_ptr()
}

/// The device a stream belongs to: 0 for any valid stream, -1 otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn hipGetStreamDeviceId(stream: hipStream_t) -> c_int {
    std::panic::catch_unwind(|| {
        if runtime().check_stream(stream).is_ok() {
            0
        } else {
            -1
        }
    })
    .unwrap_or(-1)
}

/// `hipChannelFormatDesc`, returned by value.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct hipChannelFormatDesc {
    pub x: c_int,
    pub y: c_int,
    pub z: c_int,
    pub w: c_int,
    pub f: c_int,
}

/// A channel descriptor of the given bit widths and kind.
#[unsafe(no_mangle)]
pub extern "C" fn hipCreateChannelDesc(
    x: c_int,
    y: c_int,
    z: c_int,
    w: c_int,
    f: c_int,
) -> hipChannelFormatDesc {
    hipChannelFormatDesc { x, y, z, w, f }
}

/// No precompiled header is embedded: NULL and 0.
///
/// # Safety
/// The out-pointers must be NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __hipGetPCH(pch: *mut *const c_char, size: *mut c_uint) {
    // SAFETY: optional out-pointers per the declaration.
    unsafe {
        if !pch.is_null() {
            *pch = std::ptr::null();
        }
        if !size.is_null() {
            *size = 0;
        }
    }
}

/// `float` → IEEE half bits (round to nearest even), as compiler-rt's
/// `__gnu_f2h_ieee` the library re-exports.
#[unsafe(no_mangle)]
pub extern "C" fn __gnu_f2h_ieee(value: f32) -> u16 {
    half::f16::from_f32(value).to_bits()
}

/// IEEE half bits → `float`.
#[unsafe(no_mangle)]
pub extern "C" fn __gnu_h2f_ieee(bits: u16) -> f32 {
    half::f16::from_bits(bits).to_f32()
}

#[allow(clippy::too_many_arguments)]
fn ext_module_launch(
    function: hipFunction_t,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    // SAFETY: the launch's own arguments, forwarded.
    let launched = || unsafe {
        super::module::hipModuleLaunchKernel(
            function,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared as c_uint,
            stream,
            params,
            extra,
        )
    };
    crate::entry::guard(|| {
        super::stream::record_optional(start)?;
        match launched() {
            hipSuccess => super::stream::record_optional(stop),
            error => Err(error),
        }
    })
}

/// `hipExtModuleLaunchKernel` (C++-mangled in HIP 5.2): a module launch
/// whose grid is given in work-items, bracketed by two optional events.
///
/// # Safety
/// As `hipModuleLaunchKernel`.
#[unsafe(export_name = "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipExtModuleLaunchKernel(
    function: hipFunction_t,
    global_x: c_uint,
    global_y: c_uint,
    global_z: c_uint,
    local_x: c_uint,
    local_y: c_uint,
    local_z: c_uint,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
    flags: c_uint,
) -> hipError_t {
    let _ = flags;
    let block = [local_x, local_y, local_z];
    if block.contains(&0) {
        return crate::entry::record(hipErrorInvalidValue);
    }
    // HIP's "global" sizes are work-items; partial workgroups round up.
    let grid = [
        global_x.div_ceil(local_x),
        global_y.div_ceil(local_y),
        global_z.div_ceil(local_z),
    ];
    ext_module_launch(
        function, grid, block, shared, stream, params, extra, start, stop,
    )
}

/// `hipHccModuleLaunchKernel` (C++-mangled): as `hipExtModuleLaunchKernel`
/// without flags.
///
/// # Safety
/// As `hipModuleLaunchKernel`.
#[unsafe(export_name = "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_")]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipHccModuleLaunchKernel(
    function: hipFunction_t,
    global_x: c_uint,
    global_y: c_uint,
    global_z: c_uint,
    local_x: c_uint,
    local_y: c_uint,
    local_z: c_uint,
    shared: usize,
    stream: hipStream_t,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    start: hipEvent_t,
    stop: hipEvent_t,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe {
        hipExtModuleLaunchKernel(
            function, global_x, global_y, global_z, local_x, local_y, local_z, shared, stream,
            params, extra, start, stop, 0,
        )
    }
}

/// hiprtc is not supported; its error strings are still answered.
#[unsafe(no_mangle)]
pub extern "C" fn hiprtcGetErrorString(result: c_int) -> *const c_char {
    match result {
        0 => c"HIPRTC_SUCCESS",
        1 => c"HIPRTC_ERROR_OUT_OF_MEMORY",
        2 => c"HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
        3 => c"HIPRTC_ERROR_INVALID_INPUT",
        4 => c"HIPRTC_ERROR_INVALID_PROGRAM",
        5 => c"HIPRTC_ERROR_INVALID_OPTION",
        6 => c"HIPRTC_ERROR_COMPILATION",
        7 => c"HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        8 => c"HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        9 => c"HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        10 => c"HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        11 => c"HIPRTC_ERROR_INTERNAL_ERROR",
        _ => c"HIPRTC_ERROR_INVALID_INPUT",
    }
    .as_ptr()
}

// ---- the per-thread default stream (`-fgpu-default-stream=per-thread`) ------
//
// The `_spt` entry points are the ordinary ones with NULL meaning the
// thread's own default stream; every stream is idle here, so they are the
// same calls.

use super::memory::{
    hipMemcpy, hipMemcpy2D, hipMemcpyAsync, hipMemcpyFromSymbol, hipMemcpyToSymbol, hipMemset,
    hipMemset2D,
};
use super::stream::{
    hipStreamGetFlags, hipStreamGetPriority, hipStreamQuery, hipStreamSynchronize,
    hipStreamWaitEvent,
};

/// # Safety
/// As `hipMemcpy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpy_spt(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemcpy(dst, src, size, kind) }
}

/// # Safety
/// As `hipMemcpyToSymbol`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyToSymbol_spt(
    symbol: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemcpyToSymbol(symbol, src, size, offset, kind) }
}

/// # Safety
/// As `hipMemcpyFromSymbol`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyFromSymbol_spt(
    dst: *mut c_void,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemcpyFromSymbol(dst, symbol, size, offset, kind) }
}

/// # Safety
/// As `hipMemcpy2D`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipMemcpy2D_spt(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemcpy2D(dst, dpitch, src, spitch, width, height, kind) }
}

/// # Safety
/// As `hipMemset`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemset_spt(dst: *mut c_void, value: c_int, size: usize) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemset(dst, value, size) }
}

/// # Safety
/// As `hipMemset2D`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemset2D_spt(
    dst: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemset2D(dst, pitch, value, width, height) }
}

/// # Safety
/// As `hipMemcpyAsync`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipMemcpyAsync_spt(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { hipMemcpyAsync(dst, src, size, kind, stream) }
}

/// # Safety
/// As `hipStreamQuery`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamQuery_spt(stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { hipStreamQuery(stream) }
}

/// # Safety
/// As `hipStreamSynchronize`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamSynchronize_spt(stream: hipStream_t) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { hipStreamSynchronize(stream) }
}

/// # Safety
/// As `hipStreamGetPriority`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamGetPriority_spt(
    stream: hipStream_t,
    priority: *mut c_int,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { hipStreamGetPriority(stream, priority) }
}

/// # Safety
/// As `hipStreamWaitEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamWaitEvent_spt(
    stream: hipStream_t,
    event: hipEvent_t,
    flags: c_uint,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { hipStreamWaitEvent(stream, event, flags) }
}

/// # Safety
/// As `hipStreamGetFlags`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipStreamGetFlags_spt(
    stream: hipStream_t,
    flags: *mut c_uint,
) -> hipError_t {
    // SAFETY: forwarded.
    unsafe { hipStreamGetFlags(stream, flags) }
}

/// # Safety
/// As `hipLaunchKernel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hipLaunchKernel_spt(
    function_address: *const c_void,
    grid: dim3,
    block: dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: hipStream_t,
) -> hipError_t {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { super::module::hipLaunchKernel(function_address, grid, block, args, shared, stream) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_trip() {
        assert_eq!(__gnu_f2h_ieee(1.0), 0x3c00);
        assert_eq!(__gnu_h2f_ieee(0xc000), -2.0);
        assert_eq!(__gnu_f2h_ieee(65520.0), 0x7c00, "rounds to infinity");
    }

    #[test]
    fn channel_descriptors_and_names() {
        assert_eq!(
            hipCreateChannelDesc(32, 0, 0, 0, 2),
            hipChannelFormatDesc {
                x: 32,
                y: 0,
                z: 0,
                w: 0,
                f: 2
            }
        );
        assert!(hipKernelNameRef(0x7 as hipFunction_t).is_null());
        assert_eq!(hipGetStreamDeviceId(std::ptr::null_mut()), 0);
        assert_eq!(hipGetStreamDeviceId(0x5 as hipStream_t), -1);
    }
}
