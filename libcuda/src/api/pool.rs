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
//! them, as the driver API specifies. Pools made with POSIX file descriptor
//! handles export to other processes (`cuMemPoolExportToShareableHandle`,
//! `cuMemPoolExportPointer`): the pool's descriptor names a page saying
//! which process and pool it is, and a pointer's export data is the
//! allocation's IPC handle (see [`super::ipc`]) naming its pool.

use super::ipc::IpcHandle;
use super::memory::free;
use crate::cu::*;
use crate::driver::check_device;
use crate::driver::{Driver, with_context, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
use crate::state::pool::Pool;
use crate::state::vmm::{
    CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_HANDLE_TYPE_NONE,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_LOCATION_TYPE_DEVICE, GRANULARITY,
    MemAccessDesc, MemLocation,
};
use std::ffi::{c_int, c_void};
use std::os::fd::AsRawFd;

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

pub use crate::state::pool::CUmemoryPool;

/// Allocates `bytes` from `pool` in context `ctx`.
/// `cuMemAllocAsync` (`pool` `None`: the current pool of the context's
/// device) and `cuMemAllocFromPoolAsync`: `bytes` from the pool, written to
/// `*dptr`; on a capturing stream, a graph allocation node instead.
///
/// # Safety
/// `dptr` must be NULL or valid for a write.
unsafe fn alloc_async(
    d: &mut Driver,
    ctx: usize,
    dptr: *mut CUdeviceptr,
    bytes: usize,
    pool: Option<usize>,
    stream: CUstream,
) -> Result<(), CUresult> {
    non_null(dptr)?;
    d.check_stream(stream)?;
    let p = match crate::graph::capture::mem_alloc(d, ctx, stream, bytes) {
        Some(r) => r?,
        None => {
            let pool = pool.unwrap_or_else(|| d.pools.current_pool(d.device_of(ctx)));
            alloc_from(d, ctx, pool, bytes)?
        }
    };
    // SAFETY: non-null; forwarded contract.
    unsafe { write_out(dptr, p) }
}

fn alloc_from(d: &mut Driver, ctx: usize, pool: usize, bytes: usize) -> Result<u64, CUresult> {
    if bytes == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let counted = (bytes as u64).next_multiple_of(256);
    let p = d.pools.live(pool as CUmemoryPool)?;
    if p.imported.is_some() {
        // An imported pool only maps the exporter's allocations.
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if p.max_size != 0 && p.used + counted > p.max_size {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let dptr = d.alloc(ctx, bytes)?;
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

/// What a pool's share page holds: magic, exporter pid, device, pool handle.
const POOL_MAGIC: &[u8; 8] = b"PRLXIPCP";
/// Where `cuMemPoolExportPointer` puts the pool in the 64 bytes (the rest
/// is the allocation's IPC handle, see [`super::ipc`]).
const POOL_ID_AT: usize = 40;

/// `cuMemPoolExportToShareableHandle`: a new descriptor of the pool's share
/// page (made on first export).
fn export_pool(d: &mut Driver, pool: CUmemoryPool) -> Result<c_int, CUresult> {
    let handle = pool as usize;
    let p = d.pools.live(pool)?;
    if p.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 || p.imported.is_some() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if p.share.is_none() {
        let fd = crate::state::vmm::memfd("prlx-ipc-pool", 4096)?;
        let mut page = [0u8; 24];
        page[..8].copy_from_slice(POOL_MAGIC);
        page[8..12].copy_from_slice(&std::process::id().to_le_bytes());
        page[12..16].copy_from_slice(&p.device.to_le_bytes());
        page[16..24].copy_from_slice(&(handle as u64).to_le_bytes());
        // SAFETY: writes our buffer to our own memfd.
        if unsafe { libc::pwrite(fd.as_raw_fd(), page.as_ptr().cast(), 24, 0) } != 24 {
            return Err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        p.share = Some(fd);
    }
    let share = p.share.as_ref().map_or(-1, |f| f.as_raw_fd());
    // SAFETY: duplicates our own descriptor; the copy is the caller's.
    let dup = unsafe { libc::fcntl(share, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(dup)
}

/// `cuMemPoolImportFromShareableHandle`: a local pool standing for the
/// exporter's, named by the page behind `fd`.
fn import_pool(d: &mut Driver, fd: c_int) -> Result<usize, CUresult> {
    let mut page = [0u8; 24];
    // SAFETY: reads into our buffer; a bad descriptor only fails.
    if unsafe { libc::pread(fd, page.as_mut_ptr().cast(), 24, 0) } != 24 || &page[..8] != POOL_MAGIC
    {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let pid = u32::from_le_bytes(page[8..12].try_into().unwrap_or_default());
    let device = i32::from_le_bytes(page[12..16].try_into().unwrap_or_default());
    let remote = u64::from_le_bytes(page[16..24].try_into().unwrap_or_default());
    if pid == std::process::id() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let device = if check_device(device).is_ok() {
        device
    } else {
        0
    };
    let mut pool = Pool::new(device, false, 0);
    pool.handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    pool.imported = Some((pid, remote));
    Ok(d.pools.insert(pool))
}

/// `cuMemPoolExportPointer`: the allocation's IPC handle, naming its pool.
fn export_pointer(d: &mut Driver, ptr: u64) -> Result<IpcHandle, CUresult> {
    let pool = d.pools.pool_of(ptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let p = d.pools.pools.get(&pool).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if p.handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut h = super::ipc::export_memory(d, ptr)?;
    h.reserved[POOL_ID_AT..POOL_ID_AT + 8].copy_from_slice(&(pool as u64).to_le_bytes());
    Ok(h)
}

/// `cuMemPoolImportPointer`: maps the exporter's allocation; `cuMemFree`
/// (or `cuMemFreeAsync`) releases the mapping.
fn import_pointer(
    d: &mut Driver,
    ctx: usize,
    pool: CUmemoryPool,
    data: &IpcHandle,
) -> Result<u64, CUresult> {
    let (pid, remote) = d
        .pools
        .live(pool)?
        .imported
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let b = &data.reserved;
    let data_pid = u32::from_le_bytes(b[8..12].try_into().unwrap_or_default());
    let data_pool =
        u64::from_le_bytes(b[POOL_ID_AT..POOL_ID_AT + 8].try_into().unwrap_or_default());
    if data_pid != pid || data_pool != remote {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let base = super::ipc::open_memory(d, ctx, data, 0)?;
    d.allocations.insert(base, ctx);
    Ok(base)
}

exports! {
    fn cuMemPoolExportToShareableHandle(handle_out: *mut c_void, pool: CUmemoryPool, handle_type: c_int, flags: u64) {
        with_driver(|d| {
            non_null(handle_out)?;
            if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let fd = export_pool(d, pool)?;
            // SAFETY: `cuMemPoolExportToShareableHandle`'s caller passes `handle_out` as cuda.h specifies:
            // NULL (refused by `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(handle_out as *mut c_int, fd) }
        })
    }

    /// `handle` is the descriptor itself (cast to a pointer); the caller
    /// keeps it.
    fn cuMemPoolImportFromShareableHandle(pool_out: *mut CUmemoryPool, handle: *mut c_void, handle_type: c_int, flags: u64) {
        with_driver(|d| {
            non_null(pool_out)?;
            if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let p = import_pool(d, handle as usize as c_int)?;
            // SAFETY: `cuMemPoolImportFromShareableHandle`'s caller passes `pool_out` as cuda.h specifies:
            // NULL (refused by `write_out`) or valid for writing a `CUmemoryPool`.
            unsafe { write_out(pool_out, p as CUmemoryPool) }
        })
    }

    fn cuMemPoolExportPointer(share_data_out: *mut IpcHandle, ptr: CUdeviceptr) {
        with_context(|d, _| {
            non_null(share_data_out)?;
            let h = export_pointer(d, ptr)?;
            // SAFETY: `cuMemPoolExportPointer`'s caller passes `share_data_out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `IpcHandle`.
            unsafe { write_out(share_data_out, h) }
        })
    }

    fn cuMemPoolImportPointer(ptr_out: *mut CUdeviceptr, pool: CUmemoryPool, share_data: *mut IpcHandle) {
        with_context(|d, ctx| {
            non_null(ptr_out)?;
            non_null(share_data)?;
            // SAFETY: non-null, the caller's 64 bytes.
            let data = unsafe { *share_data };
            let p = import_pointer(d, ctx, pool, &data)?;
            // SAFETY: `cuMemPoolImportPointer`'s caller passes `ptr_out` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `CUdeviceptr`.
            unsafe { write_out(ptr_out, p) }
        })
    }

    /// From the current pool of the context's device.
    fn cuMemAllocAsync(dptr: *mut CUdeviceptr, bytesize: usize, stream: CUstream) {
        // SAFETY: `dptr` is NULL or valid for writing a `CUdeviceptr`, as cuda.h specifies for
        // `cuMemAllocAsync`, which is `alloc_async`'s contract.
        with_context(|d, ctx| unsafe { alloc_async(d, ctx, dptr, bytesize, None, stream) })
    }

    /// Frees pool and ordinary allocations alike.
    fn cuMemFreeAsync(dptr: CUdeviceptr, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = crate::graph::capture::mem_free(d, stream, dptr) {
                return r;
            }
            free(d, dptr)
        })
    }

    fn cuMemAllocFromPoolAsync(dptr: *mut CUdeviceptr, bytesize: usize, pool: CUmemoryPool, stream: CUstream) {
        // SAFETY: `dptr` is NULL or valid for writing a `CUdeviceptr`, as cuda.h specifies for
        // `cuMemAllocFromPoolAsync`, which is `alloc_async`'s contract.
        with_context(|d, ctx| unsafe { alloc_async(d, ctx, dptr, bytesize, Some(pool as usize), stream) })
    }

    fn cuDeviceGetDefaultMemPool(pool_out: *mut CUmemoryPool, dev: CUdevice) {
        with_driver(|d| {
            non_null(pool_out)?;
            check_device(dev)?;
            let p = d.pools.default_pool(dev);
            // SAFETY: `cuDeviceGetDefaultMemPool`'s caller passes `pool_out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUmemoryPool`.
            unsafe { write_out(pool_out, p as CUmemoryPool) }
        })
    }

    fn cuDeviceGetMemPool(pool: *mut CUmemoryPool, dev: CUdevice) {
        with_driver(|d| {
            non_null(pool)?;
            check_device(dev)?;
            let p = d.pools.current_pool(dev);
            // SAFETY: `cuDeviceGetMemPool`'s caller passes `pool` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUmemoryPool`.
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
            // SAFETY: `cuMemGetDefaultMemPool`'s caller passes `pool_out` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUmemoryPool`.
            unsafe { write_out(pool_out, p as CUmemoryPool) }
        })
    }

    /// CUDA 13: the current pool of a device location.
    fn cuMemGetMemPool(pool: *mut CUmemoryPool, location: *mut MemLocation, type_: c_int) {
        with_driver(|d| {
            non_null(pool)?;
            let dev = device_location(location, type_)?;
            let p = d.pools.current_pool(dev);
            // SAFETY: `cuMemGetMemPool`'s caller passes `pool` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUmemoryPool`.
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
            let mut created = Pool::new(props.location.id, false, props.max_size as u64);
            created.handle_types = props.handle_types;
            let p = d.pools.insert(created);
            // SAFETY: `cuMemPoolCreate`'s caller passes `pool` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUmemoryPool`.
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
                    // SAFETY: `value` is non-null (checked above) and points to an `int` for the reuse
                    // attributes, as cuda.h specifies.
                    p.reuse[(attr - 1) as usize] = unsafe { *(value as *const c_int) };
                }
                CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => {
                    // SAFETY: `value` is non-null (checked above) and points to a `cuuint64_t` for the
                    // release threshold, as cuda.h specifies.
                    p.release_threshold = unsafe { *(value as *const u64) };
                }
                // The high-water marks may only be reset (to 0).
                CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH | CU_MEMPOOL_ATTR_USED_MEM_HIGH => {
                    // SAFETY: `value` is non-null (checked above) and points to a `cuuint64_t` for the
                    // high-water marks, as cuda.h specifies.
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
                    // SAFETY: `cuMemPoolGetAttribute`'s caller passes `value` as cuda.h specifies: NULL
                    // (refused by `write_out`) or valid for writing a `c_int`.
                    return unsafe { write_out(value as *mut c_int, v) };
                }
                CU_MEMPOOL_ATTR_RELEASE_THRESHOLD => p.release_threshold,
                CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT => p.reserved,
                CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH => p.reserved_high,
                CU_MEMPOOL_ATTR_USED_MEM_CURRENT => p.used,
                CU_MEMPOOL_ATTR_USED_MEM_HIGH => p.used_high,
                _ => return Err(CUDA_ERROR_INVALID_VALUE),
            };
            // SAFETY: `cuMemPoolGetAttribute`'s caller passes `value` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `u64`.
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
            // SAFETY: `cuMemPoolGetAccess`'s caller passes `flags` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_int`.
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
        "cuMemAllocAsync": 11020 => cuMemAllocAsync, @ptds 11020 => cuMemAllocAsync_ptsz;
        "cuMemFreeAsync": 11020 => cuMemFreeAsync, @ptds 11020 => cuMemFreeAsync_ptsz;
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
        "cuMemPoolExportToShareableHandle": 11020 => cuMemPoolExportToShareableHandle;
        "cuMemPoolImportFromShareableHandle": 11020 => cuMemPoolImportFromShareableHandle;
        "cuMemPoolExportPointer": 11020 => cuMemPoolExportPointer;
        "cuMemPoolImportPointer": 11020 => cuMemPoolImportPointer;
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
}
