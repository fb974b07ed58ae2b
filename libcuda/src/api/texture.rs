//! Texture objects: `cuTexObjectCreate/Destroy/GetResourceDesc/
//! GetTextureDesc/GetResourceViewDesc`.
//!
//! `cuTexObjectCreate` turns the resource description (a CUDA array, a
//! mipmapped array, linear or pitched linear memory) and the texture
//! description into the emulator's descriptor
//! ([`prlx_emulator::texture::TextureObject`]); the handle it returns is what
//! kernels receive and pass to `tex`/`tld4`/`txq`. The descriptions the
//! caller gave are kept as given, for the `Get*Desc` queries.
//!
//! Following the `cuTexObjectCreate` contract: address and filter modes are
//! ignored for linear memory; without `CU_TRSF_NORMALIZED_COORDINATES` only
//! clamp and border addressing exist (wrap and mirror clamp); mipmapped
//! arrays need normalized coordinates; `flags` of the resource must be 0;
//! pitched memory needs a pitch that is a multiple of
//! `CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT` (32) and a width and
//! height within it. Resource views are accepted when they keep the
//! resource's format and extent (`CU_RES_VIEW_FORMAT_NONE`), which is all
//! the emulator can honour; others fail with `CUDA_ERROR_NOT_SUPPORTED`.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use super::array::{CUDA_ARRAY_DESCRIPTOR, CUarray, CUmipmappedArray, array, arrays};
use crate::cu::*;
use crate::driver::{Driver, with_context, with_driver};
use crate::entry::{ProcEntry, procs};
use crate::entry::{exports, non_null, write_out};
pub use crate::tex_format::{TEXTURE_PITCH_ALIGNMENT, channel_format, device_attribute, limit};
use prlx_emulator::texture::{
    AddressMode, ChannelFormat, FilterMode, Level, Resource, Sampler, Shape, TextureObject,
};

pub type CUtexObject = u64;

pub const CU_RESOURCE_TYPE_ARRAY: u32 = 0;
pub const CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: u32 = 1;
pub const CU_RESOURCE_TYPE_LINEAR: u32 = 2;
pub const CU_RESOURCE_TYPE_PITCH2D: u32 = 3;

pub const CU_TRSF_READ_AS_INTEGER: u32 = 0x01;
pub const CU_TRSF_NORMALIZED_COORDINATES: u32 = 0x02;
pub const CU_TRSF_SRGB: u32 = 0x10;
pub const CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION: u32 = 0x20;
pub const CU_TRSF_SEAMLESS_CUBEMAP: u32 = 0x40;

/// `CUDA_RESOURCE_DESC`: `resType`, then a 128-byte union (read by the
/// accessors below), then `flags`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUDA_RESOURCE_DESC {
    pub res_type: u32,
    pub res: [u64; 16],
    pub flags: u32,
}

impl CUDA_RESOURCE_DESC {
    /// `res.array.hArray`, `res.mipmap.hMipmappedArray`, or `devPtr`.
    fn handle(&self) -> u64 {
        self.res[0]
    }
    /// `format` of `res.linear`/`res.pitch2D`.
    fn format(&self) -> u32 {
        self.res[1] as u32
    }
    fn num_channels(&self) -> u32 {
        (self.res[1] >> 32) as u32
    }
    /// `res.linear.sizeInBytes` / `res.pitch2D.width`.
    fn word(&self, i: usize) -> usize {
        self.res[i] as usize
    }

    pub fn for_array(h: *mut c_void) -> CUDA_RESOURCE_DESC {
        let mut res = [0u64; 16];
        res[0] = h as u64;
        CUDA_RESOURCE_DESC {
            res_type: CU_RESOURCE_TYPE_ARRAY,
            res,
            flags: 0,
        }
    }
}

/// `CUDA_TEXTURE_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUDA_TEXTURE_DESC {
    pub address_mode: [u32; 3],
    pub filter_mode: u32,
    pub flags: u32,
    pub max_anisotropy: u32,
    pub mipmap_filter_mode: u32,
    pub mipmap_level_bias: f32,
    pub min_mipmap_level_clamp: f32,
    pub max_mipmap_level_clamp: f32,
    pub border_color: [f32; 4],
    pub reserved: [i32; 12],
}

/// `CUDA_RESOURCE_VIEW_DESC`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUDA_RESOURCE_VIEW_DESC {
    pub format: u32,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub first_mipmap_level: u32,
    pub last_mipmap_level: u32,
    pub first_layer: u32,
    pub last_layer: u32,
    pub reserved: [u32; 16],
}

/// What a texture object was created from.
#[derive(Debug, Clone, Copy)]
struct Record {
    resource: CUDA_RESOURCE_DESC,
    texture: CUDA_TEXTURE_DESC,
    view: Option<CUDA_RESOURCE_VIEW_DESC>,
}

fn records() -> MutexGuard<'static, HashMap<u64, Record>> {
    static TABLE: OnceLock<Mutex<HashMap<u64, Record>>> = OnceLock::new();
    TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Whether the resource's format reads as normalized floats whatever the
/// read mode (see [`channel_format`]).
fn always_normalized(desc: &CUDA_RESOURCE_DESC) -> bool {
    let (code, channels) = match desc.res_type {
        CU_RESOURCE_TYPE_ARRAY => match array(desc.handle() as *mut c_void) {
            Ok(a) => (a.desc.format, a.desc.num_channels),
            Err(_) => return false,
        },
        CU_RESOURCE_TYPE_MIPMAPPED_ARRAY => match arrays().mipmapped.get(&(desc.handle() as usize))
        {
            Some(m) => (m.desc.format, m.desc.num_channels),
            None => return false,
        },
        _ => (desc.format(), desc.num_channels()),
    };
    channel_format(code, channels).is_some_and(|(_, normalized)| normalized)
}

/// The emulator resource a `CUDA_RESOURCE_DESC` describes.
pub(crate) fn resource_of(d: &Driver, desc: &CUDA_RESOURCE_DESC) -> Result<Resource, CUresult> {
    if desc.flags != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let linear_format = || -> Result<(ChannelFormat, u8, usize), CUresult> {
        let channels = desc.num_channels();
        let (format, _) =
            channel_format(desc.format(), channels).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        let texel = format.bytes() as usize * channels as usize;
        let ptr = desc.handle();
        if ptr == 0 || ptr % texel as u64 != 0 || d.device.mem_range(ptr).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        Ok((format, channels as u8, texel))
    };
    // Linear memory at the resource's address: `height` rows of `width`
    // texels, `pitch` bytes apart.
    let pitched = |shape, format, channels, width: usize, height: usize, pitch: usize| Resource {
        shape,
        format,
        channels,
        layers: 1,
        levels: vec![Level {
            base: desc.handle(),
            width: width as u32,
            height: height as u32,
            depth: 1,
            pitch: pitch as u64,
            slice: (pitch * height) as u64,
        }],
    };
    match desc.res_type {
        CU_RESOURCE_TYPE_ARRAY => Ok(array(desc.handle() as *mut c_void)?.resource()),
        CU_RESOURCE_TYPE_MIPMAPPED_ARRAY => {
            let t = arrays();
            let m = t
                .mipmapped
                .get(&(desc.handle() as usize))
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let levels: Vec<Level> = m
                .levels
                .iter()
                .filter_map(|h| t.arrays.get(h))
                .map(|a| a.level())
                .collect();
            let first = t
                .arrays
                .get(&m.levels[0])
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
            let mut r = first.resource();
            r.levels = levels;
            Ok(r)
        }
        CU_RESOURCE_TYPE_LINEAR => {
            let (format, channels, texel) = linear_format()?;
            let size = desc.word(2);
            let width = size / texel;
            if width == 0 || width > limit(69) {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            Ok(pitched(Shape::Linear, format, channels, width, 1, size))
        }
        CU_RESOURCE_TYPE_PITCH2D => {
            let (format, channels, texel) = linear_format()?;
            let (width, height, pitch) = (desc.word(2), desc.word(3), desc.word(4));
            if width == 0
                || height == 0
                || pitch % TEXTURE_PITCH_ALIGNMENT != 0
                || width.checked_mul(texel).is_none_or(|row| row > pitch)
                || width > limit(70)
                || height > limit(71)
                || pitch > limit(72)
            {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            Ok(pitched(
                Shape::Pitch2D,
                format,
                channels,
                width,
                height,
                pitch,
            ))
        }
        _ => Err(CUDA_ERROR_INVALID_VALUE),
    }
}

/// The sampler a `CUDA_TEXTURE_DESC` describes, for `resource` (whose
/// format may force normalized reads: `normalized_format`).
fn sampler_of(
    t: &CUDA_TEXTURE_DESC,
    resource: &Resource,
    normalized_format: bool,
) -> Result<Sampler, CUresult> {
    let known = CU_TRSF_READ_AS_INTEGER
        | CU_TRSF_NORMALIZED_COORDINATES
        | CU_TRSF_SRGB
        | CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION
        | CU_TRSF_SEAMLESS_CUBEMAP;
    if t.flags & !known != 0 {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    if t.flags & CU_TRSF_SEAMLESS_CUBEMAP != 0 && !resource.shape.cube() {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let mut address = [AddressMode::Clamp; 3];
    for (slot, code) in address.iter_mut().zip(t.address_mode) {
        *slot = AddressMode::from_cu(code).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    }
    let filter = FilterMode::from_cu(t.filter_mode).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let mip_filter = FilterMode::from_cu(t.mipmap_filter_mode).ok_or(CUDA_ERROR_INVALID_VALUE)?;
    let normalized = t.flags & CU_TRSF_NORMALIZED_COORDINATES != 0;
    if resource.levels.len() > 1 && !normalized {
        return Err(CUDA_ERROR_INVALID_VALUE);
    }
    let linear = resource.shape == Shape::Linear;
    Ok(Sampler {
        address: if linear {
            [AddressMode::Clamp; 3]
        } else {
            address
        },
        filter: if linear { FilterMode::Point } else { filter },
        mip_filter,
        normalized_coords: normalized && !linear,
        read_as_integer: t.flags & CU_TRSF_READ_AS_INTEGER != 0 && !normalized_format,
        srgb: t.flags & CU_TRSF_SRGB != 0,
        border: t.border_color,
        lod_bias: t.mipmap_level_bias,
        min_lod: t.min_mipmap_level_clamp,
        max_lod: t.max_mipmap_level_clamp,
    })
}

/// Whether a resource view asks for nothing but the resource itself.
fn identity_view(v: &CUDA_RESOURCE_VIEW_DESC, r: &Resource) -> bool {
    let l0 = &r.levels[0];
    let layered = r.shape.layered() || r.shape.cube();
    v.format == 0
        && (v.width == 0 || v.width == l0.width as usize)
        && (v.height == 0 || v.height == l0.height as usize || r.shape.dims() < 2)
        && (v.depth == 0 || v.depth == l0.depth as usize || v.depth == r.layers as usize)
        && v.first_mipmap_level == 0
        && (v.last_mipmap_level == 0 || v.last_mipmap_level as usize == r.levels.len() - 1)
        && v.first_layer == 0
        && (v.last_layer == 0 || (layered && v.last_layer + 1 == r.layers))
}

exports! {
    /// The element count of the largest 1D linear texture of this element
    /// type: `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH` for every
    /// format the emulator samples.
    fn cuDeviceGetTexture1DLinearMaxWidth(
        max_width_in_elements: *mut usize,
        format: u32,
        num_channels: u32,
        dev: CUdevice,
    ) {
        with_driver(|_| {
            crate::driver::check_device(dev)?;
            if channel_format(format, num_channels).is_none() {
                return Err(CUDA_ERROR_INVALID_VALUE);
            }
            // SAFETY: `cuDeviceGetTexture1DLinearMaxWidth`'s caller passes `max_width_in_elements` as
            // cuda.h specifies: NULL (refused by `write_out`) or valid for writing a `usize`.
            unsafe { write_out(max_width_in_elements, limit(69)) }
        })
    }

    fn cuTexObjectCreate(
        p_tex_object: *mut CUtexObject,
        p_res_desc: *const CUDA_RESOURCE_DESC,
        p_tex_desc: *const CUDA_TEXTURE_DESC,
        p_res_view_desc: *const CUDA_RESOURCE_VIEW_DESC,
    ) {
        with_context(|d, _| {
            non_null(p_tex_object)?;
            non_null(p_res_desc)?;
            non_null(p_tex_desc)?;
            // SAFETY: non-null, the caller's descriptions.
            let (res, tex) = unsafe { (*p_res_desc, *p_tex_desc) };
            let view = if p_res_view_desc.is_null() {
                None
            } else {
                // SAFETY: non-null, the caller's view.
                Some(unsafe { *p_res_view_desc })
            };
            let resource = resource_of(d, &res)?;
            if let Some(v) = &view {
                if res.res_type >= CU_RESOURCE_TYPE_LINEAR {
                    return Err(CUDA_ERROR_INVALID_VALUE);
                }
                if !identity_view(v, &resource) {
                    return Err(CUDA_ERROR_NOT_SUPPORTED);
                }
            }
            let sampler = sampler_of(&tex, &resource, always_normalized(&res))?;
            let handle = d
                .device
                .texture_object_create(TextureObject { resource, sampler })
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            records().insert(handle, Record { resource: res, texture: tex, view });
            // SAFETY: `cuTexObjectCreate`'s caller passes `p_tex_object` as cuda.h specifies: NULL (refused
            // by `write_out`) or valid for writing a `CUtexObject`.
            unsafe { write_out(p_tex_object, handle) }
        })
    }

    fn cuTexObjectDestroy(tex_object: CUtexObject) {
        with_context(|d, _| {
            d.device
                .bound_object_destroy(tex_object, false)
                .map_err(|_| CUDA_ERROR_INVALID_VALUE)?;
            records().remove(&tex_object);
            Ok(())
        })
    }

    fn cuTexObjectGetResourceDesc(p_res_desc: *mut CUDA_RESOURCE_DESC, tex_object: CUtexObject) {
        with_context(|_, _| {
            let r = records().get(&tex_object).copied().ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuTexObjectGetResourceDesc`'s caller passes `p_res_desc` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUDA_RESOURCE_DESC`.
            unsafe { write_out(p_res_desc, r.resource) }
        })
    }

    fn cuTexObjectGetTextureDesc(p_tex_desc: *mut CUDA_TEXTURE_DESC, tex_object: CUtexObject) {
        with_context(|_, _| {
            let r = records().get(&tex_object).copied().ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuTexObjectGetTextureDesc`'s caller passes `p_tex_desc` as cuda.h specifies: NULL
            // (refused by `write_out`) or valid for writing a `CUDA_TEXTURE_DESC`.
            unsafe { write_out(p_tex_desc, r.texture) }
        })
    }

    /// `CUDA_ERROR_INVALID_VALUE` when the object was created without a view.
    fn cuTexObjectGetResourceViewDesc(p_res_view_desc: *mut CUDA_RESOURCE_VIEW_DESC, tex_object: CUtexObject) {
        with_context(|_, _| {
            let r = records().get(&tex_object).copied().ok_or(CUDA_ERROR_INVALID_VALUE)?;
            let v = r.view.ok_or(CUDA_ERROR_INVALID_VALUE)?;
            // SAFETY: `cuTexObjectGetResourceViewDesc`'s caller passes `p_res_view_desc` as cuda.h
            // specifies: NULL (refused by `write_out`) or valid for writing a
            // `CUDA_RESOURCE_VIEW_DESC`.
            unsafe { write_out(p_res_view_desc, v) }
        })
    }
}

/// The `cuGetProcAddress` entries of this module.
pub fn entries() -> Vec<ProcEntry> {
    procs! {
        "cuTexObjectCreate": 5000 => cuTexObjectCreate;
        "cuTexObjectDestroy": 5000 => cuTexObjectDestroy;
        "cuTexObjectGetResourceDesc": 5000 => cuTexObjectGetResourceDesc;
        "cuTexObjectGetTextureDesc": 5000 => cuTexObjectGetTextureDesc;
        "cuTexObjectGetResourceViewDesc": 5000 => cuTexObjectGetResourceViewDesc;
        "cuModuleGetTexRef": 2000 => cuModuleGetTexRef;
        "cuTexRefCreate": 2000 => cuTexRefCreate;
        "cuTexRefDestroy": 2000 => cuTexRefDestroy;
        "cuTexRefSetArray": 2000 => cuTexRefSetArray;
        "cuTexRefSetMipmappedArray": 5000 => cuTexRefSetMipmappedArray;
        "cuTexRefSetAddress": 3020 => cuTexRefSetAddress_v2;
        "cuTexRefSetAddress2D": 4010 => cuTexRefSetAddress2D_v3;
        "cuTexRefSetFormat": 2000 => cuTexRefSetFormat;
        "cuTexRefSetAddressMode": 2000 => cuTexRefSetAddressMode;
        "cuTexRefSetFilterMode": 2000 => cuTexRefSetFilterMode;
        "cuTexRefSetMipmapFilterMode": 5000 => cuTexRefSetMipmapFilterMode;
        "cuTexRefSetMipmapLevelBias": 5000 => cuTexRefSetMipmapLevelBias;
        "cuTexRefSetMipmapLevelClamp": 5000 => cuTexRefSetMipmapLevelClamp;
        "cuTexRefSetMaxAnisotropy": 5000 => cuTexRefSetMaxAnisotropy;
        "cuTexRefSetBorderColor": 8000 => cuTexRefSetBorderColor;
        "cuTexRefSetFlags": 2000 => cuTexRefSetFlags;
        "cuTexRefGetAddress": 3020 => cuTexRefGetAddress_v2;
        "cuTexRefGetArray": 2000 => cuTexRefGetArray;
        "cuTexRefGetMipmappedArray": 5000 => cuTexRefGetMipmappedArray;
        "cuTexRefGetAddressMode": 2000 => cuTexRefGetAddressMode;
        "cuTexRefGetFilterMode": 2000 => cuTexRefGetFilterMode;
        "cuTexRefGetMipmapFilterMode": 5000 => cuTexRefGetMipmapFilterMode;
        "cuTexRefGetFormat": 2000 => cuTexRefGetFormat;
        "cuTexRefGetMipmapLevelBias": 5000 => cuTexRefGetMipmapLevelBias;
        "cuTexRefGetMipmapLevelClamp": 5000 => cuTexRefGetMipmapLevelClamp;
        "cuTexRefGetMaxAnisotropy": 5000 => cuTexRefGetMaxAnisotropy;
        "cuTexRefGetBorderColor": 8000 => cuTexRefGetBorderColor;
        "cuTexRefGetFlags": 2000 => cuTexRefGetFlags;
        "cuParamSetTexRef": 2000 => cuParamSetTexRef;
        "cuDeviceGetTexture1DLinearMaxWidth": 11010 => cuDeviceGetTexture1DLinearMaxWidth;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_layouts_match_cuda_h() {
        assert_eq!(std::mem::size_of::<CUDA_RESOURCE_DESC>(), 144);
        assert_eq!(std::mem::offset_of!(CUDA_RESOURCE_DESC, flags), 136);
        assert_eq!(std::mem::size_of::<CUDA_TEXTURE_DESC>(), 104);
        assert_eq!(std::mem::offset_of!(CUDA_TEXTURE_DESC, border_color), 40);
        assert_eq!(std::mem::size_of::<CUDA_RESOURCE_VIEW_DESC>(), 112);
        assert_eq!(
            std::mem::offset_of!(CUDA_RESOURCE_VIEW_DESC, first_mipmap_level),
            32
        );
    }
}

// ---------------------------------------------------------------------------
// Texture references (`cuModuleGetTexRef`, `cuTexRef*`): the legacy,
// deprecated binding of a module's `.texref` variable. A reference keeps
// sampler state and the resource bound to it; every change re-creates the
// emulator texture object and binds it to the variable
// (`Device::bind_reference`), so a launch sees the state of its time.

pub type CUtexref = *mut c_void;

/// `cuTexRefSetArray`'s only flag value.
pub const CU_TRSA_OVERRIDE_FORMAT: u32 = 0x01;
/// `cuParamSetTexRef`'s only texture unit.
pub const CU_PARAM_TR_DEFAULT: i32 = -1;

/// What a texture reference is bound to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Binding {
    None,
    Array(usize),
    Mipmapped(usize),
    Linear {
        ptr: u64,
        bytes: usize,
    },
    Pitch2D {
        ptr: u64,
        width: usize,
        height: usize,
        pitch: usize,
    },
}

#[derive(Debug, Clone, Copy)]
struct TexRef {
    /// The module variable's device address; `None` for `cuTexRefCreate`'s.
    variable: Option<u64>,
    format: u32,
    channels: u32,
    texture: CUDA_TEXTURE_DESC,
    binding: Binding,
    /// The emulator object currently bound to the variable.
    object: Option<u64>,
}

/// Texture or surface reference handles, from a range of their own beside
/// the arrays'.
pub(super) struct RefTable<T> {
    pub(super) refs: HashMap<usize, T>,
    /// Module variable address → its reference, so every
    /// `cuModuleGetTexRef`/`cuModuleGetSurfRef` of one name returns the
    /// same handle.
    by_variable: HashMap<u64, usize>,
    base: usize,
    next: usize,
}

impl<T> RefTable<T> {
    pub(super) fn new(base: usize) -> RefTable<T> {
        RefTable {
            refs: HashMap::new(),
            by_variable: HashMap::new(),
            base,
            next: 0,
        }
    }

    /// A new handle, for `r`.
    pub(super) fn insert(&mut self, r: T) -> usize {
        self.next += 1;
        let h = self.base + self.next * 16;
        self.refs.insert(h, r);
        h
    }

    /// The handle of the module variable at `variable`, whose reference
    /// `make` describes the first time.
    pub(super) fn for_variable(&mut self, variable: u64, make: impl FnOnce() -> T) -> usize {
        if let Some(h) = self.by_variable.get(&variable) {
            return *h;
        }
        let h = self.insert(make());
        self.by_variable.insert(variable, h);
        h
    }
}

fn texrefs() -> MutexGuard<'static, RefTable<TexRef>> {
    static TABLE: OnceLock<Mutex<RefTable<TexRef>>> = OnceLock::new();
    TABLE
        .get_or_init(|| Mutex::new(RefTable::new(0x7a00_0000_0000_0000 + (0x31 << 40))))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// A reference in its initial state (format, filtering and addressing as
/// `texture<>` declares them by default).
fn new_texref(variable: Option<u64>) -> TexRef {
    // SAFETY: plain data; all-zero is a valid value.
    let mut texture: CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
    texture.address_mode = [1; 3]; // clamp, the default of texture<>
    TexRef {
        variable,
        format: 0x20,
        channels: 1,
        texture,
        binding: Binding::None,
        object: None,
    }
}

/// The resource description of a reference's binding.
fn binding_desc(r: &TexRef) -> Option<CUDA_RESOURCE_DESC> {
    let mut res = [0u64; 16];
    let res_type = match r.binding {
        Binding::None => return None,
        Binding::Array(a) => {
            res[0] = a as u64;
            CU_RESOURCE_TYPE_ARRAY
        }
        Binding::Mipmapped(m) => {
            res[0] = m as u64;
            CU_RESOURCE_TYPE_MIPMAPPED_ARRAY
        }
        Binding::Linear { ptr, bytes } => {
            res[0] = ptr;
            res[1] = r.format as u64 | (r.channels as u64) << 32;
            res[2] = bytes as u64;
            CU_RESOURCE_TYPE_LINEAR
        }
        Binding::Pitch2D {
            ptr,
            width,
            height,
            pitch,
        } => {
            res[0] = ptr;
            res[1] = r.format as u64 | (r.channels as u64) << 32;
            res[2] = width as u64;
            res[3] = height as u64;
            res[4] = pitch as u64;
            CU_RESOURCE_TYPE_PITCH2D
        }
    };
    Some(CUDA_RESOURCE_DESC {
        res_type,
        res,
        flags: 0,
    })
}

/// Applies `change` to reference `h` and rebinds its variable; the
/// reference is left unchanged when the new state cannot be bound.
fn update_texref(
    h: CUtexref,
    change: impl FnOnce(&mut TexRef) -> Result<(), CUresult>,
) -> Result<(), CUresult> {
    with_context(|d, _| {
        let mut table = texrefs();
        let old = *table
            .refs
            .get(&(h as usize))
            .ok_or(CUDA_ERROR_INVALID_HANDLE)?;
        let mut r = old;
        change(&mut r)?;
        // A resource that cannot be bound is an error; sampler state that does
        // not fit it yet (flags set after the binding, say) leaves the
        // variable unbound until a later call completes it.
        let object = match binding_desc(&r) {
            Some(res) => {
                let resource = resource_of(d, &res)?;
                match sampler_of(&r.texture, &resource, always_normalized(&res)) {
                    Ok(sampler) => Some(
                        d.device
                            .texture_object_create(TextureObject { resource, sampler })
                            .map_err(|_| CUDA_ERROR_INVALID_VALUE)?,
                    ),
                    Err(_) => None,
                }
            }
            None => None,
        };
        if let Some(var) = r.variable {
            d.device.bind_reference(var, object);
        }
        if let Some(previous) = old.object {
            let _ = d.device.bound_object_destroy(previous, false);
        }
        r.object = object;
        table.refs.insert(h as usize, r);
        Ok(())
    })
}

/// Reads reference `h`'s state.
fn read_texref<T>(
    h: CUtexref,
    read: impl FnOnce(&TexRef) -> Result<T, CUresult>,
) -> Result<T, CUresult> {
    with_context(|_, _| {
        let table = texrefs();
        read(
            table
                .refs
                .get(&(h as usize))
                .ok_or(CUDA_ERROR_INVALID_HANDLE)?,
        )
    })
}

exports! {
    fn cuModuleGetTexRef(p_tex_ref: *mut CUtexref, hmod: CUmodule, name: *const std::ffi::c_char) {
        with_context(|d, _| {
            non_null(p_tex_ref)?;
            // SAFETY: a C string from the caller.
            let name = unsafe { crate::entry::c_str(name) }?;
            let (addr, _) = super::module::get_global(d, hmod, name)?;
            let h = texrefs().for_variable(addr, || new_texref(Some(addr)));
            // SAFETY: `cuModuleGetTexRef`'s caller passes `p_tex_ref` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUtexref`.
            unsafe { write_out(p_tex_ref, h as CUtexref) }
        })
    }

    /// A reference no module variable names (deprecated; only its state is useful).
    fn cuTexRefCreate(p_tex_ref: *mut CUtexref) {
        with_context(|_, _| {
            non_null(p_tex_ref)?;
            let h = texrefs().insert(new_texref(None));
            // SAFETY: `cuTexRefCreate`'s caller passes `p_tex_ref` as cuda.h specifies: NULL (refused by
            // `write_out`) or valid for writing a `CUtexref`.
            unsafe { write_out(p_tex_ref, h as CUtexref) }
        })
    }

    fn cuTexRefDestroy(h_tex_ref: CUtexref) {
        with_context(|d, _| {
            let mut t = texrefs();
            match t.refs.get(&(h_tex_ref as usize)) {
                Some(r) if r.variable.is_none() => {}
                // Module references live as long as their module.
                Some(_) => return Err(CUDA_ERROR_INVALID_VALUE),
                None => return Err(CUDA_ERROR_INVALID_HANDLE),
            }
            if let Some(r) = t.refs.remove(&(h_tex_ref as usize))
                && let Some(o) = r.object
            {
                let _ = d.device.bound_object_destroy(o, false);
            }
            Ok(())
        })
    }

    fn cuTexRefSetArray(h_tex_ref: CUtexref, h_array: CUarray, flags: u32) {
        if flags != CU_TRSA_OVERRIDE_FORMAT {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let a = with_context(|_, _| array(h_array))?;
        update_texref(h_tex_ref, |r| {
            r.binding = Binding::Array(h_array as usize);
            r.format = a.desc.format;
            r.channels = a.desc.num_channels;
            Ok(())
        })
    }

    fn cuTexRefSetMipmappedArray(h_tex_ref: CUtexref, h_mipmapped_array: CUmipmappedArray, flags: u32) {
        if flags != CU_TRSA_OVERRIDE_FORMAT {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        update_texref(h_tex_ref, |r| {
            r.binding = Binding::Mipmapped(h_mipmapped_array as usize);
            Ok(())
        })
    }

    /// Binds linear memory; the returned byte offset is always 0 (any
    /// element-aligned address can be bound here).
    fn cuTexRefSetAddress_v2(byte_offset: *mut usize, h_tex_ref: CUtexref, dptr: CUdeviceptr, bytes: usize) {
        update_texref(h_tex_ref, |r| {
            r.binding = if dptr == 0 {
                Binding::None
            } else {
                Binding::Linear { ptr: dptr, bytes }
            };
            Ok(())
        })?;
        // SAFETY: `cuTexRefSetAddress_v2`'s caller passes `byte_offset` as cuda.h specifies: NULL (skipped
        // by `write_optional`) or valid for writing a `usize`.
        unsafe { crate::entry::write_optional(byte_offset, 0) };
        Ok(())
    }

    fn cuTexRefSetAddress2D_v3(h_tex_ref: CUtexref, desc: *const CUDA_ARRAY_DESCRIPTOR, dptr: CUdeviceptr, pitch: usize) {
        non_null(desc)?;
        // SAFETY: non-null, the caller's descriptor.
        let desc = unsafe { *desc };
        update_texref(h_tex_ref, |r| {
            r.format = desc.format;
            r.channels = desc.num_channels;
            r.binding = Binding::Pitch2D {
                ptr: dptr,
                width: desc.width,
                height: desc.height,
                pitch,
            };
            Ok(())
        })
    }

    fn cuTexRefSetFormat(h_tex_ref: CUtexref, fmt: u32, num_packed_components: i32) {
        if num_packed_components < 0 || channel_format(fmt, num_packed_components as u32).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        update_texref(h_tex_ref, |r| {
            r.format = fmt;
            r.channels = num_packed_components as u32;
            Ok(())
        })
    }

    fn cuTexRefSetAddressMode(h_tex_ref: CUtexref, dim: i32, am: u32) {
        if !(0..3).contains(&dim) || AddressMode::from_cu(am).is_none() {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        update_texref(h_tex_ref, |r| {
            r.texture.address_mode[dim as usize] = am;
            Ok(())
        })
    }

    fn cuTexRefSetFilterMode(h_tex_ref: CUtexref, fm: u32) {
        FilterMode::from_cu(fm).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        update_texref(h_tex_ref, |r| {
            r.texture.filter_mode = fm;
            Ok(())
        })
    }

    fn cuTexRefSetMipmapFilterMode(h_tex_ref: CUtexref, fm: u32) {
        FilterMode::from_cu(fm).ok_or(CUDA_ERROR_INVALID_VALUE)?;
        update_texref(h_tex_ref, |r| {
            r.texture.mipmap_filter_mode = fm;
            Ok(())
        })
    }

    fn cuTexRefSetMipmapLevelBias(h_tex_ref: CUtexref, bias: f32) {
        update_texref(h_tex_ref, |r| {
            r.texture.mipmap_level_bias = bias;
            Ok(())
        })
    }

    fn cuTexRefSetMipmapLevelClamp(h_tex_ref: CUtexref, min_clamp: f32, max_clamp: f32) {
        update_texref(h_tex_ref, |r| {
            r.texture.min_mipmap_level_clamp = min_clamp;
            r.texture.max_mipmap_level_clamp = max_clamp;
            Ok(())
        })
    }

    /// Recorded and reported; the emulator does not filter anisotropically.
    fn cuTexRefSetMaxAnisotropy(h_tex_ref: CUtexref, max_aniso: u32) {
        update_texref(h_tex_ref, |r| {
            r.texture.max_anisotropy = max_aniso.clamp(1, 16);
            Ok(())
        })
    }

    fn cuTexRefSetBorderColor(h_tex_ref: CUtexref, p_border_color: *const f32) {
        non_null(p_border_color)?;
        // SAFETY: the caller passes four floats.
        let border = unsafe { std::ptr::read_unaligned(p_border_color as *const [f32; 4]) };
        update_texref(h_tex_ref, |r| {
            r.texture.border_color = border;
            Ok(())
        })
    }

    fn cuTexRefSetFlags(h_tex_ref: CUtexref, flags: u32) {
        update_texref(h_tex_ref, |r| {
            r.texture.flags = flags;
            Ok(())
        })
    }

    fn cuTexRefGetAddress_v2(pdptr: *mut CUdeviceptr, h_tex_ref: CUtexref) {
        let ptr = read_texref(h_tex_ref, |r| match r.binding {
            Binding::Linear { ptr, .. } | Binding::Pitch2D { ptr, .. } => Ok(ptr),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })?;
        // SAFETY: `cuTexRefGetAddress_v2`'s caller passes `pdptr` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `CUdeviceptr`.
        unsafe { write_out(pdptr, ptr) }
    }

    fn cuTexRefGetArray(ph_array: *mut CUarray, h_tex_ref: CUtexref) {
        let a = read_texref(h_tex_ref, |r| match r.binding {
            Binding::Array(a) => Ok(a),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })?;
        // SAFETY: `cuTexRefGetArray`'s caller passes `ph_array` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `CUarray`.
        unsafe { write_out(ph_array, a as CUarray) }
    }

    fn cuTexRefGetMipmappedArray(ph_mipmapped_array: *mut CUmipmappedArray, h_tex_ref: CUtexref) {
        let m = read_texref(h_tex_ref, |r| match r.binding {
            Binding::Mipmapped(m) => Ok(m),
            _ => Err(CUDA_ERROR_INVALID_VALUE),
        })?;
        // SAFETY: `cuTexRefGetMipmappedArray`'s caller passes `ph_mipmapped_array` as cuda.h specifies:
        // NULL (refused by `write_out`) or valid for writing a `CUmipmappedArray`.
        unsafe { write_out(ph_mipmapped_array, m as CUmipmappedArray) }
    }

    fn cuTexRefGetAddressMode(pam: *mut u32, h_tex_ref: CUtexref, dim: i32) {
        if !(0..3).contains(&dim) {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        let am = read_texref(h_tex_ref, |r| Ok(r.texture.address_mode[dim as usize]))?;
        // SAFETY: `cuTexRefGetAddressMode`'s caller passes `pam` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `u32`.
        unsafe { write_out(pam, am) }
    }

    fn cuTexRefGetFilterMode(pfm: *mut u32, h_tex_ref: CUtexref) {
        let fm = read_texref(h_tex_ref, |r| Ok(r.texture.filter_mode))?;
        // SAFETY: `cuTexRefGetFilterMode`'s caller passes `pfm` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `u32`.
        unsafe { write_out(pfm, fm) }
    }

    fn cuTexRefGetMipmapFilterMode(pfm: *mut u32, h_tex_ref: CUtexref) {
        let fm = read_texref(h_tex_ref, |r| Ok(r.texture.mipmap_filter_mode))?;
        // SAFETY: `cuTexRefGetMipmapFilterMode`'s caller passes `pfm` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `u32`.
        unsafe { write_out(pfm, fm) }
    }

    fn cuTexRefGetFormat(p_format: *mut u32, p_num_channels: *mut i32, h_tex_ref: CUtexref) {
        let (f, c) = read_texref(h_tex_ref, |r| Ok((r.format, r.channels)))?;
        // SAFETY: `cuTexRefGetFormat`'s caller passes `p_format` and `p_num_channels` as cuda.h specifies:
        // NULL (skipped by `write_optional`) or writable for their types.
        unsafe {
            crate::entry::write_optional(p_format, f);
            crate::entry::write_optional(p_num_channels, c as i32);
        }
        Ok(())
    }

    fn cuTexRefGetMipmapLevelBias(pbias: *mut f32, h_tex_ref: CUtexref) {
        let b = read_texref(h_tex_ref, |r| Ok(r.texture.mipmap_level_bias))?;
        // SAFETY: `cuTexRefGetMipmapLevelBias`'s caller passes `pbias` as cuda.h specifies: NULL (refused
        // by `write_out`) or valid for writing a `f32`.
        unsafe { write_out(pbias, b) }
    }

    fn cuTexRefGetMipmapLevelClamp(pmin: *mut f32, pmax: *mut f32, h_tex_ref: CUtexref) {
        non_null(pmin)?;
        non_null(pmax)?;
        let (lo, hi) = read_texref(h_tex_ref, |r| {
            Ok((r.texture.min_mipmap_level_clamp, r.texture.max_mipmap_level_clamp))
        })?;
        // SAFETY: `cuTexRefGetMipmapLevelClamp`'s caller passes `pmin` and `pmax` as cuda.h specifies: each
        // valid for writing a `f32` (both checked non-null above).
        unsafe {
            write_out(pmin, lo)?;
            write_out(pmax, hi)
        }
    }

    fn cuTexRefGetMaxAnisotropy(p_max_aniso: *mut i32, h_tex_ref: CUtexref) {
        let a = read_texref(h_tex_ref, |r| Ok(r.texture.max_anisotropy))?;
        // SAFETY: `cuTexRefGetMaxAnisotropy`'s caller passes `p_max_aniso` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `i32`.
        unsafe { write_out(p_max_aniso, a as i32) }
    }

    fn cuTexRefGetBorderColor(p_border_color: *mut f32, h_tex_ref: CUtexref) {
        let b = read_texref(h_tex_ref, |r| Ok(r.texture.border_color))?;
        // SAFETY: `cuTexRefGetBorderColor`'s caller passes `p_border_color` as cuda.h specifies: NULL
        // (refused by `write_out`) or valid for writing a `[f32; 4]`.
        unsafe { write_out(p_border_color as *mut [f32; 4], b) }
    }

    fn cuTexRefGetFlags(p_flags: *mut u32, h_tex_ref: CUtexref) {
        let f = read_texref(h_tex_ref, |r| Ok(r.texture.flags))?;
        // SAFETY: `cuTexRefGetFlags`'s caller passes `p_flags` as cuda.h specifies: NULL (refused by
        // `write_out`) or valid for writing a `u32`.
        unsafe { write_out(p_flags, f) }
    }

    /// Only the default texture unit exists; references are bound through
    /// their module variable, so there is nothing to record.
    fn cuParamSetTexRef(h_func: CUfunction, tex_unit: i32, h_tex_ref: CUtexref) {
        let _ = h_func;
        if tex_unit != CU_PARAM_TR_DEFAULT {
            return Err(CUDA_ERROR_INVALID_VALUE);
        }
        read_texref(h_tex_ref, |_| Ok(()))
    }
}
