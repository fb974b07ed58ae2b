//! Device and page-locked host memory, copies and memsets.
//!
//! Copies and memsets run synchronously; the `Async` forms check their
//! stream and then do the same. The legacy (`_v1`, 32-bit) entry points exist
//! for ABI completeness, but emulated device addresses do not fit in 32 bits,
//! so those that must return a device pointer fail with
//! `CUDA_ERROR_NOT_SUPPORTED`.
//!
//! Managed memory and page-locked host memory are host mappings whose host
//! address is also their device address: the emulator runs in this process,
//! so the driver registers the mapping with the emulated device's memory and
//! kernels read and write the very bytes the host sees (bounds-checked like
//! any allocation). `cuMemPrefetchAsync` and `cuMemAdvise` have nothing to
//! move or tune; they record, per page, what `cuMemRangeGetAttribute(s)`
//! reports.

use crate::clock;
use crate::cu::*;
use crate::driver::{Driver, HostAllocation, PageAdvice, mem_error, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_optional, write_out};
use crate::graph::capture;
use std::alloc::Layout;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// Page-locked host allocations are page aligned, as the real driver's are.
const HOST_ALIGN: usize = 4096;
/// `cuMemAllocPitch` rounds rows up to this.
const PITCH_ALIGN: usize = 512;
/// `CU_MEMHOSTALLOC_DEVICEMAP` / `CU_MEMHOSTREGISTER_DEVICEMAP`.
const DEVICEMAP: u32 = 0x2;
const CU_MEM_ATTACH_GLOBAL: c_uint = 0x1;
const CU_MEM_ATTACH_HOST: c_uint = 0x2;
const CU_MEM_ATTACH_SINGLE: c_uint = 0x4;
/// `CU_DEVICE_CPU`: the host, as a prefetch or advice target.
const CU_DEVICE_CPU: CUdevice = -1;
const CU_MEM_LOCATION_TYPE_DEVICE: c_int = 1;
const CU_MEM_LOCATION_TYPE_HOST: c_int = 2;
const CU_MEM_LOCATION_TYPE_HOST_NUMA: c_int = 3;
const CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: c_int = 4;
/// `CU_MEM_ADVISE_SET_READ_MOSTLY` ..= `CU_MEM_ADVISE_UNSET_ACCESSED_BY`.
const ADVICE_RANGE: std::ops::RangeInclusive<c_int> = 1..=6;

/// `CUmemLocation`, passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUmemLocation {
    pub type_: c_int,
    pub id: c_int,
}

/// Where host-backed mappings are asked to go (a hint the kernel honours
/// when the range is free): far from the emulator's own device addresses
/// (`prlx_emulator::memory::GLOBAL_BASE`, 0x7f00...) and the generic windows
/// (0x1000... to 0x3000...), so the two never collide in practice; the
/// emulator still refuses any overlap.
static NEXT_HOST_HINT: AtomicU64 = AtomicU64::new(0x0000_4000_0000_0000);
/// Unmapped gap between consecutive hints.
const HINT_GAP: u64 = 1 << 20;

pub(crate) fn free(d: &mut Driver, dptr: u64) -> Result<(), CUresult> {
    // Graph memory keeps its reservation; it only stops being allocated.
    if let Some(r) = capture::free_graph_memory(dptr) {
        return r;
    }
    if d.allocations.remove(&dptr).is_none() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    d.device.mem_free(dptr).map_err(mem_error)?;
    d.pools.forget(dptr);
    d.ipc.on_free(dptr);
    d.managed_advice.remove(&dptr);
    if let Some(len) = d.managed.remove(&dptr) {
        // SAFETY: mapped by `map_host` with this length; the emulator no
        // longer refers to it.
        unsafe { unmap_host(dptr as *mut u8, len) };
    }
    Ok(())
}

/// Maps `bytes` of zeroed, page-aligned host memory; returns it and the
/// mapped length.
fn map_host(bytes: usize) -> Result<(*mut u8, usize), CUresult> {
    let len = bytes
        .checked_next_multiple_of(HOST_ALIGN)
        .ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
    let hint = NEXT_HOST_HINT.fetch_add(len as u64 + HINT_GAP, Ordering::Relaxed);
    // SAFETY: an anonymous private mapping; the hint is only a hint
    // (no MAP_FIXED), so nothing existing is replaced.
    let p = unsafe {
        libc::mmap(
            hint as *mut c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    Ok((p as *mut u8, len))
}

/// # Safety
/// `p`/`len` must come from [`map_host`], and nothing may use them after.
unsafe fn unmap_host(p: *mut u8, len: usize) {
    // SAFETY: forwarded contract.
    unsafe { libc::munmap(p as *mut c_void, len) };
}

/// `cuMemAllocManaged`: a host mapping registered with the device at its own
/// address, so the one pointer works on both sides.
fn alloc_managed(d: &mut Driver, ctx: usize, bytes: usize, flags: c_uint) -> Result<u64, CUresult> {
    if bytes == 0 || !matches!(flags, CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (p, len) = map_host(bytes)?;
    // SAFETY: the mapping stays until `free` unregisters it from the device.
    if let Err(e) = unsafe { d.device.mem_register_host(p, bytes as u64) } {
        // SAFETY: just mapped, never shared.
        unsafe { unmap_host(p, len) };
        eprintln!("prlx libcuda: cuMemAllocManaged: {e}");
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    d.allocations.insert(p as u64, ctx);
    d.managed.insert(p as u64, len);
    Ok(p as u64)
}

/// The managed allocation holding `[ptr, ptr + count)`, for prefetch and
/// advice, which apply to managed memory only: its base and size.
fn check_managed_range(d: &Driver, ptr: u64, count: usize) -> Result<(u64, u64), CUresult> {
    let (&base, &len) = d
        .managed
        .range(..=ptr)
        .next_back()
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let (_, size) = d.device.mem_range(base).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let end = ptr
        .checked_add(count as u64)
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if end <= base + size.min(len as u64) {
        Ok((base, size))
    } else {
        Err(CUDA_ERROR_INVALID_VALUE)
    }
}

/// The advice of the pages `[ptr, ptr + count)` touches, created on first use.
fn advice_pages(d: &mut Driver, ptr: u64, count: usize) -> Result<&mut [PageAdvice], CUresult> {
    let (base, size) = check_managed_range(d, ptr, count)?;
    let pages = d
        .managed_advice
        .entry(base)
        .or_insert_with(|| vec![PageAdvice::default(); size.div_ceil(HOST_ALIGN as u64) as usize]);
    if count == 0 {
        return Ok(&mut pages[..0]);
    }
    let first = ((ptr - base) / HOST_ALIGN as u64) as usize;
    let last = ((ptr + count as u64 - 1 - base) / HOST_ALIGN as u64) as usize;
    Ok(&mut pages[first..=last])
}

/// The single value all of `values` share, or `CU_DEVICE_INVALID`.
fn common(mut values: impl Iterator<Item = i32>) -> i32 {
    let Some(first) = values.next() else {
        return -2;
    };
    if values.all(|v| v == first) {
        first
    } else {
        -2
    }
}

/// One `CUmem_range_attribute` of `[ptr, ptr + count)` as the ints the
/// caller's `data_size` bytes receive.
fn range_attribute(
    d: &mut Driver,
    attribute: c_int,
    data_size: usize,
    ptr: u64,
    count: usize,
) -> Result<Vec<i32>, CUresult> {
    if count == 0 || data_size == 0 || data_size % 4 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let pages = advice_pages(d, ptr, count)?;
    let location_type = |id: i32| match id {
        -2 => 0,
        -1 => CU_MEM_LOCATION_TYPE_HOST,
        _ => CU_MEM_LOCATION_TYPE_DEVICE,
    };
    let location_id = |id: i32| if id >= 0 { id } else { 0 };
    let scalar = |v: i32| {
        if data_size == 4 {
            Ok(vec![v])
        } else {
            Err(CUDA_ERROR_INVALID_VALUE)
        }
    };
    let preferred = common(pages.iter().map(|p| p.preferred));
    let prefetched = common(pages.iter().map(|p| p.last_prefetch));
    match attribute {
        // CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY
        1 => scalar(pages.iter().all(|p| p.read_mostly).into()),
        // PREFERRED_LOCATION
        2 => scalar(preferred),
        // ACCESSED_BY: the devices advised for the whole range, then
        // CU_DEVICE_INVALID.
        3 => {
            let all = pages.iter().fold(0b11, |acc, p| acc & p.accessed_by);
            let mut out: Vec<i32> = [(1u8, 0), (2, CU_DEVICE_CPU)]
                .iter()
                .filter(|(bit, _)| all & bit != 0)
                .map(|&(_, dev)| dev)
                .collect();
            out.resize(data_size / 4, -2);
            out.truncate(data_size / 4);
            Ok(out)
        }
        // LAST_PREFETCH_LOCATION
        4 => scalar(prefetched),
        // PREFERRED_LOCATION_TYPE / _ID, LAST_PREFETCH_LOCATION_TYPE / _ID
        5 => scalar(location_type(preferred)),
        6 => scalar(location_id(preferred)),
        7 => scalar(location_type(prefetched)),
        8 => scalar(location_id(prefetched)),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// # Safety
/// `data` must be writable for `values.len()` ints.
unsafe fn write_ints(data: *mut c_void, values: &[i32]) {
    // SAFETY: forwarded contract.
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), data as *mut i32, values.len()) };
}

/// A prefetch or advice target given as a device ordinal.
fn check_target_device(device: CUdevice) -> Result<(), CUresult> {
    match device {
        0 | CU_DEVICE_CPU => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_DEVICE),
    }
}

/// A prefetch or advice target given as a `CUmemLocation`.
fn check_location(location: CUmemLocation) -> Result<(), CUresult> {
    match location.type_ {
        CU_MEM_LOCATION_TYPE_DEVICE if location.id == 0 => Ok(()),
        CU_MEM_LOCATION_TYPE_DEVICE => Err(CUDA_ERROR_INVALID_DEVICE),
        CU_MEM_LOCATION_TYPE_HOST
        | CU_MEM_LOCATION_TYPE_HOST_NUMA
        | CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT => Ok(()),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn prefetch(
    d: &mut Driver,
    ptr: u64,
    count: usize,
    target: CUdevice,
    stream: CUstream,
) -> Result<(), CUresult> {
    d.check_stream(stream)?;
    for page in advice_pages(d, ptr, count)? {
        page.last_prefetch = target;
    }
    Ok(())
}

fn advise(
    d: &mut Driver,
    ptr: u64,
    count: usize,
    advice: c_int,
    target: CUdevice,
) -> Result<(), CUresult> {
    if !ADVICE_RANGE.contains(&advice) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let bit = if target == CU_DEVICE_CPU { 2 } else { 1 };
    for page in advice_pages(d, ptr, count)? {
        match advice {
            1 => page.read_mostly = true,
            2 => page.read_mostly = false,
            3 => page.preferred = target,
            4 => page.preferred = -2,
            5 => page.accessed_by |= bit,
            _ => page.accessed_by &= !bit,
        }
    }
    Ok(())
}

/// A `CUmemLocation` as a device ordinal or `CU_DEVICE_CPU`.
fn location_device(location: CUmemLocation) -> Result<CUdevice, CUresult> {
    check_location(location)?;
    Ok(if location.type_ == CU_MEM_LOCATION_TYPE_DEVICE {
        location.id
    } else {
        CU_DEVICE_CPU
    })
}

/// The device pointer of mapped host memory at `p`: the same address.
fn host_device_pointer(d: &Driver, p: *mut c_void, flags: c_uint) -> Result<u64, CUresult> {
    non_null(p)?;
    if flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (&base, a) = d
        .host_allocations
        .range(..=p as usize)
        .next_back()
        .ok_or(CUDA_ERROR_INVALID_VALUE)?;
    if p as usize - base >= a.layout.size() || !a.mapped {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(p as u64)
}

fn host_to_device(d: &mut Driver, dst: u64, src: *const c_void, n: usize) -> Result<(), CUresult> {
    if n == 0 {
        return Ok(());
    }
    non_null(src)?;
    // SAFETY: the caller's host buffer holds `n` bytes.
    let data = unsafe { std::slice::from_raw_parts(src as *const u8, n) };
    d.device.mem_write(dst, data).map_err(mem_error)?;
    d.clock_ns += clock::host_copy_ns(n as u64);
    Ok(())
}

fn device_to_host(d: &mut Driver, dst: *mut c_void, src: u64, n: usize) -> Result<(), CUresult> {
    if n == 0 {
        return Ok(());
    }
    non_null(dst)?;
    // SAFETY: the caller's host buffer holds `n` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, n) };
    d.device.mem_read(src, out).map_err(mem_error)?;
    d.clock_ns += clock::host_copy_ns(n as u64);
    Ok(())
}

fn device_to_device(d: &mut Driver, dst: u64, src: u64, n: usize) -> Result<(), CUresult> {
    if n == 0 {
        return Ok(());
    }
    d.device.mem_copy(dst, src, n as u64).map_err(mem_error)?;
    d.clock_ns += clock::device_copy_ns(n as u64);
    Ok(())
}

/// `cuMemcpy`: with unified addressing the direction follows from which
/// pointers lie inside device allocations.
fn unified_copy(d: &mut Driver, dst: u64, src: u64, n: usize) -> Result<(), CUresult> {
    let dst_dev = d.device.mem_range(dst).is_some();
    let src_dev = d.device.mem_range(src).is_some();
    match (dst_dev, src_dev) {
        (true, true) => device_to_device(d, dst, src, n),
        (true, false) => host_to_device(d, dst, src as *const c_void, n),
        (false, true) => device_to_host(d, dst as *mut c_void, src, n),
        (false, false) => {
            if n > 0 {
                non_null(dst as *const c_void)?;
                non_null(src as *const c_void)?;
                // SAFETY: both host buffers hold `n` bytes; memmove semantics.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
            }
            Ok(())
        }
    }
}

fn memset(d: &mut Driver, dst: u64, pattern: &[u8], count: usize) -> Result<(), CUresult> {
    // 16- and 32-bit memsets need destinations aligned to their element.
    if dst % pattern.len() as u64 != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if count == 0 {
        return Ok(());
    }
    d.device
        .mem_set(dst, pattern, count as u64)
        .map_err(mem_error)?;
    d.clock_ns += clock::device_copy_ns((count * pattern.len()) as u64);
    Ok(())
}

fn host_alloc(
    d: &mut Driver,
    pp: *mut *mut c_void,
    bytes: usize,
    flags: u32,
) -> Result<(), CUresult> {
    non_null(pp)?;
    if bytes == 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let layout =
        Layout::from_size_align(bytes, HOST_ALIGN).map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    let (p, len) = map_host(bytes)?;
    // Every page-locked allocation is mapped, as under unified addressing:
    // its host pointer is also its device pointer.
    // SAFETY: the mapping stays until `cuMemFreeHost` unregisters it.
    if let Err(e) = unsafe { d.device.mem_register_host(p, bytes as u64) } {
        // SAFETY: just mapped, never shared.
        unsafe { unmap_host(p, len) };
        eprintln!("prlx libcuda: cuMemHostAlloc: {e}");
        return Err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    d.host_allocations.insert(
        p as usize,
        HostAllocation {
            layout,
            flags,
            registered: false,
            mapped: true,
        },
    );
    // SAFETY: `pp` is NULL or valid by `host_alloc`'s `# Safety` contract (writable for a `*mut c_void`);
    // `write_out` refuses NULL.
    unsafe { write_out(pp, p as *mut c_void) }
}

/// A 64-bit device pointer returned through a legacy 32-bit out-parameter.
fn legacy_pointer(dptr: u64) -> Result<CUdeviceptr_v1, CUresult> {
    CUdeviceptr_v1::try_from(dptr).map_err(|_| CUDA_ERROR_NOT_SUPPORTED)
}

exports! {
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) {
        with_context(|d, _| {
            non_null(free)?;
            non_null(total)?;
            let (f, t) = d.device.mem_info();
            // SAFETY: `cuMemGetInfo_v2`'s caller passes `free` and `total` as cuda.h specifies: each valid
            // for writing a `usize` (both checked non-null above).
            unsafe {
                write_out(free, f as usize)?;
                write_out(total, t as usize)
            }
        })
    }

    /// Legacy 32-bit form; the figures saturate at 4 GiB - 1.
    fn cuMemGetInfo(free: *mut c_uint, total: *mut c_uint) {
        with_context(|d, _| {
            non_null(free)?;
            non_null(total)?;
            let (f, t) = d.device.mem_info();
            let clamp = |v: u64| v.min(u64::from(u32::MAX)) as c_uint;
            // SAFETY: `cuMemGetInfo`'s caller passes `free` and `total` as cuda.h specifies: each valid for
            // writing a `c_uint` (both checked non-null above).
            unsafe {
                write_out(free, clamp(f))?;
                write_out(total, clamp(t))
            }
        })
    }

    fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) {
        capture::unsafe_call()?;
        with_context(|d, ctx| {
            non_null(dptr)?;
            let p = d.alloc(ctx, bytesize)?;
            // SAFETY: `cuMemAlloc_v2`'s caller passes `dptr` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdeviceptr`.
            unsafe { write_out(dptr, p) }
        })
    }

    fn cuMemAlloc(dptr: *mut CUdeviceptr_v1, bytesize: c_uint) {
        capture::unsafe_call()?;
        with_context(|d, ctx| {
            non_null(dptr)?;
            let p = d.alloc(ctx, bytesize as usize)?;
            match legacy_pointer(p) {
                // SAFETY: `cuMemAlloc`'s caller passes `dptr` as cuda.h specifies: NULL (refused by
                // `write_out`) or valid for writing a `CUdeviceptr_v1`.
                Ok(small) => unsafe { write_out(dptr, small) },
                Err(e) => {
                    free(d, p)?;
                    Err(e)
                }
            }
        })
    }

    fn cuMemAllocPitch_v2(
        dptr: *mut CUdeviceptr,
        pitch: *mut usize,
        width_in_bytes: usize,
        height: usize,
        element_size_bytes: c_uint,
    ) {
        capture::unsafe_call()?;
        with_context(|d, ctx| {
            non_null(dptr)?;
            non_null(pitch)?;
            if !matches!(element_size_bytes, 4 | 8 | 16) || width_in_bytes == 0 || height == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let row = width_in_bytes.div_ceil(PITCH_ALIGN) * PITCH_ALIGN;
            let total = row.checked_mul(height).ok_or(CUDA_ERROR_OUT_OF_MEMORY)?;
            let p = d.alloc(ctx, total)?;
            // SAFETY: `cuMemAllocPitch_v2`'s caller passes `dptr` (a `CUdeviceptr`) and `pitch` (a `usize`)
            // as cuda.h specifies, both checked non-null by `write_out`.
            unsafe {
                write_out(dptr, p)?;
                write_out(pitch, row)
            }
        })
    }

    /// Freeing NULL succeeds and does nothing, as on NVIDIA's driver:
    /// `cublasCreate` frees a NULL workspace pointer and fails
    /// (CUBLAS_STATUS_NOT_INITIALIZED) when that is an error.
    fn cuMemFree_v2(dptr: CUdeviceptr) {
        if dptr == 0 {
            return with_context(|_, _| Ok(()));
        }
        capture::unsafe_call()?;
        with_context(|d, _| free(d, dptr))
    }

    fn cuMemFree(dptr: CUdeviceptr_v1) {
        if dptr == 0 {
            return with_context(|_, _| Ok(()));
        }
        capture::unsafe_call()?;
        with_context(|d, _| free(d, u64::from(dptr)))
    }

    fn cuMemGetAddressRange_v2(pbase: *mut CUdeviceptr, psize: *mut usize, dptr: CUdeviceptr) {
        with_context(|d, _| {
            let (base, size) = d.device.mem_range(dptr).ok_or(CUDA_ERROR_NOT_FOUND)?;
            // SAFETY: `cuMemGetAddressRange_v2`'s caller passes `pbase` and `psize` as cuda.h specifies:
            // each NULL (skipped by `write_optional`) or writable for its type.
            unsafe {
                write_optional(pbase, base);
                write_optional(psize, size as usize);
            }
            Ok(())
        })
    }

    fn cuMemGetAddressRange(pbase: *mut CUdeviceptr_v1, psize: *mut c_uint, dptr: CUdeviceptr_v1) {
        with_context(|d, _| {
            let (base, size) = d.device.mem_range(u64::from(dptr)).ok_or(CUDA_ERROR_NOT_FOUND)?;
            // SAFETY: `cuMemGetAddressRange`'s caller passes `pbase` and `psize` as cuda.h specifies: each
            // NULL (skipped by `write_optional`) or writable for its type.
            unsafe {
                write_optional(pbase, legacy_pointer(base)?);
                write_optional(psize, size as c_uint);
            }
            Ok(())
        })
    }

    fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) {
        capture::unsafe_call()?;
        with_context(|d, _| host_alloc(d, pp, bytesize, 0))
    }

    fn cuMemAllocHost(pp: *mut *mut c_void, bytesize: c_uint) {
        capture::unsafe_call()?;
        with_context(|d, _| host_alloc(d, pp, bytesize as usize, 0))
    }

    fn cuMemHostAlloc(pp: *mut *mut c_void, bytesize: usize, flags: c_uint) {
        capture::unsafe_call()?;
        with_context(|d, _| {
            if flags & !0x7 != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            host_alloc(d, pp, bytesize, flags)
        })
    }

    /// Page-locks nothing (all host memory is equally usable here) but
    /// records the range, so pointer queries report it as host memory.
    fn cuMemHostRegister_v2(p: *mut c_void, bytesize: usize, flags: c_uint) {
        capture::unsafe_call()?;
        with_context(|d, _| {
            non_null(p)?;
            if bytesize == 0 || flags & !0xF != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let start = p as usize;
            let end = start.checked_add(bytesize).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let overlaps = d
                .host_allocations
                .range(..end)
                .next_back()
                .is_some_and(|(base, a)| base + a.layout.size() > start);
            if overlaps {
                return Err(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
            }
            let layout = Layout::from_size_align(bytesize, 1).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            // Mapped into the device at its own address when it does not
            // collide with device memory; DEVICEMAP insists.
            // SAFETY: the application keeps the range valid until
            // cuMemHostUnregister, which unregisters it from the device.
            let mapped = unsafe { d.device.mem_register_host(p as *mut u8, bytesize as u64) }.is_ok();
            if !mapped && flags & DEVICEMAP != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            d.host_allocations.insert(
                start,
                HostAllocation {
                    layout,
                    flags,
                    registered: true,
                    mapped,
                },
            );
            Ok(())
        })
    }

    fn cuMemHostUnregister(p: *mut c_void) {
        capture::unsafe_call()?;
        with_context(|d, _| {
            match d.host_allocations.get(&(p as usize)) {
                Some(a) if a.registered => {
                    if a.mapped {
                        d.device.mem_free(p as u64).map_err(mem_error)?;
                    }
                    d.host_allocations.remove(&(p as usize));
                    Ok(())
                }
                _ => Err(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED),
            }
        })
    }

    fn cuMemFreeHost(p: *mut c_void) {
        capture::unsafe_call()?;
        with_context(|d, _| {
            if d.host_allocations.get(&(p as usize)).is_none_or(|a| a.registered) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let a = d.host_allocations.remove(&(p as usize)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            if a.mapped {
                d.device.mem_free(p as u64).map_err(mem_error)?;
            }
            let len = a.layout.size().next_multiple_of(HOST_ALIGN);
            // SAFETY: mapped by `host_alloc` with this length; the device no
            // longer refers to it.
            unsafe { unmap_host(p as *mut u8, len) };
            Ok(())
        })
    }

    fn cuMemAllocManaged(dptr: *mut CUdeviceptr, bytesize: usize, flags: c_uint) {
        capture::unsafe_call()?;
        with_context(|d, ctx| {
            non_null(dptr)?;
            let p = alloc_managed(d, ctx, bytesize, flags)?;
            // SAFETY: `cuMemAllocManaged`'s caller passes `dptr` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUdeviceptr`.
            unsafe { write_out(dptr, p) }
        })
    }

    fn cuMemHostGetDevicePointer_v2(pdptr: *mut CUdeviceptr, p: *mut c_void, flags: c_uint) {
        with_context(|d, _| {
            non_null(pdptr)?;
            let dptr = host_device_pointer(d, p, flags)?;
            // SAFETY: `cuMemHostGetDevicePointer_v2`'s caller passes `pdptr` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUdeviceptr`.
            unsafe { write_out(pdptr, dptr) }
        })
    }

    fn cuMemHostGetDevicePointer(pdptr: *mut CUdeviceptr_v1, p: *mut c_void, flags: c_uint) {
        with_context(|d, _| {
            non_null(pdptr)?;
            let dptr = legacy_pointer(host_device_pointer(d, p, flags)?)?;
            // SAFETY: `cuMemHostGetDevicePointer`'s caller passes `pdptr` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUdeviceptr_v1`.
            unsafe { write_out(pdptr, dptr) }
        })
    }

    fn cuMemPrefetchAsync(dev_ptr: CUdeviceptr, count: usize, dst_device: CUdevice, stream: CUstream) {
        with_context(|d, _| {
            check_target_device(dst_device)?;
            prefetch(d, dev_ptr, count, dst_device, stream)
        })
    }

    fn cuMemPrefetchAsync_v2(
        dev_ptr: CUdeviceptr,
        count: usize,
        location: CUmemLocation,
        flags: c_uint,
        stream: CUstream,
    ) {
        with_context(|d, _| {
            if flags != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let target = location_device(location)?;
            prefetch(d, dev_ptr, count, target, stream)
        })
    }

    fn cuMemAdvise(dev_ptr: CUdeviceptr, count: usize, advice: c_int, device: CUdevice) {
        with_context(|d, _| {
            check_target_device(device)?;
            advise(d, dev_ptr, count, advice, device)
        })
    }

    fn cuMemAdvise_v2(dev_ptr: CUdeviceptr, count: usize, advice: c_int, location: CUmemLocation) {
        with_context(|d, _| {
            let target = location_device(location)?;
            advise(d, dev_ptr, count, advice, target)
        })
    }

    /// Managed memory is host- and device-accessible at all times here, so
    /// attaching it to a stream changes no visibility: the call checks its
    /// arguments as the driver does and succeeds.
    fn cuStreamAttachMemAsync(stream: CUstream, dptr: CUdeviceptr, length: usize, flags: c_uint) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if !matches!(flags, CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST | CU_MEM_ATTACH_SINGLE) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // The NULL stream stands for every stream: attaching to it
            // singly is an error.
            if flags == CU_MEM_ATTACH_SINGLE && stream.is_null() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            if d.managed.range(..=dptr).next_back().is_some_and(|(&base, &len)| dptr < base + len as u64) {
                check_managed_range(d, dptr, length)?;
            } else {
                // `__managed__` variables live in module memory.
                let (base, size) = d.device.mem_range(dptr).ok_or(CUDA_ERROR_INVALID_VALUE)?;
                if dptr + length as u64 > base + size {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
            }
            Ok(())
        })
    }

    fn cuMemRangeGetAttribute(
        data: *mut c_void,
        data_size: usize,
        attribute: c_int,
        dev_ptr: CUdeviceptr,
        count: usize,
    ) {
        with_context(|d, _| {
            non_null(data)?;
            let values = range_attribute(d, attribute, data_size, dev_ptr, count)?;
            // SAFETY: `data` holds `data_size` bytes, which range_attribute
            // checked against the attribute's answer.
            unsafe { write_ints(data, &values) };
            Ok(())
        })
    }

    fn cuMemRangeGetAttributes(
        data: *mut *mut c_void,
        data_sizes: *mut usize,
        attributes: *mut c_int,
        num_attributes: usize,
        dev_ptr: CUdeviceptr,
        count: usize,
    ) {
        with_context(|d, _| {
            non_null(data)?;
            non_null(data_sizes)?;
            non_null(attributes)?;
            if num_attributes == 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // All answers first, so an invalid one writes nothing.
            let mut answers = Vec::with_capacity(num_attributes);
            for i in 0..num_attributes {
                // SAFETY: the three arrays hold `num_attributes` entries.
                let (out, size, attr) = unsafe { (*data.add(i), *data_sizes.add(i), *attributes.add(i)) };
                non_null(out)?;
                answers.push((out, range_attribute(d, attr, size, dev_ptr, count)?));
            }
            for (out, values) in answers {
                // SAFETY: each `out` is non-null and holds its `data_sizes`
                // entry, checked against its answer by range_attribute.
                unsafe { write_ints(out, &values) };
            }
            Ok(())
        })
    }

    fn cuMemHostGetFlags(flags: *mut c_uint, p: *mut c_void) {
        with_context(|d, _| {
            non_null(flags)?;
            let a = d.host_allocations.get(&(p as usize)).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuMemHostGetFlags`'s caller passes `flags` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `c_uint`.
            unsafe { write_out(flags, a.flags) }
        })
    }

    fn cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize) {
        capture::sync_call()?;
        with_context(|d, _| unified_copy(d, dst, src, byte_count))
    }

    fn cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_unified(d, stream, dst, src, byte_count) {
                return r;
            }
            unified_copy(d, dst, src, byte_count)
        })
    }

    fn cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, byte_count: usize) {
        capture::sync_call()?;
        with_context(|d, _| host_to_device(d, dst, src, byte_count))
    }

    fn cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, byte_count: usize) {
        capture::sync_call()?;
        with_context(|d, _| device_to_host(d, dst, src, byte_count))
    }

    fn cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize) {
        capture::sync_call()?;
        with_context(|d, _| device_to_device(d, dst, src, byte_count))
    }

    fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, byte_count: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_1d(d, stream, dst, false, src as u64, true, byte_count) {
                return r;
            }
            host_to_device(d, dst, src, byte_count)
        })
    }

    fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, byte_count: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_1d(d, stream, dst as u64, true, src, false, byte_count) {
                return r;
            }
            device_to_host(d, dst, src, byte_count)
        })
    }

    fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_1d(d, stream, dst, false, src, false, byte_count) {
                return r;
            }
            device_to_device(d, dst, src, byte_count)
        })
    }

    fn cuMemcpyHtoD(dst: CUdeviceptr_v1, src: *const c_void, byte_count: c_uint) {
        capture::sync_call()?;
        with_context(|d, _| host_to_device(d, u64::from(dst), src, byte_count as usize))
    }

    fn cuMemcpyDtoH(dst: *mut c_void, src: CUdeviceptr_v1, byte_count: c_uint) {
        capture::sync_call()?;
        with_context(|d, _| device_to_host(d, dst, u64::from(src), byte_count as usize))
    }

    fn cuMemcpyDtoD(dst: CUdeviceptr_v1, src: CUdeviceptr_v1, byte_count: c_uint) {
        capture::sync_call()?;
        with_context(|d, _| device_to_device(d, u64::from(dst), u64::from(src), byte_count as usize))
    }

    fn cuMemcpyHtoDAsync(dst: CUdeviceptr_v1, src: *const c_void, byte_count: c_uint, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_1d(d, stream, u64::from(dst), false, src as u64, true, byte_count as usize) {
                return r;
            }
            host_to_device(d, u64::from(dst), src, byte_count as usize)
        })
    }

    fn cuMemcpyDtoHAsync(dst: *mut c_void, src: CUdeviceptr_v1, byte_count: c_uint, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_1d(d, stream, dst as u64, true, u64::from(src), false, byte_count as usize) {
                return r;
            }
            device_to_host(d, dst, u64::from(src), byte_count as usize)
        })
    }

    fn cuMemcpyDtoDAsync(dst: CUdeviceptr_v1, src: CUdeviceptr_v1, byte_count: c_uint, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::copy_1d(d, stream, u64::from(dst), false, u64::from(src), false, byte_count as usize) {
                return r;
            }
            device_to_device(d, u64::from(dst), u64::from(src), byte_count as usize)
        })
    }

    fn cuMemsetD8_v2(dst: CUdeviceptr, uc: u8, n: usize) {
        capture::sync_call()?;
        with_context(|d, _| memset(d, dst, &[uc], n))
    }

    fn cuMemsetD16_v2(dst: CUdeviceptr, us: u16, n: usize) {
        capture::sync_call()?;
        with_context(|d, _| memset(d, dst, &us.to_le_bytes(), n))
    }

    fn cuMemsetD32_v2(dst: CUdeviceptr, ui: c_uint, n: usize) {
        capture::sync_call()?;
        with_context(|d, _| memset(d, dst, &ui.to_le_bytes(), n))
    }

    fn cuMemsetD8Async(dst: CUdeviceptr, uc: u8, n: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::memset(d, stream, dst, 0, u32::from(uc), 1, n, 1) {
                return r;
            }
            memset(d, dst, &[uc], n)
        })
    }

    fn cuMemsetD16Async(dst: CUdeviceptr, us: u16, n: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::memset(d, stream, dst, 0, u32::from(us), 2, n, 1) {
                return r;
            }
            memset(d, dst, &us.to_le_bytes(), n)
        })
    }

    fn cuMemsetD32Async(dst: CUdeviceptr, ui: c_uint, n: usize, stream: CUstream) {
        with_context(|d, _| {
            d.check_stream(stream)?;
            if let Some(r) = capture::memset(d, stream, dst, 0, ui, 4, n, 1) {
                return r;
            }
            memset(d, dst, &ui.to_le_bytes(), n)
        })
    }

    fn cuMemsetD8(dst: CUdeviceptr_v1, uc: u8, n: c_uint) {
        capture::sync_call()?;
        with_context(|d, _| memset(d, u64::from(dst), &[uc], n as usize))
    }

    fn cuMemsetD16(dst: CUdeviceptr_v1, us: u16, n: c_uint) {
        capture::sync_call()?;
        with_context(|d, _| memset(d, u64::from(dst), &us.to_le_bytes(), n as usize))
    }

    fn cuMemsetD32(dst: CUdeviceptr_v1, ui: c_uint, n: c_uint) {
        capture::sync_call()?;
        with_context(|d, _| memset(d, u64::from(dst), &ui.to_le_bytes(), n as usize))
    }
}

aliases! {
    cuMemPrefetchAsync_ptsz = cuMemPrefetchAsync(dev_ptr: CUdeviceptr, count: usize, dst_device: CUdevice, stream: CUstream);
    cuMemPrefetchAsync_v2_ptsz = cuMemPrefetchAsync_v2(dev_ptr: CUdeviceptr, count: usize, location: CUmemLocation, flags: c_uint, stream: CUstream);
    cuStreamAttachMemAsync_ptsz = cuStreamAttachMemAsync(stream: CUstream, dptr: CUdeviceptr, length: usize, flags: c_uint);
}

aliases! {
    cuMemHostRegister = cuMemHostRegister_v2(p: *mut c_void, bytesize: usize, flags: c_uint);
    cuMemcpy_ptds = cuMemcpy(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize);
    cuMemcpyAsync_ptsz = cuMemcpyAsync(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize, stream: CUstream);
    cuMemcpyHtoD_v2_ptds = cuMemcpyHtoD_v2(dst: CUdeviceptr, src: *const c_void, byte_count: usize);
    cuMemcpyDtoH_v2_ptds = cuMemcpyDtoH_v2(dst: *mut c_void, src: CUdeviceptr, byte_count: usize);
    cuMemcpyDtoD_v2_ptds = cuMemcpyDtoD_v2(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize);
    cuMemcpyHtoDAsync_v2_ptsz = cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, byte_count: usize, stream: CUstream);
    cuMemcpyDtoHAsync_v2_ptsz = cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, byte_count: usize, stream: CUstream);
    cuMemcpyDtoDAsync_v2_ptsz = cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, byte_count: usize, stream: CUstream);
    cuMemsetD8_v2_ptds = cuMemsetD8_v2(dst: CUdeviceptr, uc: u8, n: usize);
    cuMemsetD16_v2_ptds = cuMemsetD16_v2(dst: CUdeviceptr, us: u16, n: usize);
    cuMemsetD32_v2_ptds = cuMemsetD32_v2(dst: CUdeviceptr, ui: c_uint, n: usize);
    cuMemsetD8Async_ptsz = cuMemsetD8Async(dst: CUdeviceptr, uc: u8, n: usize, stream: CUstream);
    cuMemsetD16Async_ptsz = cuMemsetD16Async(dst: CUdeviceptr, us: u16, n: usize, stream: CUstream);
    cuMemsetD32Async_ptsz = cuMemsetD32Async(dst: CUdeviceptr, ui: c_uint, n: usize, stream: CUstream);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuMemGetInfo": 2000 => cuMemGetInfo, 3020 => cuMemGetInfo_v2;
        "cuMemAlloc": 2000 => cuMemAlloc, 3020 => cuMemAlloc_v2;
        "cuMemAllocPitch": 3020 => cuMemAllocPitch_v2;
        "cuMemFree": 2000 => cuMemFree, 3020 => cuMemFree_v2;
        "cuMemGetAddressRange": 2000 => cuMemGetAddressRange, 3020 => cuMemGetAddressRange_v2;
        "cuMemAllocHost": 2000 => cuMemAllocHost, 3020 => cuMemAllocHost_v2;
        "cuMemFreeHost": 2000 => cuMemFreeHost;
        "cuMemHostRegister": 4000 => cuMemHostRegister, 6050 => cuMemHostRegister_v2;
        "cuMemHostUnregister": 4000 => cuMemHostUnregister;
        "cuMemHostAlloc": 2020 => cuMemHostAlloc;
        "cuMemHostGetFlags": 2030 => cuMemHostGetFlags;
        "cuMemAllocManaged": 6000 => cuMemAllocManaged;
        "cuMemHostGetDevicePointer": 2020 => cuMemHostGetDevicePointer, 3020 => cuMemHostGetDevicePointer_v2;
        "cuMemPrefetchAsync": 8000 => cuMemPrefetchAsync, 12020 => cuMemPrefetchAsync_v2, @ptds 8000 => cuMemPrefetchAsync_ptsz, @ptds 12020 => cuMemPrefetchAsync_v2_ptsz;
        "cuMemAdvise": 8000 => cuMemAdvise, 12020 => cuMemAdvise_v2;
        "cuStreamAttachMemAsync": 6000 => cuStreamAttachMemAsync, @ptds 7000 => cuStreamAttachMemAsync_ptsz;
        "cuMemRangeGetAttribute": 8000 => cuMemRangeGetAttribute;
        "cuMemRangeGetAttributes": 8000 => cuMemRangeGetAttributes;
        "cuMemcpy": 4000 => cuMemcpy, @ptds 7000 => cuMemcpy_ptds;
        "cuMemcpyAsync": 4000 => cuMemcpyAsync, @ptds 7000 => cuMemcpyAsync_ptsz;
        "cuMemcpyHtoD": 2000 => cuMemcpyHtoD, 3020 => cuMemcpyHtoD_v2, @ptds 7000 => cuMemcpyHtoD_v2_ptds;
        "cuMemcpyDtoH": 2000 => cuMemcpyDtoH, 3020 => cuMemcpyDtoH_v2, @ptds 7000 => cuMemcpyDtoH_v2_ptds;
        "cuMemcpyDtoD": 2000 => cuMemcpyDtoD, 3020 => cuMemcpyDtoD_v2, @ptds 7000 => cuMemcpyDtoD_v2_ptds;
        "cuMemcpyHtoDAsync": 2000 => cuMemcpyHtoDAsync, 3020 => cuMemcpyHtoDAsync_v2, @ptds 7000 => cuMemcpyHtoDAsync_v2_ptsz;
        "cuMemcpyDtoHAsync": 2000 => cuMemcpyDtoHAsync, 3020 => cuMemcpyDtoHAsync_v2, @ptds 7000 => cuMemcpyDtoHAsync_v2_ptsz;
        "cuMemcpyDtoDAsync": 3000 => cuMemcpyDtoDAsync, 3020 => cuMemcpyDtoDAsync_v2, @ptds 7000 => cuMemcpyDtoDAsync_v2_ptsz;
        "cuMemsetD8": 2000 => cuMemsetD8, 3020 => cuMemsetD8_v2, @ptds 7000 => cuMemsetD8_v2_ptds;
        "cuMemsetD16": 2000 => cuMemsetD16, 3020 => cuMemsetD16_v2, @ptds 7000 => cuMemsetD16_v2_ptds;
        "cuMemsetD32": 2000 => cuMemsetD32, 3020 => cuMemsetD32_v2, @ptds 7000 => cuMemsetD32_v2_ptds;
        "cuMemsetD8Async": 3020 => cuMemsetD8Async, @ptds 7000 => cuMemsetD8Async_ptsz;
        "cuMemsetD16Async": 3020 => cuMemsetD16Async, @ptds 7000 => cuMemsetD16Async_ptsz;
        "cuMemsetD32Async": 3020 => cuMemsetD32Async, @ptds 7000 => cuMemsetD32Async_ptsz;
    }
}
