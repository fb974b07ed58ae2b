//! Virtual memory management: `cuMemAddressReserve`/`Free`,
//! `cuMemCreate`/`Release`, `cuMemMap`/`Unmap`, `cuMemSetAccess`/`GetAccess`,
//! granularity, properties, `cuMemRetainAllocationHandle`, and POSIX file
//! descriptor export/import.
//!
//! How it maps onto the emulator: a physical allocation is a memfd; a
//! reservation is a `PROT_NONE` host mapping; `cuMemMap` maps the memfd over
//! part of it (`MAP_SHARED | MAP_FIXED`), so two mappings of one allocation
//! are two views of the same pages and writes through one are seen through
//! the other. The device address is the host address. Mapped memory becomes
//! device memory when `cuMemSetAccess` grants a device access: every run of
//! adjacent mappings with the same access is registered with the emulator
//! as one host-backed range (so copies may cross mapping boundaries), with
//! the emulator's usual bounds checks and precise faults. A device without
//! access sees nothing there (see `api::peer::hide_unreachable`).
//! Read-only access is granted as read-write: the emulator has no
//! write-protected memory.

use crate::cu::*;
use crate::driver::check_device;
use crate::entry::{ProcEntry, procs};
use crate::state::vmm::*;
// The ABI types and values of this API, kept at their public path.
use crate::driver::{Driver, with_driver};
use crate::entry::{exports, non_null, write_out};
pub use crate::state::vmm::{
    CU_MEM_ACCESS_FLAGS_PROT_NONE, CU_MEM_ACCESS_FLAGS_PROT_READ,
    CU_MEM_ACCESS_FLAGS_PROT_READWRITE, CU_MEM_ALLOCATION_TYPE_PINNED, CU_MEM_HANDLE_TYPE_NONE,
    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, CU_MEM_LOCATION_TYPE_DEVICE, GRANULARITY,
    MemAccessDesc, MemAllocationProp, MemLocation,
};
use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;

fn check_location(location: MemLocation) -> Result<(), CUresult> {
    match location.type_ {
        CU_MEM_LOCATION_TYPE_DEVICE => check_device(location.id),
        CU_MEM_LOCATION_TYPE_HOST
        | CU_MEM_LOCATION_TYPE_HOST_NUMA
        | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// Validates a `CUmemAllocationProp` as `cuMemCreate` takes it.
fn check_prop(prop: &MemAllocationProp) -> Result<(), CUresult> {
    if prop.type_ != CU_MEM_ALLOCATION_TYPE_PINNED {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    check_location(prop.location)?;
    match prop.requested_handle_types {
        CU_MEM_HANDLE_TYPE_NONE | CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => Ok(()),
        // Win32 handles and fabric handles do not exist here.
        t if t & !0xf == 0 => Err(CUDA_ERROR_NOT_SUPPORTED),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn new_physical(d: &mut Driver, memfd: OwnedFd, size: u64, prop: MemAllocationProp) -> u64 {
    d.vmm.next_handle += 1;
    let handle = d.vmm.next_handle;
    d.vmm.physical.insert(
        handle,
        Physical {
            memfd,
            size,
            prop,
            handle_refs: 1,
            mappings: 0,
        },
    );
    handle
}

/// Drops a physical allocation no handle and no mapping refers to.
fn collect(d: &mut Driver, handle: u64) {
    if d.vmm
        .physical
        .get(&handle)
        .is_some_and(|p| p.handle_refs == 0 && p.mappings == 0)
    {
        d.vmm.physical.remove(&handle);
    }
}

/// Re-registers reservation `base`'s accessible mappings with the emulator:
/// maximal runs of adjacent mappings with the same device access.
fn sync_registration(d: &mut Driver, base: u64) -> Result<(), CUresult> {
    let Some(r) = d.vmm.reservations.get_mut(&base) else {
        return Ok(());
    };
    let old = std::mem::take(&mut r.runs);
    let size = r.size;
    for (start, _, _) in old {
        let _ = d.device.mem_free(start);
    }
    let mut runs: Vec<(u64, u64, u64)> = Vec::new();
    for (va, m) in d.vmm.mappings_in(base, size) {
        if m.access == 0 {
            continue;
        }
        match runs.last_mut() {
            Some((start, len, mask)) if *start + *len == va && *mask == m.access => *len += m.size,
            _ => runs.push((va, m.size, m.access)),
        }
    }
    let mut result = Ok(());
    let mut registered = Vec::new();
    for run in runs {
        // SAFETY: the run is a shared mapping of live memfds that stays
        // mapped until the next `sync_registration` of this reservation
        // unregisters it (every unmap and address free runs one first).
        match unsafe { d.device.mem_register_host(run.0 as *mut u8, run.1) } {
            Ok(()) => registered.push(run),
            Err(_) => result = Err(CUDA_ERROR_OUT_OF_MEMORY),
        }
    }
    if let Some(r) = d.vmm.reservations.get_mut(&base) {
        r.runs = registered;
    }
    result
}

fn reserve(d: &mut Driver, size: usize, alignment: usize, addr: u64) -> Result<u64, CUresult> {
    if size == 0 || (alignment != 0 && !alignment.is_power_of_two()) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let size = (size as u64)
        .checked_next_multiple_of(GRANULARITY)
        .ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let align = (alignment as u64).max(GRANULARITY);
    let span = size.checked_add(align).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let hint = if addr != 0 {
        addr
    } else {
        NEXT_RESERVE_HINT.fetch_add(span + GRANULARITY, Ordering::Relaxed)
    };
    // The requested address, when given and free, is honoured exactly.
    if addr != 0 && addr % align == 0 {
        // SAFETY: a hint only (no MAP_FIXED): nothing existing is replaced.
        let p = unsafe { map_none(addr, size, false) };
        if p as u64 == addr {
            d.vmm.reservations.insert(
                addr,
                Reservation {
                    size,
                    runs: Vec::new(),
                },
            );
            return Ok(addr);
        }
        if p != libc::MAP_FAILED {
            // SAFETY: the mapping just made, elsewhere; not used.
            unsafe { libc::munmap(p, size as usize) };
        }
    }
    // SAFETY: a hint only, as above.
    let p = unsafe { map_none(hint, span, false) };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    let raw = p as u64;
    let base = raw.next_multiple_of(align);
    // SAFETY: trims our own fresh mapping to the aligned range.
    unsafe {
        if base > raw {
            libc::munmap(p, (base - raw) as usize);
        }
        let tail = raw + span - (base + size);
        if tail > 0 {
            libc::munmap((base + size) as *mut c_void, tail as usize);
        }
    }
    d.vmm.reservations.insert(
        base,
        Reservation {
            size,
            runs: Vec::new(),
        },
    );
    Ok(base)
}

fn map(d: &mut Driver, ptr: u64, size: usize, offset: usize, handle: u64) -> Result<(), CUresult> {
    let size = size as u64;
    if size == 0 || size % GRANULARITY != 0 || ptr % GRANULARITY != 0 || offset != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let p = d
        .vmm
        .physical
        .get(&handle)
        .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    if p.handle_refs == 0 {
        return Err(CUDA_ERROR_INVALID_HANDLE);
    }
    if size > p.size {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let fd = p.memfd.as_raw_fd();
    // The range must lie in one reservation and be unmapped.
    d.vmm
        .reservation_of(ptr, size)
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if !d.vmm.mappings_in(ptr, size).is_empty() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: the range lies in our reservation and no mapping is there.
    unsafe { map_shared(ptr, size, fd, true) }?;
    d.vmm.mappings.insert(
        ptr,
        Mapping {
            size,
            handle,
            access: 0,
        },
    );
    if let Some(p) = d.vmm.physical.get_mut(&handle) {
        p.mappings += 1;
    }
    Ok(())
}

fn unmap(d: &mut Driver, ptr: u64, size: usize) -> Result<(), CUresult> {
    let size = size as u64;
    let (base, hit) = d.vmm.reserved_mappings(ptr, size)?;
    let end = ptr + size;
    if size == 0 || hit.is_empty() || hit.iter().any(|(va, m)| *va < ptr || va + m.size > end) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    for (va, m) in &hit {
        d.vmm.mappings.remove(va);
        if let Some(p) = d.vmm.physical.get_mut(&m.handle) {
            p.mappings -= 1;
        }
    }
    // Unregister before the pages go away.
    let synced = sync_registration(d, base);
    for (va, m) in hit {
        // SAFETY: the mapping lies in our reservation; it returns to the
        // reservation's inaccessible state.
        unsafe { map_none(va, m.size, true) };
        collect(d, m.handle);
    }
    synced
}

fn set_access(
    d: &mut Driver,
    ptr: u64,
    size: usize,
    descs: &[MemAccessDesc],
) -> Result<(), CUresult> {
    let size = size as u64;
    let (base, hit) = d.vmm.reserved_mappings(ptr, size)?;
    // The whole range must be mapped.
    let mut covered = ptr;
    for (va, m) in &hit {
        if *va > covered {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        covered = covered.max(va + m.size);
    }
    if size == 0 || covered < ptr + size {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut grant = 0u64;
    let mut revoke = 0u64;
    for desc in descs {
        check_location(desc.location)?;
        let bit = match desc.location.type_ {
            CU_MEM_LOCATION_TYPE_DEVICE => 1u64 << desc.location.id,
            // The host always reaches these pages through their address.
            _ => 0,
        };
        match desc.flags {
            CU_MEM_ACCESS_FLAGS_PROT_NONE => revoke |= bit,
            CU_MEM_ACCESS_FLAGS_PROT_READ | CU_MEM_ACCESS_FLAGS_PROT_READWRITE => grant |= bit,
            _ => return Err(CUDA_ERROR_INVALID_VALUE),
        }
    }
    for (va, _) in hit {
        if let Some(m) = d.vmm.mappings.get_mut(&va) {
            m.access = (m.access & !revoke) | grant;
        }
    }
    sync_registration(d, base)
}

fn physical(d: &Driver, handle: u64) -> Result<&Physical, CUresult> {
    d.vmm
        .physical
        .get(&handle)
        .filter(|p| p.handle_refs > 0)
        .ok_or(CUDA_ERROR_INVALID_VALUE)
}

/// The memfd name for memory located at `location`; imports read it back.
fn memfd_name(location: MemLocation) -> String {
    format!("prlx-vmm:{}:{}", location.type_, location.id)
}

/// The location a memfd's name records (device 0 when it is not ours).
fn location_of_fd(fd: c_int) -> MemLocation {
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
    let text = link.to_string_lossy();
    let parsed = text
        .strip_prefix("/memfd:prlx-vmm:")
        .and_then(|rest| {
            let rest = rest.split(' ').next()?;
            let (t, id) = rest.split_once(':')?;
            Some(MemLocation {
                type_: t.parse().ok()?,
                id: id.parse().ok()?,
            })
        })
        .filter(|l| check_location(*l).is_ok());
    parsed.unwrap_or(MemLocation {
        type_: CU_MEM_LOCATION_TYPE_DEVICE,
        id: 0,
    })
}

exports! {
    fn cuMemGetAllocationGranularity(granularity: *mut usize, prop: *const MemAllocationProp, option: c_int) {
        with_driver(|_| {
            non_null(granularity)?;
            non_null(prop)?;
            // SAFETY: non-null, the caller's property structure.
            let prop = unsafe { &*prop };
            check_location(prop.location)?;
            if !matches!(option, CU_MEM_ALLOC_GRANULARITY_MINIMUM | CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: `cuMemGetAllocationGranularity`'s caller passes `granularity` as cuda.h specifies:
            // NULL (refused by `write_out`) or valid for writing a `usize`.
            unsafe { write_out(granularity, GRANULARITY as usize) }
        })
    }

    fn cuMemCreate(handle: *mut u64, size: usize, prop: *const MemAllocationProp, flags: u64) {
        with_driver(|d| {
            non_null(handle)?;
            non_null(prop)?;
            // SAFETY: non-null, the caller's property structure.
            let prop = unsafe { *prop };
            check_prop(&prop)?;
            if flags != 0 || size == 0 || size as u64 % GRANULARITY != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let fd = memfd(&memfd_name(prop.location), size as u64)?;
            let h = new_physical(d, fd, size as u64, prop);
            // SAFETY: `cuMemCreate`'s caller passes `handle` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `u64`.
            unsafe { write_out(handle, h) }
        })
    }

    /// The memory itself goes when its last mapping does.
    fn cuMemRelease(handle: u64) {
        with_driver(|d| {
            let p = d.vmm.physical.get_mut(&handle).filter(|p| p.handle_refs > 0);
            let p = p.ok_or(CUDA_ERROR_INVALID_VALUE)?;
            p.handle_refs -= 1;
            collect(d, handle);
            Ok(())
        })
    }

    fn cuMemAddressReserve(ptr: *mut CUdeviceptr, size: usize, alignment: usize, addr: CUdeviceptr, flags: u64) {
        with_driver(|d| {
            non_null(ptr)?;
            if flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let base = reserve(d, size, alignment, addr)?;
            // SAFETY: `cuMemAddressReserve`'s caller passes `ptr` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdeviceptr`.
            unsafe { write_out(ptr, base) }
        })
    }

    fn cuMemAddressFree(ptr: CUdeviceptr, size: usize) {
        with_driver(|d| {
            let r = d.vmm.reservations.get(&ptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let whole = (size as u64).checked_next_multiple_of(GRANULARITY);
            if whole != Some(r.size) || !d.vmm.mappings_in(ptr, r.size).is_empty() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let len = r.size;
            d.vmm.reservations.remove(&ptr);
            // SAFETY: our own reservation, now unused.
            unsafe { libc::munmap(ptr as *mut c_void, len as usize) };
            Ok(())
        })
    }

    fn cuMemMap(ptr: CUdeviceptr, size: usize, offset: usize, handle: u64, flags: u64) {
        with_driver(|d| {
            if flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            map(d, ptr, size, offset, handle)
        })
    }

    fn cuMemUnmap(ptr: CUdeviceptr, size: usize) {
        with_driver(|d| unmap(d, ptr, size))
    }

    fn cuMemSetAccess(ptr: CUdeviceptr, size: usize, desc: *const MemAccessDesc, count: usize) {
        with_driver(|d| {
            non_null(desc)?;
            if count == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: the caller passes `count` descriptors.
            let descs = unsafe { std::slice::from_raw_parts(desc, count) };
            set_access(d, ptr, size, descs)
        })
    }

    fn cuMemGetAccess(flags: *mut u64, location: *const MemLocation, ptr: CUdeviceptr) {
        with_driver(|d| {
            non_null(flags)?;
            non_null(location)?;
            // SAFETY: non-null, the caller's location.
            let location = unsafe { *location };
            check_location(location)?;
            let (va, m) = d.vmm.mappings_in(ptr, 1).into_iter().next().ok_or(CUDA_ERROR_INVALID_VALUE)?;
            if ptr < va {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let granted = match location.type_ {
                CU_MEM_LOCATION_TYPE_DEVICE => m.access & (1u64 << location.id) != 0,
                _ => true,
            };
            let v = if granted { CU_MEM_ACCESS_FLAGS_PROT_READWRITE } else { CU_MEM_ACCESS_FLAGS_PROT_NONE };
            // SAFETY: `cuMemGetAccess`'s caller passes `flags` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `u64`.
            unsafe { write_out(flags, v as u64) }
        })
    }

    fn cuMemGetAllocationPropertiesFromHandle(prop: *mut MemAllocationProp, handle: u64) {
        with_driver(|d| {
            non_null(prop)?;
            let p = physical(d, handle)?.prop;
            // SAFETY: `cuMemGetAllocationPropertiesFromHandle`'s caller passes `prop` as cuda.h specifies:
            // NULL (refused by `write_out`) or valid for writing a `MemAllocationProp`.
            unsafe { write_out(prop, p) }
        })
    }

    fn cuMemRetainAllocationHandle(handle: *mut u64, addr: *mut c_void) {
        with_driver(|d| {
            non_null(handle)?;
            let addr = addr as u64;
            let (va, m) = d.vmm.mappings_in(addr, 1).into_iter().next().ok_or(CUDA_ERROR_INVALID_VALUE)?;
            if addr < va {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let p = d.vmm.physical.get_mut(&m.handle).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            p.handle_refs += 1;
            // SAFETY: `cuMemRetainAllocationHandle`'s caller passes `handle` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `u64`.
            unsafe { write_out(handle, m.handle) }
        })
    }

    /// POSIX file descriptors only: a new descriptor of the allocation's
    /// memfd, which another process may receive (`SCM_RIGHTS`) and import.
    fn cuMemExportToShareableHandle(shareable_handle: *mut c_void, handle: u64, handle_type: c_int, flags: u64) {
        with_driver(|d| {
            non_null(shareable_handle)?;
            if flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let p = physical(d, handle)?;
            if handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
                return Err(if handle_type & !0xf == 0 && handle_type != 0 {
                    CUDA_ERROR_NOT_SUPPORTED
                } else {
                    CUDA_ERROR_INVALID_VALUE
                });
            }
            if p.prop.requested_handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: duplicates our own descriptor; the copy is the caller's.
            let fd = unsafe { libc::fcntl(p.memfd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
            if fd < 0 {
                return Err(CUDA_ERROR_OUT_OF_MEMORY);
            }
            // SAFETY: `cuMemExportToShareableHandle`'s caller passes `shareable_handle` as cuda.h
            // specifies: NULL (refused by `write_out`) or valid for writing a `c_int`.
            unsafe { write_out(shareable_handle as *mut c_int, fd) }
        })
    }

    /// `os_handle` is the descriptor itself (cast to a pointer), as the
    /// driver takes POSIX handles. The caller keeps its descriptor.
    fn cuMemImportFromShareableHandle(handle: *mut u64, os_handle: *mut c_void, sh_handle_type: c_int) {
        with_driver(|d| {
            non_null(handle)?;
            if sh_handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let fd = os_handle as usize as c_int;
            let size = fd_size(fd).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            if size == 0 || size % GRANULARITY != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: duplicating a descriptor the caller owns.
            let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
            if dup < 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: `dup` is a fresh descriptor nobody else owns.
            let owned = unsafe { OwnedFd::from_raw_fd(dup) };
            let prop = MemAllocationProp {
                type_: CU_MEM_ALLOCATION_TYPE_PINNED,
                requested_handle_types: CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                location: location_of_fd(dup),
                win32_handle_meta_data: std::ptr::null_mut(),
                compression_type: 0,
                gpu_direct_rdma_capable: 0,
                usage: 0,
                reserved: [0; 4],
            };
            let h = new_physical(d, owned, size, prop);
            // SAFETY: `cuMemImportFromShareableHandle`'s caller passes `handle` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `u64`.
            unsafe { write_out(handle, h) }
        })
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuMemGetAllocationGranularity": 10020 => cuMemGetAllocationGranularity;
        "cuMemCreate": 10020 => cuMemCreate;
        "cuMemRelease": 10020 => cuMemRelease;
        "cuMemAddressReserve": 10020 => cuMemAddressReserve;
        "cuMemAddressFree": 10020 => cuMemAddressFree;
        "cuMemMap": 10020 => cuMemMap;
        "cuMemUnmap": 10020 => cuMemUnmap;
        "cuMemSetAccess": 10020 => cuMemSetAccess;
        "cuMemGetAccess": 10020 => cuMemGetAccess;
        "cuMemGetAllocationPropertiesFromHandle": 10020 => cuMemGetAllocationPropertiesFromHandle;
        "cuMemRetainAllocationHandle": 11000 => cuMemRetainAllocationHandle;
        "cuMemExportToShareableHandle": 10020 => cuMemExportToShareableHandle;
        "cuMemImportFromShareableHandle": 10020 => cuMemImportFromShareableHandle;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_layouts_match_cuda_h() {
        assert_eq!(std::mem::size_of::<MemAllocationProp>(), 32);
        assert_eq!(std::mem::size_of::<MemAccessDesc>(), 12);
        assert_eq!(std::mem::size_of::<MemLocation>(), 8);
    }
}
