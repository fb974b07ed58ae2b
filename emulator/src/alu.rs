//! Per-lane scalar operations the decoder selects once per instruction.
//!
//! Each function takes the instruction's [`AluCtx`] (types and modes fixed at
//! load) and operand bit patterns; values live in the low bits of a `u64`
//! and results are returned zero-extended to the type's width, so registers
//! always hold canonical values.

use crate::semantics::{CmpOp, FloatMode, ScalarType};

/// Types and modes of one decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AluCtx {
    /// The instruction type (destination type of `cvt`).
    pub ty: ScalarType,
    /// The second type: source type of `cvt`, `mul.wide` source width, …
    pub ty2: ScalarType,
    pub mode: FloatMode,
    pub cmp: CmpOp,
    /// Instruction-specific constant: `lop3` truth table, `shf` mode, `testp` class.
    pub aux: u32,
    pub div: crate::semantics::DivKind,
    pub cvt: crate::semantics::CvtMode,
    pub prmt: crate::semantics::PrmtMode,
}

impl AluCtx {
    pub fn new(ty: ScalarType) -> AluCtx {
        AluCtx {
            ty,
            ty2: ty,
            mode: FloatMode::RN,
            cmp: CmpOp::Eq,
            aux: 0,
            div: crate::semantics::DivKind::Ieee,
            cvt: crate::semantics::CvtMode::default(),
            prmt: crate::semantics::PrmtMode::Generic,
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
    crate::semantics::bits::bfe(c.ty, a, b as u32, d as u32)
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
/// `vshl/vshr.{u32,s32}.{u32,s32}.u32{.sat}.{clamp,wrap}{.add,.min,.max}`,
/// the video shifts on whole words. `aux`: bit 0 right shift, bit 1 clamp
/// (else wrap), bit 2 signed source, bit 3 signed destination, bit 4
/// `.sat`, bits 5-6 the secondary operation with `c` (0 none, 1 add, 2 min,
/// 3 max), as the PTX ISA's pseudocode: the shift amount is clamped to 32
/// or taken modulo 32, the source shifted in a wide intermediate
/// (arithmetically if signed), saturated to the destination type with
/// `.sat` or truncated to 32 bits, then combined with `c`.
pub fn vshift(ctx: &AluCtx, a: u64, b: u64, c: u64) -> u64 {
    let aux = ctx.aux;
    let signed_d = aux & 8 != 0;
    let ta: i128 = if aux & 4 != 0 {
        a as u32 as i32 as i128
    } else {
        a as u32 as i128
    };
    let tb = if aux & 2 != 0 {
        (b as u32).min(32)
    } else {
        b as u32 & 31
    };
    let wide = if aux & 1 != 0 { ta >> tb } else { ta << tb };
    let tmp = if aux & 16 != 0 {
        let (lo, hi) = if signed_d {
            (i32::MIN as i128, i32::MAX as i128)
        } else {
            (0, u32::MAX as i128)
        };
        wide.clamp(lo, hi) as u32
    } else {
        wide as u32
    };
    let r = match (aux >> 5) & 3 {
        0 => tmp,
        1 => tmp.wrapping_add(c as u32),
        op if signed_d => {
            let (x, y) = (tmp as i32, c as i32);
            (if op == 2 { x.min(y) } else { x.max(y) }) as u32
        }
        op => {
            let y = c as u32;
            if op == 2 { tmp.min(y) } else { tmp.max(y) }
        }
    };
    r as u64
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
/// `dp4a.atype.btype`: `ty`/`ty2` give the operand signedness.
pub fn dp4a(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    sem::bits::dp4a(c.ty.is_signed_int(), c.ty2.is_signed_int(), a, b, d)
}
/// `dp2a.{lo,hi}`: `aux` = 1 for `.hi`.
pub fn dp2a(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    sem::bits::dp2a(
        c.aux == 1,
        c.ty.is_signed_int(),
        c.ty2.is_signed_int(),
        a,
        b,
        d,
    )
}
pub fn mul24_lo(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::int::mul24_lo(c.ty, a, b)
}
pub fn mul24_hi(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::int::mul24_hi(c.ty, a, b)
}
pub fn mad24_lo(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    sem::int::mad24_lo(c.ty, a, b, d)
}
pub fn mad24_hi(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    sem::int::mad24_hi(c.ty, a, b, d)
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
//
// Floating-point operations delegate to `semantics`, which implements every
// rounding mode exactly (softfloat behind `.rz .rm .rp`), `.ftz`, `.sat`,
// the half types and canonical NaNs; its round-to-nearest f32/f64 paths are
// native arithmetic.

use crate::semantics::{self as sem, DivKind, TestpOp};

pub fn add_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::add(c.ty, c.mode, a, b)
}
pub fn sub_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::sub(c.ty, c.mode, a, b)
}
pub fn mul_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::mul(c.ty, c.mode, a, b)
}
pub fn fma_f(c: &AluCtx, a: u64, b: u64, d: u64) -> u64 {
    sem::float::fma(c.ty, c.mode, a, b, d)
}
pub fn div_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::div(c.ty, c.mode, c.div, a, b)
}
pub fn rcp_f(c: &AluCtx, a: u64) -> u64 {
    if c.div == DivKind::Approx && c.ty == ScalarType::F32 {
        return sem::approx::rcp_f32(c.mode.ftz, a);
    }
    sem::float::rcp(c.ty, c.mode, a)
}
pub fn sqrt_f(c: &AluCtx, a: u64) -> u64 {
    if c.div == DivKind::Approx && c.ty == ScalarType::F32 {
        return sem::approx::sqrt_f32(c.mode.ftz, a);
    }
    sem::float::sqrt(c.ty, c.mode, a)
}
/// `aux` = 1 for `.NaN`.
pub fn min_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::min(c.ty, c.mode.ftz, c.aux == 1, a, b)
}
pub fn max_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::max(c.ty, c.mode.ftz, c.aux == 1, a, b)
}
pub fn abs_f(c: &AluCtx, a: u64) -> u64 {
    sem::float::abs(c.ty, c.mode.ftz, a)
}
pub fn neg_f(c: &AluCtx, a: u64) -> u64 {
    sem::float::neg(c.ty, c.mode.ftz, a)
}
pub fn copysign_f(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::float::copysign(c.ty, a, b)
}
pub fn sin_f(c: &AluCtx, a: u64) -> u64 {
    sem::approx::sin(c.ty, c.mode.ftz, a)
}
pub fn cos_f(c: &AluCtx, a: u64) -> u64 {
    sem::approx::cos(c.ty, c.mode.ftz, a)
}
pub fn lg2_f(c: &AluCtx, a: u64) -> u64 {
    sem::approx::lg2(c.ty, c.mode.ftz, a)
}
pub fn ex2_f(c: &AluCtx, a: u64) -> u64 {
    sem::approx::ex2(c.ty, c.mode.ftz, a)
}
pub fn tanh_f(c: &AluCtx, a: u64) -> u64 {
    sem::approx::tanh(c.ty, a)
}
pub fn rsqrt_f(c: &AluCtx, a: u64) -> u64 {
    sem::approx::rsqrt(c.ty, c.mode.ftz, a)
}

pub fn cmp_float(c: &AluCtx, a: u64, b: u64) -> bool {
    sem::compare_ftz(c.cmp, c.ty, c.mode.ftz, a, b)
}

/// `testp.op`: `aux` selects finite(0) infinite(1) number(2) notanumber(3)
/// normal(4) subnormal(5).
pub fn testp(c: &AluCtx, a: u64, _: u64) -> bool {
    let op = match c.aux {
        0 => TestpOp::Finite,
        1 => TestpOp::Infinite,
        2 => TestpOp::Number,
        3 => TestpOp::NotANumber,
        4 => TestpOp::Normal,
        _ => TestpOp::Subnormal,
    };
    sem::float::testp(c.ty, op, a)
}

/// `cvt.dty.sty`: `ty` is the destination, `ty2` the source.
/// `aux`, when set, is the width of a destination register wider than the
/// destination type: the result is sign- or zero-extended into it.
pub fn cvt(c: &AluCtx, a: u64) -> u64 {
    let r = sem::cvt(c.ty, c.ty2, c.cvt, a);
    if c.aux != 0 {
        sem::cvt::widen_to_register(c.ty, r, c.aux)
    } else {
        r
    }
}

/// `cvt.rn.f16x2.f32 d, a, b`: `a` goes to the upper half.
pub fn cvt_pack_half2(c: &AluCtx, a: u64, b: u64) -> u64 {
    sem::cvt::cvt_pack_f32x2(c.ty, c.cvt, a, b)
}

pub fn prmt(c: &AluCtx, a: u64, b: u64, sel: u64) -> u64 {
    sem::bits::prmt(a, b, sel, c.prmt)
}

/// `aux`, when set, is the width of a destination register wider than the
/// instruction type (see [`cvt`]).
pub fn slct(c: &AluCtx, a: u64, b: u64, sel: u64) -> u64 {
    let r = sem::compare::slct(c.ty2, c.mode.ftz, a, b, sel);
    if c.aux != 0 {
        sem::cvt::widen_to_register(c.ty, r & c.ty.mask(), c.aux)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantics::FloatRounding;
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
    fn integer_comparisons_respect_signedness() {
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
    }

    #[test]
    fn float_wrappers_pass_modes_through() {
        let rm = AluCtx {
            mode: FloatMode::new(FloatRounding::Rm),
            ..ctx(F32)
        };
        let one = 1.0f32.to_bits() as u64;
        let neg_one = (-1.0f32).to_bits() as u64;
        assert_eq!(add_f(&rm, one, neg_one), (-0.0f32).to_bits() as u64);
        assert_eq!(add_f(&ctx(F32), one, neg_one), 0);
        let cvt_ctx = AluCtx {
            ty2: S32,
            cvt: sem::CvtMode {
                float_rounding: Some(FloatRounding::Rz),
                ..sem::CvtMode::default()
            },
            ..ctx(F32)
        };
        assert_eq!(cvt(&cvt_ctx, 16_777_217), 16_777_216f32.to_bits() as u64);
    }
}
