//! Several devices and peer access: `cuDeviceCanAccessPeer`,
//! `cuDeviceGetP2PAttribute`, `cuCtxEnablePeerAccess`/`DisablePeerAccess`,
//! `cuMemcpyPeer(Async)`, `cuMemcpy3DPeer(Async)`, and what a kernel of one
//! device may touch.
//!
//! All devices share the emulator's one address space (unified addressing),
//! so copies between devices are plain device-to-device copies. What keeps
//! devices apart is [`hide_unreachable`]: for the duration of a launch, the
//! allocations the launching context's device may not access are taken out
//! of the address space, and an access to them faults with
//! `CUDA_ERROR_ILLEGAL_ADDRESS` at the faulting instruction, as on an
//! unmapped address. A device reaches another device's memory once its
//! context enabled peer access to a context of that device; memory-pool
//! allocations follow the pool's access list instead (`cuMemPoolSetAccess`),
//! and virtual-memory mappings their `cuMemSetAccess` descriptors, as the
//! driver API specifies.

use crate::clock;
use crate::cu::*;
use crate::driver::check_device;
use crate::driver::{self, Driver, with_context, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
use prlx_emulator::memory::map::Detached;
use std::ffi::c_int;

pub const CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED: CUresult = 704;
pub const CUDA_ERROR_PEER_ACCESS_NOT_ENABLED: CUresult = 705;

const CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: c_int = 1;
const CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: c_int = 2;
const CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: c_int = 3;
const CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: c_int = 4;
const CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: c_int = 5;

/// Whether kernels of context `ctx` may access ordinary device memory of
/// device `owner`: their own device's, or a peer's they enabled.
pub fn reaches(d: &Driver, ctx: usize, owner: CUdevice) -> bool {
    d.device_of(ctx) == owner
        || d.peers
            .range((ctx, 0)..=(ctx, usize::MAX))
            .any(|&(_, peer)| d.device_of(peer) == owner)
}

/// Takes out of the address space every allocation a kernel of context
/// `ctx` may not access; [`restore`] puts them back after the launch.
/// Nothing is hidden with a single device.
pub fn hide_unreachable(d: &mut Driver, ctx: usize) -> Vec<Detached> {
    if driver::device_count() == 1 {
        return Vec::new();
    }
    let dev = d.device_of(ctx);
    let mut unreachable: Vec<u64> = Vec::new();
    for (&base, &owner) in &d.allocations {
        if d.managed.contains_key(&base) {
            continue;
        }
        let visible = match d.pools.pool_of(base) {
            Some(pool) => d.pools.grants(pool, dev),
            None => reaches(d, ctx, d.device_of(owner)),
        };
        if !visible {
            unreachable.push(base);
        }
    }
    unreachable.extend(d.vmm.unreachable_runs(dev));
    unreachable.extend(
        d.ipc
            .opened_bases()
            .filter(|&(_, owner)| !reaches(d, ctx, d.device_of(owner)))
            .map(|(base, _)| base),
    );
    unreachable
        .into_iter()
        .filter_map(|base| d.device.mem_detach(base))
        .collect()
}

/// Undoes [`hide_unreachable`].
pub fn restore(d: &mut Driver, hidden: Vec<Detached>) {
    for h in hidden {
        d.device.mem_reattach(h);
    }
}

fn check_peer_context(d: &Driver, ctx: CUcontext) -> Result<usize, CUresult> {
    if ctx.is_null() || !d.contexts.contains(ctx) {
        return Err(CUDA_ERROR_INVALID_CONTEXT);
    }
    Ok(ctx as usize)
}

/// `cuMemcpyPeer`: both contexts must be valid; the copy itself is the
/// unified address space's.
fn copy_peer(
    d: &mut Driver,
    dst: u64,
    dst_ctx: CUcontext,
    src: u64,
    src_ctx: CUcontext,
    n: usize,
) -> Result<(), CUresult> {
    d.usable_context(check_peer_context(d, dst_ctx)?)?;
    d.usable_context(check_peer_context(d, src_ctx)?)?;
    if n == 0 {
        return Ok(());
    }
    d.device
        .mem_copy(dst, src, n as u64)
        .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    d.clock_ns += clock::device_copy_ns(n as u64);
    Ok(())
}

/// `CUDA_MEMCPY3D_PEER` has `CUDA_MEMCPY3D`'s layout with the two contexts
/// where `CUDA_MEMCPY3D` has its reserved pointers: checks the contexts and
/// returns the copy as a `CUDA_MEMCPY3D`.
///
/// # Safety
/// `p_copy` must be NULL or point to a `CUDA_MEMCPY3D_PEER`.
unsafe fn peer_copy_3d(p_copy: *const CUDA_MEMCPY3D) -> Result<CUDA_MEMCPY3D, CUresult> {
    non_null(p_copy)?;
    // SAFETY: non-null, the caller's descriptor; plain data, copied bitwise.
    let mut copy = unsafe { std::ptr::read(p_copy) };
    with_context(|d, _| {
        d.usable_context(check_peer_context(d, copy.reserved0)?)?;
        d.usable_context(check_peer_context(d, copy.reserved1)?)?;
        Ok(())
    })?;
    copy.reserved0 = std::ptr::null_mut();
    copy.reserved1 = std::ptr::null_mut();
    Ok(copy)
}

/// A `CUresult` as a `Result`.
fn result(code: CUresult) -> Result<(), CUresult> {
    if code == CUDA_SUCCESS {
        Ok(())
    } else {
        Err(code)
    }
}

exports! {
    /// `CUDA_MEMCPY3D_PEER`: see [`peer_copy_3d`]; the copy is
    /// `cuMemcpy3D`'s.
    fn cuMemcpy3DPeer(p_copy: *const CUDA_MEMCPY3D) {
        // SAFETY: `p_copy` is NULL (checked inside) or a CUDA_MEMCPY3D_PEER,
        // and `copy` is a valid CUDA_MEMCPY3D for cuMemcpy3D.
        let copy = unsafe { peer_copy_3d(p_copy) }?;
        // SAFETY: `copy` is a live, fully initialised CUDA_MEMCPY3D made from the caller's peer descriptor,
        // whose host pointers the caller vouched for.
        result(unsafe { super::memory2d::cuMemcpy3D_v2(&copy) })
    }

    fn cuMemcpy3DPeerAsync(p_copy: *const CUDA_MEMCPY3D, h_stream: CUstream) {
        // SAFETY: as in cuMemcpy3DPeer.
        let copy = unsafe { peer_copy_3d(p_copy) }?;
        // SAFETY: `copy` is a live, fully initialised CUDA_MEMCPY3D made from the caller's peer descriptor,
        // whose host pointers the caller vouched for.
        result(unsafe { super::memory2d::cuMemcpy3DAsync_v2(&copy, h_stream) })
    }

    /// Every pair of distinct emulated devices can access each other.
    fn cuDeviceCanAccessPeer(can_access_peer: *mut c_int, dev: CUdevice, peer_dev: CUdevice) {
        with_driver(|_| {
            non_null(can_access_peer)?;
            check_device(dev)?;
            check_device(peer_dev)?;
            // SAFETY: `cuDeviceCanAccessPeer`'s caller passes `can_access_peer` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(can_access_peer, c_int::from(dev != peer_dev)) }
        })
    }

    fn cuDeviceGetP2PAttribute(value: *mut c_int, attrib: c_int, src_device: CUdevice, dst_device: CUdevice) {
        with_driver(|_| {
            non_null(value)?;
            check_device(src_device)?;
            check_device(dst_device)?;
            if src_device == dst_device {
                return Err(CUDA_ERROR_INVALID_DEVICE);
            }
            let v = match attrib {
                // One emulated link, the only (and so the best) rank.
                CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK => 0,
                // Atomics on peer memory are atomic: kernels run one at a
                // time over the one address space.
                CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
                | CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
                | CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED => 1,
                CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED => 0,
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            };
            // SAFETY: `cuDeviceGetP2PAttribute`'s caller passes `value` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(value, v) }
        })
    }

    /// Unidirectional: kernels of the current context may then access
    /// memory of `peer_context`'s device.
    fn cuCtxEnablePeerAccess(peer_context: CUcontext, flags: std::ffi::c_uint) {
        with_context(|d, ctx| {
            let peer = check_peer_context(d, peer_context)?;
            if flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if d.device_of(peer) == d.device_of(ctx) {
                return Err(CUDA_ERROR_INVALID_DEVICE);
            }
            if !d.peers.insert((ctx, peer)) {
                return Err(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
            }
            Ok(())
        })
    }

    fn cuCtxDisablePeerAccess(peer_context: CUcontext) {
        with_context(|d, ctx| {
            let peer = check_peer_context(d, peer_context)?;
            if !d.peers.remove(&(ctx, peer)) {
                return Err(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
            }
            Ok(())
        })
    }

    fn cuMemcpyPeer(
        dst_device: CUdeviceptr,
        dst_context: CUcontext,
        src_device: CUdeviceptr,
        src_context: CUcontext,
        byte_count: usize,
    ) {
        crate::graph::capture::sync_call()?;
        with_context(|d, _| copy_peer(d, dst_device, dst_context, src_device, src_context, byte_count))
    }

    /// Runs to completion before returning, which the stream order allows.
    fn cuMemcpyPeerAsync(
        dst_device: CUdeviceptr,
        dst_context: CUcontext,
        src_device: CUdeviceptr,
        src_context: CUcontext,
        byte_count: usize,
        stream: CUstream,
    ) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            // In capture: a device-to-device copy node (one address space).
            let capture = crate::graph::capture::copy_1d(d, stream, dst_device, false, src_device, false, byte_count);
            if let Some(r) = capture {
                return r;
            }
            copy_peer(d, dst_device, dst_context, src_device, src_context, byte_count)
        })
    }
}

aliases! {
    cuMemcpy3DPeer_ptds = cuMemcpy3DPeer(p_copy: *const CUDA_MEMCPY3D);
    cuMemcpy3DPeerAsync_ptsz = cuMemcpy3DPeerAsync(p_copy: *const CUDA_MEMCPY3D, h_stream: CUstream);
    cuMemcpyPeer_ptds = cuMemcpyPeer(
        dst_device: CUdeviceptr,
        dst_context: CUcontext,
        src_device: CUdeviceptr,
        src_context: CUcontext,
        byte_count: usize,
    );
    cuMemcpyPeerAsync_ptsz = cuMemcpyPeerAsync(
        dst_device: CUdeviceptr,
        dst_context: CUcontext,
        src_device: CUdeviceptr,
        src_context: CUcontext,
        byte_count: usize,
        stream: CUstream,
    );
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuDeviceCanAccessPeer": 4000 => cuDeviceCanAccessPeer;
        "cuDeviceGetP2PAttribute": 8000 => cuDeviceGetP2PAttribute;
        "cuCtxEnablePeerAccess": 4000 => cuCtxEnablePeerAccess;
        "cuCtxDisablePeerAccess": 4000 => cuCtxDisablePeerAccess;
        "cuMemcpyPeer": 4000 => cuMemcpyPeer, @ptds 7000 => cuMemcpyPeer_ptds;
        "cuMemcpyPeerAsync": 4000 => cuMemcpyPeerAsync, @ptds 7000 => cuMemcpyPeerAsync_ptsz;
        "cuMemcpy3DPeer": 4000 => cuMemcpy3DPeer, @ptds 7000 => cuMemcpy3DPeer_ptds;
        "cuMemcpy3DPeerAsync": 4000 => cuMemcpy3DPeerAsync, @ptds 7000 => cuMemcpy3DPeerAsync_ptsz;
    }
}
