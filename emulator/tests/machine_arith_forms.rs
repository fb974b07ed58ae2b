//! Arithmetic forms checked lane by lane against CPU references written from
//! the PTX ISA's definitions: packed `.u16x2/.s16x2` add/sub/min/max,
//! `min/max.relu`, `fns`, `fma.rn.relu` on f16/bf16 and `min/max.xorsign.abs`.

mod machine_util;
use machine_util::*;

/// Runs `body` (reading `%a %b %c`, writing `%d`, all `.b32`) on 64 lanes.
fn run3(target: &str, body: &str, a: &[u32], b: &[u32], c: &[u32]) -> Vec<u32> {
    let ptx = format!(
        ".version 8.0\n.target {target}\n.address_size 64\n\
         .visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{{\n\
         .reg .b32 %a, %b, %c, %d, %t;\n.reg .b16 %ha, %hb, %hc, %hd;\n.reg .b64 %rd<12>;\n.reg .f32 %fa, %fb, %fd;\n\
         mov.u32 %t, %tid.x;\nmul.wide.u32 %rd1, %t, 4;\n\
         ld.param.u64 %rd2, [pa];\nadd.s64 %rd3, %rd2, %rd1;\nld.global.u32 %a, [%rd3];\n\
         ld.param.u64 %rd4, [pb];\nadd.s64 %rd5, %rd4, %rd1;\nld.global.u32 %b, [%rd5];\n\
         ld.param.u64 %rd6, [pc];\nadd.s64 %rd7, %rd6, %rd1;\nld.global.u32 %c, [%rd7];\n\
         {body}\n\
         ld.param.u64 %rd8, [pd];\nadd.s64 %rd9, %rd8, %rd1;\nst.global.u32 [%rd9], %d;\nret;\n}}\n"
    );
    let sm: u32 = target.trim_start_matches("sm_").parse().unwrap();
    let mut dev = prlx_emulator::Device::new(prlx_emulator::DeviceConfig {
        compute_capability: (sm / 10, sm % 10),
        ..prlx_emulator::DeviceConfig::default()
    });
    let f = kernel(&mut dev, &ptx, "k");
    let n = a.len();
    let (pa, pb, pc) = (
        upload_u32(&mut dev, a),
        upload_u32(&mut dev, b),
        upload_u32(&mut dev, c),
    );
    let pd = dev.mem_alloc(n as u64 * 4).unwrap();
    run(
        &mut dev,
        f,
        cfg(1, n as u32),
        &Params::new().u64(pa).u64(pb).u64(pc).u64(pd),
    );
    download_u32(&dev, pd, n)
}

/// Deterministic inputs with the interesting 16-bit and 32-bit edges.
fn inputs(seed: u32) -> Vec<u32> {
    let edges = [
        0u32,
        1,
        0xffff,
        0x8000,
        0x7fff,
        0xffff_ffff,
        0x8000_7fff,
        0x7fff_8000,
        0x0001_ffff,
    ];
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if i < edges.len() {
                edges[(i + seed as usize) % edges.len()]
            } else {
                x
            }
        })
        .collect()
}

fn halves(x: u32, f: impl Fn(u16, u16) -> u16, y: u32) -> u32 {
    let lo = f(x as u16, y as u16) as u32;
    let hi = f((x >> 16) as u16, (y >> 16) as u16) as u32;
    hi << 16 | lo
}

#[test]
fn packed_16x2_integer_arithmetic() {
    let (a, b) = (inputs(1), inputs(2));
    let c = vec![0; 64];
    type Ref = fn(u16, u16) -> u16;
    let cases: [(&str, Ref); 8] = [
        ("add.u16x2", |x, y| x.wrapping_add(y)),
        ("add.s16x2", |x, y| x.wrapping_add(y)),
        ("sub.u16x2", |x, y| x.wrapping_sub(y)),
        ("min.u16x2", |x, y| x.min(y)),
        ("max.u16x2", |x, y| x.max(y)),
        ("min.s16x2", |x, y| (x as i16).min(y as i16) as u16),
        ("max.s16x2", |x, y| (x as i16).max(y as i16) as u16),
        ("max.relu.s16x2", |x, y| {
            (x as i16).max(y as i16).max(0) as u16
        }),
    ];
    for (op, reference) in cases {
        let got = run3("sm_90", &format!("{op} %d, %a, %b;"), &a, &b, &c);
        for i in 0..64 {
            assert_eq!(
                got[i],
                halves(a[i], reference, b[i]),
                "{op} {:#x} {:#x}",
                a[i],
                b[i]
            );
        }
    }
    let got = run3("sm_90", "min.relu.s16x2 %d, %a, %b;", &a, &b, &c);
    for i in 0..64 {
        let want = halves(a[i], |x, y| (x as i16).min(y as i16).max(0) as u16, b[i]);
        assert_eq!(got[i], want, "min.relu.s16x2");
    }
}

#[test]
fn min_max_relu_s32() {
    let (a, b) = (inputs(3), inputs(4));
    let c = vec![0; 64];
    let min = run3("sm_90", "min.relu.s32 %d, %a, %b;", &a, &b, &c);
    let max = run3("sm_90", "max.relu.s32 %d, %a, %b;", &a, &b, &c);
    for i in 0..64 {
        let (x, y) = (a[i] as i32, b[i] as i32);
        assert_eq!(min[i], x.min(y).max(0) as u32, "min.relu {x} {y}");
        assert_eq!(max[i], x.max(y).max(0) as u32, "max.relu {x} {y}");
    }
}

#[test]
fn fns_finds_the_nth_set_bit() {
    let mask = inputs(5);
    let base: Vec<u32> = (0..64).map(|i| (i * 7) % 32).collect();
    let offset: Vec<u32> = (0..64i32).map(|i| ((i % 9) - 4) as u32).collect();
    let got = run3("sm_80", "fns.b32 %d, %a, %b, %c;", &mask, &base, &offset);
    for i in 0..64 {
        let want = reference_inclusive(mask[i], base[i], offset[i] as i32);
        assert_eq!(
            got[i], want,
            "fns {:#x} base {} offset {}",
            mask[i], base[i], offset[i] as i32
        );
    }
}

/// `fns` as the PTX ISA's pseudocode defines it: for positive offsets scan
/// upwards from `base` inclusive, for negative ones downwards from `base`
/// inclusive, counting set bits until `|offset|` are seen; offset 0 tests `base`.
fn reference_inclusive(mask: u32, base: u32, offset: i32) -> u32 {
    if offset == 0 {
        return if mask >> base & 1 == 1 {
            base
        } else {
            u32::MAX
        };
    }
    let mut count = 0;
    let positions: Box<dyn Iterator<Item = u32>> = if offset > 0 {
        Box::new(base..32)
    } else {
        Box::new((0..=base).rev())
    };
    for p in positions {
        if mask >> p & 1 == 1 {
            count += 1;
            if count == offset.unsigned_abs() {
                return p;
            }
        }
    }
    u32::MAX
}

/// Rounds an f64 holding an exact (or nearly exact) value to the nearest
/// `bits`-mantissa format value with ties to even; returns the f64 value.
fn round_to(x: f64, mantissa_bits: u32, min_exp: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let e = x.abs().log2().floor() as i32;
    let e = e.max(min_exp);
    let scale = 2f64.powi(mantissa_bits as i32 - e);
    let y = x * scale;
    let r = y.round();
    let r = if (y - y.trunc()).abs() == 0.5 {
        2.0 * (y / 2.0).round()
    } else {
        r
    };
    r / scale
}

fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

fn f16_to_f64(h: u16) -> f64 {
    let (s, e, m) = (
        (h >> 15) as i32,
        ((h >> 10) & 0x1f) as i32,
        (h & 0x3ff) as f64,
    );
    let v = if e == 0 {
        m * 2f64.powi(-24)
    } else {
        (1.0 + m / 1024.0) * 2f64.powi(e - 15)
    };
    if s == 1 { -v } else { v }
}

fn f64_to_bf16(x: f64) -> u16 {
    (round_to(x, 7, -126) as f32).to_bits().wrapping_shr(16) as u16
}

fn f64_to_f16(x: f64) -> u16 {
    let r = round_to(x, 10, -14);
    let sign = if r.is_sign_negative() { 0x8000 } else { 0 };
    let a = r.abs();
    if a == 0.0 {
        return sign;
    }
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    let e = a.log2().floor() as i32;
    if e < -14 {
        return sign | (a / 2f64.powi(-24)) as u16;
    }
    sign | (((e + 15) as u16) << 10) | ((a / 2f64.powi(e) - 1.0) * 1024.0) as u16
}

/// Small values whose products and sums are exact in f64.
fn small_halves(seed: u32, to_bits: fn(f64) -> u16) -> Vec<u32> {
    let mut x = seed;
    (0..64)
        .map(|_| {
            let mut next = || {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let v = ((x >> 8) % 2001) as f64 / 64.0 - 15.6;
                to_bits(v) as u32
            };
            next() | next() << 16
        })
        .collect()
}

#[test]
fn fma_relu_on_16_bit_floats() {
    for (ty, to_f64, from_f64) in [
        (
            "bf16",
            bf16_to_f64 as fn(u16) -> f64,
            f64_to_bf16 as fn(f64) -> u16,
        ),
        ("f16", f16_to_f64, f64_to_f16),
    ] {
        let (a, b, c) = (
            small_halves(1, from_f64),
            small_halves(2, from_f64),
            small_halves(3, from_f64),
        );
        let relu = |x: u16, y: u16, z: u16| {
            let r = from_f64(to_f64(x) * to_f64(y) + to_f64(z));
            if r & 0x8000 != 0 { 0 } else { r }
        };
        let packed = run3(
            "sm_80",
            &format!("fma.rn.relu.{ty}x2 %d, %a, %b, %c;"),
            &a,
            &b,
            &c,
        );
        let scalar = run3(
            "sm_80",
            &format!(
                "mov.b32 {{%ha, %hd}}, %a;\nmov.b32 {{%hb, %hd}}, %b;\nmov.b32 {{%hc, %hd}}, %c;\n\
                 fma.rn.relu.{ty} %hd, %ha, %hb, %hc;\ncvt.u32.u16 %d, %hd;"
            ),
            &a,
            &b,
            &c,
        );
        for i in 0..64 {
            let lo = relu(a[i] as u16, b[i] as u16, c[i] as u16);
            let hi = relu(
                (a[i] >> 16) as u16,
                (b[i] >> 16) as u16,
                (c[i] >> 16) as u16,
            );
            assert_eq!(packed[i], (hi as u32) << 16 | lo as u32, "{ty}x2 lane {i}");
            assert_eq!(scalar[i], lo as u32, "{ty} lane {i}");
        }
    }
}

#[test]
fn min_max_xorsign_abs_f32() {
    let vals = [1.5f32, -2.0, 0.0, -0.0, 3.25, -3.25, 1e-3, -7.0];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for x in vals {
        for y in vals {
            a.push(x.to_bits());
            b.push(y.to_bits());
        }
    }
    let c = vec![0; 64];
    let min = run3("sm_86", "min.xorsign.abs.f32 %d, %a, %b;", &a, &b, &c);
    let max = run3("sm_86", "max.xorsign.abs.f32 %d, %a, %b;", &a, &b, &c);
    for i in 0..64 {
        let (x, y) = (f32::from_bits(a[i]), f32::from_bits(b[i]));
        let sign = (a[i] ^ b[i]) & 0x8000_0000;
        // PTX min/max treat -0 as smaller than +0; magnitudes are never -0.
        let want_min = x.abs().min(y.abs()).to_bits() | sign;
        let want_max = x.abs().max(y.abs()).to_bits() | sign;
        assert_eq!(min[i], want_min, "min.xorsign.abs {x} {y}");
        assert_eq!(max[i], want_max, "max.xorsign.abs {x} {y}");
    }
}

#[test]
fn mad_hi_sat_s32_clamps() {
    let (a, b, c) = (inputs(6), inputs(7), inputs(8));
    let got = run3("sm_80", "mad.hi.sat.s32 %d, %a, %b, %c;", &a, &b, &c);
    for i in 0..64 {
        let hi = (a[i] as i32 as i64 * b[i] as i32 as i64) >> 32;
        let want = (hi + c[i] as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        assert_eq!(got[i] as i32, want, "{:#x} {:#x} {:#x}", a[i], b[i], c[i]);
    }
}
