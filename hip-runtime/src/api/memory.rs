//! Device memory, page-locked host memory, copies, memsets and module
//! variables (`hipMemcpyToSymbol` and friends).
//!
//! Copies and memsets run synchronously; the `Async` forms check their
//! stream and do the same. `hipMemcpyDefault` tells host from device by the
//! address: device addresses are the emulator's allocations and loaded
//! modules. Page-locked host memory (`hipHostMalloc`) is mapped into the
//! device like managed memory below, so kernels may use the host pointer
//! (zero-copy); memory registered with `hipHostRegister` is not.
//!
//! Managed memory (`hipMallocManaged`) is a device allocation plus a host
//! mapping at the same address: the host reads and writes the mapping, and
//! each launch copies every managed allocation to the device before and
//! back after (`Runtime::sync_managed`). Copies and memsets treat managed
//! memory as host memory, which it is between launches.

use crate::abi::*;
use crate::entry::{exports, non_null, write_out};
use crate::runtime::{HostAllocation, Runtime, runtime};
use std::ffi::{c_int, c_uint, c_void};

/// Host pages: managed allocations are mapped in whole pages.
const PAGE: usize = 4096;
/// `hipMallocPitch` rounds rows up to this.
const PITCH_ALIGN: usize = 512;

/// Which way bytes move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

fn direction(
    rt: &Runtime,
    dst: u64,
    src: u64,
    kind: hipMemcpyKind,
) -> Result<Direction, hipError_t> {
    Ok(match kind {
        hipMemcpyHostToHost => Direction::HostToHost,
        hipMemcpyHostToDevice => Direction::HostToDevice,
        hipMemcpyDeviceToHost => Direction::DeviceToHost,
        hipMemcpyDeviceToDevice => Direction::DeviceToDevice,
        hipMemcpyDefault => match (rt.is_device(src), rt.is_device(dst)) {
            (false, false) => Direction::HostToHost,
            (false, true) => Direction::HostToDevice,
            (true, false) => Direction::DeviceToHost,
            (true, true) => Direction::DeviceToDevice,
        },
        _ => return Err(hipErrorInvalidMemcpyDirection),
    })
}

fn device_error(message: String) -> hipError_t {
    eprintln!("prlx hip: {message}");
    hipErrorInvalidValue
}

/// Copies `size` bytes; the emulator checks device addresses.
pub fn copy(
    rt: &mut Runtime,
    dst: u64,
    src: u64,
    size: usize,
    kind: hipMemcpyKind,
) -> Result<(), hipError_t> {
    let way = direction(rt, dst, src, kind)?;
    // Managed memory is host memory between launches, whatever the kind says.
    let src_on_device = matches!(way, Direction::DeviceToHost | Direction::DeviceToDevice)
        && rt.managed_of(src).is_none();
    let dst_on_device = matches!(way, Direction::HostToDevice | Direction::DeviceToDevice)
        && rt.managed_of(dst).is_none();
    let way = match (src_on_device, dst_on_device) {
        (false, false) => Direction::HostToHost,
        (false, true) => Direction::HostToDevice,
        (true, false) => Direction::DeviceToHost,
        (true, true) => Direction::DeviceToDevice,
    };
    if size == 0 {
        return Ok(());
    }
    if dst == 0 || src == 0 {
        return Err(hipErrorInvalidValue);
    }
    rt.healthy()?;
    match way {
        Direction::HostToHost => {
            // SAFETY: both are host ranges of `size` bytes by the caller's
            // contract; `copy` allows overlap.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, size) };
            Ok(())
        }
        Direction::HostToDevice => {
            // SAFETY: `src` is a host range of `size` bytes (caller's contract).
            let bytes = unsafe { std::slice::from_raw_parts(src as *const u8, size) };
            rt.gpu.write(dst, bytes).map_err(device_error)
        }
        Direction::DeviceToHost => {
            // SAFETY: `dst` is a writable host range of `size` bytes.
            let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, size) };
            rt.gpu.read(src, out).map_err(device_error)
        }
        Direction::DeviceToDevice => {
            let mut bytes = vec![0u8; size];
            rt.gpu.read(src, &mut bytes).map_err(device_error)?;
            rt.gpu.write(dst, &bytes).map_err(device_error)
        }
    }
}

/// Fills `count` elements of `pattern` at device address `dst`.
fn fill(dst: u64, pattern: &[u8], count: usize) -> Result<(), hipError_t> {
    if count == 0 {
        return Ok(());
    }
    if dst == 0 {
        return Err(hipErrorInvalidValue);
    }
    let mut rt = runtime();
    rt.healthy()?;
    let bytes: Vec<u8> = pattern
        .iter()
        .copied()
        .cycle()
        .take(pattern.len() * count)
        .collect();
    if let Some((start, size)) = rt.managed_of(dst) {
        if dst + bytes.len() as u64 > start + size as u64 {
            return Err(hipErrorInvalidValue);
        }
        // SAFETY: inside the managed allocation's host mapping (checked).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst as *mut u8, bytes.len()) };
        return Ok(());
    }
    rt.gpu.write(dst, &bytes).map_err(device_error)
}

/// `height` rows of `width` bytes set to `value`, `pitch` bytes apart.
fn fill_2d(
    dst: u64,
    pitch: usize,
    value: u8,
    width: usize,
    height: usize,
) -> Result<(), hipError_t> {
    if width > pitch {
        return Err(hipErrorInvalidPitchValue);
    }
    for row in 0..height {
        fill(dst + (row * pitch) as u64, &[value], width)?;
    }
    Ok(())
}

fn malloc(ptr: *mut *mut c_void, size: usize) -> Result<(), hipError_t> {
    non_null(ptr)?;
    if size == 0 {
        // SAFETY: checked non-null; HIP returns NULL for zero bytes.
        return unsafe { write_out(ptr, std::ptr::null_mut()) };
    }
    let mut rt = runtime();
    rt.healthy()?;
    let addr = rt.gpu.alloc(size).map_err(|message| {
        eprintln!("prlx hip: hipMalloc({size}): {message}");
        hipErrorOutOfMemory
    })?;
    rt.allocations.insert(addr, size);
    // SAFETY: checked non-null.
    unsafe { write_out(ptr, addr as *mut c_void) }
}

fn free(ptr: *mut c_void) -> Result<(), hipError_t> {
    if ptr.is_null() {
        return Ok(());
    }
    let mut rt = runtime();
    let addr = ptr as u64;
    if rt.allocations.remove(&addr).is_none() {
        return Err(hipErrorInvalidValue);
    }
    rt.gpu.free(addr);
    // hipFree also releases hipHostMalloc memory, as HIP's does.
    rt.host_allocations.remove(&(addr as usize));
    if let Some(size) = rt.managed.remove(&addr) {
        // SAFETY: the host mapping hipMallocManaged made at `addr`.
        unsafe { libc::munmap(ptr, size.next_multiple_of(PAGE)) };
    }
    Ok(())
}

/// A device allocation and a host mapping at the same address.
pub(crate) fn malloc_managed(
    ptr: *mut *mut c_void,
    size: usize,
    flags: c_uint,
) -> Result<(), hipError_t> {
    non_null(ptr)?;
    // hipMemAttachGlobal or hipMemAttachHost.
    if size == 0 || !matches!(flags, 1 | 2) {
        return Err(hipErrorInvalidValue);
    }
    let mut rt = runtime();
    let addr = map_device_backed(&mut rt, size, "hipMallocManaged")?;
    // SAFETY: checked non-null.
    unsafe { write_out(ptr, addr as *mut c_void) }
}

/// A device allocation of `size` bytes plus a host mapping at the same
/// address, registered as managed so that each launch synchronises it
/// (`Runtime::sync_managed`). Freed by `free`.
fn map_device_backed(rt: &mut Runtime, size: usize, api: &str) -> Result<u64, hipError_t> {
    rt.healthy()?;
    let addr = rt.gpu.alloc_aligned(size, PAGE as u64).map_err(|message| {
        eprintln!("prlx hip: {api}({size}): {message}");
        hipErrorOutOfMemory
    })?;
    let len = size.next_multiple_of(PAGE);
    // SAFETY: an anonymous private mapping at a page-aligned address the
    // kernel must not place over anything else (MAP_FIXED_NOREPLACE).
    let mapped = unsafe {
        libc::mmap(
            addr as *mut c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if mapped as u64 != addr {
        if mapped != libc::MAP_FAILED {
            // SAFETY: the mapping just made, elsewhere (an old kernel that
            // ignores MAP_FIXED_NOREPLACE).
            unsafe { libc::munmap(mapped, len) };
        }
        rt.gpu.free(addr);
        eprintln!("prlx hip: {api}({size}): cannot map host memory at device address {addr:#x}");
        return Err(hipErrorOutOfMemory);
    }
    rt.allocations.insert(addr, size);
    rt.managed.insert(addr, size);
    Ok(addr)
}

/// The managed range `[ptr, ptr + count)` for prefetch and advice.
fn check_managed_range(ptr: *const c_void, count: usize) -> Result<(), hipError_t> {
    let rt = runtime();
    match rt.managed_of(ptr as u64) {
        Some((start, size)) if ptr as u64 + count as u64 <= start + size as u64 => Ok(()),
        _ => Err(hipErrorInvalidValue),
    }
}

/// Page-locked host memory is mapped into the device, as HIP's is
/// (`hipHostMallocMapped` is implied on AMD): the allocation is device
/// memory with a host mapping at the same address, kept in step around each
/// launch like managed memory, so kernels may dereference the host pointer
/// (zero-copy) and `hipHostGetDevicePointer` returns it unchanged.
fn host_malloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> Result<(), hipError_t> {
    non_null(ptr)?;
    if size == 0 {
        // SAFETY: checked non-null.
        return unsafe { write_out(ptr, std::ptr::null_mut()) };
    }
    let mut rt = runtime();
    let addr = map_device_backed(&mut rt, size, "hipHostMalloc")?;
    rt.host_allocations
        .insert(addr as usize, HostAllocation { size, flags });
    drop(rt);
    // SAFETY: checked non-null.
    unsafe { write_out(ptr, addr as *mut c_void) }
}

fn host_free(ptr: *mut c_void) -> Result<(), hipError_t> {
    if ptr.is_null() {
        return Ok(());
    }
    if runtime().host_allocations.remove(&(ptr as usize)).is_none() {
        return Err(hipErrorInvalidValue);
    }
    free(ptr)
}

/// The page-locked allocation holding `addr`, as (start, allocation).
fn host_allocation_of(rt: &Runtime, addr: usize) -> Option<(usize, HostAllocation)> {
    let (&start, &allocation) = rt.host_allocations.range(..=addr).next_back()?;
    (addr < start + allocation.size).then_some((start, allocation))
}

fn memcpy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> Result<(), hipError_t> {
    let mut rt = runtime();
    rt.check_stream(stream)?;
    copy(&mut rt, dst as u64, src as u64, size, kind)
}

/// Device address of a registered variable plus `offset`, checked to hold
/// `size` more bytes.
fn symbol_range(symbol: *const c_void, size: usize, offset: usize) -> Result<u64, hipError_t> {
    non_null(symbol)?;
    let (addr, var_size) = runtime().variable(symbol as usize)?;
    if offset.checked_add(size).is_none_or(|end| end > var_size) {
        return Err(hipErrorInvalidValue);
    }
    Ok(addr + offset as u64)
}

fn to_symbol(
    symbol: *const c_void,
    src: *const c_void,
    size: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> Result<(), hipError_t> {
    if !matches!(
        kind,
        hipMemcpyHostToDevice | hipMemcpyDeviceToDevice | hipMemcpyDefault
    ) {
        return Err(hipErrorInvalidMemcpyDirection);
    }
    let dst = symbol_range(symbol, size, offset)?;
    let mut rt = runtime();
    rt.check_stream(stream)?;
    copy(&mut rt, dst, src as u64, size, kind)
}

fn from_symbol(
    dst: *mut c_void,
    symbol: *const c_void,
    size: usize,
    offset: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> Result<(), hipError_t> {
    if !matches!(
        kind,
        hipMemcpyDeviceToHost | hipMemcpyDeviceToDevice | hipMemcpyDefault
    ) {
        return Err(hipErrorInvalidMemcpyDirection);
    }
    let src = symbol_range(symbol, size, offset)?;
    let mut rt = runtime();
    rt.check_stream(stream)?;
    copy(&mut rt, dst as u64, src, size, kind)
}

#[allow(clippy::too_many_arguments)]
fn memcpy_2d(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: hipMemcpyKind,
    stream: hipStream_t,
) -> Result<(), hipError_t> {
    if width > dpitch || width > spitch {
        return Err(hipErrorInvalidPitchValue);
    }
    let mut rt = runtime();
    rt.check_stream(stream)?;
    for row in 0..height {
        copy(
            &mut rt,
            dst as u64 + (row * dpitch) as u64,
            src as u64 + (row * spitch) as u64,
            width,
            kind,
        )?;
    }
    Ok(())
}

/// `hipMemcpy3D` between pitched linear memories: `extent.width` bytes of
/// each of `extent.height` rows of each of `extent.depth` slices, from
/// `srcPos`/`dstPos` (x in bytes) of slices `ysize` rows apart. Arrays are
/// not supported.
fn memcpy_3d(params: *const hipMemcpy3DParms, stream: hipStream_t) -> Result<(), hipError_t> {
    non_null(params)?;
    // SAFETY: checked non-null; points to a hipMemcpy3DParms per the C API.
    let p = unsafe { *params };
    if !p.srcArray.is_null() || !p.dstArray.is_null() {
        crate::api::unsupported::refuse("hipMemcpy3D with a hipArray");
        return Err(hipErrorNotSupported);
    }
    let hipExtent {
        width,
        height,
        depth,
    } = p.extent;
    let (src, dst) = (p.srcPtr, p.dstPtr);
    if (width > 0 && height > 0 && depth > 0) && (src.ptr.is_null() || dst.ptr.is_null()) {
        return Err(hipErrorInvalidValue);
    }
    if p.srcPos.x + width > src.pitch || p.dstPos.x + width > dst.pitch {
        return Err(hipErrorInvalidPitchValue);
    }
    let mut rt = runtime();
    rt.check_stream(stream)?;
    for z in 0..depth {
        for y in 0..height {
            let offset = |ptr: &hipPitchedPtr, pos: &hipPos| {
                ptr.ptr as u64 + (((pos.z + z) * ptr.ysize + pos.y + y) * ptr.pitch + pos.x) as u64
            };
            let (to, from) = (offset(&dst, &p.dstPos), offset(&src, &p.srcPos));
            copy(&mut rt, to, from, width, p.kind)?;
        }
    }
    Ok(())
}

/// `hipMemset3D`: `extent.width` bytes of each row of each slice.
fn fill_3d(target: hipPitchedPtr, value: c_int, extent: hipExtent) -> Result<(), hipError_t> {
    if extent.width > target.pitch {
        return Err(hipErrorInvalidPitchValue);
    }
    let slice = target.pitch * target.ysize;
    for z in 0..extent.depth {
        let base = target.ptr as u64 + (z * slice) as u64;
        fill_2d(base, target.pitch, value as u8, extent.width, extent.height)?;
    }
    Ok(())
}

exports! {
    /// Rows padded as `hipMallocPitch` pads them, `extent.depth` slices of
    /// `extent.height` rows.
    fn hipMalloc3D(pitched: *mut hipPitchedPtr, extent: hipExtent) {
        non_null(pitched)?;
        let row = extent.width.div_ceil(PITCH_ALIGN).max(1) * PITCH_ALIGN;
        let bytes = row
            .checked_mul(extent.height)
            .and_then(|b| b.checked_mul(extent.depth))
            .ok_or(hipErrorOutOfMemory)?;
        let mut ptr = std::ptr::null_mut();
        malloc(&mut ptr, bytes)?;
        let value = hipPitchedPtr { ptr, pitch: row, xsize: extent.width, ysize: extent.height };
        // SAFETY: checked non-null.
        unsafe { write_out(pitched, value) }
    }

    fn hipMemcpy3D(params: *const hipMemcpy3DParms) {
        memcpy_3d(params, std::ptr::null_mut())
    }

    fn hipMemcpy3DAsync(params: *const hipMemcpy3DParms, stream: hipStream_t) {
        memcpy_3d(params, stream)
    }

    fn hipMemset3D(target: hipPitchedPtr, value: c_int, extent: hipExtent) {
        fill_3d(target, value, extent)
    }

    fn hipMemset3DAsync(target: hipPitchedPtr, value: c_int, extent: hipExtent, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        fill_3d(target, value, extent)
    }

    fn hipMalloc(ptr: *mut *mut c_void, size: usize) {
        malloc(ptr, size)
    }

    /// `hipDeviceMallocDefault` and the other flags change nothing here.
    fn hipExtMallocWithFlags(ptr: *mut *mut c_void, size: usize, flags: c_uint) {
        let _ = flags;
        malloc(ptr, size)
    }

    fn hipMallocPitch(ptr: *mut *mut c_void, pitch: *mut usize, width: usize, height: usize) {
        non_null(pitch)?;
        let row = width.div_ceil(PITCH_ALIGN).max(1) * PITCH_ALIGN;
        malloc(ptr, row * height)?;
        // SAFETY: checked non-null.
        unsafe { write_out(pitch, row) }
    }

    fn hipFree(ptr: *mut c_void) {
        free(ptr)
    }

    /// Stream-ordered allocation: the stream is idle, so it is immediate.
    fn hipMallocAsync(ptr: *mut *mut c_void, size: usize, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        malloc(ptr, size)
    }

    fn hipFreeAsync(ptr: *mut c_void, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        free(ptr)
    }

    fn hipMemAllocPitch(ptr: *mut hipDeviceptr_t, pitch: *mut usize, width: usize, height: usize, element_size: c_uint) {
        if !matches!(element_size, 4 | 8 | 16) {
            return Err(hipErrorInvalidValue);
        }
        non_null(pitch)?;
        let row = width.div_ceil(PITCH_ALIGN).max(1) * PITCH_ALIGN;
        malloc(ptr, row * height)?;
        // SAFETY: checked non-null.
        unsafe { write_out(pitch, row) }
    }

    /// The allocation holding `dptr`: its start and size.
    fn hipMemGetAddressRange(base: *mut hipDeviceptr_t, size: *mut usize, dptr: hipDeviceptr_t) {
        let found = runtime().allocation_of(dptr as u64, 0).ok_or(hipErrorNotFound)?;
        // SAFETY: optional out-pointers per the C API.
        unsafe {
            if !base.is_null() {
                base.write_unaligned(found.0 as hipDeviceptr_t);
            }
            if !size.is_null() {
                size.write_unaligned(found.1);
            }
        }
        Ok(())
    }

    fn hipMemPtrGetInfo(ptr: *mut c_void, size: *mut usize) {
        let rt = runtime();
        let bytes = match rt.allocation_of(ptr as u64, 0) {
            Some((start, bytes)) if start == ptr as u64 => bytes,
            _ => return Err(hipErrorInvalidValue),
        };
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(size, bytes) }
    }

    fn hipMemGetInfo(free_bytes: *mut usize, total: *mut usize) {
        let used: usize = runtime().allocations.values().sum();
        let total_bytes = super::device::TOTAL_GLOBAL_MEM;
        // SAFETY: out-pointers per the C API.
        unsafe {
            write_out(free_bytes, total_bytes.saturating_sub(used))?;
            write_out(total, total_bytes)
        }
    }

    fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) {
        host_malloc(ptr, size, flags)
    }

    fn hipHostAlloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) {
        host_malloc(ptr, size, flags)
    }

    fn hipMallocHost(ptr: *mut *mut c_void, size: usize) {
        host_malloc(ptr, size, 0)
    }

    fn hipMemAllocHost(ptr: *mut *mut c_void, size: usize) {
        host_malloc(ptr, size, 0)
    }

    fn hipHostFree(ptr: *mut c_void) {
        host_free(ptr)
    }

    fn hipFreeHost(ptr: *mut c_void) {
        host_free(ptr)
    }

    fn hipHostGetFlags(flags: *mut c_uint, ptr: *mut c_void) {
        let allocation = runtime().host_allocations.get(&(ptr as usize)).copied();
        let allocation = allocation.ok_or(hipErrorInvalidValue)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(flags, allocation.flags) }
    }

    /// Registering host memory pins nothing here; kernels still cannot
    /// address it (see `hipHostGetDevicePointer`).
    fn hipHostRegister(ptr: *mut c_void, size: usize, flags: c_uint) {
        let _ = flags;
        if ptr.is_null() || size == 0 {
            return Err(hipErrorInvalidValue);
        }
        Ok(())
    }

    fn hipHostUnregister(ptr: *mut c_void) {
        non_null(ptr)
    }

    /// Page-locked memory sits at the same address on both sides (see
    /// `host_malloc`); registered memory is not mapped into the device.
    fn hipHostGetDevicePointer(device_ptr: *mut *mut c_void, host: *mut c_void, flags: c_uint) {
        non_null(device_ptr)?;
        if flags != 0 {
            return Err(hipErrorInvalidValue);
        }
        if host_allocation_of(&runtime(), host as usize).is_none() {
            eprintln!(
                "prlx hip: hipHostGetDevicePointer({host:p}): not hipHostMalloc memory; registered host memory is not mapped into the emulated device"
            );
            return Err(hipErrorInvalidValue);
        }
        // SAFETY: checked non-null.
        unsafe { write_out(device_ptr, host) }
    }

    fn hipMallocManaged(ptr: *mut *mut c_void, size: usize, flags: c_uint) {
        malloc_managed(ptr, size, flags)
    }

    /// Nothing to move: managed memory is copied around each launch anyway.
    fn hipMemPrefetchAsync(ptr: *const c_void, count: usize, device: c_int, stream: hipStream_t) {
        if device != 0 && device != -1 {
            return Err(hipErrorInvalidDevice);
        }
        runtime().check_stream(stream)?;
        check_managed_range(ptr, count)
    }

    /// Advice is accepted and has no effect.
    fn hipMemAdvise(ptr: *const c_void, count: usize, advice: c_int, device: c_int) {
        if !(1..=6).contains(&advice) && !(100..=101).contains(&advice) {
            return Err(hipErrorInvalidValue);
        }
        if device != 0 && device != -1 {
            return Err(hipErrorInvalidDevice);
        }
        check_managed_range(ptr, count)
    }

    fn hipPointerGetAttributes(attributes: *mut hipPointerAttribute_t, ptr: *const c_void) {
        non_null(attributes)?;
        let rt = runtime();
        let addr = ptr as u64;
        let value = if let Some((_, allocation)) = host_allocation_of(&rt, addr as usize) {
            hipPointerAttribute_t {
                memoryType: hipMemoryTypeHost,
                device: 0,
                devicePointer: ptr as *mut c_void,
                hostPointer: ptr as *mut c_void,
                isManaged: 0,
                allocationFlags: allocation.flags,
            }
        } else if rt.allocation_of(addr, 0).is_some() {
            let managed = rt.managed_of(addr).is_some();
            hipPointerAttribute_t {
                memoryType: hipMemoryTypeDevice,
                device: 0,
                devicePointer: ptr as *mut c_void,
                hostPointer: if managed { ptr as *mut c_void } else { std::ptr::null_mut() },
                isManaged: managed as c_int,
                allocationFlags: 0,
            }
        } else {
            return Err(hipErrorInvalidValue);
        };
        // SAFETY: checked non-null.
        unsafe { write_out(attributes, value) }
    }

    fn hipMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: hipMemcpyKind) {
        memcpy(dst, src, size, kind, std::ptr::null_mut())
    }

    fn hipMemcpyWithStream(dst: *mut c_void, src: *const c_void, size: usize, kind: hipMemcpyKind, stream: hipStream_t) {
        memcpy(dst, src, size, kind, stream)
    }

    fn hipMemcpyAsync(dst: *mut c_void, src: *const c_void, size: usize, kind: hipMemcpyKind, stream: hipStream_t) {
        memcpy(dst, src, size, kind, stream)
    }

    fn hipMemcpyHtoD(dst: hipDeviceptr_t, src: *mut c_void, size: usize) {
        memcpy(dst, src, size, hipMemcpyHostToDevice, std::ptr::null_mut())
    }

    fn hipMemcpyDtoH(dst: *mut c_void, src: hipDeviceptr_t, size: usize) {
        memcpy(dst, src, size, hipMemcpyDeviceToHost, std::ptr::null_mut())
    }

    fn hipMemcpyDtoD(dst: hipDeviceptr_t, src: hipDeviceptr_t, size: usize) {
        memcpy(dst, src, size, hipMemcpyDeviceToDevice, std::ptr::null_mut())
    }

    fn hipMemcpyHtoDAsync(dst: hipDeviceptr_t, src: *mut c_void, size: usize, stream: hipStream_t) {
        memcpy(dst, src, size, hipMemcpyHostToDevice, stream)
    }

    fn hipMemcpyDtoHAsync(dst: *mut c_void, src: hipDeviceptr_t, size: usize, stream: hipStream_t) {
        memcpy(dst, src, size, hipMemcpyDeviceToHost, stream)
    }

    fn hipMemcpyDtoDAsync(dst: hipDeviceptr_t, src: hipDeviceptr_t, size: usize, stream: hipStream_t) {
        memcpy(dst, src, size, hipMemcpyDeviceToDevice, stream)
    }

    fn hipMemcpy2D(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: hipMemcpyKind) {
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, std::ptr::null_mut())
    }

    fn hipMemcpy2DAsync(dst: *mut c_void, dpitch: usize, src: *const c_void, spitch: usize, width: usize, height: usize, kind: hipMemcpyKind, stream: hipStream_t) {
        memcpy_2d(dst, dpitch, src, spitch, width, height, kind, stream)
    }

    fn hipMemset2D(dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize) {
        fill_2d(dst as u64, pitch, value as u8, width, height)
    }

    fn hipMemset2DAsync(dst: *mut c_void, pitch: usize, value: c_int, width: usize, height: usize, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        fill_2d(dst as u64, pitch, value as u8, width, height)
    }

    fn hipMemset(dst: *mut c_void, value: c_int, size: usize) {
        fill(dst as u64, &[value as u8], size)
    }

    fn hipMemsetAsync(dst: *mut c_void, value: c_int, size: usize, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        fill(dst as u64, &[value as u8], size)
    }

    fn hipMemsetD8(dst: hipDeviceptr_t, value: u8, count: usize) {
        fill(dst as u64, &[value], count)
    }

    fn hipMemsetD8Async(dst: hipDeviceptr_t, value: u8, count: usize, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        fill(dst as u64, &[value], count)
    }

    fn hipMemsetD16(dst: hipDeviceptr_t, value: u16, count: usize) {
        fill(dst as u64, &value.to_le_bytes(), count)
    }

    fn hipMemsetD16Async(dst: hipDeviceptr_t, value: u16, count: usize, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        fill(dst as u64, &value.to_le_bytes(), count)
    }

    fn hipMemsetD32(dst: hipDeviceptr_t, value: c_int, count: usize) {
        fill(dst as u64, &value.to_le_bytes(), count)
    }

    fn hipMemsetD32Async(dst: hipDeviceptr_t, value: c_int, count: usize, stream: hipStream_t) {
        runtime().check_stream(stream)?;
        fill(dst as u64, &value.to_le_bytes(), count)
    }

    fn hipMemcpyToSymbol(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: hipMemcpyKind) {
        to_symbol(symbol, src, size, offset, kind, std::ptr::null_mut())
    }

    fn hipMemcpyToSymbolAsync(symbol: *const c_void, src: *const c_void, size: usize, offset: usize, kind: hipMemcpyKind, stream: hipStream_t) {
        to_symbol(symbol, src, size, offset, kind, stream)
    }

    fn hipMemcpyFromSymbol(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: hipMemcpyKind) {
        from_symbol(dst, symbol, size, offset, kind, std::ptr::null_mut())
    }

    fn hipMemcpyFromSymbolAsync(dst: *mut c_void, symbol: *const c_void, size: usize, offset: usize, kind: hipMemcpyKind, stream: hipStream_t) {
        from_symbol(dst, symbol, size, offset, kind, stream)
    }

    fn hipGetSymbolAddress(device_ptr: *mut *mut c_void, symbol: *const c_void) {
        non_null(symbol)?;
        let (addr, _) = runtime().variable(symbol as usize)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(device_ptr, addr as *mut c_void) }
    }

    fn hipGetSymbolSize(size: *mut usize, symbol: *const c_void) {
        non_null(symbol)?;
        let (_, bytes) = runtime().variable(symbol as usize)?;
        // SAFETY: out-pointer per the C API.
        unsafe { write_out(size, bytes) }
    }
}
