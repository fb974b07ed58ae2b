//! Occupancy queries, answered with sm_80's per-SM limits: how many blocks
//! of a kernel fit on one SM given its threads and shared memory, and (on
//! an emulated sm_90 or newer) how large a cluster may be and how many
//! clusters are resident, with a GPC of 16 SMs holding each cluster.
//!
//! Registers are left out: a PTX kernel declares virtual registers, which
//! say little about what ptxas would allocate, and the emulator has no
//! register file to run out of (launches are not refused for registers
//! either).

use crate::cu::*;
use crate::driver::{Driver, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{exports, non_null, write_out};
use std::ffi::{c_int, c_uint};

/// Per-SM resources of sm_80 (A100).
const MAX_WARPS_PER_SM: u32 = 64;
const MAX_BLOCKS_PER_SM: u32 = 32;
const SHARED_PER_SM: u32 = 164 * 1024;
/// Shared memory the driver reserves per block on sm_80.
const RESERVED_SHARED_PER_BLOCK: u32 = 1024;
/// A cluster's CTAs are resident on the SMs of one GPC: 16 of them here
/// (an H100's GPCs have 16 to 18).
const SMS_PER_GPC: u32 = 16;
/// Cluster sizes a kernel may use without, and with, the non-portable opt-in.
const PORTABLE_CLUSTER: u32 = 8;
const NON_PORTABLE_CLUSTER: u32 = 16;

/// `typedef size_t (*CUoccupancyB2DSize)(int blockSize)`.
pub type BlockSizeToDynamicSmem = Option<unsafe extern "C" fn(c_int) -> usize>;

/// The kernel facts occupancy depends on.
#[derive(Debug, Clone, Copy)]
pub struct KernelUsage {
    pub static_shared: u32,
    pub max_threads_per_block: u32,
    pub max_dynamic_shared: u32,
}

fn usage(d: &Driver, f: CUfunction) -> Result<KernelUsage, CUresult> {
    let func = d.function(f)?;
    let info = d
        .device
        .kernel_info(func.emu)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    Ok(KernelUsage {
        static_shared: info.static_shared_bytes,
        max_threads_per_block: info
            .max_threads_per_block
            .min(d.device.config().max_threads_per_block),
        max_dynamic_shared: func.max_dynamic_shared,
    })
}

/// Resident blocks per SM; 0 when a block of this shape cannot launch.
pub fn blocks_per_sm(k: KernelUsage, block_size: u32, dynamic_shared: u64) -> u32 {
    if block_size == 0
        || block_size > k.max_threads_per_block
        || dynamic_shared > u64::from(k.max_dynamic_shared)
    {
        return 0;
    }
    let warps = block_size.div_ceil(32);
    let by_warps = MAX_WARPS_PER_SM / warps;
    let shared = u64::from(k.static_shared) + dynamic_shared + u64::from(RESERVED_SHARED_PER_BLOCK);
    let by_shared = (u64::from(SHARED_PER_SM) / shared).min(u64::from(u32::MAX)) as u32;
    by_warps.min(by_shared).min(MAX_BLOCKS_PER_SM)
}

/// The most CTAs one cluster may hold: the portable limit (or the
/// non-portable one when the kernel opted in), at most what fits on one
/// GPC at once; 0 when a block of this shape cannot launch.
pub fn max_cluster_size(
    k: KernelUsage,
    block_size: u32,
    dynamic_shared: u64,
    non_portable: bool,
) -> u32 {
    let limit = if non_portable {
        NON_PORTABLE_CLUSTER
    } else {
        PORTABLE_CLUSTER
    };
    (blocks_per_sm(k, block_size, dynamic_shared) * SMS_PER_GPC).min(limit)
}

/// How many clusters of `cluster_size` CTAs are resident on the device at
/// once: each GPC holds as many as fit in its SMs' resident blocks.
pub fn active_clusters(
    k: KernelUsage,
    block_size: u32,
    dynamic_shared: u64,
    cluster_size: u32,
    sms: u32,
) -> u32 {
    let per_gpc = blocks_per_sm(k, block_size, dynamic_shared) * SMS_PER_GPC;
    let gpcs = (sms / SMS_PER_GPC).max(1);
    per_gpc.checked_div(cluster_size).unwrap_or(0) * gpcs
}

/// What the cluster occupancy queries read from a `CUlaunchConfig` and the
/// kernel: its usage, block size, dynamic shared memory, cluster shape
/// (the launch's, else the kernel's required one) and opt-in.
struct ClusterQuery {
    usage: KernelUsage,
    block_size: u32,
    dynamic_shared: u64,
    cluster: Option<[u32; 3]>,
    non_portable: bool,
    sms: u32,
}

/// # Safety
/// `config` must be NULL or the caller's `CUlaunchConfig`, its `attrs`
/// holding `num_attrs` entries.
unsafe fn cluster_query(
    d: &Driver,
    func: CUfunction,
    config: *const CUlaunchConfig,
) -> Result<ClusterQuery, CUresult> {
    non_null(config)?;
    // SAFETY: non-null, the caller's CUlaunchConfig by this function's contract.
    let c = unsafe { &*config };
    if d.device.config().compute_capability.0 < 9 {
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    // SAFETY: `c.attrs` holds `c.num_attrs` entries by this function's contract.
    let (_, launch_cluster) =
        unsafe { super::launch::check_launch_attributes(c.attrs, c.num_attrs) }?;
    let f = d.function(func)?;
    let info = d
        .device
        .kernel_info(f.emu)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    let required = info.reqnctapercluster;
    if let (Some(l), Some(r)) = (launch_cluster, required)
        && l != r
    {
        return Err(CUDA_ERROR_INVALID_CLUSTER_SIZE);
    }
    let [bx, by, bz] = c.block_dim;
    Ok(ClusterQuery {
        usage: usage(d, func)?,
        block_size: bx.saturating_mul(by).saturating_mul(bz),
        dynamic_shared: u64::from(c.shared_mem_bytes),
        cluster: launch_cluster.or(required),
        non_portable: f.non_portable_cluster,
        sms: d.device.config().multiprocessor_count,
    })
}

exports! {
    fn cuOccupancyMaxPotentialClusterSize(
        cluster_size: *mut c_int,
        func: CUfunction,
        config: *const CUlaunchConfig,
    ) {
        with_context(|d, _| {
            non_null(cluster_size)?;
            // SAFETY: `config` is the caller's CUlaunchConfig (or NULL, refused), as cuda.h specifies.
            let q = unsafe { cluster_query(d, func, config) }?;
            let n = max_cluster_size(q.usage, q.block_size, q.dynamic_shared, q.non_portable);
            // SAFETY: `cluster_size` is the caller's out-parameter, non-null and writable for a `c_int`.
            unsafe { write_out(cluster_size, n as c_int) }
        })
    }

    fn cuOccupancyMaxActiveClusters(
        num_clusters: *mut c_int,
        func: CUfunction,
        config: *const CUlaunchConfig,
    ) {
        with_context(|d, _| {
            non_null(num_clusters)?;
            // SAFETY: `config` is the caller's CUlaunchConfig (or NULL, refused), as cuda.h specifies.
            let q = unsafe { cluster_query(d, func, config) }?;
            // Without a cluster shape in the launch or the kernel there is
            // nothing to count (the driver's error too).
            let dims = q.cluster.ok_or(CUDA_ERROR_INVALID_CLUSTER_SIZE)?;
            let size = dims.iter().product::<u32>();
            let limit = if q.non_portable { NON_PORTABLE_CLUSTER } else { PORTABLE_CLUSTER };
            if size == 0 || size > limit {
                return Err(CUDA_ERROR_INVALID_CLUSTER_SIZE);
            }
            let n = active_clusters(q.usage, q.block_size, q.dynamic_shared, size, q.sms);
            // SAFETY: `num_clusters` is the caller's out-parameter, non-null and writable for a `c_int`.
            unsafe { write_out(num_clusters, n as c_int) }
        })
    }

    fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
    ) {
        // SAFETY: `num_blocks` is the caller's out-parameter, NULL or writable for a `c_int` as cuda.h
        // specifies, which is `active_blocks`' contract.
        unsafe { active_blocks(num_blocks, func, block_size, dynamic_smem_size, 0) }
    }

    fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        num_blocks: *mut c_int,
        func: CUfunction,
        block_size: c_int,
        dynamic_smem_size: usize,
        flags: c_uint,
    ) {
        // SAFETY: `num_blocks` is the caller's out-parameter, NULL or writable for a `c_int` as cuda.h
        // specifies, which is `active_blocks`' contract.
        unsafe { active_blocks(num_blocks, func, block_size, dynamic_smem_size, flags) }
    }

    fn cuOccupancyMaxPotentialBlockSize(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_size_to_dynamic_smem: BlockSizeToDynamicSmem,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
    ) {
        // SAFETY: `min_grid_size` and `block_size` are the caller's out-parameters (NULL or writable
        // `c_int`s) and `block_size_to_dynamic_smem` NULL or a callback of the documented
        // signature, as cuda.h specifies; that is `potential_block_size`'s contract.
        unsafe {
            potential_block_size(min_grid_size, block_size, func, block_size_to_dynamic_smem, dynamic_smem_size, block_size_limit)
        }
    }

    fn cuOccupancyMaxPotentialBlockSizeWithFlags(
        min_grid_size: *mut c_int,
        block_size: *mut c_int,
        func: CUfunction,
        block_size_to_dynamic_smem: BlockSizeToDynamicSmem,
        dynamic_smem_size: usize,
        block_size_limit: c_int,
        flags: c_uint,
    ) {
        if flags > 1 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: `min_grid_size` and `block_size` are the caller's out-parameters (NULL or writable
        // `c_int`s) and `block_size_to_dynamic_smem` NULL or a callback of the documented
        // signature, as cuda.h specifies; that is `potential_block_size`'s contract.
        unsafe {
            potential_block_size(min_grid_size, block_size, func, block_size_to_dynamic_smem, dynamic_smem_size, block_size_limit)
        }
    }

    fn cuOccupancyAvailableDynamicSMemPerBlock(
        dynamic_smem_size: *mut usize,
        func: CUfunction,
        num_blocks: c_int,
        block_size: c_int,
    ) {
        with_context(|d, _| {
            non_null(dynamic_smem_size)?;
            if num_blocks <= 0 || block_size <= 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let k = usage(d, func)?;
            let per_block = SHARED_PER_SM / num_blocks as u32;
            let available = per_block
                .saturating_sub(RESERVED_SHARED_PER_BLOCK + k.static_shared)
                .min(k.max_dynamic_shared);
            // SAFETY: `cuOccupancyAvailableDynamicSMemPerBlock`'s caller passes `dynamic_smem_size` as
            // cuda.h specifies: NULL (refused by `write_out`) or valid for writing a `usize`.
            unsafe { write_out(dynamic_smem_size, available as usize) }
        })
    }
}

/// # Safety
/// `num_blocks` must be NULL or writable.
unsafe fn active_blocks(
    num_blocks: *mut c_int,
    func: CUfunction,
    block_size: c_int,
    dynamic_smem_size: usize,
    flags: c_uint,
) -> Result<(), CUresult> {
    with_context(|d, _| {
        non_null(num_blocks)?;
        if flags > 1 || block_size <= 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let k = usage(d, func)?;
        let n = blocks_per_sm(k, block_size as u32, dynamic_smem_size as u64);
        // SAFETY: `num_blocks` is NULL or valid by `active_blocks`'s `# Safety` contract (writable for a
        // `c_int`); `write_out` refuses NULL.
        unsafe { write_out(num_blocks, n as c_int) }
    })
}

/// The block size (a multiple of 32, up to the limit) with the most resident
/// threads per SM, and the grid that fills every SM with it.
///
/// # Safety
/// Out-pointers as for `cuOccupancyMaxPotentialBlockSize`; the callback, when
/// given, must be callable with a block size.
unsafe fn potential_block_size(
    min_grid_size: *mut c_int,
    block_size: *mut c_int,
    func: CUfunction,
    to_dynamic: BlockSizeToDynamicSmem,
    dynamic_smem_size: usize,
    block_size_limit: c_int,
) -> Result<(), CUresult> {
    non_null(min_grid_size)?;
    non_null(block_size)?;
    if block_size_limit < 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // Query the kernel, then release the lock before calling back into the
    // application, which may call the driver itself.
    let (k, sms) =
        with_context(|d, _| Ok((usage(d, func)?, d.device.config().multiprocessor_count)))?;
    let limit = match block_size_limit {
        0 => k.max_threads_per_block,
        l => (l as u32).min(k.max_threads_per_block),
    };
    let mut best = (0u32, 0u32); // (resident threads, block size)
    let mut size = limit.div_ceil(32) * 32;
    while size >= 32 {
        let candidate = size.min(limit);
        let dynamic = match to_dynamic {
            // SAFETY: the caller's callback.
            Some(cb) => unsafe { cb(candidate as c_int) },
            None => dynamic_smem_size,
        };
        let threads = blocks_per_sm(k, candidate, dynamic as u64) * candidate;
        if threads > best.0 {
            best = (threads, candidate);
        }
        size -= 32;
    }
    let (threads, size) = best;
    let blocks = threads.checked_div(size).unwrap_or(0);
    // SAFETY: `block_size` and `min_grid_size` are NULL (refused by `write_out`) or writable `c_int`s by
    // this function's `# Safety` contract.
    unsafe {
        write_out(block_size, size as c_int)?;
        write_out(min_grid_size, (blocks * sms) as c_int)
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuOccupancyMaxActiveBlocksPerMultiprocessor": 6050 => cuOccupancyMaxActiveBlocksPerMultiprocessor;
        "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": 7000 => cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags;
        "cuOccupancyMaxPotentialBlockSize": 6050 => cuOccupancyMaxPotentialBlockSize;
        "cuOccupancyMaxPotentialBlockSizeWithFlags": 7000 => cuOccupancyMaxPotentialBlockSizeWithFlags;
        "cuOccupancyAvailableDynamicSMemPerBlock": 10020 => cuOccupancyAvailableDynamicSMemPerBlock;
        "cuOccupancyMaxPotentialClusterSize": 11070 => cuOccupancyMaxPotentialClusterSize;
        "cuOccupancyMaxActiveClusters": 11070 => cuOccupancyMaxActiveClusters;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(static_shared: u32) -> KernelUsage {
        KernelUsage {
            static_shared,
            max_threads_per_block: 1024,
            max_dynamic_shared: 48 * 1024,
        }
    }

    #[test]
    fn limits_by_warps_blocks_and_shared_memory() {
        // 256 threads: limited by warps (64 / 8).
        assert_eq!(blocks_per_sm(kernel(0), 256, 0), 8);
        assert_eq!(blocks_per_sm(kernel(0), 1024, 0), 2);
        // 40 KiB of shared per block (+1 KiB reserved): 164 / 41 = 4.
        assert_eq!(blocks_per_sm(kernel(40 * 1024), 128, 0), 4);
        assert_eq!(blocks_per_sm(kernel(0), 128, 40 * 1024), 4);
        // Tiny blocks: the 32-blocks-per-SM limit.
        assert_eq!(blocks_per_sm(kernel(0), 32, 0), 32);
        // Shapes that cannot launch.
        assert_eq!(blocks_per_sm(kernel(0), 2048, 0), 0);
        assert_eq!(blocks_per_sm(kernel(0), 128, 64 * 1024), 0);
    }

    #[test]
    fn clusters_fit_in_one_gpc() {
        // Small blocks: the portable limit, or the non-portable one.
        assert_eq!(max_cluster_size(kernel(0), 128, 0, false), 8);
        assert_eq!(max_cluster_size(kernel(0), 128, 0, true), 16);
        // 100 KiB of shared per block: one per SM, 16 per GPC.
        assert_eq!(max_cluster_size(kernel(100 * 1024), 128, 0, true), 16);
        assert_eq!(max_cluster_size(kernel(0), 2048, 0, false), 0);
        // 132 SMs: 8 GPCs of 16. 1024-thread blocks: 2 per SM, 32 per GPC,
        // so 8 clusters of 4 per GPC.
        assert_eq!(active_clusters(kernel(0), 1024, 0, 4, 132), 64);
        // One 100 KiB block per SM: 16 per GPC, 2 clusters of 8.
        assert_eq!(active_clusters(kernel(100 * 1024), 256, 0, 8, 132), 16);
        assert_eq!(active_clusters(kernel(0), 2048, 0, 2, 132), 0);
    }
}
