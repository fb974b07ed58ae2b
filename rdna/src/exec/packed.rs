//! 16-bit VALU and VOP3P packed math: integer and f16 operations on the low
//! (or `op_sel`-selected) halves of VGPRs, `v_pk_*` on both halves, the
//! mixed-precision `v_fma_mix*` and the f16 dot products. A 16-bit result
//! replaces its half of the destination and keeps the other half.

use super::{Ctx, Flow, Handler, inline_const16};
use crate::decode::{Inst, src};
use crate::fault::ExecError;

type R = Result<Flow, ExecError>;

fn h(v: u32) -> f32 {
    half::f16::from_bits(v as u16).to_f32()
}
fn to_h(v: f32) -> u32 {
    half::f16::from_f32(v).to_bits() as u32
}

fn lanes(c: &Ctx<'_>) -> Vec<usize> {
    let exec = c.wave.exec();
    (0..c.wave.wave_size as usize)
        .filter(|l| exec >> l & 1 == 1)
        .collect()
}

/// Writes 16-bit results into the low half (or the high half with op_sel[3]).
fn write16(c: &mut Ctx<'_>, i: &Inst, f: impl Fn(&Ctx<'_>, usize) -> u32) -> R {
    let ls = lanes(c);
    let vals: Vec<u32> = ls.iter().map(|&l| f(c, l) & 0xFFFF).collect();
    for (&l, v) in ls.iter().zip(vals) {
        let old = c.wave.vgpr(i.dst, l);
        let new = if i.opsel & 8 != 0 {
            (old & 0xFFFF) | (v << 16)
        } else {
            (old & 0xFFFF_0000) | v
        };
        c.wave.set_vgpr(i.dst, l, new);
    }
    Ok(Flow::Next)
}

fn write32(c: &mut Ctx<'_>, i: &Inst, f: impl Fn(&Ctx<'_>, usize) -> u32) -> R {
    let ls = lanes(c);
    let vals: Vec<u32> = ls.iter().map(|&l| f(c, l)).collect();
    for (&l, v) in ls.iter().zip(vals) {
        c.wave.set_vgpr(i.dst, l, v);
    }
    Ok(Flow::Next)
}

fn s16(c: &Ctx<'_>, i: &Inst, k: usize, l: usize) -> u32 {
    c.vsrc16(i, k, l)
}

fn fh(c: &Ctx<'_>, i: &Inst, k: usize, l: usize) -> f32 {
    let mut v = h(s16(c, i, k, l));
    if i.abs >> k & 1 == 1 {
        v = v.abs();
    }
    if i.neg >> k & 1 == 1 {
        v = -v;
    }
    v
}

fn i2(c: &mut Ctx<'_>, i: &Inst, f: fn(u32, u32) -> u32) -> R {
    write16(c, i, |c, l| f(s16(c, i, 0, l), s16(c, i, 1, l)))
}
fn i3(c: &mut Ctx<'_>, i: &Inst, f: fn(u32, u32, u32) -> u32) -> R {
    write16(c, i, |c, l| {
        f(s16(c, i, 0, l), s16(c, i, 1, l), s16(c, i, 2, l))
    })
}
fn h1(c: &mut Ctx<'_>, i: &Inst, f: fn(f32) -> f32) -> R {
    write16(c, i, |c, l| to_h(f(fh(c, i, 0, l))))
}
fn h2(c: &mut Ctx<'_>, i: &Inst, f: fn(f32, f32) -> f32) -> R {
    write16(c, i, |c, l| to_h(f(fh(c, i, 0, l), fh(c, i, 1, l))))
}
fn h3(c: &mut Ctx<'_>, i: &Inst, f: fn(f32, f32, f32) -> f32) -> R {
    write16(c, i, |c, l| {
        to_h(f(fh(c, i, 0, l), fh(c, i, 1, l), fh(c, i, 2, l)))
    })
}

fn sx(v: u32) -> i32 {
    v as u16 as i16 as i32
}

/// f16 fused multiply-add rounded once (the f32 product of two f16 is exact).
fn fma16(a: f32, b: f32, c: f32) -> f32 {
    ((a as f64) * (b as f64) + c as f64) as f32
}

// ---------------------------------------------------------------- VOP3P

/// The 32-bit value of a packed source (an inline constant in the low half).
fn packed_src(c: &Ctx<'_>, i: &Inst, k: usize, l: usize) -> u32 {
    let code = i.src[k];
    if code >= src::VGPR0 || code == src::LITERAL || (code < 128 && code != src::NULL) {
        c.vsrc32(i, k, l)
    } else {
        // The high half of an inline constant is zero (LLVM selects the low
        // half for both with op_sel_hi = 0).
        inline_const16(code).unwrap_or(0) & 0xFFFF
    }
}

/// (lo, hi) halves of source k after op_sel / op_sel_hi.
fn halves(c: &Ctx<'_>, i: &Inst, k: usize, l: usize) -> (u32, u32) {
    let v = packed_src(c, i, k, l);
    let pick = |hi: bool| if hi { v >> 16 } else { v & 0xFFFF };
    (pick(i.opsel >> k & 1 == 1), pick(i.opsel_hi >> k & 1 == 1))
}

fn pk_float(c: &mut Ctx<'_>, i: &Inst, n: usize, f: fn(f32, f32, f32) -> f32) -> R {
    write32(c, i, |c, l| {
        let mut lo = [0f32; 3];
        let mut hi = [0f32; 3];
        for k in 0..n {
            let (a, b) = halves(c, i, k, l);
            lo[k] = if i.neg >> k & 1 == 1 { -h(a) } else { h(a) };
            hi[k] = if i.neg_hi >> k & 1 == 1 { -h(b) } else { h(b) };
        }
        to_h(f(lo[0], lo[1], lo[2])) | (to_h(f(hi[0], hi[1], hi[2])) << 16)
    })
}

fn pk_int(c: &mut Ctx<'_>, i: &Inst, n: usize, f: fn(u32, u32, u32) -> u32) -> R {
    write32(c, i, |c, l| {
        let mut lo = [0u32; 3];
        let mut hi = [0u32; 3];
        for k in 0..n {
            (lo[k], hi[k]) = halves(c, i, k, l);
        }
        (f(lo[0], lo[1], lo[2]) & 0xFFFF) | ((f(hi[0], hi[1], hi[2]) & 0xFFFF) << 16)
    })
}

/// v_fma_mix*: op_sel_hi[k] = source k is f16 (op_sel[k] picks its half),
/// else f32; neg and abs (in the neg_hi field) apply per source.
fn mix_src(c: &Ctx<'_>, i: &Inst, k: usize, l: usize) -> f32 {
    let v = c.vsrc32(i, k, l);
    let mut x = if i.opsel_hi >> k & 1 == 1 {
        h(if i.opsel >> k & 1 == 1 {
            v >> 16
        } else {
            v & 0xFFFF
        })
    } else {
        f32::from_bits(v)
    };
    if i.neg_hi >> k & 1 == 1 {
        x = x.abs();
    }
    if i.neg >> k & 1 == 1 {
        x = -x;
    }
    x
}

fn fma_mix(c: &mut Ctx<'_>, i: &Inst, out: u8) -> R {
    let ls = lanes(c);
    let vals: Vec<f32> = ls
        .iter()
        .map(|&l| mix_src(c, i, 0, l).mul_add(mix_src(c, i, 1, l), mix_src(c, i, 2, l)))
        .collect();
    for (&l, v) in ls.iter().zip(vals) {
        let v = if i.clamp { v.clamp(0.0, 1.0) } else { v };
        let old = c.wave.vgpr(i.dst, l);
        let new = match out {
            0 => v.to_bits(),
            1 => (old & 0xFFFF_0000) | to_h(v),
            _ => (old & 0xFFFF) | (to_h(v) << 16),
        };
        c.wave.set_vgpr(i.dst, l, new);
    }
    Ok(Flow::Next)
}

/// Integer dot products: `n` lanes of `bits` bits; `signed` (neg_lo bit k)
/// makes source k's elements signed; clamp saturates the 32-bit sum.
fn dot_int(c: &mut Ctx<'_>, i: &Inst, n: u32, bits: u32, mixed: bool) -> R {
    write32(c, i, |c, l| {
        let (a, b, acc) = (c.vsrc32(i, 0, l), c.vsrc32(i, 1, l), c.vsrc32(i, 2, l));
        let elem = |v: u32, k: u32, signed: bool| -> i64 {
            let x = (v >> (k * bits)) & ((1 << bits) - 1);
            if signed && x >> (bits - 1) & 1 == 1 {
                x as i64 - (1i64 << bits)
            } else {
                x as i64
            }
        };
        let (sa, sb) = (mixed && i.neg & 1 != 0, mixed && i.neg & 2 != 0);
        let sum: i64 = (0..n).map(|k| elem(a, k, sa) * elem(b, k, sb)).sum();
        if mixed {
            let r = acc as i32 as i64 + sum;
            (if i.clamp {
                r.clamp(i32::MIN as i64, i32::MAX as i64)
            } else {
                r
            }) as i32 as u32
        } else {
            let r = acc as u64 + sum as u64;
            if i.clamp {
                r.min(u32::MAX as u64) as u32
            } else {
                r as u32
            }
        }
    })
}

/// `v_wmma_f32_16x16x16_{f16,bf16}`: D = A·B + C on 16×16 tiles. Lane l
/// (mod 16) holds row l of A and column l of B as 16 halves in 8 VGPRs
/// (upper lanes replicate them); C and D hold f32 element (row, col) =
/// (e·(wave/16) + l/16, l mod 16) in VGPR e of lane l (8 VGPRs in wave32, 4
/// in wave64). The whole wave takes part, whatever EXEC says.
fn wmma_f32(c: &mut Ctx<'_>, i: &Inst, bf16: bool) -> R {
    if i.src.iter().any(|&s| s < src::VGPR0) {
        return Err(ExecError::unsupported(i.name));
    }
    let (a, b, acc) = (
        i.src[0] - src::VGPR0,
        i.src[1] - src::VGPR0,
        i.src[2] - src::VGPR0,
    );
    let ws = c.wave.wave_size as usize;
    let per = ws / 16;
    let half_of = |v: u32, hi: bool| -> f32 {
        let bits = if hi { v >> 16 } else { v & 0xFFFF };
        if bf16 {
            half::bf16::from_bits(bits as u16).to_f32()
        } else {
            h(bits)
        }
    };
    let mut am = [[0f32; 16]; 16];
    let mut bm = [[0f32; 16]; 16];
    for l in 0..16 {
        for k in 0..16 {
            am[l][k] = half_of(c.wave.vgpr(a + (k / 2) as u16, l), k % 2 == 1);
            bm[k][l] = half_of(c.wave.vgpr(b + (k / 2) as u16, l), k % 2 == 1);
        }
    }
    let mut out = vec![(0u16, 0usize, 0u32); 0];
    for l in 0..ws {
        for e in 0..16 / per {
            let (row, col) = (e * per + l / 16, l % 16);
            let mut sum = f32::from_bits(c.wave.vgpr(acc + e as u16, l));
            for k in 0..16 {
                sum = am[row][k].mul_add(bm[k][col], sum);
            }
            out.push((i.dst + e as u16, l, sum.to_bits()));
        }
    }
    for (r, l, v) in out {
        c.wave.set_vgpr(r, l, v);
    }
    Ok(Flow::Next)
}

pub static OPS: &[(&str, Handler)] = &[
    ("v_wmma_f32_16x16x16_f16", |c, i| wmma_f32(c, i, false)),
    ("v_wmma_f32_16x16x16_bf16", |c, i| wmma_f32(c, i, true)),
    ("v_dot4_u32_u8", |c, i| dot_int(c, i, 4, 8, false)),
    ("v_dot4_i32_iu8", |c, i| dot_int(c, i, 4, 8, true)),
    ("v_dot8_u32_u4", |c, i| dot_int(c, i, 8, 4, false)),
    ("v_dot8_i32_iu4", |c, i| dot_int(c, i, 8, 4, true)),
    // 16-bit integer
    ("v_add_nc_u16", |c, i| i2(c, i, |a, b| a.wrapping_add(b))),
    ("v_sub_nc_u16", |c, i| i2(c, i, |a, b| a.wrapping_sub(b))),
    ("v_add_nc_i16", |c, i| {
        i2(c, i, |a, b| (sx(a) + sx(b)) as u32)
    }),
    ("v_sub_nc_i16", |c, i| {
        i2(c, i, |a, b| (sx(a) - sx(b)) as u32)
    }),
    ("v_mul_lo_u16", |c, i| i2(c, i, |a, b| a.wrapping_mul(b))),
    ("v_lshlrev_b16", |c, i| i2(c, i, |a, b| b << (a & 15))),
    ("v_lshrrev_b16", |c, i| {
        i2(c, i, |a, b| (b & 0xFFFF) >> (a & 15))
    }),
    ("v_ashrrev_i16", |c, i| {
        i2(c, i, |a, b| (sx(b) >> (a & 15)) as u32)
    }),
    ("v_max_u16", |c, i| i2(c, i, |a, b| a.max(b))),
    ("v_min_u16", |c, i| i2(c, i, |a, b| a.min(b))),
    ("v_max_i16", |c, i| i2(c, i, |a, b| sx(a).max(sx(b)) as u32)),
    ("v_min_i16", |c, i| i2(c, i, |a, b| sx(a).min(sx(b)) as u32)),
    ("v_and_b16", |c, i| i2(c, i, |a, b| a & b)),
    ("v_or_b16", |c, i| i2(c, i, |a, b| a | b)),
    ("v_xor_b16", |c, i| i2(c, i, |a, b| a ^ b)),
    ("v_not_b16", |c, i| write16(c, i, |c, l| !s16(c, i, 0, l))),
    ("v_mad_u16", |c, i| {
        i3(c, i, |a, b, d| a.wrapping_mul(b).wrapping_add(d))
    }),
    ("v_mad_i16", |c, i| {
        i3(c, i, |a, b, d| (sx(a) * sx(b) + sx(d)) as u32)
    }),
    ("v_min3_u16", |c, i| i3(c, i, |a, b, d| a.min(b).min(d))),
    ("v_max3_u16", |c, i| i3(c, i, |a, b, d| a.max(b).max(d))),
    ("v_min3_i16", |c, i| {
        i3(c, i, |a, b, d| sx(a).min(sx(b)).min(sx(d)) as u32)
    }),
    ("v_max3_i16", |c, i| {
        i3(c, i, |a, b, d| sx(a).max(sx(b)).max(sx(d)) as u32)
    }),
    ("v_mad_u32_u16", |c, i| {
        write32(c, i, |c, l| {
            s16(c, i, 0, l) * s16(c, i, 1, l) + c.vsrc32(i, 2, l)
        })
    }),
    ("v_mad_i32_i16", |c, i| {
        write32(c, i, |c, l| {
            (sx(s16(c, i, 0, l)) * sx(s16(c, i, 1, l))).wrapping_add(c.vsrc32(i, 2, l) as i32)
                as u32
        })
    }),
    ("v_cvt_f16_u16", |c, i| {
        write16(c, i, |c, l| to_h(s16(c, i, 0, l) as f32))
    }),
    ("v_cvt_f16_i16", |c, i| {
        write16(c, i, |c, l| to_h(sx(s16(c, i, 0, l)) as f32))
    }),
    ("v_cvt_u16_f16", |c, i| {
        write16(c, i, |c, l| fh(c, i, 0, l) as u16 as u32)
    }),
    ("v_cvt_i16_f16", |c, i| {
        write16(c, i, |c, l| fh(c, i, 0, l) as i16 as u16 as u32)
    }),
    ("v_cvt_i32_i16", |c, i| {
        write32(c, i, |c, l| sx(s16(c, i, 0, l)) as u32)
    }),
    ("v_cvt_u32_u16", |c, i| {
        write32(c, i, |c, l| s16(c, i, 0, l))
    }),
    // f16
    ("v_subrev_f16", |c, i| h2(c, i, |a, b| b - a)),
    ("v_fma_f16", |c, i| h3(c, i, fma16)),
    ("v_fmac_f16", |c, i| {
        write16(c, i, |c, l| {
            let d = h(c.wave.vgpr(i.dst, l) & 0xFFFF);
            to_h(fma16(fh(c, i, 0, l), fh(c, i, 1, l), d))
        })
    }),
    ("v_ldexp_f16", |c, i| {
        write16(c, i, |c, l| {
            to_h(fh(c, i, 0, l) * 2f32.powi((c.vsrc32(i, 1, l) as i32).clamp(-64, 64)))
        })
    }),
    ("v_sqrt_f16", |c, i| h1(c, i, f32::sqrt)),
    ("v_rcp_f16", |c, i| h1(c, i, |a| 1.0 / a)),
    ("v_rsq_f16", |c, i| h1(c, i, |a| 1.0 / a.sqrt())),
    ("v_exp_f16", |c, i| h1(c, i, f32::exp2)),
    ("v_log_f16", |c, i| h1(c, i, f32::log2)),
    ("v_floor_f16", |c, i| h1(c, i, f32::floor)),
    ("v_ceil_f16", |c, i| h1(c, i, f32::ceil)),
    ("v_trunc_f16", |c, i| h1(c, i, f32::trunc)),
    ("v_rndne_f16", |c, i| h1(c, i, f32::round_ties_even)),
    ("v_fract_f16", |c, i| h1(c, i, |a| a - a.floor())),
    ("v_sin_f16", |c, i| {
        h1(c, i, |a| (a * std::f32::consts::TAU).sin())
    }),
    ("v_cos_f16", |c, i| {
        h1(c, i, |a| (a * std::f32::consts::TAU).cos())
    }),
    ("v_min3_f16", |c, i| h3(c, i, |a, b, d| a.min(b).min(d))),
    ("v_max3_f16", |c, i| h3(c, i, |a, b, d| a.max(b).max(d))),
    ("v_med3_f16", |c, i| {
        h3(c, i, |a, b, d| {
            if a.is_nan() || b.is_nan() || d.is_nan() {
                a.min(b).min(d)
            } else {
                a.max(b).min(a.min(b).max(d))
            }
        })
    }),
    ("v_maxmin_f16", |c, i| h3(c, i, |a, b, d| a.max(b).min(d))),
    ("v_minmax_f16", |c, i| h3(c, i, |a, b, d| a.min(b).max(d))),
    ("v_med3_i16", |c, i| {
        i3(c, i, |a, b, d| {
            sx(a).max(sx(b)).min(sx(a).min(sx(b)).max(sx(d))) as u32
        })
    }),
    ("v_med3_u16", |c, i| {
        i3(c, i, |a, b, d| a.max(b).min(a.min(b).max(d)))
    }),
    ("v_cndmask_b16", |c, i| {
        let mask = c.wave.read_mask(i.src[2]);
        write16(c, i, |c, l| {
            if mask >> l & 1 == 1 {
                s16(c, i, 1, l)
            } else {
                s16(c, i, 0, l)
            }
        })
    }),
    // packed (VOP3P)
    ("v_pk_fma_f16", |c, i| pk_float(c, i, 3, fma16)),
    ("v_pk_add_f16", |c, i| pk_float(c, i, 2, |a, b, _| a + b)),
    ("v_pk_mul_f16", |c, i| pk_float(c, i, 2, |a, b, _| a * b)),
    ("v_pk_min_f16", |c, i| pk_float(c, i, 2, |a, b, _| a.min(b))),
    ("v_pk_max_f16", |c, i| pk_float(c, i, 2, |a, b, _| a.max(b))),
    ("v_pk_add_u16", |c, i| {
        pk_int(c, i, 2, |a, b, _| a.wrapping_add(b))
    }),
    ("v_pk_sub_u16", |c, i| {
        pk_int(c, i, 2, |a, b, _| a.wrapping_sub(b))
    }),
    ("v_pk_add_i16", |c, i| {
        pk_int(c, i, 2, |a, b, _| (sx(a) + sx(b)) as u32)
    }),
    ("v_pk_sub_i16", |c, i| {
        pk_int(c, i, 2, |a, b, _| (sx(a) - sx(b)) as u32)
    }),
    ("v_pk_mul_lo_u16", |c, i| {
        pk_int(c, i, 2, |a, b, _| a.wrapping_mul(b))
    }),
    ("v_pk_mad_u16", |c, i| {
        pk_int(c, i, 3, |a, b, d| a.wrapping_mul(b).wrapping_add(d))
    }),
    ("v_pk_mad_i16", |c, i| {
        pk_int(c, i, 3, |a, b, d| (sx(a) * sx(b) + sx(d)) as u32)
    }),
    ("v_pk_lshlrev_b16", |c, i| {
        pk_int(c, i, 2, |a, b, _| b << (a & 15))
    }),
    ("v_pk_lshrrev_b16", |c, i| {
        pk_int(c, i, 2, |a, b, _| (b & 0xFFFF) >> (a & 15))
    }),
    ("v_pk_ashrrev_i16", |c, i| {
        pk_int(c, i, 2, |a, b, _| (sx(b) >> (a & 15)) as u32)
    }),
    ("v_pk_max_u16", |c, i| pk_int(c, i, 2, |a, b, _| a.max(b))),
    ("v_pk_min_u16", |c, i| pk_int(c, i, 2, |a, b, _| a.min(b))),
    ("v_pk_max_i16", |c, i| {
        pk_int(c, i, 2, |a, b, _| sx(a).max(sx(b)) as u32)
    }),
    ("v_pk_min_i16", |c, i| {
        pk_int(c, i, 2, |a, b, _| sx(a).min(sx(b)) as u32)
    }),
    ("v_fma_mix_f32", |c, i| fma_mix(c, i, 0)),
    ("v_fma_mixlo_f16", |c, i| fma_mix(c, i, 1)),
    ("v_fma_mixhi_f16", |c, i| fma_mix(c, i, 2)),
    ("v_dot2_f32_f16", |c, i| {
        write32(c, i, |c, l| {
            let (a, b) = (c.vsrc32(i, 0, l), c.vsrc32(i, 1, l));
            let acc = f32::from_bits(c.vsrc32(i, 2, l));
            (acc + h(a) * h(b) + h(a >> 16) * h(b >> 16)).to_bits()
        })
    }),
    ("v_dot2acc_f32_f16", |c, i| {
        write32(c, i, |c, l| {
            let (a, b) = (c.vsrc32(i, 0, l), c.vsrc32(i, 1, l));
            let acc = f32::from_bits(c.wave.vgpr(i.dst, l));
            (acc + h(a) * h(b) + h(a >> 16) * h(b >> 16)).to_bits()
        })
    }),
    ("v_pk_fmac_f16", |c, i| {
        write32(c, i, |c, l| {
            let (a, b, d) = (c.vsrc32(i, 0, l), c.vsrc32(i, 1, l), c.wave.vgpr(i.dst, l));
            to_h(fma16(h(a), h(b), h(d))) | (to_h(fma16(h(a >> 16), h(b >> 16), h(d >> 16))) << 16)
        })
    }),
];
