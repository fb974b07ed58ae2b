//! The decoded texture and surface instructions (`tex`, `tld4`, `txq`,
//! `suld.b`, `sust.b`, `suq`): what `decode/texture.rs` builds and
//! `machine/texture.rs` executes.

use super::Row;
use crate::texture::Shape;

/// The texture geometry of an instruction (`.1d`, `.a2d`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Geometry {
    D1,
    D2,
    D3,
    A1D,
    A2D,
    Cube,
    ACube,
}

impl Geometry {
    pub fn parse(m: &str) -> Option<Geometry> {
        Some(match m {
            ".1d" => Geometry::D1,
            ".2d" => Geometry::D2,
            ".3d" => Geometry::D3,
            ".a1d" => Geometry::A1D,
            ".a2d" => Geometry::A2D,
            ".cube" => Geometry::Cube,
            ".acube" => Geometry::ACube,
            _ => return None,
        })
    }

    /// Elements of the coordinate vector PTX requires.
    pub fn coord_count(self) -> usize {
        match self {
            Geometry::D1 => 1,
            Geometry::D2 | Geometry::A1D => 2,
            Geometry::D3 | Geometry::A2D | Geometry::Cube | Geometry::ACube => 4,
        }
    }

    /// Whether the first coordinate is an array (layer) index.
    pub fn arrayed(self) -> bool {
        matches!(self, Geometry::A1D | Geometry::A2D | Geometry::ACube)
    }

    /// Spatial coordinates after the array index.
    pub fn spatial(self) -> usize {
        match self {
            Geometry::D1 | Geometry::A1D => 1,
            Geometry::D2 | Geometry::A2D => 2,
            Geometry::D3 | Geometry::Cube | Geometry::ACube => 3,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Geometry::D1 => ".1d",
            Geometry::D2 => ".2d",
            Geometry::D3 => ".3d",
            Geometry::A1D => ".a1d",
            Geometry::A2D => ".a2d",
            Geometry::Cube => ".cube",
            Geometry::ACube => ".acube",
        }
    }

    /// Whether a resource of `shape` can be read with this geometry.
    pub fn fits(self, shape: Shape) -> bool {
        match self {
            Geometry::D1 => matches!(shape, Shape::Linear | Shape::Array1D),
            Geometry::D2 => matches!(shape, Shape::Pitch2D | Shape::Array2D),
            Geometry::D3 => shape == Shape::Array3D,
            Geometry::A1D => shape == Shape::Layered1D,
            Geometry::A2D => shape == Shape::Layered2D,
            Geometry::Cube => shape == Shape::Cubemap,
            Geometry::ACube => shape == Shape::CubemapLayered,
        }
    }
}

/// What `txq`/`suq` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    Width,
    Height,
    Depth,
    ChannelDataType,
    ChannelOrder,
    NormalizedCoords,
    FilterMode,
    AddrMode(u8),
    ArraySize,
    NumMipmapLevels,
    NumSamples,
    MemoryLayout,
}

impl Query {
    pub fn parse(m: &str) -> Option<Query> {
        Some(match m {
            ".width" => Query::Width,
            ".height" => Query::Height,
            ".depth" => Query::Depth,
            ".channel_data_type" => Query::ChannelDataType,
            ".channel_order" => Query::ChannelOrder,
            ".normalized_coords" => Query::NormalizedCoords,
            ".filter_mode" => Query::FilterMode,
            ".addr_mode_0" => Query::AddrMode(0),
            ".addr_mode_1" => Query::AddrMode(1),
            ".addr_mode_2" => Query::AddrMode(2),
            ".array_size" => Query::ArraySize,
            ".num_mipmap_levels" => Query::NumMipmapLevels,
            ".num_samples" => Query::NumSamples,
            ".memory_layout" => Query::MemoryLayout,
            _ => return None,
        })
    }
}

/// Out-of-range policy of a surface access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfRange {
    Trap,
    Clamp,
    Zero,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TexKind {
    /// `tex{.level,.grad}.geom.v4.dtype.ctype`: `lod` for `.level`,
    /// `grad` for `.grad`.
    Tex {
        geom: Geometry,
        int_coords: bool,
        lod: Option<Row>,
        grad: Option<Gradients>,
    },
    /// `tld4.comp.2d.v4.dtype.f32`.
    Tld4 { comp: u8, int_coords: bool },
    /// `txq{.level}.query.b32`.
    Txq { query: Query, lod: Option<Row> },
    /// `suld.b.geom{.vN}.bSIZE.clamp`: `size` bytes per element.
    Suld {
        geom: Geometry,
        size: u8,
        oob: OutOfRange,
    },
    /// `sust.b.geom{.vN}.bSIZE.clamp`.
    Sust {
        geom: Geometry,
        size: u8,
        oob: OutOfRange,
    },
    /// `suq.query.b32`.
    Suq { query: Query },
}

/// The `dPdx`, `dPdy` operands of `tex.grad`: `n` components each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gradients {
    pub dx: [Row; 4],
    pub dy: [Row; 4],
    pub n: u8,
}

/// A decoded texture or surface instruction ([`Op::Texture`](super::Op::Texture)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextureOp {
    pub kind: TexKind,
    /// The register holding the 64-bit object handle.
    pub handle: Row,
    /// Instead of `handle`: the address of the module's `.texref`/`.surfref`
    /// variable, whose bound object the driver records
    /// ([`crate::Device::bind_reference`]).
    pub reference: Option<u64>,
    /// The coordinate vector as written (array index first when arrayed).
    pub coords: [Row; 4],
    pub ncoords: u8,
    /// Destinations (`tex`, `tld4`, `txq`, `suld`, `suq`) or sources (`sust`).
    pub data: [Row; 4],
    pub ndata: u8,
}
