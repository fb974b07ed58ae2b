//! Textures and surfaces: the objects kernels read through `tex`/`tld4`/
//! `txq` and read or write through `suld`/`sust`/`suq`.
//!
//! A texture or surface object is a 64-bit handle (what `cudaTextureObject_t`
//! and `cudaSurfaceObject_t` hold, passed to kernels as `.u64` parameters in
//! PTX's unified texture mode). The device keeps one table from handle to
//! descriptor ([`ObjectTable`], inside the device's global memory so every
//! thread that runs a CTA can read it), filled by
//! [`Device::texture_object_create`](crate::Device::texture_object_create) and
//! [`Device::surface_object_create`](crate::Device::surface_object_create).
//!
//! A descriptor names where the texels are ([`Resource`]: device addresses,
//! row and slice pitches, per mip level) and how to sample them
//! ([`Sampler`]). CUDA arrays are the driver's business: it lays them out
//! densely in device memory (row pitch = width × texel size, slice pitch =
//! pitch × height; layers and cube faces are slices) and describes them here.
//!
//! - [`sample`]: addressing, format conversion and filtering, pure and
//!   unit-tested against CPU references.
//!
//! This module is a leaf of the crate: the decoded instructions that use
//! these objects are `instr::texture_op`, their execution for a warp
//! `machine/texture.rs`, the device's API over the table `device/texture.rs`.

pub mod sample;

use std::collections::HashMap;
use std::sync::Arc;

/// The element type of each channel (`CUarray_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelFormat {
    U8,
    U16,
    U32,
    S8,
    S16,
    S32,
    F16,
    F32,
}

impl ChannelFormat {
    /// From a `CUarray_format` code (`CU_AD_FORMAT_*` of the plain kinds).
    pub fn from_cu(code: u32) -> Option<ChannelFormat> {
        Some(match code {
            0x01 => ChannelFormat::U8,
            0x02 => ChannelFormat::U16,
            0x03 => ChannelFormat::U32,
            0x08 => ChannelFormat::S8,
            0x09 => ChannelFormat::S16,
            0x0a => ChannelFormat::S32,
            0x10 => ChannelFormat::F16,
            0x20 => ChannelFormat::F32,
            _ => return None,
        })
    }

    /// The `CUarray_format` code.
    pub fn to_cu(self) -> u32 {
        match self {
            ChannelFormat::U8 => 0x01,
            ChannelFormat::U16 => 0x02,
            ChannelFormat::U32 => 0x03,
            ChannelFormat::S8 => 0x08,
            ChannelFormat::S16 => 0x09,
            ChannelFormat::S32 => 0x0a,
            ChannelFormat::F16 => 0x10,
            ChannelFormat::F32 => 0x20,
        }
    }

    /// Bytes of one channel.
    pub fn bytes(self) -> u32 {
        match self {
            ChannelFormat::U8 | ChannelFormat::S8 => 1,
            ChannelFormat::U16 | ChannelFormat::S16 | ChannelFormat::F16 => 2,
            ChannelFormat::U32 | ChannelFormat::S32 | ChannelFormat::F32 => 4,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ChannelFormat::F16 | ChannelFormat::F32)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            ChannelFormat::S8 | ChannelFormat::S16 | ChannelFormat::S32
        )
    }
}

/// What a resource is, which decides how many coordinates address it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Linear memory (`CU_RESOURCE_TYPE_LINEAR`): 1D, integer-indexed.
    Linear,
    /// Pitched linear memory (`CU_RESOURCE_TYPE_PITCH2D`).
    Pitch2D,
    Array1D,
    Array2D,
    Array3D,
    Layered1D,
    Layered2D,
    /// Six square faces, as six slices.
    Cubemap,
    /// `6 × n` faces.
    CubemapLayered,
}

impl Shape {
    /// Coordinates that address a texel within one layer (or face).
    pub fn dims(self) -> usize {
        match self {
            Shape::Linear | Shape::Array1D | Shape::Layered1D => 1,
            Shape::Array3D => 3,
            _ => 2,
        }
    }

    pub fn layered(self) -> bool {
        matches!(
            self,
            Shape::Layered1D | Shape::Layered2D | Shape::CubemapLayered
        )
    }

    pub fn cube(self) -> bool {
        matches!(self, Shape::Cubemap | Shape::CubemapLayered)
    }
}

/// One mip level of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    /// Device address of texel (0, 0, 0) of layer 0.
    pub base: u64,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// Bytes from one depth slice (or layer, or cube face) to the next.
    pub slice: u64,
}

/// Where a texture's or surface's texels are and what they hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub shape: Shape,
    pub format: ChannelFormat,
    /// 1, 2 or 4.
    pub channels: u8,
    /// Layers of a layered resource (faces for cubemaps: 6 × cubes); 1 otherwise.
    pub layers: u32,
    /// Level 0 first; one entry unless mipmapped.
    pub levels: Vec<Level>,
}

impl Resource {
    /// Bytes of one texel.
    pub fn texel_bytes(&self) -> u32 {
        self.format.bytes() * self.channels as u32
    }

    /// Checks the description is self-consistent.
    pub fn validate(&self) -> Result<(), String> {
        if !matches!(self.channels, 1 | 2 | 4) {
            return Err(format!("{} channels (must be 1, 2 or 4)", self.channels));
        }
        if self.levels.is_empty() {
            return Err("no mip levels".into());
        }
        if self.layers == 0 {
            return Err("0 layers".into());
        }
        for (i, l) in self.levels.iter().enumerate() {
            if l.width == 0 || l.height == 0 || l.depth == 0 {
                return Err(format!("level {i} has an empty extent"));
            }
            if l.height > 1 && l.pitch < l.width as u64 * self.texel_bytes() as u64 {
                return Err(format!("level {i}: pitch {} below the row size", l.pitch));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressMode {
    Wrap,
    Clamp,
    Mirror,
    Border,
}

impl AddressMode {
    /// From a `CUaddress_mode` code.
    pub fn from_cu(code: u32) -> Option<AddressMode> {
        Some(match code {
            0 => AddressMode::Wrap,
            1 => AddressMode::Clamp,
            2 => AddressMode::Mirror,
            3 => AddressMode::Border,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterMode {
    Point,
    Linear,
}

impl FilterMode {
    /// From a `CUfilter_mode` code.
    pub fn from_cu(code: u32) -> Option<FilterMode> {
        match code {
            0 => Some(FilterMode::Point),
            1 => Some(FilterMode::Linear),
            _ => None,
        }
    }
}

/// How a texture is sampled (`CUDA_TEXTURE_DESC`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    pub address: [AddressMode; 3],
    pub filter: FilterMode,
    pub mip_filter: FilterMode,
    /// Coordinates in `[0, 1)` span each dimension (`CU_TRSF_NORMALIZED_COORDINATES`).
    pub normalized_coords: bool,
    /// 8/16-bit integer texels are returned as integers, not as floats in
    /// `[0, 1]`/`[-1, 1]` (`CU_TRSF_READ_AS_INTEGER`).
    pub read_as_integer: bool,
    /// 8-bit unsigned RGB channels are sRGB-encoded (`CU_TRSF_SRGB`).
    pub srgb: bool,
    pub border: [f32; 4],
    pub lod_bias: f32,
    pub min_lod: f32,
    pub max_lod: f32,
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            address: [AddressMode::Clamp; 3],
            filter: FilterMode::Point,
            mip_filter: FilterMode::Point,
            normalized_coords: false,
            read_as_integer: false,
            srgb: false,
            border: [0.0; 4],
            lod_bias: 0.0,
            min_lod: 0.0,
            max_lod: 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TextureObject {
    pub resource: Resource,
    pub sampler: Sampler,
}

impl TextureObject {
    /// Whether fetches return floats (else 32-bit integers): float formats
    /// always; 8/16-bit integers unless read as integers; 32-bit integers never.
    pub fn returns_float(&self) -> bool {
        let f = self.resource.format;
        f.is_float() || (f.bytes() < 4 && !self.sampler.read_as_integer)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceObject {
    pub resource: Resource,
}

/// A live texture or surface object.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundObject {
    Texture(TextureObject),
    Surface(SurfaceObject),
}

/// Texture and surface objects by handle. Handles count up from 1 and are
/// never reused, so a destroyed handle stays invalid.
#[derive(Debug, Default)]
pub struct ObjectTable {
    objects: HashMap<u64, Arc<BoundObject>>,
    next: u64,
    /// Texture and surface references: the address of a module's
    /// `.texref`/`.surfref` variable → the handle bound to it.
    references: HashMap<u64, u64>,
}

impl ObjectTable {
    pub fn get(&self, handle: u64) -> Option<&Arc<BoundObject>> {
        self.objects.get(&handle)
    }

    /// The object bound to the reference variable at `addr`.
    pub fn reference(&self, addr: u64) -> Option<u64> {
        self.references.get(&addr).copied()
    }

    /// Adds `object` under a new handle.
    pub(crate) fn insert(&mut self, object: BoundObject) -> u64 {
        self.next += 1;
        self.objects.insert(self.next, Arc::new(object));
        self.next
    }

    /// Removes the object behind `handle`; its handle stays invalid.
    pub(crate) fn remove(&mut self, handle: u64) {
        self.objects.remove(&handle);
    }

    /// Binds the reference variable at `addr` to `handle`, or unbinds it.
    pub(crate) fn bind_reference(&mut self, addr: u64, handle: Option<u64>) {
        match handle {
            Some(h) => self.references.insert(addr, h),
            None => self.references.remove(&addr),
        };
    }
}
