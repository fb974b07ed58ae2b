//! Pitched 2D and 3D copies (`cuMemcpy2D*`, `cuMemcpy3D*`) and memsets
//! (`cuMemsetD2D*`), row by row over the emulator's linear memory. A CUDA array side
//! (`CU_MEMORYTYPE_ARRAY`) is its dense device allocation with the array's own pitch and rows
//! (`array.rs`); its pitch and height fields are ignored, as `cuda.h` documents.

use crate::clock;
use crate::cu::*;
use crate::driver::{Driver, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null};
use crate::graph::capture;
use std::ffi::c_uint;

/// One side of a 2D copy, resolved.
#[derive(Debug, Clone, Copy)]
enum Side {
    Host(usize),
    Device(u64),
}

impl Side {
    fn offset(self, by: usize) -> Side {
        match self {
            Side::Host(p) => Side::Host(p + by),
            Side::Device(p) => Side::Device(p + by as u64),
        }
    }
}

fn resolve(d: &Driver, memory_type: u32, host: usize, device: u64) -> Result<Side, CUresult> {
    match memory_type {
        CU_MEMORYTYPE_HOST if host != 0 => Ok(Side::Host(host)),
        CU_MEMORYTYPE_DEVICE => Ok(Side::Device(device)),
        // Unified: the pointer is in `device`; where it points decides.
        CU_MEMORYTYPE_UNIFIED if d.device.mem_range(device).is_some() => Ok(Side::Device(device)),
        CU_MEMORYTYPE_UNIFIED if device != 0 => Ok(Side::Host(device as usize)),
        CU_MEMORYTYPE_ARRAY => Err(CUDA_ERROR_NOT_SUPPORTED),
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

fn copy_row(d: &mut Driver, dst: Side, src: Side, n: usize) -> Result<(), CUresult> {
    let invalid = |_| CUDA_ERROR_INVALID_VALUE;
    match (dst, src) {
        (Side::Device(dst), Side::Device(src)) => {
            d.device.mem_copy(dst, src, n as u64).map_err(invalid)
        }
        (Side::Device(dst), Side::Host(src)) => {
            // SAFETY: the caller's host rows hold `n` bytes each.
            let data = unsafe { std::slice::from_raw_parts(src as *const u8, n) };
            d.device.mem_write(dst, data).map_err(invalid)
        }
        (Side::Host(dst), Side::Device(src)) => {
            // SAFETY: as above.
            let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, n) };
            d.device.mem_read(src, out).map_err(invalid)
        }
        (Side::Host(dst), Side::Host(src)) => {
            // SAFETY: as above; memmove semantics.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, n) };
            Ok(())
        }
    }
}

/// # Safety
/// `p_copy` must be NULL or a valid `CUDA_MEMCPY2D` whose host pointers
/// cover the rows it describes.
unsafe fn copy_2d(p_copy: *const CUDA_MEMCPY2D, stream: CUstream) -> Result<(), CUresult> {
    with_context(|d, _| {
        d.check_stream(stream)?;
        // SAFETY: forwarded contract.
        if let Some(r) = unsafe { capture::copy_2d(d, stream, p_copy) } {
            return r;
        }
        non_null(p_copy)?;
        // SAFETY: non-null, the caller's struct.
        let c = unsafe { &*p_copy };
        let (width, height) = (c.width_in_bytes, c.height);
        if width == 0 || height == 0 {
            return Ok(());
        }
        let (src, src_pitch) = match c.src_memory_type {
            CU_MEMORYTYPE_ARRAY => {
                let (base, pitch, _) = super::array::copy_side(
                    c.src_array,
                    c.src_x_in_bytes,
                    c.src_y,
                    0,
                    width,
                    height,
                    1,
                )?;
                (Side::Device(base), pitch)
            }
            t => (
                resolve(d, t, c.src_host as usize, c.src_device)?,
                c.src_pitch,
            ),
        };
        let (dst, dst_pitch) = match c.dst_memory_type {
            CU_MEMORYTYPE_ARRAY => {
                let (base, pitch, _) = super::array::copy_side(
                    c.dst_array,
                    c.dst_x_in_bytes,
                    c.dst_y,
                    0,
                    width,
                    height,
                    1,
                )?;
                (Side::Device(base), pitch)
            }
            t => (
                resolve(d, t, c.dst_host as usize, c.dst_device)?,
                c.dst_pitch,
            ),
        };
        if height > 1
            && (src_pitch < c.src_x_in_bytes + width || dst_pitch < c.dst_x_in_bytes + width)
        {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let at = |y: usize, pitch: usize, x: usize| {
            y.checked_mul(pitch)
                .and_then(|r| r.checked_add(x))
                .ok_or(CUDA_ERROR_INVALID_VALUE)
        };
        for row in 0..height {
            let s = src.offset(at(c.src_y + row, src_pitch, c.src_x_in_bytes)?);
            let t = dst.offset(at(c.dst_y + row, dst_pitch, c.dst_x_in_bytes)?);
            copy_row(d, t, s, width)?;
        }
        let bytes = (width * height) as u64;
        d.clock_ns += match (src, dst) {
            (Side::Device(_), Side::Device(_)) => clock::device_copy_ns(bytes),
            _ => clock::host_copy_ns(bytes),
        };
        Ok(())
    })
}

/// # Safety
/// `p_copy` must be NULL or a valid `CUDA_MEMCPY3D` whose host pointers
/// cover the rows and slices it describes.
unsafe fn copy_3d(p_copy: *const CUDA_MEMCPY3D, stream: CUstream) -> Result<(), CUresult> {
    with_context(|d, _| {
        d.check_stream(stream)?;
        // SAFETY: forwarded contract.
        if let Some(r) = unsafe { capture::copy_3d(d, stream, p_copy) } {
            return r;
        }
        non_null(p_copy)?;
        // SAFETY: non-null, the caller's struct.
        let c = unsafe { &*p_copy };
        if c.src_lod != 0 || c.dst_lod != 0 {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let (width, height, depth) = (c.width_in_bytes, c.height, c.depth);
        if width == 0 || height == 0 || depth == 0 {
            return Ok(());
        }
        let array_side = |array, x, y, z| {
            super::array::copy_side(array, x, y, z, width, height, depth)
                .map(|(base, pitch, rows)| (Side::Device(base), pitch, rows))
        };
        let (src, src_pitch, src_height) = match c.src_memory_type {
            CU_MEMORYTYPE_ARRAY => array_side(c.src_array, c.src_x_in_bytes, c.src_y, c.src_z)?,
            t => (
                resolve(d, t, c.src_host as usize, c.src_device)?,
                c.src_pitch,
                c.src_height,
            ),
        };
        let (dst, dst_pitch, dst_height) = match c.dst_memory_type {
            CU_MEMORYTYPE_ARRAY => array_side(c.dst_array, c.dst_x_in_bytes, c.dst_y, c.dst_z)?,
            t => (
                resolve(d, t, c.dst_host as usize, c.dst_device)?,
                c.dst_pitch,
                c.dst_height,
            ),
        };
        let fits = |pitch: usize, x: usize, rows: usize, y: usize| {
            (height == 1 && depth == 1)
                || (pitch >= x + width && (depth == 1 || rows >= y + height))
        };
        if !fits(src_pitch, c.src_x_in_bytes, src_height, c.src_y)
            || !fits(dst_pitch, c.dst_x_in_bytes, dst_height, c.dst_y)
        {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        // Byte offset of (x, y, z) in a pitched volume of `rows` rows a slice.
        let at = |z: usize, rows: usize, y: usize, pitch: usize, x: usize| {
            z.checked_mul(rows)
                .and_then(|r| r.checked_add(y))
                .and_then(|r| r.checked_mul(pitch))
                .and_then(|r| r.checked_add(x))
                .ok_or(CUDA_ERROR_INVALID_VALUE)
        };
        for z in 0..depth {
            for row in 0..height {
                let s = src.offset(at(
                    c.src_z + z,
                    src_height,
                    c.src_y + row,
                    src_pitch,
                    c.src_x_in_bytes,
                )?);
                let t = dst.offset(at(
                    c.dst_z + z,
                    dst_height,
                    c.dst_y + row,
                    dst_pitch,
                    c.dst_x_in_bytes,
                )?);
                copy_row(d, t, s, width)?;
            }
        }
        let bytes = (width * height * depth) as u64;
        d.clock_ns += match (src, dst) {
            (Side::Device(_), Side::Device(_)) => clock::device_copy_ns(bytes),
            _ => clock::host_copy_ns(bytes),
        };
        Ok(())
    })
}

fn memset_2d(
    dst: CUdeviceptr,
    pitch: usize,
    pattern: &[u8],
    width: usize,
    height: usize,
    stream: CUstream,
) -> Result<(), CUresult> {
    with_context(|d, _| {
        d.check_stream(stream)?;
        let elem = pattern.len();
        let mut value = [0u8; 4];
        value[..elem].copy_from_slice(pattern);
        let value = u32::from_le_bytes(value);
        if let Some(r) = capture::memset(d, stream, dst, pitch, value, elem as u32, width, height) {
            return r;
        }
        if dst % elem as u64 != 0 || (height > 1 && (pitch < width * elem || pitch % elem != 0)) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        if width == 0 || height == 0 {
            return Ok(());
        }
        for row in 0..height {
            let start = dst + (row * pitch) as u64;
            d.device
                .mem_set(start, pattern, width as u64)
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
        }
        d.clock_ns += clock::device_copy_ns((width * height * elem) as u64);
        Ok(())
    })
}

exports! {
    fn cuMemcpy2D_v2(p_copy: *const CUDA_MEMCPY2D) {
        capture::unsafe_call()?;
        // SAFETY: `p_copy` is the caller's CUDA_MEMCPY2D (NULL refused by `copy_2d`), whose host pointers
        // address the rows it describes, as cuda.h requires.
        unsafe { copy_2d(p_copy, std::ptr::null_mut()) }
    }

    /// Alignment restrictions do not apply to the emulator's memory, so this
    /// is `cuMemcpy2D`.
    fn cuMemcpy2DUnaligned_v2(p_copy: *const CUDA_MEMCPY2D) {
        capture::unsafe_call()?;
        // SAFETY: `p_copy` is the caller's CUDA_MEMCPY2D (NULL refused by `copy_2d`), whose host pointers
        // address the rows it describes, as cuda.h requires.
        unsafe { copy_2d(p_copy, std::ptr::null_mut()) }
    }

    fn cuMemcpy2DAsync_v2(p_copy: *const CUDA_MEMCPY2D, h_stream: CUstream) {
        // SAFETY: `p_copy` is the caller's CUDA_MEMCPY2D (NULL refused by `copy_2d`), whose host pointers
        // address the rows it describes, as cuda.h requires.
        unsafe { copy_2d(p_copy, h_stream) }
    }

    fn cuMemcpy3D_v2(p_copy: *const CUDA_MEMCPY3D) {
        capture::unsafe_call()?;
        // SAFETY: `p_copy` is the caller's CUDA_MEMCPY3D (NULL refused by `copy_3d`), whose host pointers
        // address the box it describes, as cuda.h requires.
        unsafe { copy_3d(p_copy, std::ptr::null_mut()) }
    }

    fn cuMemcpy3DAsync_v2(p_copy: *const CUDA_MEMCPY3D, h_stream: CUstream) {
        // SAFETY: `p_copy` is the caller's CUDA_MEMCPY3D (NULL refused by `copy_3d`), whose host pointers
        // address the box it describes, as cuda.h requires.
        unsafe { copy_3d(p_copy, h_stream) }
    }

    fn cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, uc: u8, width: usize, height: usize) {
        capture::unsafe_call()?;
        memset_2d(dst, pitch, &[uc], width, height, std::ptr::null_mut())
    }

    fn cuMemsetD2D16_v2(dst: CUdeviceptr, pitch: usize, us: u16, width: usize, height: usize) {
        capture::unsafe_call()?;
        memset_2d(dst, pitch, &us.to_le_bytes(), width, height, std::ptr::null_mut())
    }

    fn cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, ui: c_uint, width: usize, height: usize) {
        capture::unsafe_call()?;
        memset_2d(dst, pitch, &ui.to_le_bytes(), width, height, std::ptr::null_mut())
    }

    fn cuMemsetD2D8Async(dst: CUdeviceptr, pitch: usize, uc: u8, width: usize, height: usize, h_stream: CUstream) {
        memset_2d(dst, pitch, &[uc], width, height, h_stream)
    }

    fn cuMemsetD2D16Async(dst: CUdeviceptr, pitch: usize, us: u16, width: usize, height: usize, h_stream: CUstream) {
        memset_2d(dst, pitch, &us.to_le_bytes(), width, height, h_stream)
    }

    fn cuMemsetD2D32Async(dst: CUdeviceptr, pitch: usize, ui: c_uint, width: usize, height: usize, h_stream: CUstream) {
        memset_2d(dst, pitch, &ui.to_le_bytes(), width, height, h_stream)
    }
}

aliases! {
    cuMemcpy2D_v2_ptds = cuMemcpy2D_v2(p_copy: *const CUDA_MEMCPY2D);
    cuMemcpy2DUnaligned_v2_ptds = cuMemcpy2DUnaligned_v2(p_copy: *const CUDA_MEMCPY2D);
    cuMemcpy2DAsync_v2_ptsz = cuMemcpy2DAsync_v2(p_copy: *const CUDA_MEMCPY2D, h_stream: CUstream);
    cuMemcpy3D_v2_ptds = cuMemcpy3D_v2(p_copy: *const CUDA_MEMCPY3D);
    cuMemcpy3DAsync_v2_ptsz = cuMemcpy3DAsync_v2(p_copy: *const CUDA_MEMCPY3D, h_stream: CUstream);
    cuMemsetD2D8_v2_ptds = cuMemsetD2D8_v2(dst: CUdeviceptr, pitch: usize, uc: u8, width: usize, height: usize);
    cuMemsetD2D16_v2_ptds = cuMemsetD2D16_v2(dst: CUdeviceptr, pitch: usize, us: u16, width: usize, height: usize);
    cuMemsetD2D32_v2_ptds = cuMemsetD2D32_v2(dst: CUdeviceptr, pitch: usize, ui: c_uint, width: usize, height: usize);
    cuMemsetD2D8Async_ptsz = cuMemsetD2D8Async(dst: CUdeviceptr, pitch: usize, uc: u8, width: usize, height: usize, h_stream: CUstream);
    cuMemsetD2D16Async_ptsz = cuMemsetD2D16Async(dst: CUdeviceptr, pitch: usize, us: u16, width: usize, height: usize, h_stream: CUstream);
    cuMemsetD2D32Async_ptsz = cuMemsetD2D32Async(dst: CUdeviceptr, pitch: usize, ui: c_uint, width: usize, height: usize, h_stream: CUstream);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuMemcpy2D": 3020 => cuMemcpy2D_v2, @ptds 7000 => cuMemcpy2D_v2_ptds;
        "cuMemcpy2DUnaligned": 3020 => cuMemcpy2DUnaligned_v2, @ptds 7000 => cuMemcpy2DUnaligned_v2_ptds;
        "cuMemcpy2DAsync": 3020 => cuMemcpy2DAsync_v2, @ptds 7000 => cuMemcpy2DAsync_v2_ptsz;
        "cuMemcpy3D": 3020 => cuMemcpy3D_v2, @ptds 7000 => cuMemcpy3D_v2_ptds;
        "cuMemcpy3DAsync": 3020 => cuMemcpy3DAsync_v2, @ptds 7000 => cuMemcpy3DAsync_v2_ptsz;
        "cuMemsetD2D8": 3020 => cuMemsetD2D8_v2, @ptds 7000 => cuMemsetD2D8_v2_ptds;
        "cuMemsetD2D16": 3020 => cuMemsetD2D16_v2, @ptds 7000 => cuMemsetD2D16_v2_ptds;
        "cuMemsetD2D32": 3020 => cuMemsetD2D32_v2, @ptds 7000 => cuMemsetD2D32_v2_ptds;
        "cuMemsetD2D8Async": 3020 => cuMemsetD2D8Async, @ptds 7000 => cuMemsetD2D8Async_ptsz;
        "cuMemsetD2D16Async": 3020 => cuMemsetD2D16Async, @ptds 7000 => cuMemsetD2D16Async_ptsz;
        "cuMemsetD2D32Async": 3020 => cuMemsetD2D32Async, @ptds 7000 => cuMemsetD2D32Async_ptsz;
    }
}
