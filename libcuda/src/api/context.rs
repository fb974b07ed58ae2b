//! Contexts: created ones, the device's primary context, and each thread's
//! context stack.

use crate::cu::*;
use crate::driver::check_device;
use crate::driver::{
    self, as_handle, stack_forget, stack_pop, stack_push, stack_set_top, stack_top, with_context,
    with_driver,
};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_optional, write_out};
use std::ffi::{c_int, c_uint};

/// The API version `cuCtxGetApiVersion` reports for every context.
const CONTEXT_API_VERSION: c_uint = 3020;

fn check_flags(flags: c_uint) -> Result<(), CUresult> {
    if flags & !CU_CTX_FLAGS_MASK != 0 {
        Err(CUDA_ERROR_INVALID_VALUE)
    } else {
        Ok(())
    }
}

fn create(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> Result<(), CUresult> {
    with_driver(|d| {
        non_null(pctx)?;
        check_device(dev)?;
        check_flags(flags)?;
        let ctx = d.new_context_on(dev, flags, false);
        stack_push(ctx);
        // SAFETY: `pctx` is NULL or valid by `create`'s `# Safety` contract (writable for a `CUcontext`);
        // `write_out` refuses NULL.
        unsafe { write_out(pctx, as_handle(ctx)) }
    })
}

fn destroy(ctx: CUcontext) -> Result<(), CUresult> {
    let storage = with_driver(|d| {
        let c = d.contexts.get(ctx).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
        if c.primary {
            // The primary context is released, never destroyed.
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        Ok(d.take_local_storage(ctx as usize))
    })?;
    driver::LocalStorage::run_destructors(ctx as usize, storage);
    with_driver(|d| {
        if !d.contexts.contains(ctx) {
            return Err(CUDA_ERROR_INVALID_CONTEXT);
        }
        d.release_context_resources(ctx as usize);
        d.contexts.remove(ctx);
        stack_forget(ctx as usize);
        Ok(())
    })
}

/// Runs the destructors of the primary context's local storage when it is
/// about to be reset (explicitly, or by its last release), outside the lock.
fn before_primary_reset(dev: CUdevice, release: bool) -> Result<(), CUresult> {
    let taken = with_driver(|d| {
        let p = d.primaries[dev as usize];
        let resets = !release || p.refs == 1;
        Ok(match p.ctx {
            Some(p) if resets => Some((p, d.take_local_storage(p))),
            _ => None,
        })
    })?;
    if let Some((p, storage)) = taken {
        driver::LocalStorage::run_destructors(p, storage);
    }
    Ok(())
}

/// Device `dev`'s primary context, created on first use.
fn primary(d: &mut driver::Driver, dev: CUdevice) -> usize {
    match d.primaries[dev as usize].ctx {
        Some(p) => p,
        None => {
            let p = d.new_context_on(dev, 0, true);
            if let Some(c) = d.contexts.get_mut(as_handle(p)) {
                c.active = false;
            }
            d.primaries[dev as usize].ctx = Some(p);
            p
        }
    }
}

/// Frees what the primary context owns and clears its sticky error; it
/// stays usable while it is still retained.
fn reset_primary(d: &mut driver::Driver, dev: CUdevice) {
    if let Some(p) = d.primaries[dev as usize].ctx {
        d.release_context_resources(p);
        let retained = d.primaries[dev as usize].refs > 0;
        if let Some(c) = d.contexts.get_mut(as_handle(p)) {
            c.active = retained;
            c.sticky = None;
        }
    }
}

exports! {
    fn cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) {
        create(pctx, flags, dev)
    }

    /// Execution-affinity parameters are accepted and ignored: the emulator
    /// has no SMs to partition.
    fn cuCtxCreate_v3(
        pctx: *mut CUcontext,
        params_array: *mut CUexecAffinityParam,
        num_params: c_int,
        flags: c_uint,
        dev: CUdevice,
    ) {
        if num_params < 0 || (num_params > 0 && params_array.is_null()) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        create(pctx, flags, dev)
    }

    fn cuCtxCreate_v4(
        pctx: *mut CUcontext,
        params: *mut CUctxCreateParams,
        flags: c_uint,
        dev: CUdevice,
    ) {
        if !params.is_null() {
            // SAFETY: non-null, points to the caller's CUctxCreateParams.
            let p = unsafe { &*params };
            if !p.cig_params.is_null() {
                return Err(CUDA_ERROR_NOT_SUPPORTED);
            }
            if p.num_exec_affinity_params < 0
                || (p.num_exec_affinity_params > 0 && p.exec_affinity_params.is_null())
            {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
        }
        create(pctx, flags, dev)
    }

    fn cuCtxDestroy_v2(ctx: CUcontext) {
        destroy(ctx)
    }

    fn cuCtxPushCurrent_v2(ctx: CUcontext) {
        with_driver(|d| {
            if !d.contexts.contains(ctx) {
                return Err(CUDA_ERROR_INVALID_CONTEXT);
            }
            stack_push(ctx as usize);
            Ok(())
        })
    }

    fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) {
        with_driver(|_| {
            let top = stack_pop().ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
            // SAFETY: `cuCtxPopCurrent_v2`'s caller passes `pctx` as cuda.h specifies: NULL (skipped by
            // `write_optional`) or valid for writing a `CUcontext`.
            unsafe { write_optional(pctx, as_handle(top)) };
            Ok(())
        })
    }

    fn cuCtxSetCurrent(ctx: CUcontext) {
        with_driver(|d| {
            if ctx.is_null() {
                stack_set_top(None);
                return Ok(());
            }
            if !d.contexts.contains(ctx) {
                return Err(CUDA_ERROR_INVALID_CONTEXT);
            }
            stack_set_top(Some(ctx as usize));
            Ok(())
        })
    }

    fn cuCtxGetCurrent(pctx: *mut CUcontext) {
        with_driver(|_| {
            let top = stack_top().map_or(std::ptr::null_mut(), as_handle);
            // SAFETY: `cuCtxGetCurrent`'s caller passes `pctx` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUcontext`.
            unsafe { write_out(pctx, top) }
        })
    }

    fn cuCtxGetDevice(device: *mut CUdevice) {
        with_context(|d, ctx| {
            let dev = d.contexts.get(as_handle(ctx)).map_or(0, |c| c.device);
            // SAFETY: `cuCtxGetDevice`'s caller passes `device` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdevice`.
            unsafe { write_out(device, dev) }
        })
    }

    /// CUDA 13: the device of `ctx`, or of the current context when NULL.
    fn cuCtxGetDevice_v2(device: *mut CUdevice, ctx: CUcontext) {
        with_driver(|d| {
            non_null(device)?;
            let ctx = if ctx.is_null() { d.current_context()? } else { d.usable_context(ctx as usize)? };
            let dev = d.contexts.get(as_handle(ctx)).map_or(0, |c| c.device);
            // SAFETY: `cuCtxGetDevice_v2`'s caller passes `device` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdevice`.
            unsafe { write_out(device, dev) }
        })
    }

    fn cuCtxGetFlags(flags: *mut c_uint) {
        with_context(|d, ctx| {
            let f = d.contexts.get(as_handle(ctx)).map_or(0, |c| c.flags);
            // SAFETY: `cuCtxGetFlags`'s caller passes `flags` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_uint`.
            unsafe { write_out(flags, f) }
        })
    }

    fn cuCtxGetId(ctx: CUcontext, ctx_id: *mut u64) {
        with_driver(|d| {
            non_null(ctx_id)?;
            let ctx = if ctx.is_null() { d.current_context()? } else { d.usable_context(ctx as usize)? };
            let id = d.contexts.get(as_handle(ctx)).map_or(0, |c| c.id);
            // SAFETY: `cuCtxGetId`'s caller passes `ctx_id` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `u64`.
            unsafe { write_out(ctx_id, id) }
        })
    }

    /// Work runs synchronously, so there is never anything to wait for;
    /// a faulted context reports its sticky error.
    fn cuCtxSynchronize() {
        with_context(|_, ctx| crate::graph::capture::ctx_sync(ctx))
    }

    fn cuCtxSynchronize_v2(ctx: CUcontext) {
        with_driver(|d| {
            let ctx = if ctx.is_null() { d.current_context()? } else { d.usable_context(ctx as usize)? };
            crate::graph::capture::ctx_sync(ctx)
        })
    }

    fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) {
        with_driver(|d| {
            non_null(version)?;
            if ctx.is_null() { d.current_context()?; } else if !d.contexts.contains(ctx) {
                return Err(CUDA_ERROR_INVALID_CONTEXT);
            }
            // SAFETY: `cuCtxGetApiVersion`'s caller passes `version` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_uint`.
            unsafe { write_out(version, CONTEXT_API_VERSION) }
        })
    }

    fn cuCtxSetLimit(limit: c_uint, value: usize) {
        with_context(|d, ctx| {
            let c = d.contexts.get_mut(as_handle(ctx)).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
            let slot = c.limits.get_mut(limit as usize).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            if limit == CU_LIMIT_MALLOC_HEAP_SIZE {
                // The emulator's device heap serves device `malloc`; its
                // size is fixed once a kernel calling it has been launched.
                d.device
                    .set_malloc_heap_size(value as u64)
                    .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            }
            *slot = value;
            Ok(())
        })
    }

    fn cuCtxGetLimit(pvalue: *mut usize, limit: c_uint) {
        with_context(|d, ctx| {
            non_null(pvalue)?;
            let c = d.contexts.get(as_handle(ctx)).ok_or(CUDA_ERROR_INVALID_CONTEXT)?;
            let v = *c.limits.get(limit as usize).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuCtxGetLimit`'s caller passes `pvalue` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `usize`.
            unsafe { write_out(pvalue, v) }
        })
    }

    fn cuCtxGetCacheConfig(pconfig: *mut c_uint) {
        with_context(|d, ctx| {
            let v = d.contexts.get(as_handle(ctx)).map_or(0, |c| c.cache_config);
            // SAFETY: `cuCtxGetCacheConfig`'s caller passes `pconfig` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_uint`.
            unsafe { write_out(pconfig, v) }
        })
    }

    fn cuCtxSetCacheConfig(config: c_uint) {
        with_context(|d, ctx| {
            if config > 3 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if let Some(c) = d.contexts.get_mut(as_handle(ctx)) {
                c.cache_config = config;
            }
            Ok(())
        })
    }

    /// Stream priorities are not modelled: the range is [0, 0].
    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) {
        with_context(|_, _| {
            // SAFETY: `cuCtxGetStreamPriorityRange`'s caller passes `least` and `greatest` as cuda.h
            // specifies: each NULL (skipped by `write_optional`) or writable for its type.
            unsafe {
                write_optional(least, 0);
                write_optional(greatest, 0);
            }
            Ok(())
        })
    }

    fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) {
        with_driver(|d| {
            non_null(pctx)?;
            check_device(dev)?;
            let p = primary(d, dev);
            d.primaries[dev as usize].refs += 1;
            let flags = d.primaries[dev as usize].flags;
            if let Some(c) = d.contexts.get_mut(as_handle(p)) {
                c.active = true;
                c.flags = flags;
            }
            // SAFETY: `cuDevicePrimaryCtxRetain`'s caller passes `pctx` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `CUcontext`.
            unsafe { write_out(pctx, as_handle(p)) }
        })
    }

    fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) {
        check_device(dev)?;
        before_primary_reset(dev, true)?;
        with_driver(|d| {
            check_device(dev)?;
            let p = &mut d.primaries[dev as usize];
            if p.refs == 0 {
                return Err(CUDA_ERROR_INVALID_CONTEXT);
            }
            p.refs -= 1;
            if p.refs == 0 {
                reset_primary(d, dev);
            }
            Ok(())
        })
    }

    fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) {
        check_device(dev)?;
        before_primary_reset(dev, false)?;
        with_driver(|d| {
            check_device(dev)?;
            reset_primary(d, dev);
            Ok(())
        })
    }

    fn cuDevicePrimaryCtxGetState(dev: CUdevice, flags: *mut c_uint, active: *mut c_int) {
        with_driver(|d| {
            non_null(flags)?;
            non_null(active)?;
            check_device(dev)?;
            let p = d.primaries[dev as usize];
            let is_active = p.refs > 0;
            // SAFETY: `cuDevicePrimaryCtxGetState`'s caller passes `flags` (a `c_uint`) and `active` (a
            // `c_int`) as cuda.h specifies, both checked non-null above.
            unsafe {
                write_out(flags, p.flags)?;
                write_out(active, is_active as c_int)
            }
        })
    }

    fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) {
        with_driver(|d| {
            check_device(dev)?;
            check_flags(flags)?;
            d.primaries[dev as usize].flags = flags;
            if let Some(c) = d.primaries[dev as usize].ctx.and_then(|p| d.contexts.get_mut(as_handle(p))) {
                c.flags = flags;
            }
            Ok(())
        })
    }
}

aliases! {
    cuCtxCreate = cuCtxCreate_v2(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice);
    cuCtxDestroy = cuCtxDestroy_v2(ctx: CUcontext);
    cuCtxPushCurrent = cuCtxPushCurrent_v2(ctx: CUcontext);
    cuCtxPopCurrent = cuCtxPopCurrent_v2(pctx: *mut CUcontext);
    cuDevicePrimaryCtxRelease = cuDevicePrimaryCtxRelease_v2(dev: CUdevice);
    cuDevicePrimaryCtxReset = cuDevicePrimaryCtxReset_v2(dev: CUdevice);
    cuDevicePrimaryCtxSetFlags = cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuDevicePrimaryCtxRetain": 7000 => cuDevicePrimaryCtxRetain;
        "cuDevicePrimaryCtxRelease": 7000 => cuDevicePrimaryCtxRelease, 11000 => cuDevicePrimaryCtxRelease_v2;
        "cuDevicePrimaryCtxSetFlags": 7000 => cuDevicePrimaryCtxSetFlags, 11000 => cuDevicePrimaryCtxSetFlags_v2;
        "cuDevicePrimaryCtxGetState": 7000 => cuDevicePrimaryCtxGetState;
        "cuDevicePrimaryCtxReset": 7000 => cuDevicePrimaryCtxReset, 11000 => cuDevicePrimaryCtxReset_v2;
        "cuCtxCreate": 2000 => cuCtxCreate, 3020 => cuCtxCreate_v2, 11040 => cuCtxCreate_v3, 12050 => cuCtxCreate_v4;
        "cuCtxDestroy": 2000 => cuCtxDestroy, 4000 => cuCtxDestroy_v2;
        "cuCtxPushCurrent": 2000 => cuCtxPushCurrent, 4000 => cuCtxPushCurrent_v2;
        "cuCtxPopCurrent": 2000 => cuCtxPopCurrent, 4000 => cuCtxPopCurrent_v2;
        "cuCtxSetCurrent": 4000 => cuCtxSetCurrent;
        "cuCtxGetCurrent": 4000 => cuCtxGetCurrent;
        "cuCtxGetDevice": 2000 => cuCtxGetDevice, 13000 => cuCtxGetDevice_v2;
        "cuCtxGetFlags": 7000 => cuCtxGetFlags;
        "cuCtxGetId": 12000 => cuCtxGetId;
        "cuCtxSynchronize": 2000 => cuCtxSynchronize, 13000 => cuCtxSynchronize_v2;
        "cuCtxGetApiVersion": 3020 => cuCtxGetApiVersion;
        "cuCtxSetLimit": 3010 => cuCtxSetLimit;
        "cuCtxGetLimit": 3010 => cuCtxGetLimit;
        "cuCtxGetCacheConfig": 3020 => cuCtxGetCacheConfig;
        "cuCtxSetCacheConfig": 3020 => cuCtxSetCacheConfig;
        "cuCtxGetStreamPriorityRange": 5050 => cuCtxGetStreamPriorityRange;
    }
}
