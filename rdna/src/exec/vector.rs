//! Vector ALU: VOP1/VOP2/VOP3 arithmetic (integer, f32, f64, a few f16),
//! conversions, transcendentals, compares (`v_cmp*`/`v_cmpx*` write lane
//! masks: ballots), carry chains, cross-lane ops (`v_readlane`,
//! `v_writelane`, `v_readfirstlane`, `v_permlane*`, `v_mbcnt*`), DPP16/DPP8
//! source swizzles, and the gfx11 dual-issue VOPD pairs.
//!
//! Precision: transcendental results are computed in f64 and rounded to
//! f32 (`v_exp_f32` = 2^x, `v_log_f32` = log2 x, `v_rcp_f32`, `v_rsq_f32`,
//! `v_sqrt_f32`, `v_sin_f32`/`v_cos_f32` of x·2π), i.e. correctly rounded
//! or within 1 ulp, where the hardware guarantees about 1 ulp: results may
//! differ from a GPU in the last bit. Denormals are preserved.

use super::{Ctx, Flow, Handler};
use crate::decode::{Format, Inst, src};
use crate::fault::ExecError;

type R = Result<Flow, ExecError>;

/// Lanes an instruction writes: EXEC, narrowed by DPP row/bank masks and
/// by DPP sources that are invalid without `bound_ctrl`.
fn lane_mask(c: &Ctx<'_>, i: &Inst) -> u64 {
    let exec = c.wave.exec();
    let Some(d) = &i.dpp else { return exec };
    let bound = matches!(
        d,
        crate::decode::Dpp::Dpp16 {
            bound_ctrl: true,
            ..
        }
    );
    (0..c.wave.wave_size as usize)
        .filter(|&l| exec >> l & 1 == 1)
        .filter(|&l| {
            Ctx::dpp_writes(d, l) && (bound || c.dpp_source(d, l) != super::DppSource::Invalid)
        })
        .fold(0u64, |m, l| m | 1 << l)
}

/// The lanes of a mask, lowest first.
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            l
        })
    })
}

fn lanes(c: &Ctx<'_>, i: &Inst) -> Vec<usize> {
    bits(lane_mask(c, i)).collect()
}

fn fsrc(c: &Ctx<'_>, i: &Inst, k: usize, lane: usize) -> f32 {
    let mut v = f32::from_bits(c.vsrc32(i, k, lane));
    if i.abs >> k & 1 == 1 {
        v = v.abs();
    }
    if i.neg >> k & 1 == 1 {
        v = -v;
    }
    v
}

fn dsrc(c: &Ctx<'_>, i: &Inst, k: usize, lane: usize) -> f64 {
    let mut v = f64::from_bits(c.vsrc64(i, k, lane, true));
    if i.abs >> k & 1 == 1 {
        v = v.abs();
    }
    if i.neg >> k & 1 == 1 {
        v = -v;
    }
    v
}

fn usrc(c: &Ctx<'_>, i: &Inst, k: usize, lane: usize) -> u32 {
    c.vsrc32(i, k, lane)
}

fn omod_clamp_f32(i: &Inst, mut v: f32) -> f32 {
    match i.omod {
        1 => v *= 2.0,
        2 => v *= 4.0,
        3 => v *= 0.5,
        _ => {}
    }
    if i.clamp {
        v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    }
    v
}

fn omod_clamp_f64(i: &Inst, mut v: f64) -> f64 {
    match i.omod {
        1 => v *= 2.0,
        2 => v *= 4.0,
        3 => v *= 0.5,
        _ => {}
    }
    if i.clamp {
        v = if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) };
    }
    v
}

/// Computes one u32 per lane (all reads first), then writes `dst`.
fn write32(c: &mut Ctx<'_>, i: &Inst, f: impl Fn(&Ctx<'_>, usize) -> u32) -> R {
    // All lanes read their sources before any writes its destination.
    let mask = lane_mask(c, i);
    let mut vals = [0u32; 64];
    for l in bits(mask) {
        vals[l] = f(c, l);
    }
    for l in bits(mask) {
        c.wave.set_vgpr(i.dst, l, vals[l]);
    }
    Ok(Flow::Next)
}

fn write64(c: &mut Ctx<'_>, i: &Inst, f: impl Fn(&Ctx<'_>, usize) -> u64) -> R {
    let mask = lane_mask(c, i);
    let mut vals = [0u64; 64];
    for l in bits(mask) {
        vals[l] = f(c, l);
    }
    for l in bits(mask) {
        c.wave.set_vgpr64(i.dst, l, vals[l]);
    }
    Ok(Flow::Next)
}

fn f1(c: &mut Ctx<'_>, i: &Inst, f: fn(f32) -> f32) -> R {
    write32(c, i, |c, l| {
        omod_clamp_f32(i, f(fsrc(c, i, 0, l))).to_bits()
    })
}
fn f2(c: &mut Ctx<'_>, i: &Inst, f: fn(f32, f32) -> f32) -> R {
    write32(c, i, |c, l| {
        omod_clamp_f32(i, f(fsrc(c, i, 0, l), fsrc(c, i, 1, l))).to_bits()
    })
}
fn f3(c: &mut Ctx<'_>, i: &Inst, f: fn(f32, f32, f32) -> f32) -> R {
    write32(c, i, |c, l| {
        omod_clamp_f32(i, f(fsrc(c, i, 0, l), fsrc(c, i, 1, l), fsrc(c, i, 2, l))).to_bits()
    })
}
fn d1(c: &mut Ctx<'_>, i: &Inst, f: fn(f64) -> f64) -> R {
    write64(c, i, |c, l| {
        omod_clamp_f64(i, f(dsrc(c, i, 0, l))).to_bits()
    })
}
fn d2(c: &mut Ctx<'_>, i: &Inst, f: fn(f64, f64) -> f64) -> R {
    write64(c, i, |c, l| {
        omod_clamp_f64(i, f(dsrc(c, i, 0, l), dsrc(c, i, 1, l))).to_bits()
    })
}
fn d3(c: &mut Ctx<'_>, i: &Inst, f: fn(f64, f64, f64) -> f64) -> R {
    write64(c, i, |c, l| {
        omod_clamp_f64(i, f(dsrc(c, i, 0, l), dsrc(c, i, 1, l), dsrc(c, i, 2, l))).to_bits()
    })
}
fn u1(c: &mut Ctx<'_>, i: &Inst, f: fn(u32) -> u32) -> R {
    write32(c, i, |c, l| f(usrc(c, i, 0, l)))
}
fn u2(c: &mut Ctx<'_>, i: &Inst, f: fn(u32, u32) -> u32) -> R {
    write32(c, i, |c, l| f(usrc(c, i, 0, l), usrc(c, i, 1, l)))
}
fn u3(c: &mut Ctx<'_>, i: &Inst, f: fn(u32, u32, u32) -> u32) -> R {
    write32(c, i, |c, l| {
        f(usrc(c, i, 0, l), usrc(c, i, 1, l), usrc(c, i, 2, l))
    })
}
/// 64-bit shifts: shift amount is 32-bit src0, value 64-bit src1.
fn shift64(c: &mut Ctx<'_>, i: &Inst, f: fn(u64, u32) -> u64) -> R {
    write64(c, i, |c, l| {
        f(c.vsrc64(i, 1, l, false), usrc(c, i, 0, l) & 63)
    })
}
fn f1_d(c: &mut Ctx<'_>, i: &Inst, f: fn(f64) -> u32) -> R {
    write32(c, i, |c, l| f(dsrc(c, i, 0, l)))
}
fn f1_u(c: &mut Ctx<'_>, i: &Inst, f: fn(f32) -> u32) -> R {
    write32(c, i, |c, l| f(fsrc(c, i, 0, l)))
}

fn sext24(v: u32) -> i64 {
    (((v << 8) as i32) >> 8) as i64
}

fn med3<T: PartialOrd + Copy>(a: T, b: T, c: T) -> T {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    if c < lo {
        lo
    } else if c > hi {
        hi
    } else {
        c
    }
}

fn med3f(a: f32, b: f32, c: f32) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return a.min(b).min(c);
    }
    med3(a, b, c)
}

fn bfe(v: u32, off: u32, width: u32, signed: bool) -> u32 {
    let off = off & 31;
    let width = width & 31;
    if width == 0 {
        return 0;
    }
    let x = v >> off;
    if off + width < 32 {
        let mask = (1u32 << width) - 1;
        let x = x & mask;
        if signed && x >> (width - 1) & 1 == 1 {
            x | !mask
        } else {
            x
        }
    } else if signed {
        ((v as i32) >> off) as u32
    } else {
        x
    }
}

fn ldexp32(x: f32, e: i32) -> f32 {
    (x as f64 * 2f64.powi(e.clamp(-400, 400))) as f32
}

fn frexp32(x: f32) -> (f32, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (m, e) = frexp64(x as f64);
    (m as f32, e)
}

fn frexp64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7FF) as i32;
    if exp == 0 {
        let (m, e) = frexp64(x * 2f64.powi(64));
        return (m, e - 64);
    }
    let m = f64::from_bits((bits & !(0x7FF << 52)) | (1022u64 << 52));
    (m, exp - 1022)
}

fn exponent32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xFF) as i32
}

/// V_DIV_SCALE_F32 (returns value and VCC bit).
fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let (den, num) = (s1, s2);
    if num == 0.0 || den == 0.0 {
        return (f32::NAN, false);
    }
    if !num.is_finite() || !den.is_finite() {
        return (s0, false);
    }
    let ed = exponent32(den);
    let en = exponent32(num);
    if en - ed >= 96 {
        return (if s0 == den { ldexp32(s0, 64) } else { s0 }, true);
    }
    if den.is_subnormal() {
        return (ldexp32(s0, 64), false);
    }
    let rcp = 1.0 / den;
    let q = num / den;
    if rcp.is_subnormal() && q.is_subnormal() {
        return (if s0 == den { ldexp32(s0, 64) } else { s0 }, true);
    }
    if rcp.is_subnormal() {
        return (ldexp32(s0, -64), false);
    }
    if q.is_subnormal() {
        return (if s0 == num { ldexp32(s0, 64) } else { s0 }, true);
    }
    if en <= 23 {
        return (ldexp32(s0, 64), false);
    }
    (s0, false)
}

fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    let (den, num) = (s1, s2);
    if num == 0.0 || den == 0.0 {
        return (f64::NAN, false);
    }
    if !num.is_finite() || !den.is_finite() {
        return (s0, false);
    }
    let e = |x: f64| ((x.to_bits() >> 52) & 0x7FF) as i32;
    let l = |x: f64, k: i32| x * 2f64.powi(k);
    if e(num) - e(den) >= 768 {
        return (if s0 == den { l(s0, 128) } else { s0 }, true);
    }
    if den.is_subnormal() {
        return (l(s0, 128), false);
    }
    let rcp = 1.0 / den;
    let q = num / den;
    if rcp.is_subnormal() && q.is_subnormal() {
        return (if s0 == den { l(s0, 128) } else { s0 }, true);
    }
    if rcp.is_subnormal() {
        return (l(s0, -128), false);
    }
    if q.is_subnormal() {
        return (if s0 == num { l(s0, 128) } else { s0 }, true);
    }
    if e(num) <= 53 {
        return (l(s0, 128), false);
    }
    (s0, false)
}

/// V_DIV_FIXUP: special cases of num/den, else the refined quotient S0.
fn div_fixup(s0: f64, den: f64, num: f64, max_exp_gap: i32) -> f64 {
    let sign_neg = den.is_sign_negative() != num.is_sign_negative();
    let inf = if sign_neg {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let zero = if sign_neg { -0.0 } else { 0.0 };
    if num.is_nan() {
        return num;
    }
    if den.is_nan() {
        return den;
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f64::NAN;
    }
    if den == 0.0 || num.is_infinite() {
        return inf;
    }
    if den.is_infinite() || num == 0.0 {
        return zero;
    }
    let _ = max_exp_gap;
    if s0.is_nan() {
        return inf;
    }
    if sign_neg { -s0.abs() } else { s0.abs() }
}

/// The first 1216 fraction bits of 2/π, most significant first
/// (0.101000101111100110000011... = 0xA2F9836E...).
const TWO_OVER_PI: [u64; 19] = [
    0xa2f9836e4e441529,
    0xfc2757d1f534ddc0,
    0xdb6295993c439041,
    0xfe5163abdebbc561,
    0xb7246e3a424dd2e0,
    0x06492eea09d1921c,
    0xfe1deb1cb129a73e,
    0xe88235f52ebb4484,
    0xe99c7026b45f7e41,
    0x3991d639835339f4,
    0x9c845f8bbdf9283b,
    0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f,
    0x6d367ecf27cb09b7,
    0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea,
    0x6bfb5fb11f8d5d08,
    0x56033046fc7b6bab,
];

/// 53 bits of 2/π starting `shift` bits after the binary point.
fn two_over_pi_bits(shift: u32) -> u64 {
    let bit = |k: u32| -> u64 {
        let (w, b) = ((k / 64) as usize, 63 - k % 64);
        TWO_OVER_PI.get(w).map_or(0, |x| (x >> b) & 1)
    };
    (0..53).fold(0u64, |acc, k| (acc << 1) | bit(shift + k))
}

/// V_TRIG_PREOP_F64: the segment `seg` of 2/π scaled for the argument
/// reduction of `x` (large exponents start further into 2/π).
fn trig_preop(x: f64, seg: u32) -> f64 {
    let exp = ((x.to_bits() >> 52) & 0x7FF) as i32;
    let mut shift = (seg & 31) as i32 * 53;
    if exp > 1077 {
        shift += exp - 1077;
    }
    let result = two_over_pi_bits(shift as u32) as f64;
    let mut scale = -53 - shift;
    if exp >= 1968 {
        scale += 128;
    }
    // Two steps so the intermediate power of two stays representable.
    let half = scale / 2;
    result * 2f64.powi(half) * 2f64.powi(scale - half)
}

/// Writes a per-lane bit mask (carry out, compare result) to an SGPR
/// (pair in wave64), merging: lanes not in `lanes` get 0.
fn write_mask(c: &mut Ctx<'_>, code: u16, bits: u64) {
    c.wave.write_mask(code, bits);
}

fn carry_in(c: &Ctx<'_>, i: &Inst) -> u64 {
    if i.format == Format::Vop3 {
        c.wave.read_mask(i.src[2])
    } else {
        c.wave.vcc()
    }
}

fn carry_out_code(i: &Inst) -> u16 {
    if i.format == Format::Vop3 {
        i.sdst
    } else {
        src::VCC_LO
    }
}

/// Add/sub with carry out (and optional carry in): `f(a, b, cin) -> (r, carry)`.
fn carry_op(c: &mut Ctx<'_>, i: &Inst, with_cin: bool, f: fn(u32, u32, u32) -> (u32, bool)) -> R {
    let ls = lanes(c, i);
    let cin = if with_cin { carry_in(c, i) } else { 0 };
    let mut bits = 0u64;
    let vals: Vec<(u32, bool)> = ls
        .iter()
        .map(|&l| f(usrc(c, i, 0, l), usrc(c, i, 1, l), (cin >> l & 1) as u32))
        .collect();
    for (&l, (v, carry)) in ls.iter().zip(vals) {
        c.wave.set_vgpr(i.dst, l, v);
        if carry {
            bits |= 1 << l;
        }
    }
    write_mask(c, carry_out_code(i), bits);
    Ok(Flow::Next)
}

fn cndmask(c: &mut Ctx<'_>, i: &Inst) -> R {
    let mask = if i.format == Format::Vop3 {
        c.wave.read_mask(i.src[2])
    } else {
        c.wave.vcc()
    };
    write32(c, i, |c, l| {
        let pick = if mask >> l & 1 == 1 { 1 } else { 0 };
        if i.abs != 0 || i.neg != 0 {
            fsrc(c, i, pick, l).to_bits()
        } else {
            usrc(c, i, pick, l)
        }
    })
}

fn readlane(c: &mut Ctx<'_>, i: &Inst) -> R {
    let lane = (c.scalar32(i, i.src[1]) & (c.wave.wave_size - 1)) as usize;
    let v = c.wave.vgpr(i.src[0].saturating_sub(src::VGPR0), lane);
    c.wave.set_sreg(i.dst, v);
    Ok(Flow::Next)
}

fn readfirstlane(c: &mut Ctx<'_>, i: &Inst) -> R {
    let exec = c.wave.exec();
    let lane = if exec == 0 {
        0
    } else {
        exec.trailing_zeros() as usize
    };
    let v = if i.src[0] >= src::VGPR0 {
        c.wave.vgpr(i.src[0] - src::VGPR0, lane)
    } else {
        c.scalar32(i, i.src[0])
    };
    c.wave.set_sreg(i.dst, v);
    Ok(Flow::Next)
}

fn writelane(c: &mut Ctx<'_>, i: &Inst) -> R {
    let v = c.scalar32(i, i.src[0]);
    let lane = (c.scalar32(i, i.src[1]) & (c.wave.wave_size - 1)) as usize;
    c.wave.set_vgpr(i.dst, lane, v);
    Ok(Flow::Next)
}

fn mbcnt(c: &mut Ctx<'_>, i: &Inst, hi: bool) -> R {
    write32(c, i, |c, l| {
        let below = if l >= 64 { u64::MAX } else { (1u64 << l) - 1 };
        let m = if hi {
            (below >> 32) as u32
        } else {
            below as u32
        };
        (usrc(c, i, 0, l) & m)
            .count_ones()
            .wrapping_add(usrc(c, i, 1, l))
    })
}

fn permlane(c: &mut Ctx<'_>, i: &Inst, cross: bool) -> R {
    let sel = (c.scalar32(i, i.src[1]) as u64) | ((c.scalar32(i, i.src[2]) as u64) << 32);
    let n = c.wave.wave_size as usize;
    let reg = i.src[0].saturating_sub(src::VGPR0);
    write32(c, i, |c, l| {
        let row = l / 16;
        let s = ((sel >> (4 * (l & 15))) & 0xF) as usize;
        let src_row = if cross { row ^ 1 } else { row };
        let sl = (src_row * 16 + s) % n;
        c.wave.vgpr(reg, sl)
    })
}

fn perm_b32(s0: u32, s1: u32, sel: u32) -> u32 {
    let bytes = ((s0 as u64) << 32) | s1 as u64;
    let mut out = 0u32;
    for k in 0..4 {
        let sb = (sel >> (8 * k)) & 0xFF;
        let b: u32 = match sb {
            0..=7 => ((bytes >> (8 * sb)) & 0xFF) as u32,
            8 => {
                if s1 >> 15 & 1 == 1 {
                    0xFF
                } else {
                    0
                }
            }
            9 => {
                if s1 >> 31 & 1 == 1 {
                    0xFF
                } else {
                    0
                }
            }
            10 => {
                if s0 >> 15 & 1 == 1 {
                    0xFF
                } else {
                    0
                }
            }
            11 => {
                if s0 >> 31 & 1 == 1 {
                    0xFF
                } else {
                    0
                }
            }
            12 => 0,
            _ => 0xFF,
        };
        out |= b << (8 * k);
    }
    out
}

fn f16(v: u32) -> f32 {
    half::f16::from_bits(v as u16).to_f32()
}
fn to_f16(v: f32) -> u32 {
    half::f16::from_f32(v).to_bits() as u32
}
fn to_f16_rtz(v: f32) -> u32 {
    let h = half::f16::from_f32(v);
    if h.to_f32().abs() > v.abs() && v.is_finite() {
        // Rounded away from zero: step one ulp toward zero.
        (h.to_bits() - 1) as u32
    } else {
        h.to_bits() as u32
    }
}

fn h2(c: &mut Ctx<'_>, i: &Inst, f: fn(f32, f32) -> f32) -> R {
    write32(c, i, |c, l| {
        let a = f16(c.vsrc16(i, 0, l));
        let b = f16(c.vsrc16(i, 1, l));
        let (a, b) = (
            if i.abs & 1 != 0 { a.abs() } else { a },
            if i.abs & 2 != 0 { b.abs() } else { b },
        );
        let (a, b) = (
            if i.neg & 1 != 0 { -a } else { a },
            if i.neg & 2 != 0 { -b } else { b },
        );
        let old = c.wave.vgpr(i.dst, l);
        let r = to_f16(f(a, b));
        if i.opsel & 8 != 0 {
            (old & 0xFFFF) | (r << 16)
        } else {
            (old & 0xFFFF_0000) | r
        }
    })
}

/// The compare of `v_cmp[x]_<cond>_<type>`, per lane, written as a lane mask.
pub fn compare(c: &mut Ctx<'_>, i: &Inst) -> R {
    let name = i.name;
    let cmpx = name.starts_with("v_cmpx_");
    let rest = name
        .trim_start_matches("v_cmpx_")
        .trim_start_matches("v_cmp_");
    let (cond, ty) = rest
        .rsplit_once('_')
        .ok_or_else(|| ExecError::unsupported(name))?;
    let exec = c.wave.exec();
    let n = c.wave.wave_size as usize;
    let mut bits = 0u64;
    for l in (0..n).filter(|&l| exec >> l & 1 == 1) {
        let r = match ty {
            "f32" | "f64" | "f16" => {
                let (a, b) = match ty {
                    "f32" => (fsrc(c, i, 0, l) as f64, fsrc(c, i, 1, l) as f64),
                    "f64" => (dsrc(c, i, 0, l), dsrc(c, i, 1, l)),
                    _ => (f16(c.vsrc16(i, 0, l)) as f64, f16(c.vsrc16(i, 1, l)) as f64),
                };
                if cond == "class" {
                    let mask = usrc(c, i, 1, l);
                    let x = match ty {
                        "f32" => fsrc(c, i, 0, l) as f64,
                        _ => a,
                    };
                    let is_snan = match ty {
                        "f32" => {
                            let b = fsrc(c, i, 0, l).to_bits();
                            x.is_nan() && b & (1 << 22) == 0
                        }
                        // f16: quiet bit 9 of the raw half.
                        "f16" => x.is_nan() && c.vsrc16(i, 0, l) & (1 << 9) == 0,
                        _ => x.is_nan() && x.to_bits() & (1 << 51) == 0,
                    };
                    let sub = match ty {
                        "f32" => fsrc(c, i, 0, l).is_subnormal(),
                        "f16" => {
                            let h = c.vsrc16(i, 0, l);
                            h & 0x7C00 == 0 && h & 0x3FF != 0
                        }
                        _ => x.is_subnormal(),
                    };
                    let class = if x.is_nan() {
                        if is_snan { 0 } else { 1 }
                    } else if x.is_infinite() {
                        if x < 0.0 { 2 } else { 9 }
                    } else if x == 0.0 {
                        if x.is_sign_negative() { 5 } else { 6 }
                    } else if sub {
                        if x < 0.0 { 4 } else { 7 }
                    } else if x < 0.0 {
                        3
                    } else {
                        8
                    };
                    mask >> class & 1 == 1
                } else {
                    use std::cmp::Ordering::{Equal, Greater, Less};
                    let o = a.partial_cmp(&b);
                    match cond {
                        "f" => false,
                        "lt" => o == Some(Less),
                        "eq" => o == Some(Equal),
                        "le" => matches!(o, Some(Less | Equal)),
                        "gt" => o == Some(Greater),
                        "lg" => matches!(o, Some(Less | Greater)),
                        "ge" => matches!(o, Some(Greater | Equal)),
                        "o" => o.is_some(),
                        "u" => o.is_none(),
                        "nge" => !matches!(o, Some(Greater | Equal)),
                        "nlg" => !matches!(o, Some(Less | Greater)),
                        "ngt" => o != Some(Greater),
                        "nle" => !matches!(o, Some(Less | Equal)),
                        "neq" => o != Some(Equal),
                        "nlt" => o != Some(Less),
                        "t" => true,
                        _ => return Err(ExecError::unsupported(name)),
                    }
                }
            }
            _ => {
                let (a, b): (i128, i128) = match ty {
                    "i32" => (
                        usrc(c, i, 0, l) as i32 as i128,
                        usrc(c, i, 1, l) as i32 as i128,
                    ),
                    "u32" => (usrc(c, i, 0, l) as i128, usrc(c, i, 1, l) as i128),
                    "i64" => (
                        c.vsrc64(i, 0, l, false) as i64 as i128,
                        c.vsrc64(i, 1, l, false) as i64 as i128,
                    ),
                    "u64" => (
                        c.vsrc64(i, 0, l, false) as i128,
                        c.vsrc64(i, 1, l, false) as i128,
                    ),
                    "i16" => (
                        c.vsrc16(i, 0, l) as u16 as i16 as i128,
                        c.vsrc16(i, 1, l) as u16 as i16 as i128,
                    ),
                    "u16" => (c.vsrc16(i, 0, l) as i128, c.vsrc16(i, 1, l) as i128),
                    _ => return Err(ExecError::unsupported(name)),
                };
                match cond {
                    "f" => false,
                    "lt" => a < b,
                    "eq" => a == b,
                    "le" => a <= b,
                    "gt" => a > b,
                    "ne" => a != b,
                    "ge" => a >= b,
                    "t" => true,
                    _ => return Err(ExecError::unsupported(name)),
                }
            }
        };
        if r {
            bits |= 1 << l;
        }
    }
    if cmpx {
        c.wave.set_exec(bits);
    } else {
        let code = if i.format == Format::Vop3 {
            i.sdst
        } else {
            src::VCC_LO
        };
        write_mask(c, code, bits);
    }
    Ok(Flow::Next)
}

/// One half of a VOPD pair, from already-read operands.
fn vopd_eval(name: &str, s0: u32, s1: u32, old: u32, vcc: bool, k: u32) -> Option<u32> {
    let f = f32::from_bits;
    Some(match name {
        "v_dual_fmac_f32" => f(s0).mul_add(f(s1), f(old)).to_bits(),
        "v_dual_fmaak_f32" => f(s0).mul_add(f(s1), f(k)).to_bits(),
        "v_dual_fmamk_f32" => f(s0).mul_add(f(k), f(s1)).to_bits(),
        "v_dual_mul_f32" => (f(s0) * f(s1)).to_bits(),
        "v_dual_add_f32" => (f(s0) + f(s1)).to_bits(),
        "v_dual_sub_f32" => (f(s0) - f(s1)).to_bits(),
        "v_dual_subrev_f32" => (f(s1) - f(s0)).to_bits(),
        "v_dual_mul_dx9_zero_f32" => {
            if f(s0) == 0.0 || f(s1) == 0.0 {
                0
            } else {
                (f(s0) * f(s1)).to_bits()
            }
        }
        "v_dual_mov_b32" => s0,
        "v_dual_cndmask_b32" => {
            if vcc {
                s1
            } else {
                s0
            }
        }
        "v_dual_max_f32" => f(s0).max(f(s1)).to_bits(),
        "v_dual_min_f32" => f(s0).min(f(s1)).to_bits(),
        "v_dual_add_nc_u32" => s0.wrapping_add(s1),
        "v_dual_lshlrev_b32" => s1 << (s0 & 31),
        "v_dual_and_b32" => s0 & s1,
        "v_dual_dot2acc_f32_f16" => {
            { f(old) + f16(s0 & 0xFFFF) * f16(s1 & 0xFFFF) + f16(s0 >> 16) * f16(s1 >> 16) }
                .to_bits()
        }
        _ => return None,
    })
}

/// VOPD: both halves read their operands before either writes.
pub fn vopd(c: &mut Ctx<'_>, i: &Inst) -> R {
    let halves = i.vopd.ok_or_else(|| ExecError::unsupported(i.name))?;
    let k = i.literal.unwrap_or(0);
    let vcc = c.wave.vcc();
    let exec = c.wave.exec();
    let n = c.wave.wave_size as usize;
    let mut results = Vec::with_capacity(2 * n);
    for h in &halves {
        for l in (0..n).filter(|&l| exec >> l & 1 == 1) {
            let s0 = if h.src0 >= src::VGPR0 {
                c.wave.vgpr(h.src0 - src::VGPR0, l)
            } else {
                c.scalar32(i, h.src0)
            };
            let s1 = c.wave.vgpr(h.vsrc1, l);
            let old = c.wave.vgpr(h.vdst, l);
            let v = vopd_eval(h.name, s0, s1, old, vcc >> l & 1 == 1, k)
                .ok_or_else(|| ExecError::unsupported(h.name))?;
            results.push((h.vdst, l, v));
        }
    }
    for (r, l, v) in results {
        c.wave.set_vgpr(r, l, v);
    }
    Ok(Flow::Next)
}

pub static OPS: &[(&str, Handler)] = &[
    ("v_nop", |_c, _i| Ok(Flow::Next)),
    ("v_mov_b32", |c, i| u1(c, i, |a| a)),
    ("v_readfirstlane_b32", readfirstlane),
    ("v_readlane_b32", readlane),
    ("v_writelane_b32", writelane),
    ("v_mbcnt_lo_u32_b32", |c, i| mbcnt(c, i, false)),
    ("v_mbcnt_hi_u32_b32", |c, i| mbcnt(c, i, true)),
    ("v_permlane16_b32", |c, i| permlane(c, i, false)),
    ("v_permlanex16_b32", |c, i| permlane(c, i, true)),
    ("v_swap_b32", |c, i| {
        let other = i.src[0].saturating_sub(src::VGPR0);
        for l in lanes(c, i) {
            let (a, b) = (c.wave.vgpr(i.dst, l), c.wave.vgpr(other, l));
            c.wave.set_vgpr(i.dst, l, b);
            c.wave.set_vgpr(other, l, a);
        }
        Ok(Flow::Next)
    }),
    ("v_movrels_b32", |c, i| {
        let m0 = c.wave.sreg(src::M0).min(1024) as u16;
        write32(c, i, |c, l| {
            c.wave
                .vgpr(i.src[0].saturating_sub(src::VGPR0).saturating_add(m0), l)
        })
    }),
    ("v_movreld_b32", |c, i| {
        let m0 = c.wave.sreg(src::M0).min(1024) as u16;
        for l in lanes(c, i) {
            let v = usrc(c, i, 0, l);
            c.wave.set_vgpr(i.dst.saturating_add(m0), l, v);
        }
        Ok(Flow::Next)
    }),
    ("v_cndmask_b32", cndmask),
    // integer
    ("v_add_nc_u32", |c, i| {
        let clamp = i.clamp;
        write32(c, i, |c, l| {
            let (a, b) = (usrc(c, i, 0, l), usrc(c, i, 1, l));
            if clamp {
                a.saturating_add(b)
            } else {
                a.wrapping_add(b)
            }
        })
    }),
    ("v_sub_nc_u32", |c, i| {
        let clamp = i.clamp;
        write32(c, i, |c, l| {
            let (a, b) = (usrc(c, i, 0, l), usrc(c, i, 1, l));
            if clamp {
                a.saturating_sub(b)
            } else {
                a.wrapping_sub(b)
            }
        })
    }),
    ("v_subrev_nc_u32", |c, i| u2(c, i, |a, b| b.wrapping_sub(a))),
    ("v_add_nc_i32", |c, i| {
        let clamp = i.clamp;
        write32(c, i, |c, l| {
            let (a, b) = (usrc(c, i, 0, l) as i32, usrc(c, i, 1, l) as i32);
            (if clamp {
                a.saturating_add(b)
            } else {
                a.wrapping_add(b)
            }) as u32
        })
    }),
    ("v_sub_nc_i32", |c, i| {
        let clamp = i.clamp;
        write32(c, i, |c, l| {
            let (a, b) = (usrc(c, i, 0, l) as i32, usrc(c, i, 1, l) as i32);
            (if clamp {
                a.saturating_sub(b)
            } else {
                a.wrapping_sub(b)
            }) as u32
        })
    }),
    ("v_add_co_u32", |c, i| {
        carry_op(c, i, false, |a, b, _| a.overflowing_add(b))
    }),
    ("v_sub_co_u32", |c, i| {
        carry_op(c, i, false, |a, b, _| a.overflowing_sub(b))
    }),
    ("v_subrev_co_u32", |c, i| {
        carry_op(c, i, false, |a, b, _| b.overflowing_sub(a))
    }),
    ("v_add_co_ci_u32", |c, i| {
        carry_op(c, i, true, |a, b, ci| {
            let r = a as u64 + b as u64 + ci as u64;
            (r as u32, r >> 32 != 0)
        })
    }),
    ("v_sub_co_ci_u32", |c, i| {
        carry_op(c, i, true, |a, b, ci| {
            let r = (a as u64).wrapping_sub(b as u64).wrapping_sub(ci as u64);
            (r as u32, (b as u64 + ci as u64) > a as u64)
        })
    }),
    ("v_subrev_co_ci_u32", |c, i| {
        carry_op(c, i, true, |a, b, ci| {
            let r = (b as u64).wrapping_sub(a as u64).wrapping_sub(ci as u64);
            (r as u32, (a as u64 + ci as u64) > b as u64)
        })
    }),
    ("v_mul_lo_u32", |c, i| u2(c, i, |a, b| a.wrapping_mul(b))),
    ("v_mul_hi_u32", |c, i| {
        u2(c, i, |a, b| ((a as u64 * b as u64) >> 32) as u32)
    }),
    ("v_mul_hi_i32", |c, i| {
        u2(c, i, |a, b| {
            ((a as i32 as i64 * b as i32 as i64) >> 32) as u32
        })
    }),
    ("v_mul_u32_u24", |c, i| {
        u2(c, i, |a, b| (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF))
    }),
    ("v_mul_hi_u32_u24", |c, i| {
        u2(c, i, |a, b| {
            (((a & 0xFF_FFFF) as u64 * (b & 0xFF_FFFF) as u64) >> 32) as u32
        })
    }),
    ("v_mul_i32_i24", |c, i| {
        u2(c, i, |a, b| (sext24(a) * sext24(b)) as u32)
    }),
    ("v_mul_hi_i32_i24", |c, i| {
        u2(c, i, |a, b| ((sext24(a) * sext24(b)) >> 32) as u32)
    }),
    ("v_mad_u32_u24", |c, i| {
        u3(c, i, |a, b, d| {
            (a & 0xFF_FFFF).wrapping_mul(b & 0xFF_FFFF).wrapping_add(d)
        })
    }),
    ("v_mad_i32_i24", |c, i| {
        u3(c, i, |a, b, d| {
            ((sext24(a) * sext24(b)) as u32).wrapping_add(d)
        })
    }),
    ("v_mad_u64_u32", |c, i| {
        let ls = lanes(c, i);
        let mut bits = 0u64;
        let vals: Vec<(u64, bool)> = ls
            .iter()
            .map(|&l| {
                let p = usrc(c, i, 0, l) as u128 * usrc(c, i, 1, l) as u128
                    + c.vsrc64(i, 2, l, false) as u128;
                (p as u64, p >> 64 != 0)
            })
            .collect();
        for (&l, (v, carry)) in ls.iter().zip(vals) {
            c.wave.set_vgpr64(i.dst, l, v);
            if carry {
                bits |= 1 << l;
            }
        }
        write_mask(c, i.sdst, bits);
        Ok(Flow::Next)
    }),
    ("v_mad_i64_i32", |c, i| {
        let ls = lanes(c, i);
        let vals: Vec<u64> = ls
            .iter()
            .map(|&l| {
                let p = usrc(c, i, 0, l) as i32 as i128 * usrc(c, i, 1, l) as i32 as i128
                    + c.vsrc64(i, 2, l, false) as i64 as i128;
                p as u64
            })
            .collect();
        for (&l, v) in ls.iter().zip(vals) {
            c.wave.set_vgpr64(i.dst, l, v);
        }
        write_mask(c, i.sdst, 0);
        Ok(Flow::Next)
    }),
    ("v_min_i32", |c, i| {
        u2(c, i, |a, b| (a as i32).min(b as i32) as u32)
    }),
    ("v_max_i32", |c, i| {
        u2(c, i, |a, b| (a as i32).max(b as i32) as u32)
    }),
    ("v_min_u32", |c, i| u2(c, i, |a, b| a.min(b))),
    ("v_max_u32", |c, i| u2(c, i, |a, b| a.max(b))),
    ("v_min3_i32", |c, i| {
        u3(c, i, |a, b, d| {
            (a as i32).min(b as i32).min(d as i32) as u32
        })
    }),
    ("v_max3_i32", |c, i| {
        u3(c, i, |a, b, d| {
            (a as i32).max(b as i32).max(d as i32) as u32
        })
    }),
    ("v_med3_i32", |c, i| {
        u3(c, i, |a, b, d| med3(a as i32, b as i32, d as i32) as u32)
    }),
    ("v_min3_u32", |c, i| u3(c, i, |a, b, d| a.min(b).min(d))),
    ("v_max3_u32", |c, i| u3(c, i, |a, b, d| a.max(b).max(d))),
    ("v_med3_u32", |c, i| u3(c, i, med3)),
    ("v_maxmin_i32", |c, i| {
        u3(c, i, |a, b, d| {
            (a as i32).max(b as i32).min(d as i32) as u32
        })
    }),
    ("v_minmax_i32", |c, i| {
        u3(c, i, |a, b, d| {
            (a as i32).min(b as i32).max(d as i32) as u32
        })
    }),
    ("v_maxmin_u32", |c, i| u3(c, i, |a, b, d| a.max(b).min(d))),
    ("v_minmax_u32", |c, i| u3(c, i, |a, b, d| a.min(b).max(d))),
    ("v_lshlrev_b32", |c, i| u2(c, i, |a, b| b << (a & 31))),
    ("v_lshrrev_b32", |c, i| u2(c, i, |a, b| b >> (a & 31))),
    ("v_ashrrev_i32", |c, i| {
        u2(c, i, |a, b| ((b as i32) >> (a & 31)) as u32)
    }),
    ("v_lshlrev_b64", |c, i| shift64(c, i, |v, s| v << s)),
    ("v_lshrrev_b64", |c, i| shift64(c, i, |v, s| v >> s)),
    ("v_ashrrev_i64", |c, i| {
        shift64(c, i, |v, s| ((v as i64) >> s) as u64)
    }),
    ("v_and_b32", |c, i| u2(c, i, |a, b| a & b)),
    ("v_or_b32", |c, i| u2(c, i, |a, b| a | b)),
    ("v_xor_b32", |c, i| u2(c, i, |a, b| a ^ b)),
    ("v_xnor_b32", |c, i| u2(c, i, |a, b| !(a ^ b))),
    ("v_not_b32", |c, i| u1(c, i, |a| !a)),
    ("v_bfrev_b32", |c, i| u1(c, i, |a| a.reverse_bits())),
    ("v_clz_i32_u32", |c, i| {
        u1(c, i, |a| if a == 0 { u32::MAX } else { a.leading_zeros() })
    }),
    ("v_ctz_i32_b32", |c, i| {
        u1(c, i, |a| if a == 0 { u32::MAX } else { a.trailing_zeros() })
    }),
    ("v_cls_i32", |c, i| {
        u1(c, i, |a| {
            let n = if (a as i32) < 0 {
                (!a).leading_zeros()
            } else {
                a.leading_zeros()
            };
            if n == 32 { u32::MAX } else { n }
        })
    }),
    ("v_bcnt_u32_b32", |c, i| {
        u2(c, i, |a, b| a.count_ones().wrapping_add(b))
    }),
    ("v_bfe_u32", |c, i| u3(c, i, |a, b, d| bfe(a, b, d, false))),
    ("v_bfe_i32", |c, i| u3(c, i, |a, b, d| bfe(a, b, d, true))),
    ("v_bfi_b32", |c, i| u3(c, i, |a, b, d| (a & b) | (!a & d))),
    ("v_bfm_b32", |c, i| {
        u2(c, i, |a, b| {
            ((1u64 << (a & 31)) as u32).wrapping_sub(1) << (b & 31)
        })
    }),
    ("v_alignbit_b32", |c, i| {
        u3(c, i, |a, b, d| {
            ((((a as u64) << 32) | b as u64) >> (d & 31)) as u32
        })
    }),
    ("v_alignbyte_b32", |c, i| {
        u3(c, i, |a, b, d| {
            ((((a as u64) << 32) | b as u64) >> (8 * (d & 3))) as u32
        })
    }),
    ("v_lshl_add_u32", |c, i| {
        u3(c, i, |a, b, d| (a << (b & 31)).wrapping_add(d))
    }),
    ("v_add_lshl_u32", |c, i| {
        u3(c, i, |a, b, d| a.wrapping_add(b) << (d & 31))
    }),
    ("v_add3_u32", |c, i| {
        u3(c, i, |a, b, d| a.wrapping_add(b).wrapping_add(d))
    }),
    ("v_lshl_or_b32", |c, i| {
        u3(c, i, |a, b, d| (a << (b & 31)) | d)
    }),
    ("v_and_or_b32", |c, i| u3(c, i, |a, b, d| (a & b) | d)),
    ("v_or3_b32", |c, i| u3(c, i, |a, b, d| a | b | d)),
    ("v_xor3_b32", |c, i| u3(c, i, |a, b, d| a ^ b ^ d)),
    ("v_xad_u32", |c, i| {
        u3(c, i, |a, b, d| (a ^ b).wrapping_add(d))
    }),
    ("v_sad_u32", |c, i| {
        u3(c, i, |a, b, d| a.abs_diff(b).wrapping_add(d))
    }),
    ("v_perm_b32", |c, i| u3(c, i, perm_b32)),
    // f32
    ("v_add_f32", |c, i| f2(c, i, |a, b| a + b)),
    ("v_sub_f32", |c, i| f2(c, i, |a, b| a - b)),
    ("v_subrev_f32", |c, i| f2(c, i, |a, b| b - a)),
    ("v_mul_f32", |c, i| f2(c, i, |a, b| a * b)),
    ("v_mul_dx9_zero_f32", |c, i| {
        f2(c, i, |a, b| if a == 0.0 || b == 0.0 { 0.0 } else { a * b })
    }),
    ("v_min_f32", |c, i| f2(c, i, f32::min)),
    ("v_max_f32", |c, i| f2(c, i, f32::max)),
    ("v_ldexp_f32", |c, i| {
        write32(c, i, |c, l| {
            omod_clamp_f32(i, ldexp32(fsrc(c, i, 0, l), usrc(c, i, 1, l) as i32)).to_bits()
        })
    }),
    ("v_fma_f32", |c, i| f3(c, i, f32::mul_add)),
    ("v_fma_dx9_zero_f32", |c, i| {
        f3(c, i, |a, b, d| {
            if a == 0.0 || b == 0.0 {
                d
            } else {
                a.mul_add(b, d)
            }
        })
    }),
    ("v_fmac_f32", |c, i| {
        write32(c, i, |c, l| {
            let d = f32::from_bits(c.wave.vgpr(i.dst, l));
            omod_clamp_f32(i, fsrc(c, i, 0, l).mul_add(fsrc(c, i, 1, l), d)).to_bits()
        })
    }),
    ("v_fmamk_f32", |c, i| {
        write32(c, i, |c, l| {
            let k = f32::from_bits(i.literal.unwrap_or(0));
            fsrc(c, i, 0, l).mul_add(k, fsrc(c, i, 1, l)).to_bits()
        })
    }),
    ("v_fmaak_f32", |c, i| {
        write32(c, i, |c, l| {
            let k = f32::from_bits(i.literal.unwrap_or(0));
            fsrc(c, i, 0, l).mul_add(fsrc(c, i, 1, l), k).to_bits()
        })
    }),
    ("v_min3_f32", |c, i| f3(c, i, |a, b, d| a.min(b).min(d))),
    ("v_max3_f32", |c, i| f3(c, i, |a, b, d| a.max(b).max(d))),
    ("v_med3_f32", |c, i| f3(c, i, med3f)),
    ("v_maxmin_f32", |c, i| f3(c, i, |a, b, d| a.max(b).min(d))),
    ("v_minmax_f32", |c, i| f3(c, i, |a, b, d| a.min(b).max(d))),
    ("v_fract_f32", |c, i| {
        f1(c, i, |a| {
            if a.is_infinite() {
                f32::NAN
            } else {
                (a - a.floor()).min(f32::from_bits(0x3f7f_ffff))
            }
        })
    }),
    ("v_trunc_f32", |c, i| f1(c, i, f32::trunc)),
    ("v_ceil_f32", |c, i| f1(c, i, f32::ceil)),
    ("v_floor_f32", |c, i| f1(c, i, f32::floor)),
    ("v_rndne_f32", |c, i| f1(c, i, f32::round_ties_even)),
    ("v_exp_f32", |c, i| f1(c, i, |a| (a as f64).exp2() as f32)),
    ("v_log_f32", |c, i| f1(c, i, |a| (a as f64).log2() as f32)),
    ("v_rcp_f32", |c, i| f1(c, i, |a| (1.0 / a as f64) as f32)),
    ("v_rcp_iflag_f32", |c, i| {
        f1(c, i, |a| (1.0 / a as f64) as f32)
    }),
    ("v_rsq_f32", |c, i| {
        f1(c, i, |a| (1.0 / (a as f64).sqrt()) as f32)
    }),
    ("v_sqrt_f32", |c, i| f1(c, i, |a| (a as f64).sqrt() as f32)),
    ("v_sin_f32", |c, i| {
        f1(c, i, |a| ((a as f64) * std::f64::consts::TAU).sin() as f32)
    }),
    ("v_cos_f32", |c, i| {
        f1(c, i, |a| ((a as f64) * std::f64::consts::TAU).cos() as f32)
    }),
    ("v_frexp_mant_f32", |c, i| f1(c, i, |a| frexp32(a).0)),
    ("v_frexp_exp_i32_f32", |c, i| {
        f1_u(c, i, |a| frexp32(a).1 as u32)
    }),
    ("v_div_scale_f32", |c, i| {
        let ls = lanes(c, i);
        let mut bits = 0u64;
        let vals: Vec<(f32, bool)> = ls
            .iter()
            .map(|&l| div_scale32(fsrc(c, i, 0, l), fsrc(c, i, 1, l), fsrc(c, i, 2, l)))
            .collect();
        for (&l, (v, vcc)) in ls.iter().zip(vals) {
            c.wave.set_vgpr(i.dst, l, v.to_bits());
            if vcc {
                bits |= 1 << l;
            }
        }
        write_mask(c, i.sdst, bits);
        Ok(Flow::Next)
    }),
    ("v_div_fmas_f32", |c, i| {
        let vcc = c.wave.vcc();
        write32(c, i, |c, l| {
            let (a, b, d) = (fsrc(c, i, 0, l), fsrc(c, i, 1, l), fsrc(c, i, 2, l));
            let r = if vcc >> l & 1 == 1 {
                // Scale before the single rounding to f32 (the product of two
                // f32 is exact in f64), so denormal quotients round once.
                let scale = if exponent32(d) > 127 {
                    2f64.powi(64)
                } else {
                    2f64.powi(-64)
                };
                ((a as f64 * b as f64 + d as f64) * scale) as f32
            } else {
                a.mul_add(b, d)
            };
            omod_clamp_f32(i, r).to_bits()
        })
    }),
    ("v_div_fixup_f32", |c, i| {
        write32(c, i, |c, l| {
            let r = div_fixup(
                fsrc(c, i, 0, l) as f64,
                fsrc(c, i, 1, l) as f64,
                fsrc(c, i, 2, l) as f64,
                150,
            ) as f32;
            omod_clamp_f32(i, r).to_bits()
        })
    }),
    // f64
    ("v_add_f64", |c, i| d2(c, i, |a, b| a + b)),
    ("v_mul_f64", |c, i| d2(c, i, |a, b| a * b)),
    ("v_min_f64", |c, i| d2(c, i, f64::min)),
    ("v_max_f64", |c, i| d2(c, i, f64::max)),
    ("v_fma_f64", |c, i| d3(c, i, f64::mul_add)),
    ("v_ldexp_f64", |c, i| {
        write64(c, i, |c, l| {
            (dsrc(c, i, 0, l) * 2f64.powi((usrc(c, i, 1, l) as i32).clamp(-2200, 2200))).to_bits()
        })
    }),
    ("v_rcp_f64", |c, i| d1(c, i, |a| 1.0 / a)),
    ("v_rsq_f64", |c, i| d1(c, i, |a| 1.0 / a.sqrt())),
    ("v_sqrt_f64", |c, i| d1(c, i, f64::sqrt)),
    ("v_fract_f64", |c, i| {
        d1(c, i, |a| {
            if a.is_infinite() {
                f64::NAN
            } else {
                (a - a.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
            }
        })
    }),
    ("v_trunc_f64", |c, i| d1(c, i, f64::trunc)),
    ("v_ceil_f64", |c, i| d1(c, i, f64::ceil)),
    ("v_floor_f64", |c, i| d1(c, i, f64::floor)),
    ("v_rndne_f64", |c, i| d1(c, i, f64::round_ties_even)),
    ("v_frexp_mant_f64", |c, i| d1(c, i, |a| frexp64(a).0)),
    ("v_frexp_exp_i32_f64", |c, i| {
        f1_d(c, i, |a| frexp64(a).1 as u32)
    }),
    ("v_div_scale_f64", |c, i| {
        let ls = lanes(c, i);
        let mut bits = 0u64;
        let vals: Vec<(f64, bool)> = ls
            .iter()
            .map(|&l| div_scale64(dsrc(c, i, 0, l), dsrc(c, i, 1, l), dsrc(c, i, 2, l)))
            .collect();
        for (&l, (v, vcc)) in ls.iter().zip(vals) {
            c.wave.set_vgpr64(i.dst, l, v.to_bits());
            if vcc {
                bits |= 1 << l;
            }
        }
        write_mask(c, i.sdst, bits);
        Ok(Flow::Next)
    }),
    ("v_div_fmas_f64", |c, i| {
        let vcc = c.wave.vcc();
        write64(c, i, |c, l| {
            let (a, b, d) = (dsrc(c, i, 0, l), dsrc(c, i, 1, l), dsrc(c, i, 2, l));
            let r = a.mul_add(b, d);
            let e = ((d.to_bits() >> 52) & 0x7FF) as i32;
            let r = if vcc >> l & 1 == 1 {
                if e > 1023 {
                    r * 2f64.powi(128)
                } else {
                    r * 2f64.powi(-128)
                }
            } else {
                r
            };
            r.to_bits()
        })
    }),
    ("v_trig_preop_f64", |c, i| {
        write64(c, i, |c, l| {
            trig_preop(dsrc(c, i, 0, l), usrc(c, i, 1, l)).to_bits()
        })
    }),
    ("v_div_fixup_f64", |c, i| {
        write64(c, i, |c, l| {
            div_fixup(dsrc(c, i, 0, l), dsrc(c, i, 1, l), dsrc(c, i, 2, l), 1075).to_bits()
        })
    }),
    // conversions
    ("v_cvt_f32_i32", |c, i| {
        write32(c, i, |c, l| {
            omod_clamp_f32(i, usrc(c, i, 0, l) as i32 as f32).to_bits()
        })
    }),
    ("v_cvt_f32_u32", |c, i| {
        write32(c, i, |c, l| {
            omod_clamp_f32(i, usrc(c, i, 0, l) as f32).to_bits()
        })
    }),
    ("v_cvt_i32_f32", |c, i| f1_u(c, i, |a| a as i32 as u32)),
    ("v_cvt_u32_f32", |c, i| f1_u(c, i, |a| a as u32)),
    ("v_cvt_floor_i32_f32", |c, i| {
        f1_u(c, i, |a| a.floor() as i32 as u32)
    }),
    ("v_cvt_nearest_i32_f32", |c, i| {
        f1_u(c, i, |a| (a + 0.5).floor() as i32 as u32)
    }),
    ("v_cvt_f64_i32", |c, i| {
        write64(c, i, |c, l| (usrc(c, i, 0, l) as i32 as f64).to_bits())
    }),
    ("v_cvt_f64_u32", |c, i| {
        write64(c, i, |c, l| (usrc(c, i, 0, l) as f64).to_bits())
    }),
    ("v_cvt_i32_f64", |c, i| f1_d(c, i, |a| a as i32 as u32)),
    ("v_cvt_u32_f64", |c, i| f1_d(c, i, |a| a as u32)),
    ("v_cvt_f32_f64", |c, i| f1_d(c, i, |a| (a as f32).to_bits())),
    ("v_cvt_f64_f32", |c, i| {
        write64(c, i, |c, l| (fsrc(c, i, 0, l) as f64).to_bits())
    }),
    ("v_cvt_f32_ubyte0", |c, i| {
        u1(c, i, |a| ((a & 0xFF) as f32).to_bits())
    }),
    ("v_cvt_f32_ubyte1", |c, i| {
        u1(c, i, |a| (((a >> 8) & 0xFF) as f32).to_bits())
    }),
    ("v_cvt_f32_ubyte2", |c, i| {
        u1(c, i, |a| (((a >> 16) & 0xFF) as f32).to_bits())
    }),
    ("v_cvt_f32_ubyte3", |c, i| {
        u1(c, i, |a| ((a >> 24) as f32).to_bits())
    }),
    ("v_cvt_f16_f32", |c, i| {
        write32(c, i, |c, l| {
            let old = c.wave.vgpr(i.dst, l);
            let h = to_f16(fsrc(c, i, 0, l));
            if i.opsel & 8 != 0 {
                (old & 0xFFFF) | (h << 16)
            } else {
                (old & 0xFFFF_0000) | h
            }
        })
    }),
    ("v_cvt_f32_f16", |c, i| {
        write32(c, i, |c, l| {
            let mut v = f16(c.vsrc16(i, 0, l));
            if i.abs & 1 != 0 {
                v = v.abs();
            }
            if i.neg & 1 != 0 {
                v = -v;
            }
            omod_clamp_f32(i, v).to_bits()
        })
    }),
    ("v_cvt_pk_rtz_f16_f32", |c, i| {
        write32(c, i, |c, l| {
            to_f16_rtz(fsrc(c, i, 0, l)) | (to_f16_rtz(fsrc(c, i, 1, l)) << 16)
        })
    }),
    ("v_pack_b32_f16", |c, i| {
        write32(c, i, |c, l| c.vsrc16(i, 0, l) | (c.vsrc16(i, 1, l) << 16))
    }),
    ("v_add_f16", |c, i| h2(c, i, |a, b| a + b)),
    ("v_sub_f16", |c, i| h2(c, i, |a, b| a - b)),
    ("v_mul_f16", |c, i| h2(c, i, |a, b| a * b)),
    ("v_max_f16", |c, i| h2(c, i, f32::max)),
    ("v_min_f16", |c, i| h2(c, i, f32::min)),
];
