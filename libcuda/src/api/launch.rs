//! Function attributes and kernel launches.
//!
//! Launch configurations are checked as the driver checks them before the
//! emulator runs the kernel to completion. A fault inside the kernel makes
//! the context sticky-errored: the fault is printed once to stderr, and this
//! and every later call in the context return the fault's error code.

use crate::api::occupancy;
use crate::clock;
use crate::cu::*;
use crate::driver::{Driver, as_handle, with_context, with_driver, with_driver_shared};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
use crate::params;
use prlx_emulator::{ClusterLaunch, FunctionId, LaunchConfig, LaunchError, LaunchStats};
use std::ffi::{c_char, c_int, c_uint, c_void};

/// The most registers per thread sm_80 allocates; PTX declares virtual
/// registers without bound, so the reported count is capped here.
const MAX_REGISTERS_PER_THREAD: u32 = 255;

struct Launch {
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: CUstream,
    /// `cuLaunchCooperativeKernel`, or `cuLaunchKernelEx` with the
    /// cooperative attribute set: the kernel may synchronise the grid.
    cooperative: bool,
    /// `cuLaunchKernelEx`'s `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`.
    cluster: Option<[u32; 3]>,
}

/// Checks the configuration against the device and the kernel, the way the
/// driver does before a launch is queued. A refusal is `INVALID_VALUE`, as
/// the driver's; with `PRLX_LIBCUDA_TRACE=1` the rule it broke is printed.
fn validate(d: &Driver, f: CUfunction, l: &Launch) -> Result<(), CUresult> {
    let func = d.function(f)?;
    let info = d
        .device
        .kernel_info(func.emu)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    launch_rule_broken(d, func, info, l).map_or(Ok(()), |why| {
        if crate::entry::trace_enabled() {
            eprintln!("prlx libcuda: launch of {} refused: {why}", info.name);
        }
        Err(CUDA_ERROR_INVALID_VALUE)
    })
}

/// The launch rule `l` breaks for `func`, if any.
fn launch_rule_broken(
    d: &Driver,
    func: &crate::driver::Function,
    info: &prlx_emulator::KernelInfo,
    l: &Launch,
) -> Option<String> {
    let config = d.device.config();
    for axis in 0..3 {
        if l.grid[axis] == 0 || l.block[axis] == 0 {
            return Some(format!(
                "grid {:?} or block {:?} has a zero dimension",
                l.grid, l.block
            ));
        }
        if l.grid[axis] > config.max_grid_dim[axis] || l.block[axis] > config.max_block_dim[axis] {
            return Some(format!(
                "grid {:?} or block {:?} exceeds the device's {:?} / {:?}",
                l.grid, l.block, config.max_grid_dim, config.max_block_dim
            ));
        }
    }
    let threads = l.block.iter().map(|&b| u64::from(b)).product::<u64>();
    let limit = config.max_threads_per_block.min(info.max_threads_per_block);
    if threads > u64::from(limit) {
        return Some(format!("{threads} threads per block, more than {limit}"));
    }
    if let Some(r) = info.reqntid.filter(|&r| r != l.block) {
        return Some(format!(
            "block {:?}, but the kernel requires .reqntid {r:?}",
            l.block
        ));
    }
    // No register check: the emulator has no register file, and a PTX
    // kernel's declared virtual registers say little about what ptxas would
    // allocate, so refusing launches on them would reject runnable kernels.
    let shared = u64::from(info.static_shared_bytes) + u64::from(l.shared);
    if l.shared > func.max_dynamic_shared || shared > u64::from(config.max_shared_per_block_optin) {
        return Some(format!(
            "{} bytes of dynamic shared memory: the function allows {} (its attribute), the device {} in all with {} static",
            l.shared,
            func.max_dynamic_shared,
            config.max_shared_per_block_optin,
            info.static_shared_bytes
        ));
    }
    None
}

/// Maps a launch failure to its `CUresult`; faults poison the context.
fn launch_failed(d: &mut Driver, ctx: usize, e: LaunchError) -> CUresult {
    let code = match &e {
        LaunchError::InvalidConfig(_) => return CUDA_ERROR_INVALID_VALUE,
        LaunchError::OutOfResources(_) => return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        LaunchError::InvalidHandle(_) => return CUDA_ERROR_INVALID_HANDLE,
        LaunchError::InvalidClusterSize(m) => {
            eprintln!("========= prlx-emu: CUDA_ERROR_INVALID_CLUSTER_SIZE: {m}");
            return CUDA_ERROR_INVALID_CLUSTER_SIZE;
        }
        // Refused before anything ran: not sticky, as on hardware.
        LaunchError::Unsupported(m) => {
            eprintln!("========= prlx-emu: CUDA_ERROR_NOT_SUPPORTED: {m}");
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        // The stall watchdog ended a launch that made no progress: a hung
        // kernel, which a display watchdog reports the same way.
        LaunchError::Timeout(_) => CUDA_ERROR_LAUNCH_TIMEOUT,
        LaunchError::IllegalAddress(_) => CUDA_ERROR_ILLEGAL_ADDRESS,
        LaunchError::MisalignedAddress(_) => CUDA_ERROR_MISALIGNED_ADDRESS,
        LaunchError::IllegalInstruction(_) => CUDA_ERROR_ILLEGAL_INSTRUCTION,
        // A trap, a barrier deadlock (a hang on hardware), or an aborted run.
        _ => CUDA_ERROR_LAUNCH_FAILED,
    };
    eprintln!(
        "========= prlx-emu: {}: {e}",
        crate::error_table::name_str(code)
    );
    d.poison_context(ctx, code);
    code
}

/// The driver's limit for a cooperative grid: every block must be resident
/// at once, so at most `cuOccupancyMaxActiveBlocksPerMultiprocessor` for
/// the launch's block size and dynamic shared memory, times
/// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`; more is
/// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` (not sticky).
fn check_cooperative_grid(d: &Driver, f: CUfunction, l: &Launch) -> Result<(), CUresult> {
    let func = d.function(f)?;
    let info = d
        .device
        .kernel_info(func.emu)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let config = d.device.config();
    let usage = occupancy::KernelUsage {
        static_shared: info.static_shared_bytes,
        max_threads_per_block: info.max_threads_per_block.min(config.max_threads_per_block),
        max_dynamic_shared: func.max_dynamic_shared,
    };
    let block = l.block.iter().product::<u32>();
    let per_sm = occupancy::blocks_per_sm(usage, block, u64::from(l.shared));
    let limit = u64::from(per_sm) * u64::from(config.multiprocessor_count);
    let blocks = l.grid.iter().map(|&g| u64::from(g)).product::<u64>();
    if blocks > limit {
        eprintln!(
            "========= prlx-emu: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: cooperative launch of {} with {blocks} blocks; at most {per_sm} blocks of {block} threads ({} bytes of dynamic shared memory) fit on each of the {} SMs, {limit} in all",
            info.name, l.shared, config.multiprocessor_count
        );
        return Err(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
    }
    Ok(())
}

/// Accounts for a finished launch: the clock advances, a fault poisons the
/// context.
fn finish(
    d: &mut Driver,
    ctx: usize,
    run: Result<LaunchStats, LaunchError>,
) -> Result<(), CUresult> {
    match run {
        Ok(stats) => {
            d.clock_ns += clock::launch_ns(d.device.config(), &stats);
            Ok(())
        }
        Err(e) => Err(launch_failed(d, ctx, e)),
    }
}

/// A launch checked and packed: its kernel, configuration and parameters.
struct Prepared {
    emu: FunctionId,
    config: LaunchConfig,
    cluster: ClusterLaunch,
    buffer: Vec<u8>,
}

/// Checks the launch as the driver does and packs its parameters; `None`
/// when it was recorded into a stream capture instead (with the capture's
/// result in `captured`).
///
/// # Safety
/// `kernel_params`/`extra` as for `cuLaunchKernel`.
unsafe fn prepare(
    d: &Driver,
    f: CUfunction,
    l: &Launch,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
    captured: &mut Result<(), CUresult>,
) -> Result<Option<Prepared>, CUresult> {
    d.check_stream(l.stream)?;
    validate(d, f, l)?;
    if l.cooperative {
        check_cooperative_grid(d, f, l)?;
    }
    let func = d.function(f)?;
    let (emu, non_portable) = (func.emu, func.non_portable_cluster);
    let info = d.device.kernel_info(emu).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    // SAFETY: forwarded contract.
    let buffer = unsafe { params::pack(info, kernel_params, extra) }?;
    // A graph kernel node has no cluster shape of its own (a kernel's
    // `.reqnctapercluster` still applies when the graph runs).
    if let Some(dims) = l.cluster.filter(|c| c.iter().product::<u32>() > 1)
        && let Some(r) = crate::graph::capture::intercept(d, l.stream, |_| {
            eprintln!(
                "========= prlx-emu: CUDA_ERROR_NOT_SUPPORTED: capturing a launch with clusters of {dims:?} CTAs into a graph is not emulated"
            );
            Err(CUDA_ERROR_NOT_SUPPORTED)
        })
    {
        *captured = r;
        return Ok(None);
    }
    // On a capturing stream the launch becomes a graph node.
    if let Some(r) = crate::graph::capture::kernel(
        d,
        l.stream,
        f,
        l.grid,
        l.block,
        l.shared,
        l.cooperative,
        &buffer,
    ) {
        *captured = r;
        return Ok(None);
    }
    let config = LaunchConfig {
        grid: l.grid,
        block: l.block,
        dynamic_shared_bytes: l.shared,
    };
    let cluster = ClusterLaunch {
        dims: l.cluster,
        non_portable,
    };
    Ok(Some(Prepared {
        emu,
        config,
        cluster,
        buffer,
    }))
}

/// What the shared-lock part of a launch did.
enum Shared {
    Captured(Result<(), CUresult>),
    Ran(usize, Result<LaunchStats, LaunchError>),
    /// Needs the exclusive lock: a cooperative grid (its workspace is
    /// allocated for the launch), or several devices (memory another device
    /// may not access is hidden from this kernel).
    NeedsExclusive,
}

/// Checks, packs and runs the kernel under the shared driver lock, so
/// kernels launched from other host threads (any streams) run at the same
/// time, then advances the clock (or poisons the context on a fault) under
/// the exclusive lock. Cooperative launches, and launches with several
/// devices, run under the exclusive lock.
///
/// # Safety
/// `kernel_params`/`extra` as for `cuLaunchKernel`.
unsafe fn launch(
    f: CUfunction,
    l: Launch,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> Result<(), CUresult> {
    let shared = with_driver_shared(|d| {
        let ctx = d.current_context()?;
        let mut captured = Ok(());
        // SAFETY: forwarded contract.
        let Some(p) = (unsafe { prepare(d, f, &l, kernel_params, extra, &mut captured) })? else {
            return Ok(Shared::Captured(captured));
        };
        if l.cooperative || crate::driver::device_count() > 1 {
            return Ok(Shared::NeedsExclusive);
        }
        Ok(Shared::Ran(
            ctx,
            d.device
                .launch_clustered(p.emu, &p.config, &p.cluster, &p.buffer),
        ))
    })?;
    match shared {
        Shared::Captured(r) => r,
        Shared::Ran(ctx, run) => with_driver(|d| finish(d, ctx, run)),
        Shared::NeedsExclusive => with_context(|d, ctx| {
            let mut captured = Ok(());
            // SAFETY: forwarded contract.
            let Some(p) = (unsafe { prepare(d, f, &l, kernel_params, extra, &mut captured) })?
            else {
                return captured;
            };
            // Other devices' memory this device may not access is out of reach.
            let hidden = super::peer::hide_unreachable(d, ctx);
            let run = if l.cooperative {
                d.device.launch_cooperative(p.emu, &p.config, &p.buffer)
            } else {
                d.device
                    .launch_clustered(p.emu, &p.config, &p.cluster, &p.buffer)
            };
            super::peer::restore(d, hidden);
            finish(d, ctx, run)
        }),
    }
}

/// Checks `cuLaunchKernelEx`'s attributes: hints are accepted (the
/// preferred cluster shape among them: the driver may always fall back to
/// the required one), unknown ids are invalid. Returns whether the launch
/// is cooperative, and its cluster shape (checked by the emulator).
///
/// # Safety
/// `attrs` must hold `num` attributes.
pub(super) unsafe fn check_launch_attributes(
    attrs: *const CUlaunchAttribute,
    num: u32,
) -> Result<(bool, Option<[u32; 3]>), CUresult> {
    let mut cooperative = false;
    let mut cluster = None;
    if num == 0 {
        return Ok((cooperative, cluster));
    }
    non_null(attrs)?;
    for i in 0..num as usize {
        // SAFETY: `attrs` holds `num` entries.
        let a = unsafe { &*attrs.add(i) };
        match a.id {
            CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => {
                // The value union's `clusterDim`: three unsigned ints.
                let dim = |k: usize| {
                    u32::from_le_bytes(a.value[k * 4..k * 4 + 4].try_into().unwrap_or([0; 4]))
                };
                cluster = Some([dim(0), dim(1), dim(2)]);
            }
            CU_LAUNCH_ATTRIBUTE_COOPERATIVE => {
                // The value union's first member is an int.
                let v = i32::from_le_bytes(a.value[0..4].try_into().unwrap_or([0; 4]));
                cooperative = v != 0;
            }
            CU_LAUNCH_ATTRIBUTE_IGNORE => {}
            id if id <= CU_LAUNCH_ATTRIBUTE_LAST => {} // scheduling hints
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    Ok((cooperative, cluster))
}

/// `cuFuncGetAttribute`/`cuKernelGetAttribute`.
pub fn function_attribute(d: &Driver, hfunc: CUfunction, attrib: c_int) -> Result<c_int, CUresult> {
    let func = d.function(hfunc)?;
    let info = d
        .device
        .kernel_info(func.emu)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let (ma, mi) = d.device.config().compute_capability;
    let clamp = |v: u32| v.min(i32::MAX as u32) as c_int;
    Ok(match attrib {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK => clamp(info.max_threads_per_block),
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES => clamp(info.static_shared_bytes),
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES => 0,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES => clamp(info.local_bytes_per_thread),
        CU_FUNC_ATTRIBUTE_NUM_REGS => clamp(info.num_regs.min(MAX_REGISTERS_PER_THREAD)),
        // The virtual architecture the PTX was written for (`.target
        // sm_80` → 80), not the PTX ISA version (`.version`): CUB reads
        // `cudaFuncAttributes::ptxVersion * 10` as an architecture to pick
        // its tuning policies, and fails with "invalid device function"
        // when it exceeds the device's.
        CU_FUNC_ATTRIBUTE_PTX_VERSION => clamp(info.target_sm),
        CU_FUNC_ATTRIBUTE_BINARY_VERSION => clamp(ma * 10 + mi),
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA => 0,
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => clamp(func.max_dynamic_shared),
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => func.carveout,
        CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE => func.shared_memory_mode,
        CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET => info.explicit_cluster as c_int,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH
        | CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT
        | CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH => info.reqnctapercluster.map_or(0, |d| {
            clamp(d[(attrib - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) as usize])
        }),
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED => func.non_portable_cluster as c_int,
        // The cluster scheduling policy (the default) and device-side node
        // update (not measured on a GPU; the emulator's graphs are updated
        // from the host only).
        a if (0..=CU_FUNC_ATTRIBUTE_LAST).contains(&a) => 0,
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    })
}

/// `cuFuncSetAttribute`/`cuKernelSetAttribute`.
pub fn set_function_attribute(
    d: &mut Driver,
    hfunc: CUfunction,
    attrib: c_int,
    value: c_int,
) -> Result<(), CUresult> {
    let func = d.function(hfunc)?;
    let info = d
        .device
        .kernel_info(func.emu)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let optin = d.device.config().max_shared_per_block_optin;
    let static_shared = info.static_shared_bytes;
    let func = d
        .functions
        .get_mut(hfunc)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    match attrib {
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES => {
            let v = u32::try_from(value).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            if u64::from(v) + u64::from(static_shared) > u64::from(optin) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            func.max_dynamic_shared = v;
        }
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT => {
            if !(-1..=100).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            func.carveout = value;
        }
        CU_FUNC_ATTRIBUTE_SHARED_MEMORY_MODE => {
            if !(0..=CU_SHARED_MEMORY_MODE_LAST).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            func.shared_memory_mode = value;
        }
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED => {
            if !(0..=1).contains(&value) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            func.non_portable_cluster = value == 1;
        }
        _ => return Err(CUDA_ERROR_INVALID_VALUE),
    }
    Ok(())
}

exports! {
    fn cuFuncGetAttribute(pi: *mut c_int, attrib: c_int, hfunc: CUfunction) {
        with_context(|d, _| {
            non_null(pi)?;
            let v = function_attribute(d, hfunc, attrib)?;
            // SAFETY: `cuFuncGetAttribute`'s caller passes `pi` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(pi, v) }
        })
    }

    fn cuFuncSetAttribute(hfunc: CUfunction, attrib: c_int, value: c_int) {
        with_context(|d, _| set_function_attribute(d, hfunc, attrib, value))
    }

    fn cuFuncSetCacheConfig(hfunc: CUfunction, config: c_uint) {
        with_context(|d, _| {
            if config > 3 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            d.function(hfunc)?;
            if let Some(f) = d.functions.get_mut(hfunc) {
                f.cache_config = config;
            }
            Ok(())
        })
    }

    fn cuFuncGetModule(hmod: *mut CUmodule, hfunc: CUfunction) {
        with_context(|d, _| {
            non_null(hmod)?;
            let m = d.function(hfunc)?.module;
            // SAFETY: `cuFuncGetModule`'s caller passes `hmod` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUmodule`.
            unsafe { write_out(hmod, as_handle(m)) }
        })
    }

    fn cuFuncGetName(name: *mut *const c_char, hfunc: CUfunction) {
        with_context(|d, _| {
            non_null(name)?;
            // The CString lives as long as the function handle.
            let p = d.function(hfunc)?.name.as_ptr();
            // SAFETY: `cuFuncGetName`'s caller passes `name` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `*const c_char`.
            unsafe { write_out(name, p) }
        })
    }

    fn cuFuncGetParamInfo(func: CUfunction, param_index: usize, param_offset: *mut usize, param_size: *mut usize) {
        with_context(|d, _| {
            let emu = d.function(func)?.emu;
            let info = d.device.kernel_info(emu).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let p = info.params.get(param_index).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuFuncGetParamInfo`'s caller passes `param_offset` and `param_size` as cuda.h
            // specifies: NULL (skipped by `write_optional`) or writable for a `usize`.
            unsafe {
                crate::entry::write_optional(param_offset, p.offset as usize);
                crate::entry::write_optional(param_size, p.size as usize);
            }
            Ok(())
        })
    }

    fn cuLaunchKernel(
        f: CUfunction,
        grid_dim_x: c_uint,
        grid_dim_y: c_uint,
        grid_dim_z: c_uint,
        block_dim_x: c_uint,
        block_dim_y: c_uint,
        block_dim_z: c_uint,
        shared_mem_bytes: c_uint,
        h_stream: CUstream,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) {
        let l = Launch {
            grid: [grid_dim_x, grid_dim_y, grid_dim_z],
            block: [block_dim_x, block_dim_y, block_dim_z],
            shared: shared_mem_bytes,
            stream: h_stream,
            cooperative: false,
            cluster: None,
        };
        // SAFETY: `kernel_params` holds one pointer per kernel parameter (or `extra` a CU_LAUNCH_PARAM_*
        // list), as cuda.h requires of this launch, which is `launch`'s contract.
        unsafe { launch(f, l, kernel_params, extra) }
    }

    /// Every block of the grid is resident at once (interleaved), so
    /// grid-wide sync works; a
    /// grid larger than the occupancy limit is refused with
    /// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE` (see `check_cooperative_grid`).
    fn cuLaunchCooperativeKernel(
        f: CUfunction,
        grid_dim_x: c_uint,
        grid_dim_y: c_uint,
        grid_dim_z: c_uint,
        block_dim_x: c_uint,
        block_dim_y: c_uint,
        block_dim_z: c_uint,
        shared_mem_bytes: c_uint,
        h_stream: CUstream,
        kernel_params: *mut *mut c_void,
    ) {
        let l = Launch {
            grid: [grid_dim_x, grid_dim_y, grid_dim_z],
            block: [block_dim_x, block_dim_y, block_dim_z],
            shared: shared_mem_bytes,
            stream: h_stream,
            cooperative: true,
            cluster: None,
        };
        // SAFETY: `kernel_params` holds one pointer per kernel parameter, as cuda.h requires of a
        // cooperative launch, which is `launch`'s contract.
        unsafe { launch(f, l, kernel_params, std::ptr::null_mut()) }
    }

    fn cuLaunchKernelEx(
        config: *const CUlaunchConfig,
        f: CUfunction,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) {
        non_null(config)?;
        // SAFETY: non-null, the caller's CUlaunchConfig.
        let c = unsafe { &*config };
        // SAFETY: `c` is the caller's CUlaunchConfig, whose `attrs` holds `num_attrs` entries (or is NULL
        // when 0) as cuda.h specifies.
        let (cooperative, cluster) = unsafe { check_launch_attributes(c.attrs, c.num_attrs) }?;
        let l = Launch {
            grid: c.grid_dim,
            block: c.block_dim,
            shared: c.shared_mem_bytes,
            stream: c.h_stream,
            cooperative,
            cluster,
        };
        // SAFETY: `kernel_params` holds one pointer per kernel parameter (or `extra` a CU_LAUNCH_PARAM_*
        // list), as cuda.h requires of this launch, which is `launch`'s contract.
        unsafe { launch(f, l, kernel_params, extra) }
    }
}

aliases! {
    cuLaunchKernel_ptsz = cuLaunchKernel(
        f: CUfunction,
        grid_dim_x: c_uint,
        grid_dim_y: c_uint,
        grid_dim_z: c_uint,
        block_dim_x: c_uint,
        block_dim_y: c_uint,
        block_dim_z: c_uint,
        shared_mem_bytes: c_uint,
        h_stream: CUstream,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    );
    cuLaunchCooperativeKernel_ptsz = cuLaunchCooperativeKernel(
        f: CUfunction,
        grid_dim_x: c_uint,
        grid_dim_y: c_uint,
        grid_dim_z: c_uint,
        block_dim_x: c_uint,
        block_dim_y: c_uint,
        block_dim_z: c_uint,
        shared_mem_bytes: c_uint,
        h_stream: CUstream,
        kernel_params: *mut *mut c_void,
    );
    cuLaunchKernelEx_ptsz = cuLaunchKernelEx(
        config: *const CUlaunchConfig,
        f: CUfunction,
        kernel_params: *mut *mut c_void,
        extra: *mut *mut c_void,
    );
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuFuncGetAttribute": 2020 => cuFuncGetAttribute;
        "cuFuncSetAttribute": 9000 => cuFuncSetAttribute;
        "cuFuncSetCacheConfig": 3000 => cuFuncSetCacheConfig;
        "cuFuncGetModule": 11000 => cuFuncGetModule;
        "cuFuncGetName": 12030 => cuFuncGetName;
        "cuFuncGetParamInfo": 12040 => cuFuncGetParamInfo;
        "cuLaunchKernel": 4000 => cuLaunchKernel, @ptds 7000 => cuLaunchKernel_ptsz;
        "cuLaunchCooperativeKernel": 9000 => cuLaunchCooperativeKernel, @ptds 9000 => cuLaunchCooperativeKernel_ptsz;
        "cuLaunchKernelEx": 11060 => cuLaunchKernelEx, @ptds 11060 => cuLaunchKernelEx_ptsz;
    }
}
