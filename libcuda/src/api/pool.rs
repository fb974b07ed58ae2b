//! The stream-ordered allocator: `cuMemAllocAsync`/`cuMemFreeAsync`, memory
//! pools (`cuMemPoolCreate`/`Destroy`, attributes, `cuMemPoolTrimTo`,
//! access), each device's default and current pool, and
//! `cuMemAllocFromPoolAsync`.
//!
//! Work runs inside the call, so an allocation exists when the call returns
//! and a free takes effect at once, which any stream order allows. Pool
//! memory is ordinary emulator device memory; a pool keeps the accounting
//! the attributes report: bytes in use, and bytes reserved, which after a
//! free or a trim shrink to the release threshold (or `minBytesToKeep`) but
//! never below what is in use, in 2 MiB steps as on NVIDIA GPUs. A pool's
//! allocations are reachable from its own device and from the devices its
//! access list names (`cuMemPoolSetAccess`); peer access does not extend to
//! them, as the driver API specifies.

use super::device::check_device;
use super::memory::{alloc, free};
use super::proc_address::{ProcEntry, procs};
use super::vmm::{
    CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_HANDLE_TYPE_NONE,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_LOCATION_TYPE_DEVICE, GRANULARITY,
    MemAccessDesc, MemLocation,
};
use crate::cu::*;
use crate::driver::{Driver, with_context, with_driver};
use crate::entry::{aliases, exports, non_null, write_out};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};

const CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: c_int = 1;
const CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: c_int = 2;
const CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: c_int = 3;
const CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: c_int = 4;
const CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: c_int = 5;
const CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: c_int = 6;
const CU_MEMPOOL_ATTR_USED_MEM_CURRENT: c_int = 7;
const CU_MEMPOOL_ATTR_USED_MEM_HIGH: c_int = 8;

/// `CUmemPoolProps`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemPoolProps {
    pub alloc_type: c_int,
    pub handle_types: c_int,
    pub location: MemLocation,
    pub win32_security_attributes: *mut c_void,
    pub max_size: usize,
    pub usage: u16,
    pub reserved: [u8; 54],
}

/// One memory pool (`CUmemoryPool`).
#[derive(Debug)]
struct Pool {
    device: CUdevice,
    default: bool,
    /// Destroyed while allocations were outstanding: it goes with the last.
    destroyed: bool,
    /// 0: no limit.
    max_size: u64,
    reuse: [i32; 3],
    release_threshold: u64,
    used: u64,
    used_high: u64,
    reserved: u64,
    reserved_high: u64,
    /// Other devices granted access (bit = ordinal).
    access: u64,
}

impl Pool {
    fn new(device: CUdevice, default: bool, max_size: u64) -> Pool {
        Pool {
            device,
            default,
            destroyed: false,
            max_size,
            reuse: [1, 1, 1],
            release_threshold: 0,
            used: 0,
            used_high: 0,
            reserved: 0,
            reserved_high: 0,
            access: 0,
        }
    }

    /// Shrinks the reserved bytes to `keep`, but not below what is in use.
    fn shrink_to(&mut self, keep: u64) {
        let floor = self.used.next_multiple_of(GRANULARITY);
        self.reserved = self.reserved.min(keep.max(floor)).max(floor);
    }
}

/// Every pool, each device's default and current pool, and which pool each
/// live pool allocation came from.
#[derive(Debug, Default)]
pub struct Pools {
    pools: BTreeMap<usize, Pool>,
    defaults: BTreeMap<CUdevice, usize>,
    current: BTreeMap<CUdevice, usize>,
    /// Allocation base -> (pool, bytes counted).
    allocations: BTreeMap<u64, (usize, u64)>,
    next: usize,
}

// SAFETY: nothing inside points anywhere; handles are numbers.
unsafe impl Send for Pools {}

/// Where pool handles start: non-null, recognisable values.
const POOL_HANDLE_BASE: usize = 0x9000_0000;

impl Pools {
    /// The pool `base` was allocated from, if any.
    pub fn pool_of(&self, base: u64) -> Option<usize> {
        self.allocations.get(&base).map(|(p, _)| *p)
    }

    /// Whether kernels of device `dev` may access `pool`'s allocations.
    pub fn grants(&self, pool: usize, dev: CUdevice) -> bool {
        self.pools
            .get(&pool)
            .is_some_and(|p| p.device == dev || p.access & (1u64 << dev) != 0)
    }

    /// Called when the allocation at `base` is freed, whichever way.
    pub fn forget(&mut self, base: u64) {
        let Some((handle, bytes)) = self.allocations.remove(&base) else {
            return;
        };
        if let Some(p) = self.pools.get_mut(&handle) {
            p.used -= bytes;
            let threshold = p.release_threshold;
            p.shrink_to(threshold);
            if p.destroyed && p.used == 0 {
                self.pools.remove(&handle);
            }
        }
    }

    fn insert(&mut self, pool: Pool) -> usize {
        self.next += 1;
        let handle = POOL_HANDLE_BASE + self.next * 0x10;
        self.pools.insert(handle, pool);
        handle
    }

    fn default_pool(&mut self, dev: CUdevice) -> usize {
        if let Some(&p) = self.defaults.get(&dev) {
            return p;
        }
        let p = self.insert(Pool::new(dev, true, 0));
        self.defaults.insert(dev, p);
        p
    }

    fn current_pool(&mut self, dev: CUdevice) -> usize {
        match self.current.get(&dev) {
            Some(&p) => p,
            None => self.default_pool(dev),
        }
    }

    fn live(&mut self, pool: CUmemoryPool) -> Result<&mut Pool, CUresult> {
        self.pools
            .get_mut(&(pool as usize))
            .filter(|p| !p.destroyed)
            .ok_or(CUDA_ERROR_INVALID_VALUE)
    }
}

/// `CUmemoryPool`.
pub type CUmemoryPool = *mut c_void;

/// Allocates `bytes` from `pool` in context `ctx`.
fn alloc_from(d: &mut Driver, ctx: usize, pool: usize, bytes: usize) -> Result<u64, CUresult> {
    if bytes == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let counted = (bytes as u64).next_multiple_of(256);
    let p = d.pools.live(pool as CUmemoryPool)?;
    if p.max_size != 0 && p.used + counted > p.max_size {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let dptr = alloc(d, ctx, bytes)?;
    let p = d.pools.live(pool as CUmemoryPool)?;
    p.used += counted;
    p.used_high = p.used_high.max(p.used);
    p.reserved = p.reserved.max(p.used.next_multiple_of(GRANULARITY));
    p.reserved_high = p.reserved_high.max(p.reserved);
    d.pools.allocations.insert(dptr, (pool, counted));
    Ok(dptr)
}

fn check_pool_props(props: &MemPoolProps) -> Result<(), CUresult> {
    if props.alloc_type != CU_MEM_ALLOCATION_TYPE_PINNED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if props.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        // Host-located pools are not modelled.
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    check_device(props.location.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
    match props.handle_types {
        CU_MEM_HANDLE_TYPE_NONE | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => Ok(()),
        t if t & !0xf == 0 => Err(CUDA_ERROR_NOT_SUPPORTED),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// The device of a CUDA 13 pool location: device locations of pinned
/// memory only.
fn device_location(location: *const MemLocation, type_: c_int) -> Result<CUdevice, CUresult> {
    non_null(location)?;
    // SAFETY: non-null, the caller's location.
    let location = unsafe { *location };
    if type_ != CU_MEM_ALLOCATION_TYPE_PINNED || location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
        return Err(CUDA_ERROR_NOT_SUPPORTED);
    }
    check_device(location.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
    Ok(location.id)
}

exports! {
    /// From the current pool of the context's device.
    fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, stream: CUstream) {
        with_context(|d, ctx| {
            non_null(dptr)?;
            d.check_stream(stream)?;
            let pool = d.pools.current_pool(d.device_of(ctx));
            let p = alloc_from(d, ctx, pool, bytesize)?;
            unsafe { write_out(dptr, p) }
        })
    }

    /// Frees pool and ordinary allocations alike.
    fn cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            free(d, dptr)
        })
    }

    fn cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, bytesize: usize, pool: CUmemoryPool, stream: CUstream) {
        with_context(|d, ctx| {
            non_null(dptr)?;
            d.check_stream(stream)?;
            let p = alloc_from(d, ctx, pool as usize, bytesize)?;
            unsafe { write_out(dptr, p) }
        })
    }

    fn cuDeviceGetDefaultMemPool(pool_out: *mut CUmemoryPool, dev: CUdevice) {
        with_driver(|d| {
            non_null(pool_out)?;
            check_device(dev)?;
            let p = d.pools.default_pool(dev);
            unsafe { write_out(pool_out, p as CUmemoryPool) }
        })
    }

    fn cuDeviceGetMemPool(pool: *mut CUmemoryPool, dev: CUdevice) {
        with_driver(|d| {
            non_null(pool)?;
            check_device(dev)?;
            let p = d.pools.current_pool(dev);
            unsafe { write_out(pool, p as CUmemoryPool) }
        })
    }

    fn cuDeviceSetMemPool(dev: CUdevice, pool: CUmemoryPool) {
        with_driver(|d| {
            check_device(dev)?;
            if d.pools.live(pool)?.device != dev {
                return Err(CUDA_ERROR_INVALID_DEVICE);
            }
            d.pools.current.insert(dev, pool as usize);
            Ok(())
        })
    }

    /// CUDA 13: the default pool of a device location (host pools are not
    /// modelled).
    fn cuMemGetDefaultMemPool(pool_out: *mut CUmemoryPool, location: *mut MemLocation, type_: c_int) {
        with_driver(|d| {
            non_null(pool_out)?;
            let dev = device_location(location, type_)?;
            let p = d.pools.default_pool(dev);
            unsafe { write_out(pool_out, p as CUmemoryPool) }
        })
    }

    /// CUDA 13: the current pool of a device location.
    fn cuMemGetMemPool(pool: *mut CUmemoryPool, location: *mut MemLocation, type_: c_int) {
        with_driver(|d| {
            non_null(pool)?;
            let dev = device_location(location, type_)?;
            let p = d.pools.current_pool(dev);
            unsafe { write_out(pool, p as CUmemoryPool) }
        })
    }

    /// CUDA 13: sets the current pool of a device location.
    fn cuMemSetMemPool(location: *mut MemLocation, type_: c_int, pool: CUmemoryPool) {
        with_driver(|d| {
            let dev = device_location(location, type_)?;
            if d.pools.live(pool)?.device != dev {
                return Err(CUDA_ERROR_INVALID_DEVICE);
            }
            d.pools.current.insert(dev, pool as usize);
            Ok(())
        })
    }

    fn cuMemPoolCreate(pool: *mut CUmemoryPool, pool_props: *const MemPoolProps) {
        with_driver(|d| {
            non_null(pool)?;
            non_null(pool_props)?;
            // SAFETY: non-null, the caller's properties.
            let props = unsafe { *pool_props };
            check_pool_props(&props)?;
            let p = d.pools.insert(Pool::new(props.location.id, false, props.max_size as u64));
            unsafe { write_out(pool, p as CUmemoryPool) }
        })
    }

    /// Outstanding allocations stay valid; the pool goes with the last of
    /// them. A device whose current pool this was returns to its default.
    fn cuMemPoolDestroy(pool: CUmemoryPool) {
        with_driver(|d| {
            let p = d.pools.live(pool)?;
            if p.default {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            p.destroyed = true;
            let (dev, empty) = (p.device, p.used == 0);
            if empty {
                d.pools.pools.remove(&(pool as usize));
            }
            if d.pools.current.get(&dev) == Some(&(pool as usize)) {
                d.pools.current.remove(&dev);
            }
            Ok(())
        })
    }

    fn cuMemPoolSetAttribute(pool: CUmemoryPool, attr: c_int, value: *mut c_void) {
        with_driver(|d| {
            non_null(value)?;
            let p = d.pools.live(pool)?;
            // SAFETY (reads below): the caller passes an int for the reuse
            // attributes and a cuuint64_t for the others.
            match attr {
                CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
                | CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC
                | CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                    p.reuse[(attr - 1) as usize] = unsafe { *(value as *const c_int) };
                }
                CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => {
                    p.release_threshold = unsafe { *(value as *const u64) };
                }
                // The high-water marks may only be reset (to 0).
                CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH => {
                    if unsafe { *(value as *const u64) } != 0 {
                        return Err(CUDA_ERROR_INVALID_VALUE);
                    }
                    if attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH {
                        p.reserved_high = p.reserved;
                    } else {
                        p.used_high = p.used;
                    }
                }
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            }
            Ok(())
        })
    }

    fn cuMemPoolGetAttribute(pool: CUmemoryPool, attr: c_int, value: *mut c_void) {
        with_driver(|d| {
            non_null(value)?;
            let p = d.pools.live(pool)?;
            let wide = match attr {
                CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
                | CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC
                | CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => {
                    let v = p.reuse[(attr - 1) as usize];
                    return unsafe { write_out(value as *mut c_int, v) };
                }
                CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => p.release_threshold,
                CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT => p.reserved,
                CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH => p.reserved_high,
                CU_MEMPOOL_ATTR_USED_MEM_CURRENT => p.used,
                CU_MEMPOOL_ATTR_USED_MEM_HIGH => p.used_high,
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            };
            unsafe { write_out(value as *mut u64, wide) }
        })
    }

    fn cuMemPoolTrimTo(pool: CUmemoryPool, min_bytes_to_keep: usize) {
        with_driver(|d| {
            d.pools.live(pool)?.shrink_to(min_bytes_to_keep as u64);
            Ok(())
        })
    }

    fn cuMemPoolSetAccess(pool: CUmemoryPool, map: *const MemAccessDesc, count: usize) {
        with_driver(|d| {
            if count > 0 {
                non_null(map)?;
            }
            let descs = if count == 0 {
                &[][..]
            } else {
                // SAFETY: the caller passes `count` descriptors.
                unsafe { std::slice::from_raw_parts(map, count) }
            };
            let p = d.pools.live(pool)?;
            let mut access = p.access;
            for desc in descs {
                if desc.location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                check_device(desc.location.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
                let bit = 1u64 << desc.location.id;
                match desc.flags {
                    // The pool's own device always has read-write access.
                    _ if desc.location.id == p.device => {
                        if desc.flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE {
                            return Err(CUDA_ERROR_INVALID_VALUE);
                        }
                    }
                    CU_MEM_ACCESS_FLAGS_PROT_NONE => access &= !bit,
                    CU_MEM_ACCESS_FLAGS_PROT_READ | CU_MEM_ACCESS_FLAGS_PROT_READWRITE => access |= bit,
                    _ => return Err(CUDA_ERROR_INVALID_VALUE),
                }
            }
            p.access = access;
            Ok(())
        })
    }

    fn cuMemPoolGetAccess(flags: *mut c_int, mem_pool: CUmemoryPool, location: *const MemLocation) {
        with_driver(|d| {
            non_null(flags)?;
            non_null(location)?;
            // SAFETY: non-null, the caller's location.
            let location = unsafe { *location };
            if location.type_ != CU_MEM_LOCATION_TYPE_DEVICE {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            check_device(location.id).map_err(|_| CUDA_ERROR_INVALID_DEVICE)?;
            d.pools.live(mem_pool)?;
            let granted = d.pools.grants(mem_pool as usize, location.id);
            let v = if granted { CU_MEM_ACCESS_FLAGS_PROT_READWRITE } else { CU_MEM_ACCESS_FLAGS_PROT_NONE };
            unsafe { write_out(flags, v) }
        })
    }
}

aliases! {
    cuMemAllocAsync_ptsz = cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, stream: CUstream);
    cuMemFreeAsync_ptsz = cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream);
    cuMemAllocFromPoolAsync_ptsz = cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, bytesize: usize, pool: CUmemoryPool, stream: CUstream);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuMemAllocFromPoolAsync": 11020 => cuMemAllocFromPoolAsync, @ptds 11020 => cuMemAllocFromPoolAsync_ptsz;
        "cuDeviceGetDefaultMemPool": 11020 => cuDeviceGetDefaultMemPool;
        "cuDeviceGetMemPool": 11020 => cuDeviceGetMemPool;
        "cuDeviceSetMemPool": 11020 => cuDeviceSetMemPool;
        "cuMemGetDefaultMemPool": 13000 => cuMemGetDefaultMemPool;
        "cuMemGetMemPool": 13000 => cuMemGetMemPool;
        "cuMemSetMemPool": 13000 => cuMemSetMemPool;
        "cuMemPoolCreate": 11020 => cuMemPoolCreate;
        "cuMemPoolDestroy": 11020 => cuMemPoolDestroy;
        "cuMemPoolSetAttribute": 11020 => cuMemPoolSetAttribute;
        "cuMemPoolGetAttribute": 11020 => cuMemPoolGetAttribute;
        "cuMemPoolTrimTo": 11020 => cuMemPoolTrimTo;
        "cuMemPoolSetAccess": 11020 => cuMemPoolSetAccess;
        "cuMemPoolGetAccess": 11020 => cuMemPoolGetAccess;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_props_layout_matches_cuda_h() {
        assert_eq!(std::mem::size_of::<MemPoolProps>(), 88);
        assert_eq!(std::mem::offset_of!(MemPoolProps, max_size), 24);
    }

    #[test]
    fn reserved_bytes_follow_use_threshold_and_trim() {
        let mut p = Pool::new(0, false, 0);
        p.used = 3 << 20;
        p.reserved = 4 << 20;
        p.used = 0;
        p.shrink_to(0);
        assert_eq!(p.reserved, 0);
        p.used = 1 << 20;
        p.reserved = 8 << 20;
        p.shrink_to(u64::MAX);
        assert_eq!(p.reserved, 8 << 20);
        p.shrink_to(0);
        assert_eq!(p.reserved, 2 << 20, "never below what is in use");
    }
}
