//! `cvt`: conversions among the integer types and `.f16`, `.bf16`, `.f32`,
//! `.f64` (plus `.tf32` rounding and the packed `.f16x2`/`.bf16x2` forms).
//!
//! - int → int: sign- or zero-extends by the source type, then truncates to
//!   the destination width, or with `.sat` clamps to the destination range.
//! - int → float: one rounding with `.rn` (default) `.rz .rm .rp`.
//! - float → int: rounds to an integral value with `.rni .rzi .rmi .rpi`,
//!   then saturates to the destination range. NaN converts to 0, except from
//!   an `.f64` source or to a 64-bit destination, where it gives
//!   `1 << (width - 1)` (PTX ISA, cvt "Integer Notes").
//! - float → float: narrowing rounds once with `.rn .rz .rm .rp`; widening is
//!   exact; an integer rounding (`cvt.rzi.f32.f32`) rounds to an integral
//!   value in floating point. NaN becomes the destination's canonical NaN.
//! - `.ftz` flushes `.f32` subnormal sources and results; `.sat` on a float
//!   destination clamps to `[0, 1]`; `.relu` and `.satfinite` apply to
//!   `.f16`/`.bf16` destinations.
//!
//! Results are the destination value in its low bits, zero-extended (a
//! `.s8` result `-1` reads `0xff`).

use super::float::{format_of, relu, saturate};
use super::softfloat::{self, FloatFormat};
use super::types::{FloatRounding, IntRounding, ScalarType};
use thiserror::Error;

/// Modifiers of one `cvt` instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CvtMode {
    /// `.rni .rzi .rmi .rpi`.
    pub int_rounding: Option<IntRounding>,
    /// `.rn .rz .rm .rp`.
    pub float_rounding: Option<FloatRounding>,
    pub ftz: bool,
    pub sat: bool,
    pub relu: bool,
    pub satfinite: bool,
}

/// A `cvt` type/modifier combination PTX does not define.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CvtError {
    #[error("cvt{dst}{src}: unsupported type pair")]
    UnsupportedTypes {
        dst: &'static str,
        src: &'static str,
    },
    #[error("cvt{dst}{src}: a float-to-integer conversion needs .rni, .rzi, .rmi or .rpi")]
    MissingIntRounding {
        dst: &'static str,
        src: &'static str,
    },
    #[error("cvt{dst}{src}: a narrowing float conversion needs .rn, .rz, .rm or .rp")]
    MissingFloatRounding {
        dst: &'static str,
        src: &'static str,
    },
    #[error("cvt{dst}{src}: an integer rounding modifier needs a float source")]
    IntRoundingOnIntSource {
        dst: &'static str,
        src: &'static str,
    },
    #[error("cvt{dst}{src}: both .rni-style and .rn-style rounding given")]
    TwoRoundings {
        dst: &'static str,
        src: &'static str,
    },
}

#[inline]
fn is_scalar_float(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64
    )
}

#[inline]
fn is_integer(ty: ScalarType) -> bool {
    ty.is_int() || (ty.is_bits() && ty != ScalarType::B128)
}

/// Checks a `cvt` combination at load time, so [`cvt`] may assume it.
pub fn validate(dst: ScalarType, src: ScalarType, mode: CvtMode) -> Result<(), CvtError> {
    let (d, s) = (dst.as_str(), src.as_str());
    let ok_type = |t: ScalarType| is_integer(t) || is_scalar_float(t);
    if !ok_type(dst) || !ok_type(src) {
        return Err(CvtError::UnsupportedTypes { dst: d, src: s });
    }
    if mode.int_rounding.is_some() && mode.float_rounding.is_some() {
        return Err(CvtError::TwoRoundings { dst: d, src: s });
    }
    if mode.int_rounding.is_some() && !is_scalar_float(src) {
        return Err(CvtError::IntRoundingOnIntSource { dst: d, src: s });
    }
    if is_scalar_float(src) && is_integer(dst) && mode.int_rounding.is_none() {
        return Err(CvtError::MissingIntRounding { dst: d, src: s });
    }
    if is_scalar_float(src)
        && is_scalar_float(dst)
        && format_of(dst).man_bits < format_of(src).man_bits
        && mode.int_rounding.is_none()
        && mode.float_rounding.is_none()
    {
        return Err(CvtError::MissingFloatRounding { dst: d, src: s });
    }
    Ok(())
}

/// Performs a validated conversion (see [`validate`]). Missing roundings
/// default to `.rn` / `.rzi`.
#[inline]
pub fn cvt(dst: ScalarType, src: ScalarType, mode: CvtMode, a: u64) -> u64 {
    use ScalarType::*;
    // Fast paths for the conversions compilers emit in inner loops; the
    // general path below handles them identically (see the agreement test).
    let plain = !mode.sat && !mode.ftz && !mode.relu && !mode.satfinite;
    if plain {
        match (dst, src, mode.int_rounding, mode.float_rounding) {
            (S64, S32, None, None) => return a as u32 as i32 as i64 as u64,
            (U64 | S64 | B64, U32 | B32, None, None) => return a & 0xffff_ffff,
            (U32 | S32 | B32, U64 | S64 | B64, None, None) => return a & 0xffff_ffff,
            (F32, S32, None, None | Some(FloatRounding::Rn)) => {
                return (a as u32 as i32 as f32).to_bits() as u64;
            }
            (F32, U32, None, None | Some(FloatRounding::Rn)) => {
                return (a as u32 as f32).to_bits() as u64;
            }
            (F64, S32, None, _) => return (a as u32 as i32 as f64).to_bits(),
            (F64, U32, None, _) => return (a as u32 as f64).to_bits(),
            (S32, F32, Some(IntRounding::Rzi), None) => {
                return f32::from_bits(a as u32) as i32 as u32 as u64;
            }
            (S32, F32, Some(IntRounding::Rni), None) => {
                return f32::from_bits(a as u32).round_ties_even() as i32 as u32 as u64;
            }
            (U32, F32, Some(IntRounding::Rzi), None) => {
                return f32::from_bits(a as u32) as u32 as u64;
            }
            (S32, F64, Some(IntRounding::Rzi), None) => {
                let x = f64::from_bits(a);
                return if x.is_nan() {
                    0x8000_0000
                } else {
                    x as i32 as u32 as u64
                };
            }
            _ => {}
        }
    }
    cvt_general(dst, src, mode, a)
}

/// Every conversion; [`cvt`] only adds fast paths in front.
#[inline(never)]
fn cvt_general(dst: ScalarType, src: ScalarType, mode: CvtMode, a: u64) -> u64 {
    match (is_scalar_float(dst), is_scalar_float(src)) {
        (false, false) => int_to_int(dst, src, mode.sat, a),
        (true, false) => int_to_float(dst, src, mode, a),
        (false, true) => float_to_int(dst, src, mode, a),
        (true, true) => float_to_float(dst, src, mode, a),
    }
}

#[inline]
fn int_to_int(dst: ScalarType, src: ScalarType, sat: bool, a: u64) -> u64 {
    let value = src.extend(a);
    if !sat {
        return value & dst.mask();
    }
    let wide: i128 = if src.is_signed_int() {
        value as i64 as i128
    } else {
        value as i128
    };
    let bits = dst.bits().min(64);
    let (lo, hi): (i128, i128) = if dst.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    (wide.clamp(lo, hi) as u64) & dst.mask()
}

#[inline]
fn int_to_float(dst: ScalarType, src: ScalarType, mode: CvtMode, a: u64) -> u64 {
    let fmt = format_of(dst);
    let rounding = mode.float_rounding.unwrap_or_default();
    let value = src.extend(a);
    let (negative, magnitude) = if src.is_signed_int() && (value as i64) < 0 {
        (true, (value as i64).unsigned_abs())
    } else {
        (false, value)
    };
    let r = match (rounding, dst) {
        (FloatRounding::Rn, ScalarType::F32) if src.is_signed_int() => {
            (value as i64 as f32).to_bits() as u64
        }
        (FloatRounding::Rn, ScalarType::F32) => (value as f32).to_bits() as u64,
        (FloatRounding::Rn, ScalarType::F64) if src.is_signed_int() => {
            (value as i64 as f64).to_bits()
        }
        (FloatRounding::Rn, ScalarType::F64) => (value as f64).to_bits(),
        _ => softfloat::from_int(fmt, negative, magnitude, rounding),
    };
    finish_float(fmt, mode, r)
}

/// Rounds a float to an integral value in `f64` (exact for every source format).
#[inline]
fn round_integral(x: f64, rounding: IntRounding) -> f64 {
    match rounding {
        IntRounding::Rni => x.round_ties_even(),
        IntRounding::Rzi => x.trunc(),
        IntRounding::Rmi => x.floor(),
        IntRounding::Rpi => x.ceil(),
    }
}

#[inline]
fn element_f64(fmt: FloatFormat, bits: u64) -> f64 {
    match fmt.man_bits {
        52 => f64::from_bits(bits),
        23 => f32::from_bits(bits as u32) as f64,
        10 => half::f16::from_bits(bits as u16).to_f64(),
        _ => half::bf16::from_bits(bits as u16).to_f64(),
    }
}

/// The integer a NaN converts to.
#[inline]
fn nan_to_int(dst: ScalarType, src: ScalarType) -> u64 {
    if src == ScalarType::F64 || dst.bits() == 64 {
        1 << (dst.bits() - 1)
    } else {
        0
    }
}

#[inline]
fn float_to_int(dst: ScalarType, src: ScalarType, mode: CvtMode, a: u64) -> u64 {
    let fmt = format_of(src);
    let mut a = a & src.mask();
    if mode.ftz && src == ScalarType::F32 {
        a = fmt.flush(a);
    }
    let x = round_integral(
        element_f64(fmt, a),
        mode.int_rounding.unwrap_or(IntRounding::Rzi),
    );
    if x.is_nan() {
        return nan_to_int(dst, src);
    }
    // `as` saturates to the target range, exactly PTX's clamping rule.
    let r = match dst {
        ScalarType::S8 => x as i8 as u64,
        ScalarType::S16 => x as i16 as u64,
        ScalarType::S32 => x as i32 as u64,
        ScalarType::S64 => x as i64 as u64,
        ScalarType::U8 | ScalarType::B8 => x as u8 as u64,
        ScalarType::U16 | ScalarType::B16 => x as u16 as u64,
        ScalarType::U32 | ScalarType::B32 => x as u32 as u64,
        _ => x as u64,
    };
    r & dst.mask()
}

#[inline]
fn float_to_float(dst: ScalarType, src: ScalarType, mode: CvtMode, a: u64) -> u64 {
    let (from, to) = (format_of(src), format_of(dst));
    let mut a = a & src.mask();
    if mode.ftz && src == ScalarType::F32 {
        a = from.flush(a);
    }
    let r = if let Some(int_rounding) = mode.int_rounding {
        if from.is_nan(a) {
            to.canonical_nan()
        } else {
            let x = round_integral(element_f64(from, a), int_rounding);
            // An integral value of the source converts exactly unless the
            // destination is narrower; then round to nearest.
            softfloat::convert(FloatFormat::F64, to, x.to_bits(), FloatRounding::Rn)
        }
    } else {
        let rounding = mode.float_rounding.unwrap_or_default();
        match (rounding, src, dst) {
            (_, ScalarType::F32, ScalarType::F64) => {
                to.canonicalize((f32::from_bits(a as u32) as f64).to_bits())
            }
            (FloatRounding::Rn, ScalarType::F64, ScalarType::F32) => {
                to.canonicalize((f64::from_bits(a) as f32).to_bits() as u64)
            }
            (FloatRounding::Rn, ScalarType::F32, ScalarType::F16) => {
                to.canonicalize(half::f16::from_f32(f32::from_bits(a as u32)).to_bits() as u64)
            }
            _ => softfloat::convert(from, to, a, rounding),
        }
    };
    let r = finish_float(to, mode, r);
    if mode.ftz && dst == ScalarType::F32 {
        to.flush(r)
    } else {
        r
    }
}

#[inline]
fn finish_float(fmt: FloatFormat, mode: CvtMode, mut r: u64) -> u64 {
    if mode.satfinite && fmt.is_inf(r) {
        r = (r & fmt.sign_mask()) | fmt.max_finite();
    }
    if mode.sat {
        r = saturate(fmt, r);
    }
    if mode.relu {
        r = relu(fmt, r);
    }
    r
}

/// `cvt.{rn,rz,rm,rp}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`: `a`
/// converted into the upper half, `b` into the lower half.
#[inline]
pub fn cvt_pack_f32x2(dst: ScalarType, mode: CvtMode, a: u64, b: u64) -> u64 {
    let element = dst.element();
    let hi = cvt(element, ScalarType::F32, mode, a);
    let lo = cvt(element, ScalarType::F32, mode, b);
    (hi << 16) | lo
}

/// `cvt.{rn,rz}{.relu}{.satfinite}.tf32.f32`: rounds to TF32 (10 mantissa
/// bits) and returns it as an `.f32` bit pattern with the low 13 bits zero.
#[inline]
pub fn cvt_tf32(rounding: FloatRounding, relu_mode: bool, satfinite: bool, a: u64) -> u64 {
    let f = FloatFormat::F32;
    let a = a & 0xffff_ffff;
    if f.is_nan(a) {
        return f.canonical_nan();
    }
    let tf32 = FloatFormat::TF32;
    let mut r = softfloat::convert(f, tf32, a, rounding);
    if satfinite && tf32.is_inf(r) {
        r = (r & tf32.sign_mask()) | tf32.max_finite();
    }
    if relu_mode {
        r = relu(tf32, r);
    }
    // TF32 and f32 share sign and exponent; widen the mantissa.
    r << 13
}

/// Extends a `cvt` result to a destination register wider than the
/// instruction type: sign-extension for signed integer types, zero-extension
/// otherwise (PTX "Operand Size Exceeding Instruction-Type Size").
#[inline]
pub fn widen_to_register(dst: ScalarType, result: u64, register_bits: u32) -> u64 {
    let extended = dst.extend(result);
    if register_bits >= 64 {
        extended
    } else {
        extended & ((1u64 << register_bits) - 1)
    }
}

/// `cvt.rna{.satfinite}.tf32.f32`: rounds to 10 mantissa bits, ties away from
/// zero; the result is an `.f32` bit pattern whose low 13 bits are zero.
#[inline]
pub fn cvt_rna_tf32(a: u64, satfinite: bool) -> u64 {
    let f = FloatFormat::F32;
    let a = a & 0xffff_ffff;
    if f.is_nan(a) {
        return f.canonical_nan();
    }
    if f.is_inf(a) {
        return if satfinite {
            (a & f.sign_mask()) | 0x7f7f_e000
        } else {
            a
        };
    }
    // Adding half of the kept lsb to the magnitude rounds ties away from zero;
    // a carry out of the mantissa correctly bumps the exponent (up to inf).
    let r = (a + 0x1000) & !0x1fff;
    if satfinite && f.is_inf(r) {
        (r & f.sign_mask()) | 0x7f7f_e000
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn mode_i(r: IntRounding) -> CvtMode {
        CvtMode {
            int_rounding: Some(r),
            ..CvtMode::default()
        }
    }
    fn mode_f(r: FloatRounding) -> CvtMode {
        CvtMode {
            float_rounding: Some(r),
            ..CvtMode::default()
        }
    }

    #[test]
    fn int_to_int_extends_truncates_and_saturates() {
        assert_eq!(cvt(S32, S8, CvtMode::default(), 0x80), 0xffff_ff80);
        assert_eq!(cvt(S32, U8, CvtMode::default(), 0x80), 0x80);
        assert_eq!(cvt(U8, S32, CvtMode::default(), 0x1234), 0x34);
        assert_eq!(cvt(S64, S32, CvtMode::default(), 0xffff_ffff), u64::MAX);
        assert_eq!(cvt(U64, U32, CvtMode::default(), 0xffff_ffff), 0xffff_ffff);
        let sat = CvtMode {
            sat: true,
            ..CvtMode::default()
        };
        assert_eq!(cvt(U8, S32, sat, 0xffff_ffff), 0);
        assert_eq!(cvt(U8, S32, sat, 300), 255);
        assert_eq!(cvt(S8, S32, sat, (-300i32) as u32 as u64), 0x80);
        assert_eq!(cvt(S32, U32, sat, 0xffff_ffff), 0x7fff_ffff);
        assert_eq!(cvt(U32, S64, sat, u64::MAX), 0);
        assert_eq!(cvt(U64, S64, sat, u64::MAX), 0);
        assert_eq!(cvt(S64, U64, sat, u64::MAX), i64::MAX as u64);
    }

    #[test]
    fn float_to_int_rounds_saturates_and_zeroes_nan() {
        let x = |v: f32| v.to_bits() as u64;
        assert_eq!(cvt(S32, F32, mode_i(IntRounding::Rni), x(2.5)), 2);
        assert_eq!(cvt(S32, F32, mode_i(IntRounding::Rni), x(3.5)), 4);
        assert_eq!(
            cvt(S32, F32, mode_i(IntRounding::Rzi), x(-2.7)),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            cvt(S32, F32, mode_i(IntRounding::Rmi), x(-2.1)),
            (-3i32) as u32 as u64
        );
        assert_eq!(cvt(S32, F32, mode_i(IntRounding::Rpi), x(2.1)), 3);
        assert_eq!(
            cvt(S32, F32, mode_i(IntRounding::Rzi), x(1e20)),
            0x7fff_ffff
        );
        assert_eq!(
            cvt(S32, F32, mode_i(IntRounding::Rzi), x(-1e20)),
            0x8000_0000
        );
        assert_eq!(cvt(U32, F32, mode_i(IntRounding::Rzi), x(-5.0)), 0);
        assert_eq!(cvt(U8, F32, mode_i(IntRounding::Rni), x(300.0)), 255);
        assert_eq!(cvt(S16, F32, mode_i(IntRounding::Rni), x(-40000.0)), 0x8000);
        assert_eq!(cvt(S32, F32, mode_i(IntRounding::Rni), 0x7fc0_0000), 0);
        assert_eq!(cvt(U16, F16, mode_i(IntRounding::Rni), 0x7e00), 0);
        // NaN from .f64 or into a 64-bit integer gives 1 << (width - 1).
        let nan64 = f64::NAN.to_bits();
        assert_eq!(cvt(S32, F64, mode_i(IntRounding::Rzi), nan64), 0x8000_0000);
        assert_eq!(cvt(U32, F64, mode_i(IntRounding::Rni), nan64), 0x8000_0000);
        assert_eq!(cvt(S8, F64, mode_i(IntRounding::Rni), nan64), 0x80);
        assert_eq!(
            cvt(U64, F32, mode_i(IntRounding::Rzi), 0x7fc0_0000),
            1 << 63
        );
        assert_eq!(cvt(S64, F16, mode_i(IntRounding::Rzi), 0x7e00), 1 << 63);
        assert_eq!(
            cvt(U64, F64, mode_i(IntRounding::Rzi), f64::INFINITY.to_bits()),
            u64::MAX
        );
        assert_eq!(
            cvt(S64, F64, mode_i(IntRounding::Rni), (-1e300f64).to_bits()),
            i64::MIN as u64
        );
        assert_eq!(
            cvt(S32, F16, mode_i(IntRounding::Rni), 0xc500),
            (-5i32) as u32 as u64
        ); // -5.0
    }

    #[test]
    fn every_f16_converts_to_every_integer_type_like_the_f64_reference() {
        for bits in 0..=0xffffu16 {
            let v = half::f16::from_bits(bits).to_f64();
            for r in [
                IntRounding::Rni,
                IntRounding::Rzi,
                IntRounding::Rmi,
                IntRounding::Rpi,
            ] {
                let rounded = round_integral(v, r);
                let expect_s16 = if v.is_nan() {
                    0
                } else {
                    rounded.clamp(-32768.0, 32767.0) as i64 as u16 as u64
                };
                assert_eq!(
                    cvt(S16, F16, mode_i(r), bits as u64),
                    expect_s16,
                    "{v} {r:?}"
                );
                let expect_u32 = if v.is_nan() {
                    0
                } else {
                    rounded.clamp(0.0, u32::MAX as f64) as u64
                };
                assert_eq!(
                    cvt(U32, F16, mode_i(r), bits as u64),
                    expect_u32,
                    "{v} {r:?}"
                );
            }
        }
    }

    #[test]
    fn int_to_float_rounding_modes() {
        let big = (1u64 << 24) + 1; // not representable in f32
        assert_eq!(
            f32::from_bits(cvt(F32, U32, mode_f(FloatRounding::Rn), big) as u32),
            16_777_216.0
        );
        assert_eq!(
            f32::from_bits(cvt(F32, U32, mode_f(FloatRounding::Rp), big) as u32),
            16_777_218.0
        );
        assert_eq!(
            f32::from_bits(cvt(F32, S32, mode_f(FloatRounding::Rm), (-(big as i64)) as u64) as u32),
            -16_777_218.0
        );
        assert_eq!(
            f32::from_bits(cvt(F32, S32, mode_f(FloatRounding::Rz), (-(big as i64)) as u64) as u32),
            -16_777_216.0
        );
        assert_eq!(
            f64::from_bits(cvt(F64, S64, CvtMode::default(), i64::MIN as u64)),
            -9.223_372_036_854_776e18
        );
        assert_eq!(cvt(F16, S32, mode_f(FloatRounding::Rn), 70000), 0x7c00); // overflow to inf
        assert_eq!(cvt(F16, S32, mode_f(FloatRounding::Rz), 70000), 0x7bff);
        assert_eq!(
            cvt(F32, S8, CvtMode::default(), 0xff),
            (-1.0f32).to_bits() as u64
        );
        let sat = CvtMode {
            sat: true,
            ..CvtMode::default()
        };
        assert_eq!(f32::from_bits(cvt(F32, S32, sat, 5) as u32), 1.0);
        // Host fast path and soft-float agree on random integers.
        let mut s = 0x1234_5678u64;
        for _ in 0..100_000 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let reference = softfloat::from_int(
                FloatFormat::F32,
                (s as i64) < 0,
                (s as i64).unsigned_abs(),
                FloatRounding::Rn,
            );
            assert_eq!(cvt(F32, S64, CvtMode::default(), s), reference);
            let reference = softfloat::from_int(FloatFormat::F64, false, s, FloatRounding::Rn);
            assert_eq!(cvt(F64, U64, CvtMode::default(), s), reference);
        }
    }

    #[test]
    fn float_to_float_narrowing_and_integral_rounding() {
        let third = (1.0f64 / 3.0).to_bits();
        let rn = f32::from_bits(cvt(F32, F64, mode_f(FloatRounding::Rn), third) as u32);
        let rz = f32::from_bits(cvt(F32, F64, mode_f(FloatRounding::Rz), third) as u32);
        let rp = f32::from_bits(cvt(F32, F64, mode_f(FloatRounding::Rp), third) as u32);
        assert_eq!(rn, 1.0f32 / 3.0);
        assert!((rz as f64) < 1.0 / 3.0 && (rp as f64) > 1.0 / 3.0);
        assert_eq!(rp.to_bits(), rz.to_bits() + 1);
        assert_eq!(
            cvt(F64, F32, CvtMode::default(), 0x7fc0_0001),
            0x7fff_ffff_ffff_ffff
        );
        assert_eq!(
            cvt(F32, F16, CvtMode::default(), 0x3c00),
            1.0f32.to_bits() as u64
        );
        let ftz = CvtMode {
            ftz: true,
            ..CvtMode::default()
        };
        assert_eq!(cvt(F64, F32, ftz, 0x8000_0001), (-0.0f64).to_bits());
        assert_eq!(
            cvt(
                F32,
                F64,
                CvtMode {
                    ftz: true,
                    ..mode_f(FloatRounding::Rn)
                },
                1e-40f64.to_bits()
            ),
            0
        );
        assert_eq!(
            f32::from_bits(cvt(
                F32,
                F32,
                mode_i(IntRounding::Rzi),
                (-2.7f32).to_bits() as u64
            ) as u32),
            -2.0
        );
        assert_eq!(
            cvt(
                F32,
                F32,
                mode_i(IntRounding::Rzi),
                (-0.5f32).to_bits() as u64
            ),
            0x8000_0000
        );
        assert_eq!(
            f64::from_bits(cvt(F64, F64, mode_i(IntRounding::Rni), 2.5f64.to_bits())),
            2.0
        );
        assert_eq!(
            cvt(F32, F32, mode_i(IntRounding::Rpi), 0x7f80_0000),
            0x7f80_0000
        );
        let relu = CvtMode {
            relu: true,
            ..mode_f(FloatRounding::Rn)
        };
        assert_eq!(cvt(F16, F32, relu, (-3.0f32).to_bits() as u64), 0);
        assert_eq!(cvt(BF16, F32, relu, 0x7fc0_0000), 0x7fff);
        let satfinite = CvtMode {
            satfinite: true,
            ..mode_f(FloatRounding::Rn)
        };
        assert_eq!(cvt(F16, F32, satfinite, 1e6f32.to_bits() as u64), 0x7bff);
    }

    #[test]
    fn f32_to_f16_all_modes_bracket_the_source() {
        let mut s = 77u64;
        for _ in 0..200_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let x = f32::from_bits(s as u32);
            if !x.is_finite() {
                continue;
            }
            let get = |r| {
                half::f16::from_bits(cvt(F16, F32, mode_f(r), x.to_bits() as u64) as u16).to_f64()
            };
            let (lo, hi, rn) = (
                get(FloatRounding::Rm),
                get(FloatRounding::Rp),
                get(FloatRounding::Rn),
            );
            assert!(lo <= x as f64 && x as f64 <= hi, "{x:e}");
            assert!(rn == lo || rn == hi);
            assert_eq!(rn, half::f16::from_f32(x).to_f64());
            // From f64 (more bits than an f32 can carry): nearest of the two
            // directed results, ties to the even pattern.
            let y = x as f64 * 1.000_000_1;
            let get = |r| cvt(F16, F64, mode_f(r), y.to_bits());
            let (lo_b, hi_b, rn_b) = (
                get(FloatRounding::Rm),
                get(FloatRounding::Rp),
                get(FloatRounding::Rn),
            );
            let val = |b: u64| half::f16::from_bits(b as u16).to_f64();
            let (dl, dh) = (y - val(lo_b), val(hi_b) - y);
            let expect = if dl < dh || (dl == dh && lo_b & 1 == 0) {
                lo_b
            } else {
                hi_b
            };
            if val(lo_b).is_finite() && val(hi_b).is_finite() {
                assert_eq!(rn_b, expect, "{y:e}");
            }
        }
    }

    #[test]
    fn packed_and_tf32() {
        let m = mode_f(FloatRounding::Rn);
        assert_eq!(
            cvt_pack_f32x2(F16x2, m, 1.0f32.to_bits() as u64, 2.0f32.to_bits() as u64),
            0x3c00_4000
        );
        assert_eq!(
            cvt_pack_f32x2(
                BF16x2,
                m,
                1.0f32.to_bits() as u64,
                (-2.0f32).to_bits() as u64
            ),
            0x3f80_c000
        );
        assert_eq!(cvt_rna_tf32(0x3f80_1000, false), 0x3f80_2000); // tie rounds away
        assert_eq!(cvt_rna_tf32(0xbf80_1000, false), 0xbf80_2000);
        assert_eq!(cvt_rna_tf32(0x3f80_0fff, false), 0x3f80_0000);
        assert_eq!(cvt_rna_tf32(0x7f7f_ffff, false), 0x7f80_0000);
        assert_eq!(cvt_rna_tf32(0x7f7f_ffff, true), 0x7f7f_e000);
        assert_eq!(cvt_rna_tf32(0x7fc0_0001, false), 0x7fff_ffff);
        assert_eq!(
            cvt_tf32(FloatRounding::Rn, false, false, 0x3f80_1000),
            0x3f80_0000
        ); // tie to even
        assert_eq!(
            cvt_tf32(FloatRounding::Rn, false, false, 0x3f80_3000),
            0x3f80_4000
        );
        assert_eq!(
            cvt_tf32(FloatRounding::Rz, false, false, 0x3f80_1fff),
            0x3f80_0000
        );
        assert_eq!(cvt_tf32(FloatRounding::Rn, true, false, 0xbf80_0000), 0);
        assert_eq!(
            cvt_tf32(FloatRounding::Rn, false, true, 0x7f7f_ffff),
            0x7f7f_e000
        );
        assert_eq!(
            cvt_tf32(FloatRounding::Rn, false, false, 0x7f7f_ffff),
            0x7f80_0000
        );
        // Every rn result equals rna except on exact ties.
        for bits in (0u32..0x7f80_0000).step_by(4099) {
            let a = bits as u64;
            if a & 0x1fff != 0x1000 {
                assert_eq!(
                    cvt_tf32(FloatRounding::Rn, false, false, a),
                    cvt_rna_tf32(a, false),
                    "{a:x}"
                );
            }
        }
    }

    #[test]
    fn fast_paths_agree_with_general_path() {
        let pairs = [
            (S64, S32),
            (U64, U32),
            (S64, U32),
            (U32, S64),
            (S32, U64),
            (F32, S32),
            (F32, U32),
            (F64, S32),
            (F64, U32),
            (S32, F32),
            (U32, F32),
            (S32, F64),
        ];
        let modes = [
            CvtMode::default(),
            mode_f(FloatRounding::Rn),
            mode_f(FloatRounding::Rz),
            mode_i(IntRounding::Rzi),
            mode_i(IntRounding::Rni),
            mode_i(IntRounding::Rmi),
        ];
        let mut s = 99u64;
        for _ in 0..20_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let inputs = [
                s,
                s & 0xffff_ffff,
                0x7fc0_0000,
                0x4f00_0000,
                0xcf00_0001,
                0x3f00_0000,
                0x4040_0000,
                0xbfc0_0000,
                f64::NAN.to_bits(),
                2.5f64.to_bits(),
            ];
            for &(dst, src) in &pairs {
                for &mode in &modes {
                    if validate(dst, src, mode).is_err() {
                        continue;
                    }
                    for &a in &inputs {
                        let a = a & src.mask();
                        assert_eq!(
                            cvt(dst, src, mode, a),
                            cvt_general(dst, src, mode, a),
                            "{dst:?} {src:?} {mode:?} {a:x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn results_widen_to_wider_registers() {
        let r = cvt(
            S16,
            F32,
            mode_i(IntRounding::Rni),
            (-2.0f32).to_bits() as u64,
        );
        assert_eq!(r, 0xfffe);
        assert_eq!(widen_to_register(S16, r, 32), 0xffff_fffe);
        assert_eq!(widen_to_register(U16, r, 32), 0xfffe);
        assert_eq!(widen_to_register(S8, 0x80, 64), 0xffff_ffff_ffff_ff80);
        assert_eq!(widen_to_register(F16, 0xbc00, 32), 0xbc00);
    }

    #[test]
    fn validation_rejects_undefined_combinations() {
        assert!(validate(S32, F32, CvtMode::default()).is_err());
        assert!(validate(S32, F32, mode_i(IntRounding::Rzi)).is_ok());
        assert!(validate(F32, F64, CvtMode::default()).is_err());
        assert!(validate(F64, F32, CvtMode::default()).is_ok());
        assert!(validate(F32, S32, mode_i(IntRounding::Rni)).is_err());
        assert!(validate(F16x2, F32, CvtMode::default()).is_err());
        assert!(validate(S32, S8, CvtMode::default()).is_ok());
        let err = validate(S32, F32, CvtMode::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cvt.s32.f32: a float-to-integer conversion needs .rni, .rzi, .rmi or .rpi"
        );
    }
}
