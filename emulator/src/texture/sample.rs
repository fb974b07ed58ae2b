//! Texture sampling, pure: coordinates → texel indices (address modes),
//! texel bytes → channel values (formats, read modes, sRGB), and point or
//! linear filtering, as the CUDA Programming Guide's "Texture Fetching"
//! appendix defines them.
//!
//! - Unnormalized coordinate `u` (normalized ones are first scaled by the
//!   dimension's size `N`, in `f32`).
//! - Point: texel `floor(u)`.
//! - Linear: `ub = u - 0.5`, `i = floor(ub)`, `α = frac(ub)`;
//!   `tex(u) = (1 - α)·T[i] + α·T[i+1]`. The hardware keeps `α` in 9-bit
//!   fixed point with 8 fraction bits, `α = round(frac · 256) / 256`
//!   (`frac · 256` is exact in `f32`). Bilinear weights are not products of
//!   the per-axis ones: see `corner_weights`. The weighted sum is exact
//!   and rounded once to `f32`, ties away from zero; 8-bit unsigned
//!   normalized texels filter to a 16-bit normalized result
//!   (`unorm8_filtered`). All three rules reproduce every sample an H200
//!   returned on `../shared/hardware/textures/` (`emulator/tests/
//!   texture_hardware.rs`).
//! - Address modes apply per texel index: wrap `i mod N`; mirror reflects
//!   with period `2N`; clamp to `[0, N-1]`; border: an index outside
//!   `[0, N)` makes the texel the border colour. As `cuTexObjectCreate`
//!   documents, only clamp (and border) apply with unnormalized
//!   coordinates: wrap and mirror act as clamp there.
//! - Linear resources (`tex1Dfetch`) take integer indices, no filtering, and
//!   return zero out of range.
//! - Integer coordinates (`.s32`) index texels directly (point, unnormalized).
//! - Channel values: floats as stored (half widened); 8/16-bit integers
//!   normalized to `[0, 1]` (unsigned, `v / (2^n - 1)`) or `[-1, 1]` (signed,
//!   `max(v / (2^(n-1) - 1), -1)`) unless read as integers; 32-bit integers
//!   as integers. Missing channels read `(0, 0, 0, 1)`. With sRGB, the RGB
//!   channels of 8-bit unsigned textures are decoded with the sRGB curve.
//! - Integer results ignore the filter mode (linear filtering is only
//!   defined for float results) and read the border colour converted to
//!   integers.
//! - Layer indices are clamped to the layers that exist. Cubemaps pick the
//!   face of the major axis of `(x, y, z)` and sample it with normalized
//!   coordinates `((sc/|ma| + 1)/2, (tc/|ma| + 1)/2)` (Programming Guide,
//!   "Cubemap Textures").
//! - Mipmaps: the level of detail is the given one (0 for plain `tex`) plus
//!   the bias, clamped to the descriptor's `[min, max]` and the levels that
//!   exist; point mip filtering takes the nearest level, linear blends the
//!   two around it with the same 8-bit weight.

use super::{AddressMode, ChannelFormat, FilterMode, Level, Resource, Shape, TextureObject};

/// Where texel bytes come from; `Err(address)` when a read faults.
pub trait TexelMemory {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), u64>;
}

/// A texel or fetch result: four channels of 32-bit results, as `f32`s or as
/// integers (bit patterns in `u32`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Texel {
    Float([f32; 4]),
    Int([u32; 4]),
}

impl Texel {
    /// The four 32-bit result registers.
    pub fn bits(self) -> [u32; 4] {
        match self {
            Texel::Float(f) => f.map(f32::to_bits),
            Texel::Int(i) => i,
        }
    }

    fn floats(self) -> [f32; 4] {
        match self {
            Texel::Float(f) => f,
            Texel::Int(i) => i.map(|x| x as i32 as f32),
        }
    }
}

/// Texture coordinates as the instruction gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Coords {
    Float([f32; 3]),
    Int([i32; 3]),
}

/// The 8-bit fixed-point interpolation weight of a fraction in `[0, 1)`.
pub fn quantize_weight(frac: f32) -> f32 {
    (frac * 256.0).round() / 256.0
}

/// Applies `mode` to texel index `i` of a dimension of `n` texels; `None`
/// means "the border colour".
pub fn address(i: i64, n: u32, mode: AddressMode, normalized: bool) -> Option<u32> {
    let n = n as i64;
    let mode = match mode {
        AddressMode::Wrap | AddressMode::Mirror if !normalized => AddressMode::Clamp,
        m => m,
    };
    let r = match mode {
        AddressMode::Wrap => i.rem_euclid(n),
        AddressMode::Mirror => {
            let p = i.rem_euclid(2 * n);
            if p >= n { 2 * n - 1 - p } else { p }
        }
        AddressMode::Clamp => i.clamp(0, n - 1),
        AddressMode::Border => {
            if (0..n).contains(&i) {
                i
            } else {
                return None;
            }
        }
    };
    Some(r as u32)
}

/// `floor` of an `f32` as a texel index, saturating far outside any texture.
fn floor_index(u: f32) -> i64 {
    let f = u.floor();
    if f.is_nan() {
        0
    } else {
        f.clamp(-1e12, 1e12) as i64
    }
}

fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Decodes one texel's bytes (`channels × format` bytes).
pub fn decode_texel(tex: &TextureObject, bytes: &[u8]) -> Texel {
    let res = &tex.resource;
    let size = res.format.bytes() as usize;
    let raw = |c: usize| -> u32 {
        let b = &bytes[c * size..(c + 1) * size];
        match size {
            1 => b[0] as u32,
            2 => u16::from_le_bytes([b[0], b[1]]) as u32,
            _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        }
    };
    let n = res.channels as usize;
    if tex.returns_float() {
        let mut out = [0.0, 0.0, 0.0, 1.0];
        for (c, slot) in out.iter_mut().enumerate().take(n) {
            let v = raw(c);
            *slot = match res.format {
                ChannelFormat::F32 => f32::from_bits(v),
                ChannelFormat::F16 => half::f16::from_bits(v as u16).to_f32(),
                ChannelFormat::U8 => v as f32 / 255.0,
                ChannelFormat::U16 => v as f32 / 65535.0,
                ChannelFormat::S8 => (v as u8 as i8 as f32 / 127.0).max(-1.0),
                ChannelFormat::S16 => (v as u16 as i16 as f32 / 32767.0).max(-1.0),
                // Never here: 32-bit integers are not promoted.
                ChannelFormat::U32 | ChannelFormat::S32 => v as f32,
            };
            if tex.sampler.srgb && res.format == ChannelFormat::U8 && c < 3 {
                *slot = srgb_to_linear(*slot);
            }
        }
        Texel::Float(out)
    } else {
        let mut out = [0, 0, 0, 1];
        for (c, slot) in out.iter_mut().enumerate().take(n) {
            let v = raw(c);
            *slot = match res.format {
                ChannelFormat::S8 => v as u8 as i8 as i32 as u32,
                ChannelFormat::S16 => v as u16 as i16 as i32 as u32,
                _ => v,
            };
        }
        Texel::Int(out)
    }
}

fn border(tex: &TextureObject) -> Texel {
    let b = tex.sampler.border;
    if tex.returns_float() {
        Texel::Float(b)
    } else if tex.resource.format.is_signed() {
        Texel::Int(b.map(|x| x as i32 as u32))
    } else {
        Texel::Int(b.map(|x| x as u32))
    }
}

/// Reads texel `(x, y, z)` of `layer` at `level`; indices already addressed.
fn read_texel<M: TexelMemory + ?Sized>(
    tex: &TextureObject,
    level: &Level,
    idx: [u32; 3],
    layer: u32,
    mem: &M,
) -> Result<Texel, u64> {
    let tb = tex.resource.texel_bytes() as u64;
    let slice = if tex.resource.shape == Shape::Array3D {
        idx[2] as u64
    } else {
        layer as u64
    };
    let addr = level.base + slice * level.slice + idx[1] as u64 * level.pitch + idx[0] as u64 * tb;
    let mut buf = [0u8; 16];
    let bytes = &mut buf[..tb as usize];
    mem.read(addr, bytes)?;
    Ok(decode_texel(tex, bytes))
}

/// The extent of `level` along each axis.
fn extent(level: &Level) -> [u32; 3] {
    [level.width, level.height, level.depth]
}

/// A point or linear sample of one level with float coordinates.
fn sample_level<M: TexelMemory + ?Sized>(
    tex: &TextureObject,
    level: &Level,
    coords: [f32; 3],
    layer: u32,
    normalized: bool,
    mem: &M,
) -> Result<Texel, u64> {
    let dims = tex.resource.shape.dims();
    let n = extent(level);
    let modes = tex.sampler.address;
    let mut u = [0.0f32; 3];
    for d in 0..dims {
        u[d] = if normalized {
            coords[d] * n[d] as f32
        } else {
            coords[d]
        };
    }
    let linear = tex.sampler.filter == FilterMode::Linear && tex.returns_float();
    if !linear {
        let mut idx = [0u32; 3];
        for d in 0..dims {
            match address(floor_index(u[d]), n[d], modes[d], normalized) {
                Some(i) => idx[d] = i,
                None => return Ok(border(tex)),
            }
        }
        return read_texel(tex, level, idx, layer, mem);
    }
    // Per axis: the two texel indices (None: border) and the 8-bit weight
    // (0..=256) of the second.
    let mut lo = [Some(0u32); 3];
    let mut hi = [Some(0u32); 3];
    let mut frac = [0u32; 3];
    for d in 0..dims {
        let ub = u[d] - 0.5;
        let i = floor_index(ub);
        frac[d] = (quantize_weight(ub - ub.floor()) * 256.0) as u32;
        lo[d] = address(i, n[d], modes[d], normalized);
        hi[d] = address(i + 1, n[d], modes[d], normalized);
    }
    let (weights, scale) = corner_weights(dims, frac);
    let unorm8 = tex.resource.format == ChannelFormat::U8 && !tex.sampler.srgb;
    let channels = tex.resource.channels as usize;
    // Σ weight × texel, exact in f64 (9-bit weights times 24-bit mantissas).
    let mut acc = [0.0f64; 4];
    for (corner, &weight) in weights.iter().enumerate().take(1 << dims) {
        if weight == 0 {
            continue;
        }
        let mut idx = [0u32; 3];
        let mut inside = true;
        for d in 0..dims {
            let upper = corner >> d & 1 == 1;
            match if upper { hi[d] } else { lo[d] } {
                Some(i) => idx[d] = i,
                None => inside = false,
            }
        }
        let t = if inside {
            read_texel(tex, level, idx, layer, mem)?
        } else {
            border(tex)
        }
        .floats();
        for c in 0..4 {
            // 8-bit unsigned normalized texels are filtered as their integers.
            let v = if unorm8 && c < channels {
                (t[c] as f64 * 255.0).round()
            } else {
                t[c] as f64
            };
            acc[c] += weight as f64 * v;
        }
    }
    Ok(Texel::Float(std::array::from_fn(|c| {
        if unorm8 && c < channels {
            unorm8_filtered(acc[c] * 256.0 / scale as f64)
        } else {
            round_f32_ties_away(acc[c] / scale as f64)
        }
    })))
}

/// The integer weight of each corner of the filter footprint (corner bit `d`
/// set: the upper texel along axis `d`), and their sum.
///
/// Measured on an H200 (`../shared/hardware/textures/`, 2D float textures,
/// every sample exact): each axis has an 8-bit weight `A = round(frac·256)`,
/// and the four 2D weights are not the products of the per-axis ones but
/// `w11 = round(A·B / 256)`, `w10 = A − w11`, `w01 = B − w11`,
/// `w00 = 256 − A − B + w11`, which sum to 256. 3D (not measured) weighs the
/// 2D footprint by the third axis' 8-bit weights.
fn corner_weights(dims: usize, frac: [u32; 3]) -> ([u32; 8], u32) {
    let [a, b, c] = frac;
    let mut w = [0u32; 8];
    match dims {
        1 => {
            w[0] = 256 - a;
            w[1] = a;
            (w, 256)
        }
        _ => {
            let w11 = (a * b + 128) >> 8;
            let plane = [256 + w11 - a - b, a - w11, b - w11, w11];
            if dims == 2 {
                w[..4].copy_from_slice(&plane);
                return (w, 256);
            }
            for (k, p) in plane.iter().enumerate() {
                w[k] = p * (256 - c);
                w[k + 4] = p * c;
            }
            (w, 65536)
        }
    }
}

/// A filtered 8-bit unsigned normalized channel: `sum` is Σ weight × texel
/// integer with the weights summing to 256. The hardware returns it as a
/// 16-bit normalized value, `(sum·257 + 128) >> 8` over 65535 (every sample
/// of `../shared/hardware/textures/uchar4_linear.f32`).
fn unorm8_filtered(sum: f64) -> f32 {
    let n = ((sum * 257.0 + 128.0) / 256.0).floor();
    (n / 65535.0) as f32
}

/// `x` rounded to `f32`, to nearest with ties away from zero: how the
/// texture unit rounds a filtered float (on the H200 every exact tie of the
/// 2D grids went away from zero).
fn round_f32_ties_away(x: f64) -> f32 {
    let near = x as f32;
    if !near.is_finite() || near as f64 == x {
        return near;
    }
    // The f32 on the other side of x (near is finite and not x).
    let away_from_zero = (near as f64).abs() < x.abs();
    let toward = if near == 0.0 {
        f32::from_bits(1).copysign(x as f32)
    } else if away_from_zero {
        f32::from_bits(near.to_bits() + 1)
    } else {
        f32::from_bits(near.to_bits() - 1)
    };
    let (d_near, d_toward) = ((x - near as f64).abs(), (toward as f64 - x).abs());
    if d_near == d_toward && toward.abs() > near.abs() {
        toward
    } else {
        near
    }
}

/// Face and face coordinates (normalized) of a cubemap direction.
///
/// The face of the major axis; on a tie, z before y before x. The H200 chose
/// −y for `(0.68999994, −0.68999994, −0.63)` (`texture_cubemap_mipmap.cu`),
/// so y wins over x; z winning over both is the convention of AMD's
/// `v_cubeid_f32`, not measured.
pub fn cube_face(x: f32, y: f32, z: f32) -> (u32, f32, f32) {
    let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
    let (face, sc, tc, ma) = if ax > ay && ax > az {
        if x >= 0.0 {
            (0, -z, -y, ax)
        } else {
            (1, z, -y, ax)
        }
    } else if ay > az {
        if y >= 0.0 {
            (2, x, z, ay)
        } else {
            (3, x, -z, ay)
        }
    } else if z >= 0.0 {
        (4, x, -y, az)
    } else {
        (5, -x, -y, az)
    };
    let ma = if ma == 0.0 { 1.0 } else { ma };
    (face, (sc / ma + 1.0) * 0.5, (tc / ma + 1.0) * 0.5)
}

/// One `tex` fetch: `coords` (x, y, z as the shape uses them), `layer` for
/// layered and cube-array shapes, `lod` for `tex.level`.
pub fn fetch<M: TexelMemory + ?Sized>(
    tex: &TextureObject,
    coords: Coords,
    layer: u32,
    lod: Option<f32>,
    mem: &M,
) -> Result<Texel, u64> {
    let res = &tex.resource;
    let layer = layer.min(res.layers.saturating_sub(1));
    if res.shape == Shape::Linear {
        let i = match coords {
            Coords::Int(c) => c[0] as i64,
            Coords::Float(c) => floor_index(c[0]),
        };
        let level = &res.levels[0];
        if !(0..level.width as i64).contains(&i) {
            return Ok(if tex.returns_float() {
                Texel::Float([0.0; 4])
            } else {
                Texel::Int([0; 4])
            });
        }
        return read_texel(tex, level, [i as u32, 0, 0], 0, mem);
    }
    let (coords, layer, normalized) = match coords {
        Coords::Int(c) => {
            // Direct texel indices: point sampling, unnormalized addressing.
            let level = &res.levels[0];
            let n = extent(level);
            let mut idx = [0u32; 3];
            for d in 0..res.shape.dims() {
                match address(c[d] as i64, n[d], tex.sampler.address[d], false) {
                    Some(i) => idx[d] = i,
                    None => return Ok(border(tex)),
                }
            }
            return read_texel(tex, level, idx, layer, mem);
        }
        Coords::Float(c) if res.shape.cube() => {
            let (face, s, t) = cube_face(c[0], c[1], c[2]);
            let layer = (layer * 6 + face).min(res.layers.saturating_sub(1));
            ([s, t, 0.0], layer, true)
        }
        Coords::Float(c) => (c, layer, tex.sampler.normalized_coords),
    };
    let levels = res.levels.len();
    if levels == 1 {
        return sample_level(tex, &res.levels[0], coords, layer, normalized, mem);
    }
    let s = &tex.sampler;
    let max = (levels - 1) as f32;
    let lod = (lod.unwrap_or(0.0) + s.lod_bias)
        .clamp(s.min_lod, s.max_lod.max(s.min_lod))
        .clamp(0.0, max);
    let lod = if lod.is_nan() { 0.0 } else { lod };
    if s.mip_filter == FilterMode::Point || !tex.returns_float() {
        let l = (lod + 0.5).floor() as usize;
        return sample_level(
            tex,
            &res.levels[l.min(levels - 1)],
            coords,
            layer,
            normalized,
            mem,
        );
    }
    let l0 = lod.floor() as usize;
    let w = quantize_weight(lod - lod.floor());
    let a = sample_level(tex, &res.levels[l0], coords, layer, normalized, mem)?.floats();
    if w == 0.0 || l0 + 1 >= levels {
        return Ok(Texel::Float(a));
    }
    let b = sample_level(tex, &res.levels[l0 + 1], coords, layer, normalized, mem)?.floats();
    Ok(Texel::Float(std::array::from_fn(|c| {
        (1.0 - w) * a[c] + w * b[c]
    })))
}

/// `tld4.{r,g,b,a}.2d`: channel `comp` of the four texels of the bilinear
/// footprint at `(x, y)`, in the order (i0, j1), (i1, j1), (i1, j0),
/// (i0, j0) (lower-left first, counter-clockwise, as D3D's `Gather`).
pub fn gather<M: TexelMemory + ?Sized>(
    tex: &TextureObject,
    coords: Coords,
    comp: usize,
    mem: &M,
) -> Result<Texel, u64> {
    let res = &tex.resource;
    let level = &res.levels[0];
    let n = extent(level);
    let (u, normalized) = match coords {
        Coords::Float(c) => (c, tex.sampler.normalized_coords),
        Coords::Int(c) => ([c[0] as f32, c[1] as f32, 0.0], false),
    };
    let mut lo = [None; 2];
    let mut hi = [None; 2];
    for d in 0..2 {
        let ud = if normalized { u[d] * n[d] as f32 } else { u[d] };
        let i = floor_index(ud - 0.5);
        lo[d] = address(i, n[d], tex.sampler.address[d], normalized);
        hi[d] = address(i + 1, n[d], tex.sampler.address[d], normalized);
    }
    let order = [
        (lo[0], hi[1]),
        (hi[0], hi[1]),
        (hi[0], lo[1]),
        (lo[0], lo[1]),
    ];
    let mut out = [0u32; 4];
    for (k, (x, y)) in order.into_iter().enumerate() {
        let t = match (x, y) {
            (Some(x), Some(y)) => read_texel(tex, level, [x, y, 0], 0, mem)?,
            _ => border(tex),
        };
        out[k] = t.bits()[comp];
    }
    Ok(if tex.returns_float() {
        Texel::Float(out.map(f32::from_bits))
    } else {
        Texel::Int(out)
    })
}

/// Clamps a resource's layer index.
pub fn clamp_layer(res: &Resource, layer: u32) -> u32 {
    layer.min(res.layers.saturating_sub(1))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texture::Sampler;
    use std::collections::HashMap;

    /// A byte-addressed memory for tests.
    struct Bytes(HashMap<u64, u8>);

    impl TexelMemory for Bytes {
        fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), u64> {
            for (i, b) in out.iter_mut().enumerate() {
                *b = *self.0.get(&(addr + i as u64)).ok_or(addr)?;
            }
            Ok(())
        }
    }

    fn texture_2d(
        w: u32,
        h: u32,
        format: ChannelFormat,
        channels: u8,
        data: &[u8],
    ) -> (TextureObject, Bytes) {
        let base = 0x1000;
        let tb = format.bytes() * channels as u32;
        let mem = Bytes(
            data.iter()
                .enumerate()
                .map(|(i, b)| (base + i as u64, *b))
                .collect(),
        );
        let tex = TextureObject {
            resource: Resource {
                shape: if h == 1 {
                    Shape::Array1D
                } else {
                    Shape::Array2D
                },
                format,
                channels,
                layers: 1,
                levels: vec![Level {
                    base,
                    width: w,
                    height: h,
                    depth: 1,
                    pitch: (w * tb) as u64,
                    slice: (w * tb * h) as u64,
                }],
            },
            sampler: Sampler::default(),
        };
        (tex, mem)
    }

    fn floats(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn x(t: Texel) -> f32 {
        match t {
            Texel::Float(f) => f[0],
            Texel::Int(_) => panic!("integer texel"),
        }
    }

    #[test]
    fn address_modes_match_their_definitions() {
        use AddressMode::*;
        let n = 4;
        let wrap: Vec<_> = (-5..9)
            .map(|i| address(i, n, Wrap, true).unwrap())
            .collect();
        assert_eq!(wrap, [3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0]);
        let mirror: Vec<_> = (-5..9)
            .map(|i| address(i, n, Mirror, true).unwrap())
            .collect();
        assert_eq!(mirror, [3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0]);
        let clamp: Vec<_> = (-2..6)
            .map(|i| address(i, n, Clamp, true).unwrap())
            .collect();
        assert_eq!(clamp, [0, 0, 0, 1, 2, 3, 3, 3]);
        assert_eq!(address(-1, n, Border, false), None);
        assert_eq!(address(4, n, Border, false), None);
        assert_eq!(address(3, n, Border, false), Some(3));
        // Wrap and mirror need normalized coordinates; otherwise clamp.
        assert_eq!(address(5, n, Wrap, false), Some(3));
        assert_eq!(address(-1, n, Mirror, false), Some(0));
    }

    #[test]
    fn weights_are_eight_bit_fixed_point() {
        assert_eq!(quantize_weight(0.5), 0.5);
        assert_eq!(quantize_weight(0.3), 77.0 / 256.0); // 76.8 → 77
        assert_eq!(quantize_weight(0.001), 0.0);
        assert_eq!(quantize_weight(0.999), 1.0); // 255.74 → 256: 1.0 exactly
        assert_eq!(quantize_weight(1.5 / 256.0), 2.0 / 256.0); // ties away from zero
    }

    #[test]
    fn point_and_linear_1d_against_the_formula() {
        let data = [10.0f32, 20.0, 40.0, 80.0];
        let (mut tex, mem) = texture_2d(4, 1, ChannelFormat::F32, 1, &floats(&data));
        let at = |tex: &TextureObject, u: f32| {
            x(fetch(tex, Coords::Float([u, 0.0, 0.0]), 0, None, &mem).unwrap())
        };
        assert_eq!(at(&tex, 2.9), 40.0);
        assert_eq!(at(&tex, -3.0), 10.0); // clamp
        tex.sampler.filter = FilterMode::Linear;
        for u in [0.0f32, 0.7, 1.5, 1.8, 2.3, 3.99, 5.0] {
            let ub = u - 0.5;
            let i = ub.floor() as i64;
            let a = ((ub - ub.floor()) * 256.0).round() / 256.0;
            let t = |k: i64| data[k.clamp(0, 3) as usize];
            let want = (1.0 - a) * t(i) + a * t(i + 1);
            assert_eq!(at(&tex, u), want, "u = {u}");
        }
        // Border: the missing neighbour is the border colour (0).
        tex.sampler.address = [AddressMode::Border; 3];
        // u = 0.25: α = 0.75 between texel -1 (border) and texel 0.
        assert_eq!(at(&tex, 0.25), 0.25 * 0.0 + 0.75 * 10.0);
    }

    #[test]
    fn normalized_wrap_and_mirror() {
        let data = [1.0f32, 2.0, 3.0, 4.0];
        let (mut tex, mem) = texture_2d(4, 1, ChannelFormat::F32, 1, &floats(&data));
        tex.sampler.normalized_coords = true;
        tex.sampler.address = [AddressMode::Wrap; 3];
        let at = |tex: &TextureObject, u: f32| {
            x(fetch(tex, Coords::Float([u, 0.0, 0.0]), 0, None, &mem).unwrap())
        };
        assert_eq!(at(&tex, 1.125), 1.0); // 4.5 → texel 4 → wraps to 0
        assert_eq!(at(&tex, -0.125), 4.0);
        tex.sampler.address = [AddressMode::Mirror; 3];
        assert_eq!(at(&tex, 1.125), 4.0); // texel 4 mirrors to 3
        assert_eq!(at(&tex, -0.125), 1.0);
        tex.sampler.filter = FilterMode::Linear;
        tex.sampler.address = [AddressMode::Wrap; 3];
        // u = 0: between texel -1 (= 3 wrapped, 4.0) and 0 (1.0), α = 0.5.
        assert_eq!(at(&tex, 0.0), 2.5);
    }

    #[test]
    fn bilinear_2d_weights_round_their_product_once() {
        // A = round(0.7·256) = 179, B = round(0.4·256) = 102: the corner
        // weights are w11 = round(179·102/256) = 71, w10 = 108, w01 = 31,
        // w00 = 46 (in 256ths), not the products of the axis weights.
        let data = [0.0f32, 100.0, 200.0, 300.0];
        let (mut tex, mem) = texture_2d(2, 2, ChannelFormat::F32, 1, &floats(&data));
        tex.sampler.filter = FilterMode::Linear;
        let v = x(fetch(&tex, Coords::Float([1.2, 0.9, 0.0]), 0, None, &mem).unwrap());
        assert_eq!(v, (108.0 * 100.0 + 31.0 * 200.0 + 71.0 * 300.0) / 256.0);
        assert_eq!(corner_weights(2, [179, 102, 0]).0[..4], [46, 108, 31, 71]);
    }

    #[test]
    fn filtered_floats_round_ties_away_from_zero() {
        let tie = 1.0f64 + 2f64.powi(-24); // halfway between 1 and 1 + 2^-23
        assert_eq!(round_f32_ties_away(tie), 1.0 + f32::EPSILON);
        assert_eq!(round_f32_ties_away(-tie), -(1.0 + f32::EPSILON));
        assert_eq!(round_f32_ties_away(1.0 + 2f64.powi(-25)), 1.0);
        assert_eq!(round_f32_ties_away(0.1), 0.1f32);
    }

    #[test]
    fn filtered_unorm8_is_a_16_bit_normalized_value() {
        // Σ weight × texel = 32384 (in 256ths): (32384·257 + 128) >> 8 = 32511.
        assert_eq!(unorm8_filtered(32384.0), (32511.0f64 / 65535.0) as f32);
        assert_eq!(unorm8_filtered(255.0 * 256.0), 1.0);
        assert_eq!(unorm8_filtered(0.0), 0.0);
    }

    #[test]
    fn formats_and_read_modes() {
        let (mut tex, mem) = texture_2d(2, 1, ChannelFormat::U8, 4, &[0, 51, 255, 128, 1, 2, 3, 4]);
        let t = fetch(&tex, Coords::Int([0, 0, 0]), 0, None, &mem).unwrap();
        assert_eq!(t, Texel::Float([0.0, 51.0 / 255.0, 1.0, 128.0 / 255.0]));
        tex.sampler.read_as_integer = true;
        let t = fetch(&tex, Coords::Int([1, 0, 0]), 0, None, &mem).unwrap();
        assert_eq!(t, Texel::Int([1, 2, 3, 4]));

        let (tex, mem) = texture_2d(1, 1, ChannelFormat::S8, 2, &[0x81, 0x80]);
        let t = fetch(&tex, Coords::Int([0, 0, 0]), 0, None, &mem).unwrap();
        assert_eq!(t, Texel::Float([-1.0, -1.0, 0.0, 1.0])); // -127/127 and -128 clamped

        let h = half::f16::from_f32(1.5).to_bits().to_le_bytes();
        let (tex, mem) = texture_2d(1, 1, ChannelFormat::F16, 1, &h);
        let t = fetch(&tex, Coords::Float([0.5, 0.0, 0.0]), 0, None, &mem).unwrap();
        assert_eq!(t, Texel::Float([1.5, 0.0, 0.0, 1.0]));

        let (tex, mem) = texture_2d(1, 1, ChannelFormat::S16, 1, &(-2i16).to_le_bytes());
        let mut tex = tex;
        tex.sampler.read_as_integer = true;
        let t = fetch(&tex, Coords::Int([0, 0, 0]), 0, None, &mem).unwrap();
        assert_eq!(t, Texel::Int([-2i32 as u32, 0, 0, 1]));

        let (mut tex, mem) = texture_2d(1, 1, ChannelFormat::U8, 4, &[188, 0, 255, 188]);
        tex.sampler.srgb = true;
        let Texel::Float(f) = fetch(&tex, Coords::Int([0, 0, 0]), 0, None, &mem).unwrap() else {
            panic!()
        };
        assert!((f[0] - 0.5029).abs() < 1e-3, "{f:?}");
        assert_eq!(f[3], 188.0 / 255.0); // alpha stays linear
    }

    #[test]
    fn cube_faces_follow_the_major_axis() {
        assert_eq!(cube_face(1.0, 0.0, 0.0), (0, 0.5, 0.5));
        assert_eq!(cube_face(-1.0, 0.5, 0.0).0, 1);
        assert_eq!(cube_face(0.0, 1.0, 0.5), (2, 0.5, 0.75));
        assert_eq!(cube_face(0.0, -1.0, 0.5), (3, 0.5, 0.25));
        assert_eq!(cube_face(0.5, 0.0, 1.0), (4, 0.75, 0.5));
        assert_eq!(cube_face(0.5, 0.0, -1.0), (5, 0.25, 0.5));
        // Ties: y over x (the H200), z over both.
        assert_eq!(cube_face(0.69, -0.69, -0.63).0, 3);
        assert_eq!(cube_face(0.5, 0.0, 0.5).0, 4);
        assert_eq!(cube_face(0.0, 0.5, -0.5).0, 5);
    }

    #[test]
    fn gather_returns_one_channel_of_the_footprint() {
        let data: Vec<u8> = (0..4u8).flat_map(|i| [i * 10, i * 10 + 1]).collect();
        let (mut tex, mem) = texture_2d(2, 2, ChannelFormat::U8, 2, &data);
        tex.sampler.read_as_integer = true;
        let t = gather(&tex, Coords::Float([1.0, 1.0, 0.0]), 1, &mem).unwrap();
        // texels: (0,0)=0 (1,0)=10 (0,1)=20 (1,1)=30; channel 1 adds 1.
        assert_eq!(t, Texel::Int([21, 31, 11, 1]));
    }

    #[test]
    fn linear_resources_return_zero_out_of_range() {
        let (mut tex, mem) = texture_2d(2, 1, ChannelFormat::F32, 1, &floats(&[5.0, 6.0]));
        tex.resource.shape = Shape::Linear;
        assert_eq!(
            x(fetch(&tex, Coords::Int([1, 0, 0]), 0, None, &mem).unwrap()),
            6.0
        );
        assert_eq!(
            x(fetch(&tex, Coords::Int([2, 0, 0]), 0, None, &mem).unwrap()),
            0.0
        );
        assert_eq!(
            x(fetch(&tex, Coords::Int([-1, 0, 0]), 0, None, &mem).unwrap()),
            0.0
        );
    }

    #[test]
    fn mip_levels_blend_with_the_lod_weight() {
        let (mut tex, mut mem) = texture_2d(2, 1, ChannelFormat::F32, 1, &floats(&[8.0, 8.0]));
        mem.0.extend(
            floats(&[4.0])
                .iter()
                .enumerate()
                .map(|(i, b)| (0x2000 + i as u64, *b)),
        );
        tex.resource.levels.push(Level {
            base: 0x2000,
            width: 1,
            height: 1,
            depth: 1,
            pitch: 4,
            slice: 4,
        });
        tex.sampler.normalized_coords = true;
        tex.sampler.max_lod = 1.0;
        let at = |tex: &TextureObject, lod: f32| {
            x(fetch(tex, Coords::Float([0.5, 0.0, 0.0]), 0, Some(lod), &mem).unwrap())
        };
        assert_eq!(at(&tex, 0.4), 8.0);
        assert_eq!(at(&tex, 0.6), 4.0);
        tex.sampler.mip_filter = FilterMode::Linear;
        assert_eq!(at(&tex, 0.25), 0.75 * 8.0 + 0.25 * 4.0);
        assert_eq!(at(&tex, 7.0), 4.0);
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
}
