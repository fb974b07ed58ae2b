//! Executing the texture and surface instructions for a warp: `tex`,
//! `tld4`, `txq` (textures), `suld.b`, `sust.b`, `suq` (surfaces).
//!
//! The handle operand is a 64-bit register holding a texture or surface
//! object (PTX's unified mode, what `cudaTextureObject_t` and
//! `cudaSurfaceObject_t` compile to); each lane looks its handle up in the
//! device's [`ObjectTable`](crate::texture::ObjectTable). A handle that is not a
//! live object of the right kind is an illegal-address fault naming it.
//!
//! Surfaces address bytes along x (`suld.b`/`sust.b`), rows and slices
//! along y and z. Out of range, `.trap` faults at the offending address (a
//! precise fault: the lane, the coordinates and the surface's extent are in
//! the message), `.clamp` moves to the nearest in-range location, `.zero`
//! loads zeros and drops stores.

use super::{Env, FaultKind, LaneFault};
use crate::instr::Row;
use crate::instr::texture_op::{Geometry, OutOfRange, Query, TexKind, TextureOp};
use crate::texture::sample::{self, Coords, gradient_lod};
use crate::texture::{
    AddressMode, BoundObject, ChannelFormat, FilterMode, Resource, Shape, SurfaceObject,
    TextureObject,
};

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
        Some(addr) => Some(env.global.textures.reference(addr).ok_or_else(|| {
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
                let o = env.global.textures.get(handle).cloned();
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
        Query::FilterMode => (s.filter == FilterMode::Linear) as u32,
        Query::AddrMode(i) => match s.address[i as usize] {
            AddressMode::Wrap => 0,
            AddressMode::Clamp => 1,
            AddressMode::Mirror => 2,
            AddressMode::Border => 3,
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
