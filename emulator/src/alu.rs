//! Per-lane scalar operations the decoder selects once per instruction.
//!
//! Each function takes the instruction's [`AluCtx`] (types and modes fixed at
//! load) and operand bit patterns; values live in the low bits of a `u64`
//! and results are returned zero-extended to the type's width, so registers
//! always hold canonical values.

use crate::semantics::{CmpOp, FloatMode, FloatRounding, ScalarType};
use half::{bf16, f16};

/// Types and modes of one decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AluCtx {
    /// The instruction type (destination type of `cvt`).
    pub ty: ScalarType,
    /// The second type: source type of `cvt`, `mul.wide` source width, …
    pub ty2: ScalarType,
    pub mode: FloatMode,
    pub cmp: CmpOp,
    /// Instruction-specific constant: `lop3` truth table, `cvt` integer rounding, `shf` mode.
    pub aux: u32,
}

impl AluCtx {
    pub fn new(ty: ScalarType) -> AluCtx {
        AluCtx {
            ty,
            ty2: ty,
            mode: FloatMode::RN,
            cmp: CmpOp::Eq,
            aux: 0,
        }
    }
}

pub type Alu1Fn = fn(&AluCtx, u64) -> u64;
pub type Alu2Fn = fn(&AluCtx, u64, u64) -> u64;
pub type Alu3Fn = fn(&AluCtx, u64, u64, u64) -> u64;
pub type CmpFn = fn(&AluCtx, u64, u64) -> bool;

#[inline]
fn sx(ty: ScalarType, v: u64) -> i64 {
    ty.extend(v) as i64
}

#[inline]
fn zx(ty: ScalarType, v: u64) -> u64 {
    v & ty.mask()
}

// ---------------------------------------------------------------- integers

pub fn add_b32(_: &AluCtx, a: u64, b: u64) -> u64 {
    (a as u32).wrapping_add(b as u32) as u64
}
pub fn add_b64(_: &AluCtx, a: u64, b: u64) -> u64 {
    a.wrapping_add(b)
}
pub fn add_int(c: &AluCtx, a: u64, b: u64) -> u64 {
    zx(c.ty, a.wrapping_add(b))
}
pub fn sub_b32(_: &AluCtx, a: u64, b: u64) -> u64 {
    (a as u32).wrapping_sub(b as u32) as u64
}
pub fn sub_b64(_: &AluCtx, a: u64, b: u64) -> u64 {
    a.wrapping_sub(b)
}
pub fn sub_int(c: &AluCtx, a: u64, b: u64) -> u64 {
    zx(c.ty, a.wrapping_sub(b))
}
pub fn add_sat_s32(_: &AluCtx, a: u64, b: u64) -> u64 {
    (a as u32 as i32).saturating_add(b as u32 as i32) as u32 as u64
}
pub fn sub_sat_s32(_: &AluCtx, a: u64, b: u64) -> u64 {
    (a as u32 as i32).saturating_sub(b as u32 as i32) as u32 as u64
}
pub fn mul_lo_b32(_: &AluCtx, a: u64, b: u64) -> u64 {
    (a as u32).wrapping_mul(b as u32) as u64
}
pub fn mul_lo(c: &AluCtx, a: u64, b: u64) -> u64 {
    zx(c.ty, a.wrapping_mul(b))
}
pub fn mul_hi(c: &AluCtx, a: u64, b: u64) -> u64 {
    let bits = c.ty.bits();
    let p = if c.ty.is_signed_int() {
        ((sx(c.ty, a) as i128 * sx(c.ty, b) as i128) >> bits) as u64
    } else {
        ((zx(c.ty, a) as u128 * zx(c.ty, b) as u128) >> bits) as u64
    };
    zx(c.ty, p)
}
/// `mul.wide`: `ty` is the source type; the result is twice as wide.
pub fn mul_wide(c: &AluCtx, a: u64, b: u64) -> u64 {
    let p = if c.ty.is_signed_int() {
        (sx(c.ty, a).wrapping_mul(sx(c.ty, b))) as u64
    } else {
        zx(c.ty, a).wrapping_mul(zx(c.ty, b))
    };
    if c.ty.bits() == 32 {
        p
    } else {
        p & 0xffff_ffff
    }
}
pub fn mad_lo_b32(_: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    (a as u32).wrapping_mul(b as u32).wrapping_add(d as u32) as u64
}
pub fn mad_lo(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    zx(c.ty, a.wrapping_mul(b).wrapping_add(d))
}
pub fn mad_hi(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    zx(c.ty, mul_hi(c, a, b).wrapping_add(d))
}
pub fn mad_wide(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    let p = mul_wide(c, a, b).wrapping_add(d);
    if c.ty.bits() == 32 {
        p
    } else {
        p & 0xffff_ffff
    }
}
pub fn div_int(c: &AluCtx, a: u64, b: u64) -> u64 {
    if c.ty.is_signed_int() {
        let (x, y) = (sx(c.ty, a), sx(c.ty, b));
        // Division by zero is undefined in PTX; hardware yields all ones.
        if y == 0 {
            return c.ty.mask();
        }
        zx(c.ty, x.wrapping_div(y) as u64)
    } else {
        let (x, y) = (zx(c.ty, a), zx(c.ty, b));
        if y == 0 {
            return c.ty.mask();
        }
        x / y
    }
}
pub fn rem_int(c: &AluCtx, a: u64, b: u64) -> u64 {
    if c.ty.is_signed_int() {
        let (x, y) = (sx(c.ty, a), sx(c.ty, b));
        if y == 0 {
            return zx(c.ty, x as u64);
        }
        zx(c.ty, x.wrapping_rem(y) as u64)
    } else {
        let (x, y) = (zx(c.ty, a), zx(c.ty, b));
        if y == 0 {
            return x;
        }
        x % y
    }
}
pub fn min_int(c: &AluCtx, a: u64, b: u64) -> u64 {
    if c.ty.is_signed_int() {
        zx(c.ty, sx(c.ty, a).min(sx(c.ty, b)) as u64)
    } else {
        zx(c.ty, a).min(zx(c.ty, b))
    }
}
pub fn max_int(c: &AluCtx, a: u64, b: u64) -> u64 {
    if c.ty.is_signed_int() {
        zx(c.ty, sx(c.ty, a).max(sx(c.ty, b)) as u64)
    } else {
        zx(c.ty, a).max(zx(c.ty, b))
    }
}
pub fn and(c: &AluCtx, a: u64, b: u64) -> u64 {
    zx(c.ty, a & b)
}
pub fn or(c: &AluCtx, a: u64, b: u64) -> u64 {
    zx(c.ty, a | b)
}
pub fn xor(c: &AluCtx, a: u64, b: u64) -> u64 {
    zx(c.ty, a ^ b)
}
pub fn not(c: &AluCtx, a: u64) -> u64 {
    zx(c.ty, !a)
}
pub fn cnot(c: &AluCtx, a: u64) -> u64 {
    (zx(c.ty, a) == 0) as u64
}
pub fn neg_int(c: &AluCtx, a: u64) -> u64 {
    zx(c.ty, a.wrapping_neg())
}
pub fn abs_int(c: &AluCtx, a: u64) -> u64 {
    zx(c.ty, sx(c.ty, a).wrapping_abs() as u64)
}
/// Shift amounts above the width give 0 (or the sign fill for `.s`).
pub fn shl(c: &AluCtx, a: u64, b: u64) -> u64 {
    let n = b as u32;
    if n >= c.ty.bits() {
        0
    } else {
        zx(c.ty, a << n)
    }
}
pub fn shr(c: &AluCtx, a: u64, b: u64) -> u64 {
    let n = (b as u32).min(c.ty.bits() - 1 + c.ty.is_unsigned_int() as u32 + c.ty.is_bits() as u32);
    if c.ty.is_signed_int() {
        zx(c.ty, (sx(c.ty, a) >> n.min(63)) as u64)
    } else if n >= c.ty.bits() {
        0
    } else {
        zx(c.ty, a) >> n
    }
}
pub fn popc(c: &AluCtx, a: u64) -> u64 {
    zx(c.ty, a).count_ones() as u64
}
pub fn clz(c: &AluCtx, a: u64) -> u64 {
    let bits = c.ty.bits();
    (zx(c.ty, a).leading_zeros() - (64 - bits)) as u64
}
pub fn brev(c: &AluCtx, a: u64) -> u64 {
    a.reverse_bits() >> (64 - c.ty.bits())
}
/// `bfind`: position of the most significant non-sign bit, 0xffffffff if none;
/// `aux` = 1 for `.shiftamt`.
pub fn bfind(c: &AluCtx, a: u64) -> u64 {
    let bits = c.ty.bits();
    let mut v = zx(c.ty, a);
    if c.ty.is_signed_int() && sx(c.ty, a) < 0 {
        v = zx(c.ty, !v);
    }
    if v == 0 {
        return 0xffff_ffff;
    }
    let pos = 63 - v.leading_zeros();
    if c.aux == 1 {
        (bits - 1 - pos) as u64
    } else {
        pos as u64
    }
}
/// `bfe`: extract `len` bits at `pos`, sign-extending for signed types.
pub fn bfe(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    let bits = c.ty.bits() as u64;
    let pos = b & 0xff;
    let len = d & 0xff;
    let v = zx(c.ty, a);
    let sign_bit = if c.ty.is_signed_int() {
        if len == 0 {
            false
        } else {
            let top = (pos + len - 1).min(bits - 1);
            (v >> top) & 1 == 1
        }
    } else {
        false
    };
    let mut r: u64 = 0;
    for i in 0..bits {
        let bit = if i < len && pos + i < bits {
            (v >> (pos + i)) & 1 == 1
        } else {
            sign_bit
        };
        if bit {
            r |= 1 << i;
        }
    }
    zx(c.ty, r)
}
/// `prmt.b32` default mode: select bytes of `{b, a}` by the nibbles of `c`.
pub fn prmt(c: &AluCtx, a: u64, b: u64, sel: u64) -> u64 {
    let bytes = ((b as u32 as u64) << 32) | a as u32 as u64;
    let byte = |i: u64| ((bytes >> (8 * (i & 7))) & 0xff) as u32;
    let s = sel as u32;
    let mut r = 0u32;
    match c.aux {
        0 => {
            for k in 0..4 {
                let n = (s >> (4 * k)) & 0xf;
                let mut v = byte(n as u64 & 7);
                if n & 8 != 0 {
                    v = if v & 0x80 != 0 { 0xff } else { 0 };
                }
                r |= v << (8 * k);
            }
        }
        mode => {
            let s2 = (s & 3) as u64;
            let idx: [u64; 4] = match mode {
                1 => [s2, (s2 + 1) & 7, (s2 + 2) & 7, (s2 + 3) & 7], // f4e
                2 => [(8 - s2) & 7, (7 - s2) & 7, (6 - s2) & 7, (5 - s2) & 7], // b4e
                3 => [[0, 1, 2, 3], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]][s2 as usize], // rc8
                4 => [[0, 1, 0, 0], [0, 1, 0, 1], [2, 3, 2, 2], [2, 3, 2, 3]][s2 as usize], // ecl
                5 => [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]][s2 as usize], // ecr
                _ => [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]][s2 as usize], // rc16
            };
            let idx = if mode == 4 {
                [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]][s2 as usize]
            } else {
                idx
            };
            for (k, i) in idx.iter().enumerate() {
                r |= byte(*i) << (8 * k);
            }
        }
    }
    r as u64
}
/// `shf.l`/`shf.r` (`aux` bit 0: right, bit 1: clamp).
pub fn shf(c: &AluCtx, a: u64, b: u64, n: u64) -> u64 {
    let n = n as u32;
    let n = if c.aux & 2 != 0 { n.min(32) } else { n & 31 };
    let v = ((b as u32 as u64) << 32) | a as u32 as u64;
    if c.aux & 1 != 0 {
        (v >> n) as u32 as u64
    } else {
        ((v << n) >> 32) as u32 as u64
    }
}
/// `lop3.b32`: any three-input boolean function, `aux` is the truth table.
pub fn lop3(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    let lut = c.aux;
    let mut r = 0u64;
    for i in 0..c.ty.bits() {
        let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((d >> i) & 1);
        r |= (((lut >> idx) & 1) as u64) << i;
    }
    r
}
pub fn sad(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    let diff = if c.ty.is_signed_int() {
        sx(c.ty, a).abs_diff(sx(c.ty, b))
    } else {
        zx(c.ty, a).abs_diff(zx(c.ty, b))
    };
    zx(c.ty, diff.wrapping_add(d))
}
/// `slct.dtype.s32 d, a, b, c`: `c >= 0 ? a : b`.
pub fn slct_s32(_: &AluCtx, a: u64, b: u64, sel: u64) -> u64 {
    if (sel as u32 as i32) >= 0 { a } else { b }
}
pub fn slct_f32(_: &AluCtx, a: u64, b: u64, sel: u64) -> u64 {
    if f32::from_bits(sel as u32) >= 0.0 {
        a
    } else {
        b
    }
}

pub fn cmp_int(c: &AluCtx, a: u64, b: u64) -> bool {
    use std::cmp::Ordering::*;
    let signed = c.ty.is_signed_int();
    let ord = if signed {
        sx(c.ty, a).cmp(&sx(c.ty, b))
    } else {
        zx(c.ty, a).cmp(&zx(c.ty, b))
    };
    let uord = zx(c.ty, a).cmp(&zx(c.ty, b));
    match c.cmp {
        CmpOp::Eq => ord == Equal,
        CmpOp::Ne => ord != Equal,
        CmpOp::Lt => ord == Less,
        CmpOp::Le => ord != Greater,
        CmpOp::Gt => ord == Greater,
        CmpOp::Ge => ord != Less,
        CmpOp::Lo => uord == Less,
        CmpOp::Ls => uord != Greater,
        CmpOp::Hi => uord == Greater,
        CmpOp::Hs => uord != Less,
        _ => false,
    }
}

// ------------------------------------------------------------------ floats

/// A float of width 16/32/64 widened to f64 (exact) and back with the
/// instruction's rounding.
#[inline]
fn to_f64(ty: ScalarType, v: u64) -> f64 {
    match ty {
        ScalarType::F64 => f64::from_bits(v),
        ScalarType::F16 => f16::from_bits(v as u16).to_f64(),
        ScalarType::BF16 => bf16::from_bits(v as u16).to_f64(),
        _ => f32::from_bits(v as u32) as f64,
    }
}

fn next_toward(x: f32, up: bool) -> f32 {
    if x.is_nan() || (x.is_infinite() && (x > 0.0) == up) {
        return x;
    }
    if x == 0.0 {
        let tiny = f32::from_bits(1);
        return if up { tiny } else { -tiny };
    }
    let bits = x.to_bits();
    let bigger = (x > 0.0) == up;
    f32::from_bits(if bigger { bits + 1 } else { bits - 1 })
}

/// Rounds an exact (or nearly exact) f64 to f32 with a PTX rounding mode.
pub fn round_f32(x: f64, r: FloatRounding) -> f32 {
    let n = x as f32;
    if x.is_nan() || r == FloatRounding::Rn {
        return n;
    }
    let back = n as f64;
    if back == x || x.is_infinite() {
        return n;
    }
    let pick = match r {
        FloatRounding::Rz => {
            if back.abs() > x.abs() {
                next_toward(n, x < 0.0)
            } else {
                n
            }
        }
        FloatRounding::Rm => {
            if back > x {
                next_toward(n, false)
            } else {
                n
            }
        }
        _ => {
            if back < x {
                next_toward(n, true)
            } else {
                n
            }
        }
    };
    // Directed modes never round a finite value to infinity away from the mode.
    if pick.is_infinite() && !x.is_infinite() {
        let towards_inf = match r {
            FloatRounding::Rp => x > 0.0,
            FloatRounding::Rm => x < 0.0,
            _ => false,
        };
        if !towards_inf {
            return f32::MAX.copysign(x as f32);
        }
    }
    pick
}

#[inline]
fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

#[inline]
fn finish32(c: &AluCtx, mut r: f32) -> u64 {
    if c.mode.ftz {
        r = ftz32(r);
    }
    if c.mode.sat {
        r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
    }
    r.to_bits() as u64
}

#[inline]
fn in32(c: &AluCtx, v: u64) -> f32 {
    let x = f32::from_bits(v as u32);
    if c.mode.ftz { ftz32(x) } else { x }
}

#[inline]
fn finish64(c: &AluCtx, mut r: f64) -> u64 {
    if c.mode.sat {
        r = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
    }
    r.to_bits()
}

/// Canonical NaN PTX produces for f32 arithmetic.
const NAN32: u32 = 0x7fff_ffff;

fn nan_fix32(r: f32) -> f32 {
    if r.is_nan() { f32::from_bits(NAN32) } else { r }
}

pub fn add_f32(c: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (in32(c, a), in32(c, b));
    let r = if c.mode.rounding == FloatRounding::Rn {
        x + y
    } else {
        round_f32(x as f64 + y as f64, c.mode.rounding)
    };
    finish32(c, nan_fix32(r))
}
pub fn sub_f32(c: &AluCtx, a: u64, b: u64) -> u64 {
    add_f32(c, a, b ^ 0x8000_0000)
}
pub fn mul_f32(c: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (in32(c, a), in32(c, b));
    let r = if c.mode.rounding == FloatRounding::Rn {
        x * y
    } else {
        round_f32(x as f64 * y as f64, c.mode.rounding)
    };
    finish32(c, nan_fix32(r))
}
pub fn fma_f32(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    let (x, y, z) = (in32(c, a), in32(c, b), in32(c, d));
    let r = if c.mode.rounding == FloatRounding::Rn {
        x.mul_add(y, z)
    } else {
        // The product is exact in f64; the sum may round once there first.
        round_f32((x as f64 * y as f64) + z as f64, c.mode.rounding)
    };
    finish32(c, nan_fix32(r))
}
pub fn div_f32(c: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (in32(c, a), in32(c, b));
    let r = if c.mode.rounding == FloatRounding::Rn {
        x / y
    } else {
        round_f32(x as f64 / y as f64, c.mode.rounding)
    };
    finish32(c, nan_fix32(r))
}
pub fn min_f32(c: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (in32(c, a), in32(c, b));
    let r = match (x.is_nan(), y.is_nan()) {
        (true, true) => f32::from_bits(NAN32),
        (true, false) => y,
        (false, true) => x,
        // -0 is less than +0 for min/max.
        _ if x == y => {
            if x.is_sign_negative() {
                x
            } else {
                y
            }
        }
        _ => x.min(y),
    };
    finish32(c, r)
}
pub fn max_f32(c: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (in32(c, a), in32(c, b));
    let r = match (x.is_nan(), y.is_nan()) {
        (true, true) => f32::from_bits(NAN32),
        (true, false) => y,
        (false, true) => x,
        _ if x == y => {
            if x.is_sign_positive() {
                x
            } else {
                y
            }
        }
        _ => x.max(y),
    };
    finish32(c, r)
}
pub fn neg_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, -in32(c, a))
}
pub fn abs_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, in32(c, a).abs())
}
pub fn copysign_f32(_: &AluCtx, a: u64, b: u64) -> u64 {
    ((b as u32 & 0x7fff_ffff) | (a as u32 & 0x8000_0000)) as u64
}
pub fn sqrt_f32(c: &AluCtx, a: u64) -> u64 {
    let x = in32(c, a);
    let r = if c.mode.rounding == FloatRounding::Rn {
        x.sqrt()
    } else {
        round_f32((x as f64).sqrt(), c.mode.rounding)
    };
    finish32(c, nan_fix32(r))
}
pub fn rcp_f32(c: &AluCtx, a: u64) -> u64 {
    let x = in32(c, a);
    let r = if c.mode.rounding == FloatRounding::Rn {
        1.0 / x
    } else {
        round_f32(1.0 / x as f64, c.mode.rounding)
    };
    finish32(c, nan_fix32(r))
}
pub fn rsqrt_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, nan_fix32(1.0 / in32(c, a).sqrt()))
}
pub fn sin_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, nan_fix32(in32(c, a).sin()))
}
pub fn cos_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, nan_fix32(in32(c, a).cos()))
}
pub fn lg2_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, nan_fix32(in32(c, a).log2()))
}
pub fn ex2_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, nan_fix32(in32(c, a).exp2()))
}
pub fn tanh_f32(c: &AluCtx, a: u64) -> u64 {
    finish32(c, nan_fix32(in32(c, a).tanh()))
}

pub fn add_f64(c: &AluCtx, a: u64, b: u64) -> u64 {
    finish64(c, f64::from_bits(a) + f64::from_bits(b))
}
pub fn sub_f64(c: &AluCtx, a: u64, b: u64) -> u64 {
    finish64(c, f64::from_bits(a) - f64::from_bits(b))
}
pub fn mul_f64(c: &AluCtx, a: u64, b: u64) -> u64 {
    finish64(c, f64::from_bits(a) * f64::from_bits(b))
}
pub fn div_f64(c: &AluCtx, a: u64, b: u64) -> u64 {
    finish64(c, f64::from_bits(a) / f64::from_bits(b))
}
pub fn fma_f64(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    finish64(
        c,
        f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(d)),
    )
}
pub fn min_f64(_: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    if x == y {
        return if x.is_sign_negative() { a } else { b };
    }
    x.min(y).to_bits()
}
pub fn max_f64(_: &AluCtx, a: u64, b: u64) -> u64 {
    let (x, y) = (f64::from_bits(a), f64::from_bits(b));
    if x == y {
        return if x.is_sign_positive() { a } else { b };
    }
    x.max(y).to_bits()
}
pub fn neg_f64(_: &AluCtx, a: u64) -> u64 {
    a ^ (1 << 63)
}
pub fn abs_f64(_: &AluCtx, a: u64) -> u64 {
    a & !(1 << 63)
}
pub fn copysign_f64(_: &AluCtx, a: u64, b: u64) -> u64 {
    (b & !(1 << 63)) | (a & (1 << 63))
}
pub fn sqrt_f64(c: &AluCtx, a: u64) -> u64 {
    finish64(c, f64::from_bits(a).sqrt())
}
pub fn rcp_f64(c: &AluCtx, a: u64) -> u64 {
    finish64(c, 1.0 / f64::from_bits(a))
}
pub fn rsqrt_f64(c: &AluCtx, a: u64) -> u64 {
    finish64(c, 1.0 / f64::from_bits(a).sqrt())
}

/// Half-precision arithmetic: computed in f64 (exact for add/sub/mul of
/// 11-bit significands) and rounded once to the 16-bit type; packed types
/// apply it to both halves.
fn half_op(ty: ScalarType, a: u64, b: u64, d: u64, f: impl Fn(f64, f64, f64) -> f64) -> u64 {
    let el = ty.element();
    let one = |x: u64, y: u64, z: u64| -> u64 {
        let r = f(to_f64(el, x), to_f64(el, y), to_f64(el, z));
        match el {
            ScalarType::BF16 => bf16::from_f64(r).to_bits() as u64,
            _ => f16::from_f64(r).to_bits() as u64,
        }
    };
    if ty.is_packed() {
        let lo = one(a & 0xffff, b & 0xffff, d & 0xffff);
        let hi = one((a >> 16) & 0xffff, (b >> 16) & 0xffff, (d >> 16) & 0xffff);
        lo | (hi << 16)
    } else {
        one(a & 0xffff, b & 0xffff, d & 0xffff)
    }
}

pub fn add_half(c: &AluCtx, a: u64, b: u64) -> u64 {
    half_op(c.ty, a, b, 0, |x, y, _| x + y)
}
pub fn sub_half(c: &AluCtx, a: u64, b: u64) -> u64 {
    half_op(c.ty, a, b, 0, |x, y, _| x - y)
}
pub fn mul_half(c: &AluCtx, a: u64, b: u64) -> u64 {
    half_op(c.ty, a, b, 0, |x, y, _| x * y)
}
pub fn fma_half(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    half_op(c.ty, a, b, d, |x, y, z| x.mul_add(y, z))
}
pub fn min_half(c: &AluCtx, a: u64, b: u64) -> u64 {
    half_op(c.ty, a, b, 0, |x, y, _| x.min(y))
}
pub fn max_half(c: &AluCtx, a: u64, b: u64) -> u64 {
    half_op(c.ty, a, b, 0, |x, y, _| x.max(y))
}
pub fn neg_half(c: &AluCtx, a: u64) -> u64 {
    let m = if c.ty.is_packed() {
        0x8000_8000
    } else {
        0x8000
    };
    a ^ m
}
pub fn abs_half(c: &AluCtx, a: u64) -> u64 {
    let m = if c.ty.is_packed() {
        0x7fff_7fff
    } else {
        0x7fff
    };
    a & m
}

pub fn cmp_float(c: &AluCtx, a: u64, b: u64) -> bool {
    let (x, y) = if c.ty == ScalarType::F32 && c.mode.ftz {
        (in32(c, a) as f64, in32(c, b) as f64)
    } else {
        (to_f64(c.ty, a), to_f64(c.ty, b))
    };
    let unordered = x.is_nan() || y.is_nan();
    match c.cmp {
        CmpOp::Eq => x == y,
        CmpOp::Ne => !unordered && x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
        CmpOp::Equ => unordered || x == y,
        CmpOp::Neu => unordered || x != y,
        CmpOp::Ltu => unordered || x < y,
        CmpOp::Leu => unordered || x <= y,
        CmpOp::Gtu => unordered || x > y,
        CmpOp::Geu => unordered || x >= y,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
        _ => false,
    }
}

/// `testp.op.f32/f64`: `aux` selects finite(0) infinite(1) number(2)
/// notanumber(3) normal(4) subnormal(5).
pub fn testp(c: &AluCtx, a: u64, _: u64) -> bool {
    let x = to_f64(c.ty, a);
    let sub = if c.ty == ScalarType::F32 {
        f32::from_bits(a as u32).is_subnormal()
    } else {
        x.is_subnormal()
    };
    match c.aux {
        0 => x.is_finite(),
        1 => x.is_infinite(),
        2 => !x.is_nan(),
        3 => x.is_nan(),
        4 => x.is_normal() && !sub,
        _ => sub,
    }
}

/// `set.cmp.dtype.stype`: all ones (integer) or 1.0 (f32) when true.
pub fn set_cmp(c: &AluCtx, a: u64, b: u64) -> u64 {
    let inner = AluCtx { ty: c.ty2, ..*c };
    let t = if c.ty2.is_float() {
        cmp_float(&inner, a, b)
    } else {
        cmp_int(&inner, a, b)
    };
    match (t, c.ty) {
        (true, ScalarType::F32) => 1.0f32.to_bits() as u64,
        (true, _) => 0xffff_ffff,
        (false, _) => 0,
    }
}

// ------------------------------------------------------------- conversions

/// Integer rounding selected for a float→int or float→float `cvt`:
/// 0 none, 1 rni, 2 rzi, 3 rmi, 4 rpi.
fn round_integral(x: f64, mode: u32) -> f64 {
    match mode {
        1 => x.round_ties_even(),
        2 => x.trunc(),
        3 => x.floor(),
        4 => x.ceil(),
        _ => x,
    }
}

/// `cvt.dty.sty` for every integer/float pair: `ty` is the destination,
/// `ty2` the source, `aux` the integer rounding (see [`round_integral`]).
pub fn cvt(c: &AluCtx, a: u64) -> u64 {
    let (dst, src) = (c.ty, c.ty2);
    if src.is_float() {
        let mut x = to_f64(src, a);
        if c.mode.ftz && src == ScalarType::F32 {
            x = in32(c, a) as f64;
        }
        if dst.is_float() {
            let x = if c.aux != 0 {
                round_integral(x, c.aux)
            } else {
                x
            };
            return float_from_f64(c, dst, x);
        }
        // float → integer: saturating, NaN → 0.
        let x = round_integral(x, if c.aux == 0 { 2 } else { c.aux });
        let v = if dst.is_signed_int() {
            let bits = dst.bits();
            let (lo, hi) = (
                -(2f64.powi(bits as i32 - 1)),
                2f64.powi(bits as i32 - 1) - 1.0,
            );
            if x.is_nan() {
                0
            } else {
                x.clamp(lo, hi) as i64 as u64
            }
        } else {
            let hi = 2f64.powi(dst.bits() as i32) - 1.0;
            if x.is_nan() {
                0
            } else {
                x.clamp(0.0, hi) as u64
            }
        };
        return zx(dst, v);
    }
    if dst.is_float() {
        let x = if src.is_signed_int() {
            sx(src, a) as f64
        } else {
            zx(src, a) as f64
        };
        // 64-bit integers are not exact in f64: round directly from integer.
        if src.bits() == 64 && dst == ScalarType::F32 && c.mode.rounding == FloatRounding::Rn {
            let r = if src.is_signed_int() {
                a as i64 as f32
            } else {
                a as f32
            };
            return r.to_bits() as u64;
        }
        if src.bits() == 64 && dst == ScalarType::F64 {
            let r = if src.is_signed_int() {
                a as i64 as f64
            } else {
                a as f64
            };
            return r.to_bits();
        }
        return float_from_f64(c, dst, x);
    }
    // integer → integer: sign/zero-extend from the source, then truncate or saturate.
    let v = if src.is_signed_int() {
        sx(src, a)
    } else {
        zx(src, a) as i64
    };
    if c.mode.sat && dst.is_int() {
        let bits = dst.bits();
        let v128 = if src.is_signed_int() {
            v as i128
        } else {
            zx(src, a) as i128
        };
        let (lo, hi) = if dst.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        return zx(dst, v128.clamp(lo, hi) as u64);
    }
    zx(dst, v as u64)
}

fn float_from_f64(c: &AluCtx, dst: ScalarType, x: f64) -> u64 {
    match dst {
        ScalarType::F64 => finish64(c, x),
        ScalarType::F32 => finish32(c, round_f32(x, c.mode.rounding)),
        ScalarType::F16 => {
            let mut r = f16::from_f64(x);
            if c.mode.sat {
                r = f16::from_f64(if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) });
            }
            r.to_bits() as u64
        }
        ScalarType::BF16 => bf16::from_f64(x).to_bits() as u64,
        _ => 0,
    }
}

/// `cvt.rn.f16x2.f32 d, a, b`: `a` goes to the upper half.
pub fn cvt_pack_half2(c: &AluCtx, a: u64, b: u64) -> u64 {
    let one = |v: u64| -> u64 {
        let x = f32::from_bits(v as u32) as f64;
        match c.ty {
            ScalarType::BF16x2 => bf16::from_f64(x).to_bits() as u64,
            _ => f16::from_f64(x).to_bits() as u64,
        }
    };
    (one(a) << 16) | one(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn ctx(ty: ScalarType) -> AluCtx {
        AluCtx::new(ty)
    }

    #[test]
    fn integer_basics() {
        assert_eq!(add_b32(&ctx(U32), 0xffff_ffff, 1), 0);
        assert_eq!(mul_hi(&ctx(S32), (-2i32) as u32 as u64, 3), 0xffff_ffff);
        assert_eq!(
            mul_wide(&ctx(S32), (-2i32) as u32 as u64, 3),
            (-6i64) as u64
        );
        assert_eq!(mul_wide(&ctx(U32), 0xffff_ffff, 2), 0x1_ffff_fffe);
        assert_eq!(
            div_int(&ctx(S32), (-7i32) as u32 as u64, 2),
            (-3i32) as u32 as u64
        );
        assert_eq!(div_int(&ctx(U32), 7, 0), 0xffff_ffff);
        assert_eq!(
            rem_int(&ctx(S32), (-7i32) as u32 as u64, 2),
            (-1i32) as u32 as u64
        );
        assert_eq!(shr(&ctx(S32), 0x8000_0000, 40), 0xffff_ffff);
        assert_eq!(shr(&ctx(U32), 0x8000_0000, 40), 0);
        assert_eq!(shl(&ctx(B32), 1, 32), 0);
        assert_eq!(clz(&ctx(B32), 1), 31);
        assert_eq!(brev(&ctx(B32), 1), 0x8000_0000);
        assert_eq!(bfind(&ctx(U32), 0x10), 4);
        assert_eq!(bfind(&ctx(U32), 0), 0xffff_ffff);
        assert_eq!(bfe(&ctx(S32), 0xf0, 4, 4), 0xffff_ffff);
        assert_eq!(bfe(&ctx(U32), 0xf0, 4, 4), 0xf);
        assert_eq!(prmt(&ctx(B32), 0x33221100, 0x77665544, 0x5410), 0x55441100);
        assert_eq!(
            lop3(
                &AluCtx {
                    aux: 0x96,
                    ..ctx(B32)
                },
                0b1100,
                0b1010,
                0b0110
            ),
            0b0000
        );
        assert_eq!(
            lop3(
                &AluCtx {
                    aux: 0xe8,
                    ..ctx(B32)
                },
                0b1100,
                0b1010,
                0b0110
            ),
            0b1110
        );
        assert_eq!(shf(&AluCtx { aux: 1, ..ctx(B32) }, 0x1, 0x2, 1), 0);
        assert_eq!(
            shf(&AluCtx { aux: 1, ..ctx(B32) }, 0x0, 0x3, 1),
            0x8000_0000
        );
        assert_eq!(
            shf(&AluCtx { aux: 0, ..ctx(B32) }, 0x8000_0000, 0x1, 1),
            0x3
        );
    }

    #[test]
    fn comparisons_handle_nan_and_sign() {
        let lt = AluCtx {
            cmp: CmpOp::Lt,
            ..ctx(S32)
        };
        assert!(cmp_int(&lt, (-1i32) as u32 as u64, 0));
        let lo = AluCtx {
            cmp: CmpOp::Lo,
            ..ctx(S32)
        };
        assert!(!cmp_int(&lo, (-1i32) as u32 as u64, 0));
        let nan = f32::NAN.to_bits() as u64;
        let one = 1.0f32.to_bits() as u64;
        let f = |op| AluCtx {
            cmp: op,
            ..ctx(F32)
        };
        assert!(!cmp_float(&f(CmpOp::Lt), nan, one));
        assert!(cmp_float(&f(CmpOp::Ltu), nan, one));
        assert!(!cmp_float(&f(CmpOp::Ne), nan, one));
        assert!(cmp_float(&f(CmpOp::Neu), nan, one));
        assert!(cmp_float(&f(CmpOp::Nan), nan, one));
    }

    #[test]
    fn conversions_round_and_saturate() {
        let c = |dst, src, aux| AluCtx {
            ty: dst,
            ty2: src,
            aux,
            ..ctx(dst)
        };
        assert_eq!(
            cvt(&c(S32, F32, 2), (-2.7f32).to_bits() as u64),
            (-2i32) as u32 as u64
        );
        assert_eq!(cvt(&c(S32, F32, 1), 2.5f32.to_bits() as u64), 2);
        assert_eq!(cvt(&c(U32, F32, 2), (-5.0f32).to_bits() as u64), 0);
        assert_eq!(cvt(&c(S32, F32, 2), f32::NAN.to_bits() as u64), 0);
        assert_eq!(cvt(&c(S32, F32, 2), 1e20f32.to_bits() as u64), 0x7fff_ffff);
        assert_eq!(cvt(&c(S64, S32, 0), 0xffff_fffe), (-2i64) as u64);
        assert_eq!(cvt(&c(U64, U32, 0), 0xffff_fffe), 0xffff_fffe);
        assert_eq!(cvt(&c(U8, U32, 0), 0x1ff), 0xff);
        let sat = AluCtx {
            mode: FloatMode {
                sat: true,
                ..FloatMode::RN
            },
            ..c(U8, S32, 0)
        };
        assert_eq!(cvt(&sat, 300), 255);
        assert_eq!(
            cvt(&c(F32, S32, 0), (-3i32) as u32 as u64),
            (-3.0f32).to_bits() as u64
        );
        assert_eq!(cvt(&c(F16, F32, 0), 1.0f32.to_bits() as u64), 0x3c00);
        assert_eq!(cvt(&c(F32, F16, 0), 0x3c00), 1.0f32.to_bits() as u64);
        let rz = AluCtx {
            mode: FloatMode::new(FloatRounding::Rz),
            ..c(F32, F64, 0)
        };
        let third = (1.0f64 / 3.0).to_bits();
        let rp = AluCtx {
            mode: FloatMode::new(FloatRounding::Rp),
            ..c(F32, F64, 0)
        };
        assert!(f32::from_bits(cvt(&rz, third) as u32) < f32::from_bits(cvt(&rp, third) as u32));
    }

    #[test]
    fn float_min_max_and_ftz() {
        let c = ctx(F32);
        let nan = f32::NAN.to_bits() as u64;
        assert_eq!(
            min_f32(&c, nan, 2.0f32.to_bits() as u64),
            2.0f32.to_bits() as u64
        );
        assert_eq!(max_f32(&c, (-0.0f32).to_bits() as u64, 0), 0);
        let ftz = AluCtx {
            mode: FloatMode {
                ftz: true,
                ..FloatMode::RN
            },
            ..c
        };
        let tiny = f32::from_bits(1).to_bits() as u64;
        assert_eq!(add_f32(&ftz, tiny, 0), 0);
        assert_eq!(add_f32(&c, tiny, 0), tiny);
        assert_eq!(add_half(&ctx(F16x2), 0x3c00_3c00, 0x3c00_4000), 0x4000_4200);
    }
}
