//! CUDA arrays (`cuArrayCreate`, `cuArray3DCreate`, mipmapped arrays) and
//! the copies that name them by offset (`cuMemcpyAtoH` ...).
//!
//! An array is one device allocation laid out densely: rows of `width ×
//! element` bytes, `max(height, 1)` rows per slice, `max(depth, 1)`
//! slices; layers and cube faces are slices. The layout is the driver's
//! business (real arrays are tiled and opaque), so every access goes
//! through these descriptions: 2D/3D copies (`memory2d.rs`), texture and
//! surface objects (`texture.rs`, `surface.rs`), which hand the emulator
//! the addresses and pitches. A mipmapped array owns one such array per
//! level, each dimension halved (at least 1) from level to level.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use crate::cu::*;
use crate::driver::{Driver, with_context};
use crate::entry::{ProcEntry, procs};
use crate::entry::{aliases, exports, non_null, write_out};
use prlx_emulator::texture::{ChannelFormat, Level, Resource, Shape};

pub type CUarray = *mut c_void;
pub type CUmipmappedArray = *mut c_void;

/// `CUDA_ARRAY_DESCRIPTOR` (`_v2`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUDA_ARRAY_DESCRIPTOR {
    pub width: usize,
    pub height: usize,
    pub format: u32,
    pub num_channels: u32,
}

/// `CUDA_ARRAY3D_DESCRIPTOR` (`_v2`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUDA_ARRAY3D_DESCRIPTOR {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub format: u32,
    pub num_channels: u32,
    pub flags: u32,
}

pub const CUDA_ARRAY3D_LAYERED: u32 = 0x01;
pub const CUDA_ARRAY3D_SURFACE_LDST: u32 = 0x02;
pub const CUDA_ARRAY3D_CUBEMAP: u32 = 0x04;
pub const CUDA_ARRAY3D_TEXTURE_GATHER: u32 = 0x08;
/// Flags accepted: the above; depth textures, colour attachments, sparse
/// and deferred mapping are refused.
const KNOWN_FLAGS: u32 = CUDA_ARRAY3D_LAYERED
    | CUDA_ARRAY3D_SURFACE_LDST
    | CUDA_ARRAY3D_CUBEMAP
    | CUDA_ARRAY3D_TEXTURE_GATHER;

/// One CUDA array.
#[derive(Debug, Clone)]
pub struct CudaArray {
    pub ctx: usize,
    pub desc: CUDA_ARRAY3D_DESCRIPTOR,
    pub format: ChannelFormat,
    /// The device allocation holding the texels.
    pub base: u64,
    /// A level of a mipmapped array (freed with it), not destroyable alone.
    pub mip_level: bool,
}

impl CudaArray {
    pub fn texel_bytes(&self) -> usize {
        self.format.bytes() as usize * self.desc.num_channels as usize
    }

    /// Bytes of one row.
    pub fn row_bytes(&self) -> usize {
        self.desc.width * self.texel_bytes()
    }

    pub fn rows(&self) -> usize {
        self.desc.height.max(1)
    }

    pub fn slices(&self) -> usize {
        self.desc.depth.max(1)
    }

    pub fn bytes(&self) -> usize {
        self.row_bytes() * self.rows() * self.slices()
    }

    pub fn shape(&self) -> Shape {
        let f = self.desc.flags;
        match (f & CUDA_ARRAY3D_CUBEMAP != 0, f & CUDA_ARRAY3D_LAYERED != 0) {
            (true, true) => Shape::CubemapLayered,
            (true, false) => Shape::Cubemap,
            (false, true) if self.desc.height == 0 => Shape::Layered1D,
            (false, true) => Shape::Layered2D,
            _ if self.desc.depth > 0 => Shape::Array3D,
            _ if self.desc.height > 0 => Shape::Array2D,
            _ => Shape::Array1D,
        }
    }

    /// Layers (or cube faces) of a layered or cubemap array; 1 otherwise.
    pub fn layers(&self) -> u32 {
        match self.shape() {
            Shape::Layered1D | Shape::Layered2D | Shape::Cubemap | Shape::CubemapLayered => {
                self.slices() as u32
            }
            _ => 1,
        }
    }

    /// The array as a mip level for the emulator.
    pub fn level(&self) -> Level {
        let pitch = self.row_bytes() as u64;
        Level {
            base: self.base,
            width: self.desc.width as u32,
            height: self.rows() as u32,
            depth: if self.shape() == Shape::Array3D {
                self.slices() as u32
            } else {
                1
            },
            pitch,
            slice: pitch * self.rows() as u64,
        }
    }

    /// The array as a texture or surface resource (one level).
    pub fn resource(&self) -> Resource {
        Resource {
            shape: self.shape(),
            format: self.format,
            channels: self.desc.num_channels as u8,
            layers: self.layers(),
            levels: vec![self.level()],
        }
    }
}

/// A mipmapped array: its levels, finest first.
#[derive(Debug, Clone)]
pub struct MipmappedArray {
    pub ctx: usize,
    pub desc: CUDA_ARRAY3D_DESCRIPTOR,
    pub levels: Vec<usize>,
}

/// Arrays and mipmapped arrays by handle. Locked only inside the driver
/// lock (`with_context`), never the other way round.
#[derive(Debug, Default)]
pub struct ArrayTable {
    pub arrays: HashMap<usize, CudaArray>,
    pub mipmapped: HashMap<usize, MipmappedArray>,
    next: usize,
}

/// Array handles look like pointers in a range of their own (next to the
/// driver's handle ranges, `handles.rs`), 16 bytes apart, never reused.
const ARRAY_HANDLE_BASE: usize = 0x7a00_0000_0000_0000 + (0x30 << 40);

impl ArrayTable {
    fn handle(&mut self) -> usize {
        self.next += 1;
        ARRAY_HANDLE_BASE + self.next * 16
    }
}

pub fn arrays() -> MutexGuard<'static, ArrayTable> {
    static TABLE: OnceLock<Mutex<ArrayTable>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The live array `handle`, or `CUDA_ERROR_INVALID_HANDLE`.
pub fn array(handle: CUarray) -> Result<CudaArray, CUresult> {
    arrays()
        .arrays
        .get(&(handle as usize))
        .cloned()
        .ok_or(CUDA_ERROR_INVALID_HANDLE)
}

/// Checks a 3D descriptor as `cuArray3DCreate` documents it.
fn validate(desc: &CUDA_ARRAY3D_DESCRIPTOR) -> Result<ChannelFormat, CUresult> {
    let Some((format, _)) = crate::tex_format::channel_format(desc.format, desc.num_channels)
    else {
        // cuda.h's block-compressed, YUV and packed formats are valid but
        // not emulated; anything else (or a wrong channel count) is invalid.
        let known = matches!(desc.format, 0x50..=0x5e | 0x91..=0x9f | 0xa1..=0xa9 | 0xb0..=0xb5);
        if known {
            eprintln!(
                "prlx libcuda: CUDA array format 0x{:x} (block-compressed, YUV or packed) is not emulated; returning CUDA_ERROR_NOT_SUPPORTED",
                desc.format
            );
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        return Err(CUDA_ERROR_INVALID_VALUE);
    };
    if desc.flags & !KNOWN_FLAGS != 0 {
        // Depth textures, colour attachments, sparse and deferred-mapping
        // arrays, video: valid flags the emulator does not model.
        if desc.flags & !(KNOWN_FLAGS | 0x1f0) == 0 {
            eprintln!(
                "prlx libcuda: CUDA array flags 0x{:x} (depth, colour attachment, sparse, deferred mapping or video) are not emulated; returning CUDA_ERROR_NOT_SUPPORTED",
                desc.flags & !KNOWN_FLAGS
            );
            return Err(CUDA_ERROR_NOT_SUPPORTED);
        }
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let (w, h, d) = (desc.width, desc.height, desc.depth);
    let layered = desc.flags & CUDA_ARRAY3D_LAYERED != 0;
    let ok = if desc.flags & CUDA_ARRAY3D_CUBEMAP != 0 {
        // Square faces; 6 faces, or a multiple of 6 when layered.
        w > 0 && w == h && d > 0 && if layered { d % 6 == 0 } else { d == 6 }
    } else if layered {
        w > 0 && d > 0
    } else {
        // 1D: (w, 0, 0); 2D: (w, h, 0); 3D: all non-zero.
        w > 0 && (h > 0 || d == 0)
    };
    if !ok {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if !within_limits(desc) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(format)
}

/// The extents table of `cuArray3DCreate`: each kind of array against the
/// device's texture (or, with `CUDA_ARRAY3D_SURFACE_LDST`, surface) limits.
fn within_limits(desc: &CUDA_ARRAY3D_DESCRIPTOR) -> bool {
    use crate::tex_format::limit;
    let (w, h, d) = (desc.width, desc.height, desc.depth);
    let surface = desc.flags & CUDA_ARRAY3D_SURFACE_LDST != 0;
    let layered = desc.flags & CUDA_ARRAY3D_LAYERED != 0;
    let pick = |texture: i32, surf: i32| limit(if surface { surf } else { texture });
    let fits = |limits: [usize; 3]| w <= limits[0] && h <= limits[1] && d <= limits[2];
    if desc.flags & CUDA_ARRAY3D_CUBEMAP != 0 {
        if layered {
            fits([pick(53, 67), pick(53, 67), pick(54, 68)])
        } else {
            fits([pick(52, 66), pick(52, 66), 6])
        }
    } else if layered {
        if h == 0 {
            fits([pick(42, 61), 0, pick(43, 62)])
        } else {
            fits([pick(27, 63), pick(28, 64), pick(29, 65)])
        }
    } else if d > 0 {
        fits([pick(24, 58), pick(25, 59), pick(26, 60)])
            || (!surface && fits([limit(47), limit(48), limit(49)]))
    } else if h > 0 {
        if desc.flags & CUDA_ARRAY3D_TEXTURE_GATHER != 0 {
            fits([limit(45), limit(46), 0])
        } else {
            fits([pick(22, 56), pick(23, 57), 0])
        }
    } else {
        fits([pick(21, 55), 0, 0])
    }
}

fn create(
    d: &mut Driver,
    ctx: usize,
    desc: CUDA_ARRAY3D_DESCRIPTOR,
    mip_level: bool,
) -> Result<usize, CUresult> {
    let format = validate(&desc)?;
    let mut array = CudaArray {
        ctx,
        desc,
        format,
        base: 0,
        mip_level,
    };
    array.base = d
        .device
        .mem_alloc(array.bytes() as u64)
        .map_err(|_| CUDA_ERROR_OUT_OF_MEMORY)?;
    let mut t = arrays();
    let h = t.handle();
    t.arrays.insert(h, array);
    Ok(h)
}

fn destroy(d: &mut Driver, handle: usize) -> Result<(), CUresult> {
    let mut t = arrays();
    match t.arrays.get(&handle) {
        Some(a) if !a.mip_level => {}
        // Levels go with their mipmapped array.
        Some(_) => return Err(CUDA_ERROR_INVALID_VALUE),
        None => return Err(CUDA_ERROR_INVALID_HANDLE),
    }
    let a = t.arrays.remove(&handle).ok_or(CUDA_ERROR_INVALID_HANDLE)?;
    d.device
        .mem_free(a.base)
        .map_err(|_| CUDA_ERROR_INVALID_VALUE)
}

fn descriptor_2d(a: &CudaArray) -> CUDA_ARRAY_DESCRIPTOR {
    CUDA_ARRAY_DESCRIPTOR {
        width: a.desc.width,
        height: a.desc.height,
        format: a.desc.format,
        num_channels: a.desc.num_channels,
    }
}

/// Where one side of a 2D/3D copy lies in an array: its device address
/// and the array's pitch and rows per slice, after checking the box of
/// `width` bytes × `height` rows × `depth` slices at (`x` bytes, `y`, `z`)
/// lies inside it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_side(
    handle: *mut c_void,
    x: usize,
    y: usize,
    z: usize,
    width: usize,
    height: usize,
    depth: usize,
) -> Result<(u64, usize, usize), CUresult> {
    let a = array(handle)?;
    // `cuMemcpy2D/3D`: the x offset into an array is whole elements.
    if x % a.texel_bytes() != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let fits = |at: usize, n: usize, limit: usize| at.checked_add(n).is_some_and(|e| e <= limit);
    if !fits(x, width, a.row_bytes()) || !fits(y, height, a.rows()) || !fits(z, depth, a.slices()) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok((a.base, a.row_bytes(), a.rows()))
}

/// The device range `[offset, offset + count)` of an array, bounds-checked.
fn linear_range(handle: CUarray, offset: usize, count: usize) -> Result<u64, CUresult> {
    linear_range_of(&array(handle)?, offset, count)
}

fn linear_range_of(a: &CudaArray, offset: usize, count: usize) -> Result<u64, CUresult> {
    if offset.checked_add(count).is_none_or(|e| e > a.bytes()) {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    Ok(a.base + offset as u64)
}

fn copy_bytes(d: &mut Driver, dst: u64, src: u64, count: usize) -> Result<(), CUresult> {
    d.device
        .mem_copy(dst, src, count as u64)
        .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    d.clock_ns += crate::clock::device_copy_ns(count as u64);
    Ok(())
}

/// # Safety
/// `host` must be valid for reads of `count` bytes.
unsafe fn host_to_array(
    d: &mut Driver,
    dst: CUarray,
    offset: usize,
    host: *const c_void,
    count: usize,
) -> Result<(), CUresult> {
    let at = linear_range(dst, offset, count)?;
    if count == 0 {
        return Ok(());
    }
    non_null(host)?;
    // SAFETY: the caller's buffer holds `count` bytes.
    let data = unsafe { std::slice::from_raw_parts(host as *const u8, count) };
    d.device
        .mem_write(at, data)
        .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    d.clock_ns += crate::clock::host_copy_ns(count as u64);
    Ok(())
}

/// # Safety
/// `host` must be valid for writes of `count` bytes.
unsafe fn array_to_host(
    d: &mut Driver,
    host: *mut c_void,
    src: CUarray,
    offset: usize,
    count: usize,
) -> Result<(), CUresult> {
    let at = linear_range(src, offset, count)?;
    if count == 0 {
        return Ok(());
    }
    non_null(host)?;
    // SAFETY: the caller's buffer holds `count` bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(host as *mut u8, count) };
    d.device
        .mem_read(at, out)
        .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
    d.clock_ns += crate::clock::host_copy_ns(count as u64);
    Ok(())
}

fn mip_extent(x: usize, level: u32) -> usize {
    if x == 0 { 0 } else { (x >> level).max(1) }
}

exports! {
    fn cuArrayCreate_v2(p_handle: *mut CUarray, p_desc: *const CUDA_ARRAY_DESCRIPTOR) {
        with_context(|d, ctx| {
            non_null(p_handle)?;
            non_null(p_desc)?;
            // SAFETY: non-null, the caller's descriptor.
            let desc = unsafe { *p_desc };
            let h = create(d, ctx, CUDA_ARRAY3D_DESCRIPTOR {
                width: desc.width,
                height: desc.height,
                depth: 0,
                format: desc.format,
                num_channels: desc.num_channels,
                flags: 0,
            }, false)?;
            // SAFETY: `cuArrayCreate_v2`'s caller passes `p_handle` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUarray`.
            unsafe { write_out(p_handle, h as CUarray) }
        })
    }

    fn cuArray3DCreate_v2(p_handle: *mut CUarray, p_desc: *const CUDA_ARRAY3D_DESCRIPTOR) {
        with_context(|d, ctx| {
            non_null(p_handle)?;
            non_null(p_desc)?;
            // SAFETY: non-null, the caller's descriptor.
            let desc = unsafe { *p_desc };
            let h = create(d, ctx, desc, false)?;
            // SAFETY: `cuArray3DCreate_v2`'s caller passes `p_handle` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUarray`.
            unsafe { write_out(p_handle, h as CUarray) }
        })
    }

    fn cuArrayDestroy(h_array: CUarray) {
        with_context(|d, _| destroy(d, h_array as usize))
    }

    fn cuArrayGetDescriptor_v2(p_desc: *mut CUDA_ARRAY_DESCRIPTOR, h_array: CUarray) {
        with_context(|_, _| {
            let a = array(h_array)?;
            // SAFETY: `cuArrayGetDescriptor_v2`'s caller passes `p_desc` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `CUDA_ARRAY_DESCRIPTOR`.
            unsafe { write_out(p_desc, descriptor_2d(&a)) }
        })
    }

    fn cuArray3DGetDescriptor_v2(p_desc: *mut CUDA_ARRAY3D_DESCRIPTOR, h_array: CUarray) {
        with_context(|_, _| {
            let a = array(h_array)?;
            // SAFETY: `cuArray3DGetDescriptor_v2`'s caller passes `p_desc` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUDA_ARRAY3D_DESCRIPTOR`.
            unsafe { write_out(p_desc, a.desc) }
        })
    }

    fn cuMipmappedArrayCreate(
        p_handle: *mut CUmipmappedArray,
        p_desc: *const CUDA_ARRAY3D_DESCRIPTOR,
        num_levels: u32,
    ) {
        with_context(|d, ctx| {
            non_null(p_handle)?;
            non_null(p_desc)?;
            // SAFETY: non-null, the caller's descriptor.
            let desc = unsafe { *p_desc };
            validate(&desc)?;
            let layered = desc.flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP) != 0;
            // At most 1 + floor(log2(largest extent)) levels.
            let largest = desc.width.max(desc.height).max(if layered { 0 } else { desc.depth });
            let max_levels = usize::BITS - largest.leading_zeros();
            if num_levels == 0 || num_levels > max_levels {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let mut levels = Vec::new();
            for l in 0..num_levels {
                let level_desc = CUDA_ARRAY3D_DESCRIPTOR {
                    width: mip_extent(desc.width, l),
                    height: mip_extent(desc.height, l),
                    depth: if layered { desc.depth } else { mip_extent(desc.depth, l) },
                    ..desc
                };
                match create(d, ctx, level_desc, true) {
                    Ok(h) => levels.push(h),
                    Err(e) => {
                        let mut t = arrays();
                        for h in levels {
                            if let Some(a) = t.arrays.remove(&h) {
                                let _ = d.device.mem_free(a.base);
                            }
                        }
                        return Err(e);
                    }
                }
            }
            let mut t = arrays();
            let h = t.handle();
            t.mipmapped.insert(h, MipmappedArray { ctx, desc, levels });
            // SAFETY: `cuMipmappedArrayCreate`'s caller passes `p_handle` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUmipmappedArray`.
            unsafe { write_out(p_handle, h as CUmipmappedArray) }
        })
    }

    fn cuMipmappedArrayGetLevel(p_level_array: *mut CUarray, h_mipmapped_array: CUmipmappedArray, level: u32) {
        with_context(|_, _| {
            let t = arrays();
            let m = t
                .mipmapped
                .get(&(h_mipmapped_array as usize))
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let h = *m.levels.get(level as usize).ok_or(CUDA_ERROR_INVALID_VALUE)?;
            drop(t);
            // SAFETY: `cuMipmappedArrayGetLevel`'s caller passes `p_level_array` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUarray`.
            unsafe { write_out(p_level_array, h as CUarray) }
        })
    }

    fn cuMipmappedArrayDestroy(h_mipmapped_array: CUmipmappedArray) {
        with_context(|d, _| {
            let mut t = arrays();
            let m = t
                .mipmapped
                .remove(&(h_mipmapped_array as usize))
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            for h in m.levels {
                if let Some(a) = t.arrays.remove(&h) {
                    d.device.mem_free(a.base).map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
                }
            }
            Ok(())
        })
    }

    fn cuMemcpyHtoA_v2(dst_array: CUarray, dst_offset: usize, src_host: *const c_void, byte_count: usize) {
        crate::graph::capture::sync_call()?;
        // SAFETY: `src_host` holds `byte_count` bytes by cuMemcpyHtoA's contract.
        with_context(|d, _| unsafe { host_to_array(d, dst_array, dst_offset, src_host, byte_count) })
    }

    fn cuMemcpyHtoAAsync_v2(
        dst_array: CUarray,
        dst_offset: usize,
        src_host: *const c_void,
        byte_count: usize,
        h_stream: CUstream,
    ) {
        with_context(|d, _| {
            d.check_stream(h_stream)?;
            let capture = crate::graph::capture::copy_to_array(d, h_stream, dst_array, dst_offset, src_host, byte_count);
            if let Some(r) = capture {
                return r;
            }
            // SAFETY: `src_host` holds `byte_count` bytes by the call's contract.
            unsafe { host_to_array(d, dst_array, dst_offset, src_host, byte_count) }
        })
    }

    fn cuMemcpyAtoH_v2(dst_host: *mut c_void, src_array: CUarray, src_offset: usize, byte_count: usize) {
        crate::graph::capture::sync_call()?;
        // SAFETY: `dst_host` holds `byte_count` bytes by cuMemcpyAtoH's contract.
        with_context(|d, _| unsafe { array_to_host(d, dst_host, src_array, src_offset, byte_count) })
    }

    fn cuMemcpyAtoHAsync_v2(
        dst_host: *mut c_void,
        src_array: CUarray,
        src_offset: usize,
        byte_count: usize,
        h_stream: CUstream,
    ) {
        with_context(|d, _| {
            d.check_stream(h_stream)?;
            let capture = crate::graph::capture::copy_from_array(d, h_stream, dst_host, src_array, src_offset, byte_count);
            if let Some(r) = capture {
                return r;
            }
            // SAFETY: `dst_host` holds `byte_count` bytes by the call's contract.
            unsafe { array_to_host(d, dst_host, src_array, src_offset, byte_count) }
        })
    }

    fn cuMemcpyAtoD_v2(dst_device: CUdeviceptr, src_array: CUarray, src_offset: usize, byte_count: usize) {
        crate::graph::capture::sync_call()?;
        with_context(|d, _| {
            // Whole elements, as `cuda.h` requires.
            let a = array(src_array)?;
            if byte_count % a.texel_bytes() != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let src = linear_range_of(&a, src_offset, byte_count)?;
            copy_bytes(d, dst_device, src, byte_count)
        })
    }

    fn cuMemcpyDtoA_v2(dst_array: CUarray, dst_offset: usize, src_device: CUdeviceptr, byte_count: usize) {
        crate::graph::capture::sync_call()?;
        with_context(|d, _| {
            // Whole elements, as `cuda.h` requires.
            let a = array(dst_array)?;
            if byte_count % a.texel_bytes() != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let dst = linear_range_of(&a, dst_offset, byte_count)?;
            copy_bytes(d, dst, src_device, byte_count)
        })
    }

    fn cuMemcpyAtoA_v2(
        dst_array: CUarray,
        dst_offset: usize,
        src_array: CUarray,
        src_offset: usize,
        byte_count: usize,
    ) {
        crate::graph::capture::sync_call()?;
        with_context(|d, _| {
            // Formats may differ; element sizes may not, and the count is whole elements.
            let (a, b) = (array(dst_array)?, array(src_array)?);
            if a.texel_bytes() != b.texel_bytes() || byte_count % a.texel_bytes() != 0 {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            let dst = linear_range_of(&a, dst_offset, byte_count)?;
            let src = linear_range_of(&b, src_offset, byte_count)?;
            copy_bytes(d, dst, src, byte_count)
        })
    }
}

aliases! {
    cuMemcpyHtoA_v2_ptds = cuMemcpyHtoA_v2(dst_array: CUarray, dst_offset: usize, src_host: *const c_void, byte_count: usize);
    cuMemcpyHtoAAsync_v2_ptsz = cuMemcpyHtoAAsync_v2(dst_array: CUarray, dst_offset: usize, src_host: *const c_void, byte_count: usize, h_stream: CUstream);
    cuMemcpyAtoH_v2_ptds = cuMemcpyAtoH_v2(dst_host: *mut c_void, src_array: CUarray, src_offset: usize, byte_count: usize);
    cuMemcpyAtoHAsync_v2_ptsz = cuMemcpyAtoHAsync_v2(dst_host: *mut c_void, src_array: CUarray, src_offset: usize, byte_count: usize, h_stream: CUstream);
    cuMemcpyAtoD_v2_ptds = cuMemcpyAtoD_v2(dst_device: CUdeviceptr, src_array: CUarray, src_offset: usize, byte_count: usize);
    cuMemcpyDtoA_v2_ptds = cuMemcpyDtoA_v2(dst_array: CUarray, dst_offset: usize, src_device: CUdeviceptr, byte_count: usize);
    cuMemcpyAtoA_v2_ptds = cuMemcpyAtoA_v2(dst_array: CUarray, dst_offset: usize, src_array: CUarray, src_offset: usize, byte_count: usize);
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuArrayCreate": 3020 => cuArrayCreate_v2;
        "cuArray3DCreate": 3020 => cuArray3DCreate_v2;
        "cuArrayDestroy": 2000 => cuArrayDestroy;
        "cuArrayGetDescriptor": 3020 => cuArrayGetDescriptor_v2;
        "cuArray3DGetDescriptor": 3020 => cuArray3DGetDescriptor_v2;
        "cuMipmappedArrayCreate": 5000 => cuMipmappedArrayCreate;
        "cuMipmappedArrayGetLevel": 5000 => cuMipmappedArrayGetLevel;
        "cuMipmappedArrayDestroy": 5000 => cuMipmappedArrayDestroy;
        "cuMemcpyHtoA": 3020 => cuMemcpyHtoA_v2, @ptds 7000 => cuMemcpyHtoA_v2_ptds;
        "cuMemcpyHtoAAsync": 3020 => cuMemcpyHtoAAsync_v2, @ptds 7000 => cuMemcpyHtoAAsync_v2_ptsz;
        "cuMemcpyAtoH": 3020 => cuMemcpyAtoH_v2, @ptds 7000 => cuMemcpyAtoH_v2_ptds;
        "cuMemcpyAtoHAsync": 3020 => cuMemcpyAtoHAsync_v2, @ptds 7000 => cuMemcpyAtoHAsync_v2_ptsz;
        "cuMemcpyAtoD": 3020 => cuMemcpyAtoD_v2, @ptds 7000 => cuMemcpyAtoD_v2_ptds;
        "cuMemcpyDtoA": 3020 => cuMemcpyDtoA_v2, @ptds 7000 => cuMemcpyDtoA_v2_ptds;
        "cuMemcpyAtoA": 3020 => cuMemcpyAtoA_v2, @ptds 7000 => cuMemcpyAtoA_v2_ptds;
    }
}
