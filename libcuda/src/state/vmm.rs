//! The driver's virtual-memory bookkeeping (`cuMemAddressReserve`,
//! `cuMemCreate`, `cuMemMap`, ...; the entry points are `api::vmm`): the
//! ABI structs, reservations, physical allocations (memfds) and mappings,
//! and the memfd and mapping helpers IPC and pools share.

use crate::cu::*;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::AtomicU64;

/// `cuMemGetAllocationGranularity`, minimum and recommended: 2 MiB, as on
/// NVIDIA GPUs (memfd pages cost nothing until touched).
pub const GRANULARITY: u64 = 2 << 20;

pub const CU_MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
pub const CU_MEM_HANDLE_TYPE_NONE: c_int = 0;
pub const CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: c_int = 1;
pub const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;
pub const CU_MEM_LOCATION_TYPE_HOST: c_int = 2;
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA: c_int = 3;
pub const CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: c_int = 4;
pub const CU_MEM_ACCESS_FLAGS_PROT_NONE: c_int = 0;
pub const CU_MEM_ACCESS_FLAGS_PROT_READ: c_int = 1;
pub const CU_MEM_ACCESS_FLAGS_PROT_READWRITE: c_int = 3;
pub const CU_MEM_ALLOC_GRANULARITY_MINIMUM: c_int = 0;
pub const CU_MEM_ALLOC_GRANULARITY_RECOMMENDED: c_int = 1;

/// `CUmemLocation`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemLocation {
    pub type_: c_int,
    pub id: c_int,
}

/// `CUmemAllocationProp`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemAllocationProp {
    pub type_: c_int,
    pub requested_handle_types: c_int,
    pub location: MemLocation,
    pub win32_handle_meta_data: *mut c_void,
    pub compression_type: u8,
    pub gpu_direct_rdma_capable: u8,
    pub usage: u16,
    pub reserved: [u8; 4],
}

/// `CUmemAccessDesc`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MemAccessDesc {
    pub location: MemLocation,
    pub flags: c_int,
}

/// A physical allocation (`CUmemGenericAllocationHandle`).
#[derive(Debug)]
pub struct Physical {
    pub memfd: OwnedFd,
    pub size: u64,
    pub prop: MemAllocationProp,
    /// Handles held: one from `cuMemCreate`/import, one per
    /// `cuMemRetainAllocationHandle`; each `cuMemRelease` drops one.
    pub handle_refs: u32,
    /// Live mappings; the allocation outlives its last handle while mapped.
    pub mappings: u32,
}

/// One `cuMemMap`.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    pub size: u64,
    pub handle: u64,
    /// Devices granted access by `cuMemSetAccess` (bit = ordinal).
    pub access: u64,
}

/// One `cuMemAddressReserve`.
#[derive(Debug, Default)]
pub struct Reservation {
    pub size: u64,
    /// Ranges registered with the emulator: (start, length, device mask).
    pub runs: Vec<(u64, u64, u64)>,
}

/// The driver's virtual-memory bookkeeping.
#[derive(Debug, Default)]
pub struct Vmm {
    pub reservations: BTreeMap<u64, Reservation>,
    pub physical: BTreeMap<u64, Physical>,
    pub mappings: BTreeMap<u64, Mapping>,
    pub next_handle: u64,
}

// SAFETY: the raw pointer inside (`win32HandleMetaData`, never dereferenced)
// is only stored and handed back; the driver lock serializes access.
unsafe impl Send for Vmm {}

impl Vmm {
    /// Starts of registered runs device `dev` has no access to.
    pub fn unreachable_runs(&self, dev: CUdevice) -> Vec<u64> {
        self.reservations
            .values()
            .flat_map(|r| &r.runs)
            .filter(|(_, _, mask)| mask & (1u64 << dev) == 0)
            .map(|(start, _, _)| *start)
            .collect()
    }

    /// Whether `addr` lies in a reservation (its memory is not managed).
    pub fn is_reserved(&self, addr: u64) -> bool {
        self.reservation_of(addr, 1).is_some()
    }

    /// The reservation holding `[addr, addr + len)`.
    pub fn reservation_of(&self, addr: u64, len: u64) -> Option<u64> {
        let (&base, r) = self.reservations.range(..=addr).next_back()?;
        let end = addr.checked_add(len)?;
        (end <= base + r.size).then_some(base)
    }

    /// The reservation holding `[addr, addr + len)` (its base; the range
    /// must lie in one) and the mappings that meet the range.
    pub fn reserved_mappings(
        &self,
        addr: u64,
        len: u64,
    ) -> Result<(u64, Vec<(u64, Mapping)>), CUresult> {
        let base = self
            .reservation_of(addr, len)
            .ok_or(CUDA_ERROR_INVALID_VALUE)?;
        Ok((base, self.mappings_in(addr, len)))
    }

    /// Mappings intersecting `[addr, addr + len)`, in address order.
    pub fn mappings_in(&self, addr: u64, len: u64) -> Vec<(u64, Mapping)> {
        let end = addr.saturating_add(len);
        let first = self
            .mappings
            .range(..=addr)
            .next_back()
            .filter(|(va, m)| **va + m.size > addr)
            .map(|(va, _)| *va)
            .unwrap_or(addr);
        self.mappings
            .range(first..end)
            .map(|(va, m)| (*va, *m))
            .collect()
    }
}

/// Where reservations are asked to go: clear of the emulator's own device
/// addresses and of the managed-memory hints.
pub static NEXT_RESERVE_HINT: AtomicU64 = AtomicU64::new(0x0000_6000_0000_0000);

/// A new memfd of `len` bytes (zero-filled, pages allocated on first
/// touch); its name records the owning device, for imports.
pub fn memfd(name: &str, len: u64) -> Result<OwnedFd, CUresult> {
    let cname = std::ffi::CString::new(name).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    // SAFETY: a valid C string; flags are constants.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: ftruncate on our own descriptor.
    if unsafe { libc::ftruncate(owned.as_raw_fd(), len as libc::off_t) } != 0 {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(owned)
}

/// The size of the file behind `fd`.
pub fn fd_size(fd: c_int) -> Option<u64> {
    // SAFETY: fstat into a zeroed struct we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; a bad descriptor only makes fstat fail.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st.st_size as u64)
}

/// Maps `len` bytes of `fd` shared and read-write at `addr` (replacing what
/// is there when `fixed`, else as a hint); returns the address.
///
/// # Safety
/// With `fixed`, `[addr, addr + len)` must be the caller's own mapping.
pub unsafe fn map_shared(addr: u64, len: u64, fd: c_int, fixed: bool) -> Result<u64, CUresult> {
    let flags = libc::MAP_SHARED | if fixed { libc::MAP_FIXED } else { 0 };
    // SAFETY: forwarded contract; without MAP_FIXED the kernel picks a free
    // range.
    let p = unsafe {
        libc::mmap(
            addr as *mut c_void,
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok(p as u64)
}

/// Replaces `[addr, addr + len)` with inaccessible, unbacked memory (a
/// reservation's state).
///
/// # Safety
/// The range must be the caller's own mapping.
pub unsafe fn map_none(addr: u64, len: u64, fixed: bool) -> *mut c_void {
    let flags = libc::MAP_PRIVATE
        | libc::MAP_ANONYMOUS
        | libc::MAP_NORESERVE
        | if fixed { libc::MAP_FIXED } else { 0 };
    // SAFETY: forwarded contract.
    unsafe {
        libc::mmap(
            addr as *mut c_void,
            len as usize,
            libc::PROT_NONE,
            flags,
            -1,
            0,
        )
    }
}
