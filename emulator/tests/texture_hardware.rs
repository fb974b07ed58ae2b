//! The texture sampler against what an NVIDIA H200 returned
//! (`../shared/hardware/textures/`, made by `tex_oracle.cu` there): 256×256
//! bilinear samples of an 8×8 float texture with clamp and border
//! addressing, 256×256×4 samples of a 4×4 `uchar4` texture read as
//! normalized floats (normalized coordinates, wrap), and the face and texel a
//! 2×2-per-face cubemap returns for 256×256 directions over the sphere.
//! Every sample must match bit for bit. Skipped, saying so, where the
//! hardware folder is absent.

use prlx_emulator::texture::sample::{Coords, Texel, TexelMemory, fetch};
use prlx_emulator::texture::{
    AddressMode, ChannelFormat, FilterMode, Level, Resource, Sampler, Shape, TextureObject,
};
use std::path::PathBuf;

const G: usize = 256;
const BASE: u64 = 0x1000;

/// Texel bytes at `BASE`.
struct Bytes(Vec<u8>);

impl TexelMemory for Bytes {
    fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), u64> {
        let start = addr.checked_sub(BASE).ok_or(addr)? as usize;
        let src = self.0.get(start..start + out.len()).ok_or(addr)?;
        out.copy_from_slice(src);
        Ok(())
    }
}

fn hardware_file(name: &str) -> Option<Vec<f32>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/hardware/textures");
    let path = dir.join(name);
    match std::fs::read(&path) {
        Ok(bytes) => Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ),
        Err(_) => {
            eprintln!(
                "skipped: {} is absent (the H200's texture samples live in ../shared/hardware)",
                path.display()
            );
            None
        }
    }
}

fn texture(
    shape: Shape,
    format: ChannelFormat,
    channels: u8,
    (width, height, layers): (u32, u32, u32),
    sampler: Sampler,
) -> TextureObject {
    let texel = (format.bytes() * channels as u32) as u64;
    TextureObject {
        resource: Resource {
            shape,
            format,
            channels,
            layers,
            levels: vec![Level {
                base: BASE,
                width,
                height,
                depth: 1,
                pitch: width as u64 * texel,
                slice: width as u64 * height as u64 * texel,
            }],
        },
        sampler,
    }
}

fn floats(t: Texel) -> [f32; 4] {
    match t {
        Texel::Float(f) => f,
        Texel::Int(i) => panic!("integer texel {i:?}"),
    }
}

/// Asserts that no sample differs, naming the first few that do.
fn assert_all_match(what: &str, mismatches: Vec<String>, total: usize) {
    assert!(
        mismatches.is_empty(),
        "{what}: {} of {total} samples differ from the H200, first:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(8)].join("\n")
    );
}

fn bilinear_float(file: &str, mode: AddressMode) {
    let Some(hw) = hardware_file(file) else {
        return;
    };
    // tex_oracle.cu: texel (x, y) = ((x * 37 + y * 91) % 53) * 0.37f - 4.
    let texels: Vec<u8> = (0..64)
        .flat_map(|i| {
            let (x, y) = (i % 8, i / 8);
            let v = ((x * 37 + y * 91) % 53) as f32 * 0.37f32 - 4.0f32;
            v.to_le_bytes()
        })
        .collect();
    let sampler = Sampler {
        address: [mode; 3],
        filter: FilterMode::Linear,
        ..Sampler::default()
    };
    let tex = texture(Shape::Array2D, ChannelFormat::F32, 1, (8, 8, 1), sampler);
    let mem = Bytes(texels);
    let mut mismatches = Vec::new();
    for y in 0..G {
        for x in 0..G {
            // nvcc contracts `-2 + x*(12/G) + 0.0013f*y` into one fma.
            let u = (-2.0 + x as f64 * (12.0 / G as f64) + 0.0013f32 as f64 * y as f64) as f32;
            let v = (-2.0 + y as f64 * (12.0 / G as f64) + 0.0007f32 as f64 * x as f64) as f32;
            let got = floats(fetch(&tex, Coords::Float([u, v, 0.0]), 0, None, &mem).unwrap())[0];
            let want = hw[y * G + x];
            if got.to_bits() != want.to_bits() {
                mismatches.push(format!("({u}, {v}): emulator {got:?}, H200 {want:?}"));
            }
        }
    }
    assert_all_match(file, mismatches, G * G);
}

#[test]
fn bilinear_float_clamp_matches_the_h200() {
    bilinear_float("tex2d_linear_clamp.f32", AddressMode::Clamp);
}

#[test]
fn bilinear_float_border_matches_the_h200() {
    bilinear_float("tex2d_linear_border.f32", AddressMode::Border);
}

#[test]
fn bilinear_uchar4_normalized_matches_the_h200() {
    let Some(hw) = hardware_file("uchar4_linear.f32") else {
        return;
    };
    // Channel c of texel (x, y) = (x*61 + y*17 + c*29) & 255.
    let texels: Vec<u8> = (0..16)
        .flat_map(|i| {
            let (x, y) = (i % 4, i / 4);
            (0..4).map(move |c| ((x * 61 + y * 17 + c * 29) & 255) as u8)
        })
        .collect();
    let sampler = Sampler {
        address: [AddressMode::Wrap; 3],
        filter: FilterMode::Linear,
        normalized_coords: true,
        ..Sampler::default()
    };
    let tex = texture(Shape::Array2D, ChannelFormat::U8, 4, (4, 4, 1), sampler);
    let mem = Bytes(texels);
    let mut mismatches = Vec::new();
    for y in 0..G {
        for x in 0..G {
            let (u, v) = (x as f32 / G as f32 - 0.25, y as f32 / G as f32 - 0.25);
            let got = floats(fetch(&tex, Coords::Float([u, v, 0.0]), 0, None, &mem).unwrap());
            for c in 0..4 {
                let want = hw[(y * G + x) * 4 + c];
                if got[c].to_bits() != want.to_bits() {
                    mismatches.push(format!(
                        "({u}, {v}) channel {c}: emulator {:?}, H200 {want:?}",
                        got[c]
                    ));
                }
            }
        }
    }
    assert_all_match("uchar4_linear.f32", mismatches, G * G * 4);
}

#[test]
fn cubemap_faces_match_the_h200() {
    let Some(hw) = hardware_file("cube_face.f32") else {
        return;
    };
    // 2×2 texels per face, valued face*100 + y*10 + x.
    let texels: Vec<u8> = (0..24)
        .flat_map(|i| {
            let (face, y, x) = (i / 4, i % 4 / 2, i % 2);
            ((face * 100 + y * 10 + x) as f32).to_le_bytes()
        })
        .collect();
    let sampler = Sampler {
        normalized_coords: true,
        ..Sampler::default()
    };
    let tex = texture(Shape::Cubemap, ChannelFormat::F32, 1, (2, 2, 6), sampler);
    let mem = Bytes(texels);
    let mut mismatches = Vec::new();
    for y in 0..G {
        for x in 0..G {
            // The directions of tex_oracle.cu (6.2831853f is TAU in f32); its __cosf/__sinf stand in
            // as f64 functions rounded to f32 (no sample lies close enough
            // to a face edge for their last bits to matter).
            let a = (x as f32 + 0.5) * (std::f32::consts::TAU / G as f32);
            let b =
                (y as f32 + 0.5) * (std::f32::consts::PI / G as f32) - std::f32::consts::FRAC_PI_2;
            let (cos_a, sin_a) = ((a as f64).cos() as f32, (a as f64).sin() as f32);
            let (cos_b, sin_b) = ((b as f64).cos() as f32, (b as f64).sin() as f32);
            let dir = [cos_b * cos_a, sin_b, cos_b * sin_a];
            let got = floats(fetch(&tex, Coords::Float(dir), 0, None, &mem).unwrap())[0];
            let want = hw[y * G + x];
            if got.to_bits() != want.to_bits() {
                mismatches.push(format!("{dir:?}: emulator {got}, H200 {want}"));
            }
        }
    }
    assert_all_match("cube_face.f32", mismatches, G * G);
}
