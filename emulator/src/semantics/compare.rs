//! Comparisons (`setp`, `set`) and selection (`selp`, `slct`).
//!
//! Integer comparisons are signed or unsigned by type (`lo ls hi hs` always
//! unsigned; `.bN` compares as unsigned). Float comparisons follow IEEE:
//! `eq ne lt le gt ge` are ordered (false when either operand is NaN — note
//! `ne` too), `equ neu ltu leu gtu geu` are unordered (true when either is
//! NaN), `num` and `nan` test for NaN operands; `-0 == +0`. With `.ftz`,
//! subnormal operands compare as zero.

use super::float::format_of;
use super::types::{CmpOp, ScalarType};
use std::cmp::Ordering;

/// `setp.op.type` on scalar operands.
#[inline]
pub fn compare(op: CmpOp, ty: ScalarType, a: u64, b: u64) -> bool {
    compare_ftz(op, ty, false, a, b)
}

/// [`compare`] with `.ftz`.
#[inline]
pub fn compare_ftz(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    // Fast paths for the types kernels compare most.
    match ty {
        ScalarType::F32 if !ftz => {
            return float_predicate(
                op,
                f32::from_bits(a as u32).partial_cmp(&f32::from_bits(b as u32)),
            );
        }
        ScalarType::S32 if !matches!(op, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs) => {
            return int_predicate(op, (a as u32 as i32).cmp(&(b as u32 as i32)));
        }
        ScalarType::U32 | ScalarType::B32 | ScalarType::S32 => {
            return int_predicate(op, (a as u32).cmp(&(b as u32)));
        }
        _ => {}
    }
    if ty.is_float() {
        let fmt = format_of(ty);
        let (a, b) = (a & ty.mask(), b & ty.mask());
        let (a, b) = if ftz {
            (fmt.flush(a), fmt.flush(b))
        } else {
            (a, b)
        };
        let ordering = float_value(ty, a).partial_cmp(&float_value(ty, b));
        float_predicate(op, ordering)
    } else {
        let ordering =
            if ty.is_signed_int() && !matches!(op, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs) {
                (ty.extend(a) as i64).cmp(&(ty.extend(b) as i64))
            } else {
                (a & ty.mask()).cmp(&(b & ty.mask()))
            };
        int_predicate(op, ordering)
    }
}

/// `setp.op.f16x2`/`.bf16x2`: `(upper-half result, lower-half result)`.
/// `setp ... p|q` writes the lower halves' result to `p` and the upper
/// halves' to `q` (PTX ISA: `p = t[0]` from `a[0:15]`, `q = t[1]`).
#[inline]
pub fn compare_packed(op: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> (bool, bool) {
    let element = ty.element();
    let hi = compare_ftz(op, element, ftz, (a >> 16) & 0xffff, (b >> 16) & 0xffff);
    let lo = compare_ftz(op, element, ftz, a & 0xffff, b & 0xffff);
    (hi, lo)
}

#[inline]
fn float_value(ty: ScalarType, bits: u64) -> f64 {
    match ty.element() {
        ScalarType::F64 => f64::from_bits(bits),
        ScalarType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        ScalarType::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
        _ => f32::from_bits(bits as u32) as f64,
    }
}

#[inline]
fn float_predicate(op: CmpOp, ordering: Option<Ordering>) -> bool {
    use Ordering::*;
    match (op, ordering) {
        (CmpOp::Num, o) => o.is_some(),
        (CmpOp::Nan, o) => o.is_none(),
        (CmpOp::Equ | CmpOp::Neu | CmpOp::Ltu | CmpOp::Leu | CmpOp::Gtu | CmpOp::Geu, None) => true,
        (_, None) => false,
        (CmpOp::Eq | CmpOp::Equ, Some(o)) => o == Equal,
        (CmpOp::Ne | CmpOp::Neu, Some(o)) => o != Equal,
        (CmpOp::Lt | CmpOp::Ltu | CmpOp::Lo, Some(o)) => o == Less,
        (CmpOp::Le | CmpOp::Leu | CmpOp::Ls, Some(o)) => o != Greater,
        (CmpOp::Gt | CmpOp::Gtu | CmpOp::Hi, Some(o)) => o == Greater,
        (CmpOp::Ge | CmpOp::Geu | CmpOp::Hs, Some(o)) => o != Less,
    }
}

#[inline]
fn int_predicate(op: CmpOp, o: Ordering) -> bool {
    use Ordering::*;
    match op {
        CmpOp::Eq | CmpOp::Equ => o == Equal,
        CmpOp::Ne | CmpOp::Neu => o != Equal,
        CmpOp::Lt | CmpOp::Ltu | CmpOp::Lo => o == Less,
        CmpOp::Le | CmpOp::Leu | CmpOp::Ls => o != Greater,
        CmpOp::Gt | CmpOp::Gtu | CmpOp::Hi => o == Greater,
        CmpOp::Ge | CmpOp::Geu | CmpOp::Hs => o != Less,
        // Integers are never NaN.
        CmpOp::Num => true,
        CmpOp::Nan => false,
    }
}

/// `setp` boolean combination (`setp.op.bop.type p, a, b, c`): `cmp BOP c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

impl BoolOp {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.strip_prefix('.').unwrap_or(text) {
            "and" => Self::And,
            "or" => Self::Or,
            "xor" => Self::Xor,
            _ => return None,
        })
    }

    #[inline]
    pub fn apply(self, a: bool, b: bool) -> bool {
        match self {
            Self::And => a & b,
            Self::Or => a | b,
            Self::Xor => a ^ b,
        }
    }
}

/// The value `set.op.dtype` writes for a comparison result: all ones / zero
/// for integer types, `1.0` / `0.0` for `.f32`.
#[inline]
pub fn set_value(dtype: ScalarType, result: bool) -> u64 {
    match (dtype, result) {
        (_, false) => 0,
        (ScalarType::F32, true) => 1.0f32.to_bits() as u64,
        (ty, true) => ty.mask(),
    }
}

/// `selp`: `a` if `c`, else `b`.
#[inline]
pub fn selp(a: u64, b: u64, c: bool) -> u64 {
    if c { a } else { b }
}

/// `slct{.ftz}.dtype.ctype d, a, b, c`: `a` if `c >= 0`, else `b`. For a
/// `.f32` selector `-0` counts as `>= 0` and NaN selects `b`.
#[inline]
pub fn slct(ctype: ScalarType, ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let non_negative = if ctype == ScalarType::F32 {
        let c = c as u32;
        let c = if ftz && c & 0x7f80_0000 == 0 {
            c & 0x8000_0000
        } else {
            c
        };
        f32::from_bits(c) >= 0.0
    } else {
        (ctype.extend(c) as i64) >= 0
    };
    selp(a, b, non_negative)
}

#[cfg(test)]
mod tests {
    use super::*;
    use CmpOp::*;
    use ScalarType::*;

    const ALL: [CmpOp; 18] = [
        Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan,
    ];

    fn reference(op: CmpOp, x: f64, y: f64) -> bool {
        let unordered = x.is_nan() || y.is_nan();
        match op {
            Eq => x == y,
            Ne => !unordered && x != y,
            Lt | Lo => x < y,
            Le | Ls => x <= y,
            Gt | Hi => x > y,
            Ge | Hs => x >= y,
            Equ => unordered || x == y,
            Neu => unordered || x != y,
            Ltu => unordered || x < y,
            Leu => unordered || x <= y,
            Gtu => unordered || x > y,
            Geu => unordered || x >= y,
            Num => !unordered,
            Nan => unordered,
        }
    }

    #[test]
    fn float_comparisons_match_ieee_reference() {
        let values = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            1e-45,
            3.5,
        ];
        for &x in &values {
            for &y in &values {
                for op in ALL {
                    let got = compare(op, F32, x.to_bits() as u64, y.to_bits() as u64);
                    assert_eq!(got, reference(op, x as f64, y as f64), "{op:?} {x} {y}");
                    let got64 = compare(op, F64, (x as f64).to_bits(), (y as f64).to_bits());
                    assert_eq!(
                        got64,
                        reference(op, x as f64, y as f64),
                        "f64 {op:?} {x} {y}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_f16_pair_against_a_sample_matches_reference() {
        for a in (0..=0xffffu16).step_by(7) {
            for b in [0x0000u16, 0x8000, 0x3c00, 0x7c00, 0x7e00, 0x0001, 0xfbff] {
                let (x, y) = (
                    half::f16::from_bits(a).to_f64(),
                    half::f16::from_bits(b).to_f64(),
                );
                for op in ALL {
                    assert_eq!(
                        compare(op, F16, a as u64, b as u64),
                        reference(op, x, y),
                        "{op:?} {x} {y}"
                    );
                }
            }
        }
    }

    #[test]
    fn ftz_compares_subnormals_as_zero() {
        assert!(!compare(Eq, F32, 1, 0));
        assert!(compare_ftz(Eq, F32, true, 1, 0));
        assert!(compare_ftz(Eq, F32, true, 0x8000_0001, 0));
    }

    #[test]
    fn integer_comparisons() {
        let m1 = 0xffff_ffffu64;
        assert!(compare(Lt, S32, m1, 0));
        assert!(!compare(Lt, U32, m1, 0));
        assert!(compare(Hi, S32, m1, 0)); // hi is unsigned even on signed types
        assert!(compare(Ls, U32, 3, 3));
        assert!(compare(Ge, S64, 0, u64::MAX));
        assert!(compare(Lt, S16, 0x8000, 0x7fff));
        assert!(compare(Eq, B32, 0x1_0000_0005, 5)); // high garbage ignored
        assert!(compare(Num, S32, 0, 0));
        assert!(!compare(Nan, S32, 0, 0));
    }

    #[test]
    fn packed_selection_and_set() {
        let a = 0x3c00_4000u64; // hi 1.0, lo 2.0
        let b = 0x4000_3c00u64; // hi 2.0, lo 1.0
        assert_eq!(compare_packed(Lt, F16x2, false, a, b), (true, false));
        assert_eq!(set_value(U32, true), 0xffff_ffff);
        assert_eq!(set_value(F32, true), 0x3f80_0000);
        assert_eq!(set_value(S32, false), 0);
        assert_eq!(selp(1, 2, false), 2);
        assert_eq!(slct(S32, false, 1, 2, 0), 1);
        assert_eq!(slct(S32, false, 1, 2, 0xffff_ffff), 2);
        assert_eq!(slct(F32, false, 1, 2, 0x8000_0000), 1);
        assert_eq!(slct(F32, false, 1, 2, 0x7fc0_0000), 2);
        assert_eq!(slct(F32, false, 1, 2, 0x8000_0001), 2);
        assert_eq!(slct(F32, true, 1, 2, 0x8000_0001), 1);
        assert!(BoolOp::Xor.apply(true, false));
    }
}
