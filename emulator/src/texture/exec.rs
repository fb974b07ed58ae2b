//! Executing the texture and surface instructions for a warp: `tex`,
//! `tld4`, `txq` (textures), `suld.b`, `sust.b`, `suq` (surfaces).
//!
//! The handle operand is a 64-bit register holding a texture or surface
//! object (PTX's unified mode, what `cudaTextureObject_t` and
//! `cudaSurfaceObject_t` compile to); each lane looks its handle up in the
//! device's [`ObjectTable`](super::ObjectTable). A handle that is not a
//! live object of the right kind is an illegal-address fault naming it.
//!
//! Surfaces address bytes along x (`suld.b`/`sust.b`), rows and slices
//! along y and z. Out of range, `.trap` faults at the offending address (a
//! precise fault: the lane, the coordinates and the surface's extent are in
//! the message), `.clamp` moves to the nearest in-range location, `.zero`
//! loads zeros and drops stores.

use super::sample::{self, Coords};
use super::{BoundObject, ChannelFormat, Resource, Shape, SurfaceObject, TextureObject};
use crate::instr::Row;
use crate::machine::{Env, FaultKind, LaneFault};

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
    fn spatial(self) -> usize {
        match self {
            Geometry::D1 | Geometry::A1D => 1,
            Geometry::D2 | Geometry::A2D => 2,
            Geometry::D3 | Geometry::Cube | Geometry::ACube => 3,
        }
    }

    fn name(self) -> &'static str {
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
    fn fits(self, shape: Shape) -> bool {
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

/// The level of detail of `tex.grad`, as the OpenGL specification's
/// isotropic footprint: `log2(max(|dPdx ∘ size|, |dPdy ∘ size|))`, the
/// gradients scaled per axis by the level-0 extent when coordinates are
/// normalized (mipmapped textures always are) and by 1 otherwise.
pub fn gradient_lod(
    dx: [f32; 3],
    dy: [f32; 3],
    size: [f32; 3],
    dims: usize,
    normalized: bool,
) -> f32 {
    let scale = |d: usize| if normalized { size[d] } else { 1.0 };
    let norm = |g: [f32; 3]| {
        (0..dims)
            .map(|d| (g[d] * scale(d)).powi(2))
            .sum::<f32>()
            .sqrt()
    };
    norm(dx).max(norm(dy)).log2()
}

/// A decoded texture or surface instruction ([`crate::instr::Op::Texture`]).
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

fn fault(kind: FaultKind, lane: usize, addr: Option<u64>, message: String) -> LaneFault {
    LaneFault {
        kind,
        lane: lane as u32,
        address: addr,
        message,
    }
}

fn get(v: &[u64], row: Row, lane: usize) -> u64 {
    v[row as usize * 32 + lane]
}

fn set(v: &mut [u64], row: Row, lane: usize, x: u64) {
    v[row as usize * 32 + lane] = x;
}

/// Runs `op` for the lanes in `exec`.
pub(crate) fn execute(
    op: &TextureOp,
    v: &mut [u64],
    exec: u32,
    env: &mut Env<'_>,
) -> Result<(), LaneFault> {
    let surface = matches!(
        op.kind,
        TexKind::Suld { .. } | TexKind::Sust { .. } | TexKind::Suq { .. }
    );
    let bound = match op.reference {
        Some(addr) => Some(super::table(env.global).reference(addr).ok_or_else(|| {
            fault(
                FaultKind::IllegalAddress,
                exec.trailing_zeros() as usize,
                Some(addr),
                format!(
                    "{} reference at 0x{addr:x} is not bound",
                    if surface { "surface" } else { "texture" }
                ),
            )
        })?),
        None => None,
    };
    // Lanes of a warp almost always share one handle: look it up once.
    let mut cached: Option<(u64, Option<std::sync::Arc<BoundObject>>)> = None;
    let mut m = exec;
    while m != 0 {
        let lane = m.trailing_zeros() as usize;
        m &= m - 1;
        let handle = bound.unwrap_or_else(|| get(v, op.handle, lane));
        let object = match &cached {
            Some((h, o)) if *h == handle => o.clone(),
            _ => {
                let o = super::table(env.global).get(handle).cloned();
                cached = Some((handle, o.clone()));
                o
            }
        };
        let bad = |what: &str| {
            fault(
                FaultKind::IllegalAddress,
                lane,
                Some(handle),
                format!("{what} handle 0x{handle:x} is not a live {what} object"),
            )
        };
        match (&op.kind, object.as_deref()) {
            (_, Some(BoundObject::Texture(t))) if !surface => texture_lane(op, t, v, lane, env)?,
            (_, Some(BoundObject::Surface(s))) if surface => surface_lane(op, s, v, lane, env)?,
            _ if surface => return Err(bad("surface")),
            _ => return Err(bad("texture")),
        }
    }
    Ok(())
}

fn read_coords(op: &TextureOp, v: &[u64], lane: usize, int: bool, arrayed: bool) -> (Coords, u32) {
    let n = op.ncoords as usize;
    let raw: [u64; 4] = std::array::from_fn(|i| if i < n { get(v, op.coords[i], lane) } else { 0 });
    let (layer, rest) = if arrayed {
        (raw[0] as u32, &raw[1..n])
    } else {
        (0, &raw[..n])
    };
    let coords = if int {
        Coords::Int(std::array::from_fn(|i| {
            rest.get(i).map_or(0, |x| *x as u32 as i32)
        }))
    } else {
        Coords::Float(std::array::from_fn(|i| {
            rest.get(i).map_or(0.0, |x| f32::from_bits(*x as u32))
        }))
    };
    (coords, layer)
}

fn texel_fault(lane: usize, addr: u64) -> LaneFault {
    fault(
        FaultKind::IllegalAddress,
        lane,
        Some(addr),
        format!(
            "texture fetch at 0x{addr:x} outside device memory (was the array or buffer freed?)"
        ),
    )
}

fn texture_lane(
    op: &TextureOp,
    t: &TextureObject,
    v: &mut [u64],
    lane: usize,
    env: &Env<'_>,
) -> Result<(), LaneFault> {
    let res = &t.resource;
    let result: [u32; 4] = match op.kind {
        TexKind::Tex {
            geom,
            int_coords,
            lod,
            grad,
        } => {
            if !geom.fits(res.shape) {
                return Err(fault(
                    FaultKind::IllegalInstruction,
                    lane,
                    None,
                    format!(
                        "tex{} on a {:?} texture (the geometry must match the resource)",
                        geom.name(),
                        res.shape
                    ),
                ));
            }
            let (coords, layer) = read_coords(op, v, lane, int_coords, geom.arrayed());
            let mut lod = lod.map(|r| f32::from_bits(get(v, r, lane) as u32));
            if let Some(g) = grad {
                let read = |rows: [Row; 4]| -> [f32; 3] {
                    std::array::from_fn(|i| {
                        if i < g.n as usize {
                            f32::from_bits(get(v, rows[i], lane) as u32)
                        } else {
                            0.0
                        }
                    })
                };
                let l0 = &res.levels[0];
                let size = [l0.width as f32, l0.height as f32, l0.depth as f32];
                let normalized = t.sampler.normalized_coords || res.shape.cube();
                let dims = geom.spatial().min(res.shape.dims().max(1));
                lod = Some(gradient_lod(read(g.dx), read(g.dy), size, dims, normalized));
            }
            sample::fetch(t, coords, layer, lod, env.global)
                .map_err(|a| texel_fault(lane, a))?
                .bits()
        }
        TexKind::Tld4 { comp, int_coords } => {
            if !matches!(res.shape, Shape::Array2D | Shape::Pitch2D) {
                return Err(fault(
                    FaultKind::IllegalInstruction,
                    lane,
                    None,
                    format!("tld4.2d on a {:?} texture", res.shape),
                ));
            }
            let (coords, _) = read_coords(op, v, lane, int_coords, false);
            sample::gather(t, coords, comp as usize, env.global)
                .map_err(|a| texel_fault(lane, a))?
                .bits()
        }
        TexKind::Txq { query, lod } => {
            let level = lod.map_or(0, |r| get(v, r, lane) as u32 as usize);
            [texture_query(t, query, level), 0, 0, 0]
        }
        _ => unreachable!("surface instruction on the texture path"),
    };
    for (row, x) in op.data.iter().zip(result).take(op.ndata as usize) {
        set(v, *row, lane, x as u64);
    }
    Ok(())
}

/// The OpenCL channel order code PTX's `txq/suq .channel_order` reports.
fn channel_order(res: &Resource) -> u32 {
    match res.channels {
        1 => 0x10B0, // CL_R
        2 => 0x10B2, // CL_RG
        _ => 0x10B5, // CL_RGBA
    }
}

/// The OpenCL channel data type code of `txq/suq .channel_data_type`.
fn channel_data_type(format: ChannelFormat, normalized: bool) -> u32 {
    match (format, normalized) {
        (ChannelFormat::S8, true) => 0x10D0,  // CL_SNORM_INT8
        (ChannelFormat::S16, true) => 0x10D1, // CL_SNORM_INT16
        (ChannelFormat::U8, true) => 0x10D2,  // CL_UNORM_INT8
        (ChannelFormat::U16, true) => 0x10D3, // CL_UNORM_INT16
        (ChannelFormat::S8, false) => 0x10D7,
        (ChannelFormat::S16, false) => 0x10D8,
        (ChannelFormat::S32, _) => 0x10D9,
        (ChannelFormat::U8, false) => 0x10DA,
        (ChannelFormat::U16, false) => 0x10DB,
        (ChannelFormat::U32, _) => 0x10DC,
        (ChannelFormat::F16, _) => 0x10DD,
        (ChannelFormat::F32, _) => 0x10DE,
    }
}

fn extent_query(res: &Resource, query: Query, level: usize) -> Option<u32> {
    let l = res.levels.get(level).or(res.levels.last())?;
    Some(match query {
        Query::Width => l.width,
        Query::Height => l.height,
        Query::Depth => l.depth,
        Query::ArraySize => {
            if res.shape.cube() {
                res.layers / 6
            } else {
                res.layers
            }
        }
        Query::NumMipmapLevels => res.levels.len() as u32,
        Query::NumSamples => 1,
        Query::ChannelOrder => channel_order(res),
        Query::MemoryLayout => matches!(res.shape, Shape::Linear | Shape::Pitch2D) as u32,
        _ => return None,
    })
}

fn texture_query(t: &TextureObject, query: Query, level: usize) -> u32 {
    let s = &t.sampler;
    if let Some(x) = extent_query(&t.resource, query, level) {
        return x;
    }
    match query {
        Query::ChannelDataType => channel_data_type(t.resource.format, t.returns_float()),
        Query::NormalizedCoords => s.normalized_coords as u32,
        Query::FilterMode => (s.filter == super::FilterMode::Linear) as u32,
        Query::AddrMode(i) => match s.address[i as usize] {
            super::AddressMode::Wrap => 0,
            super::AddressMode::Clamp => 1,
            super::AddressMode::Mirror => 2,
            super::AddressMode::Border => 3,
        },
        _ => 0,
    }
}

/// The byte address of a surface access, or `None` for a `.zero` miss.
#[allow(clippy::too_many_arguments)]
fn surface_address(
    s: &SurfaceObject,
    geom: Geometry,
    coords: [i64; 3],
    layer: u32,
    access: u64,
    elem: u64,
    oob: OutOfRange,
    lane: usize,
) -> Result<Option<u64>, LaneFault> {
    let res = &s.resource;
    let l = &res.levels[0];
    let row_bytes = l.width as u64 * res.texel_bytes() as u64;
    let dims = geom.spatial().min(3);
    let limits = [
        row_bytes as i64 - access as i64,
        l.height as i64 - 1,
        l.depth as i64 - 1,
    ];
    let mut c = coords;
    let mut layer = layer as i64;
    let layer_max = res.layers as i64 - 1;
    let out =
        (0..dims).any(|d| c[d] < 0 || c[d] > limits[d]) || (geom.arrayed() && layer > layer_max);
    if out {
        match oob {
            OutOfRange::Zero => return Ok(None),
            OutOfRange::Trap => {
                return Err(fault(
                    FaultKind::IllegalAddress,
                    lane,
                    None,
                    format!(
                        "surface access{} of {access} bytes at x = {} bytes, y = {}, z = {}{} is outside the surface ({} x {} x {}, rows of {row_bytes} bytes{})",
                        geom.name(),
                        c[0],
                        c[1],
                        c[2],
                        if geom.arrayed() {
                            format!(", layer {layer}")
                        } else {
                            String::new()
                        },
                        l.width,
                        l.height,
                        l.depth,
                        if geom.arrayed() {
                            format!(", {} layers", res.layers)
                        } else {
                            String::new()
                        },
                    ),
                ));
            }
            OutOfRange::Clamp => {
                for d in 0..dims {
                    c[d] = c[d].clamp(0, limits[d].max(0));
                }
                c[0] -= c[0] % elem as i64;
                layer = layer.clamp(0, layer_max);
            }
        }
    }
    if c[0] % elem as i64 != 0 {
        return Err(fault(
            FaultKind::Misaligned,
            lane,
            None,
            format!(
                "surface access of {elem}-byte elements at x = {} bytes is not {elem}-byte aligned",
                c[0]
            ),
        ));
    }
    let slice = if geom == Geometry::D3 {
        c[2] as u64
    } else {
        layer as u64
    };
    let (x, y) = (c[0] as u64, if dims >= 2 { c[1] as u64 } else { 0 });
    Ok(Some(l.base + slice * l.slice + y * l.pitch + x))
}

fn surface_lane(
    op: &TextureOp,
    s: &SurfaceObject,
    v: &mut [u64],
    lane: usize,
    env: &mut Env<'_>,
) -> Result<(), LaneFault> {
    let (geom, size, oob, store) = match op.kind {
        TexKind::Suq { query } => {
            let x = extent_query(&s.resource, query, 0).unwrap_or_else(|| match query {
                Query::ChannelDataType => channel_data_type(s.resource.format, false),
                _ => 0,
            });
            set(v, op.data[0], lane, x as u64);
            return Ok(());
        }
        TexKind::Suld { geom, size, oob } => (geom, size, oob, false),
        TexKind::Sust { geom, size, oob } => (geom, size, oob, true),
        _ => unreachable!("texture instruction on the surface path"),
    };
    // Cubemaps are read and written as layered 2D surfaces (face = layer).
    let cube_as_layers = geom == Geometry::A2D && s.resource.shape.cube();
    if !(geom.fits(s.resource.shape) || cube_as_layers) {
        return Err(fault(
            FaultKind::IllegalInstruction,
            lane,
            None,
            format!(
                "{}{} on a {:?} surface (the geometry must match the resource)",
                if store { "sust.b" } else { "suld.b" },
                geom.name(),
                s.resource.shape
            ),
        ));
    }
    let nc = op.ncoords as usize;
    let raw: [i64; 4] = std::array::from_fn(|i| {
        if i < nc {
            get(v, op.coords[i], lane) as u32 as i32 as i64
        } else {
            0
        }
    });
    let (layer, rest) = if geom.arrayed() {
        (raw[0] as u32, &raw[1..nc])
    } else {
        (0, &raw[..nc])
    };
    let coords = std::array::from_fn(|i| rest.get(i).copied().unwrap_or(0));
    let n = op.ndata as u64;
    let elem = size as u64;
    let addr = surface_address(s, geom, coords, layer, n * elem, elem, oob, lane)?;
    let oob_fault = |a: u64| {
        fault(
            FaultKind::IllegalAddress,
            lane,
            Some(a),
            format!("surface access at 0x{a:x} outside device memory (was the array freed?)"),
        )
    };
    for i in 0..op.ndata as usize {
        match (addr, store) {
            (None, false) => set(v, op.data[i], lane, 0),
            (None, true) => {}
            (Some(a), false) => {
                let a = a + i as u64 * elem;
                let x = env.global.load(a, size as u32).map_err(|_| oob_fault(a))?;
                set(v, op.data[i], lane, x);
            }
            (Some(a), true) => {
                let a = a + i as u64 * elem;
                let x = get(v, op.data[i], lane);
                env.global
                    .store(a, size as u32, x)
                    .map_err(|_| oob_fault(a))?;
                env.wrote = true;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::Level;

    fn surface(w: u32, h: u32, layers: u32, shape: Shape) -> SurfaceObject {
        SurfaceObject {
            resource: Resource {
                shape,
                format: ChannelFormat::F32,
                channels: 1,
                layers,
                levels: vec![Level {
                    base: 0x1000,
                    width: w,
                    height: h,
                    depth: 1,
                    pitch: w as u64 * 4,
                    slice: (w * h) as u64 * 4,
                }],
            },
        }
    }

    #[test]
    fn surface_out_of_range_modes() {
        let s = surface(4, 2, 1, Shape::Array2D);
        let at = |x, y, oob| surface_address(&s, Geometry::D2, [x, y, 0], 0, 4, 4, oob, 0);
        assert_eq!(at(12, 1, OutOfRange::Trap).unwrap(), Some(0x1000 + 16 + 12));
        assert!(at(16, 0, OutOfRange::Trap).is_err());
        assert!(at(0, -1, OutOfRange::Trap).is_err());
        assert_eq!(at(16, 5, OutOfRange::Zero).unwrap(), None);
        assert_eq!(
            at(100, 5, OutOfRange::Clamp).unwrap(),
            Some(0x1000 + 16 + 12)
        );
        assert_eq!(at(-8, -1, OutOfRange::Clamp).unwrap(), Some(0x1000));
        let e = at(2, 0, OutOfRange::Trap).unwrap_err();
        assert_eq!(e.kind, FaultKind::Misaligned);
    }

    #[test]
    fn instruction_text_keeps_the_coordinates() {
        let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 t)\n{\n.reg .f32 %f<7>;\n.reg .b64 %rd<2>;\n.reg .b32 %r<3>;\ntex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\nsust.b.a1d.b32.zero [%rd1, {%r1, %r2}], {%r1};\nret;\n}\n";
        let m = prlx_ptx::parse(ptx, "t.ptx").expect("parses");
        let f = m.functions().next().expect("a kernel");
        let text: Vec<String> = f.instructions().map(crate::text::instruction).collect();
        assert_eq!(
            text[0],
            "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];"
        );
        assert_eq!(text[1], "sust.b.a1d.b32.zero [%rd1, {%r1, %r2}], {%r1};");
    }

    #[test]
    fn gradients_give_the_log2_footprint() {
        let size = [8.0, 4.0, 1.0];
        assert_eq!(gradient_lod([0.25, 0.0, 0.0], [0.0; 3], size, 2, true), 1.0);
        // The larger footprint wins; each axis scales by its own extent.
        assert_eq!(
            gradient_lod([0.0, 0.5, 0.0], [0.125, 0.0, 0.0], size, 2, true),
            1.0
        );
        let lod = gradient_lod([0.375, 0.0, 0.0], [0.0; 3], size, 2, true);
        assert!((lod - 3.0f32.log2()).abs() < 1e-6);
        // Unnormalized gradients are already in texels.
        assert_eq!(gradient_lod([4.0, 0.0, 0.0], [0.0; 3], size, 2, false), 2.0);
    }

    #[test]
    fn layered_surfaces_address_slices() {
        let s = surface(2, 2, 3, Shape::Layered2D);
        let at = |layer, oob| surface_address(&s, Geometry::A2D, [4, 1, 0], layer, 4, 4, oob, 0);
        assert_eq!(
            at(2, OutOfRange::Trap).unwrap(),
            Some(0x1000 + 2 * 16 + 8 + 4)
        );
        assert!(at(3, OutOfRange::Trap).is_err());
        assert_eq!(
            at(7, OutOfRange::Clamp).unwrap(),
            Some(0x1000 + 2 * 16 + 8 + 4)
        );
    }
}
