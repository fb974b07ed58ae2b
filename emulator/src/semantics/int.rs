//! Integer arithmetic: add/sub (with saturation and carry chains), the
//! `mul`/`mad` families, `mul24`/`mad24`, `div`/`rem`, `abs`, `neg`, `min`,
//! `max`, `sad`.
//!
//! Operands hold the value in their low [`ScalarType::bits`]; results are
//! masked (zero-extended) to the destination width, so a `.s16` result
//! `-1` reads `0xffff`. Types are assumed validated by the decoder: any
//! integer or `.bN` type is accepted, and `.bN` behaves as unsigned.

use super::types::ScalarType;

/// Signed interpretation of the low bits of `value`.
#[inline]
fn signed(ty: ScalarType, value: u64) -> i64 {
    let shift = 64 - ty.bits().min(64);
    ((value << shift) as i64) >> shift
}

#[inline]
fn unsigned(ty: ScalarType, value: u64) -> u64 {
    value & ty.mask()
}

/// `a + b`, wrapping at the type width.
#[inline]
pub fn add(ty: ScalarType, a: u64, b: u64) -> u64 {
    a.wrapping_add(b) & ty.mask()
}

/// `a - b`, wrapping at the type width.
#[inline]
pub fn sub(ty: ScalarType, a: u64, b: u64) -> u64 {
    a.wrapping_sub(b) & ty.mask()
}

/// `add.sat.s32`: clamps to `[i32::MIN, i32::MAX]`.
#[inline]
pub fn add_sat_s32(a: u64, b: u64) -> u64 {
    (a as u32 as i32).saturating_add(b as u32 as i32) as u32 as u64
}

/// `sub.sat.s32`: clamps to `[i32::MIN, i32::MAX]`.
#[inline]
pub fn sub_sat_s32(a: u64, b: u64) -> u64 {
    (a as u32 as i32).saturating_sub(b as u32 as i32) as u32 as u64
}

/// `add.cc`: `(a + b, carry out)`.
#[inline]
pub fn add_cc(ty: ScalarType, a: u64, b: u64) -> (u64, bool) {
    addc(ty, a, b, false)
}

/// `addc{.cc}`: `a + b + carry_in`, with carry out of the type width.
#[inline]
pub fn addc(ty: ScalarType, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let (a, b) = (unsigned(ty, a), unsigned(ty, b));
    let wide = a as u128 + b as u128 + carry_in as u128;
    let bits = ty.bits().min(64);
    ((wide as u64) & ty.mask(), (wide >> bits) & 1 == 1)
}

/// `sub.cc`: `(a - b, carry out)`. The hardware subtracts by adding the
/// complement, `a + !b + 1`, and `CC.CF` is that sum's carry: set when no
/// borrow occurred (an `addc` after `sub.cc` of a smaller minuend reads 0).
#[inline]
pub fn sub_cc(ty: ScalarType, a: u64, b: u64) -> (u64, bool) {
    subc(ty, a, b, true)
}

/// `subc{.cc}`: `a + !b + CC.CF`, i.e. `a - b - (1 - CC.CF)`, with its carry out.
#[inline]
pub fn subc(ty: ScalarType, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let wide = unsigned(ty, a) as u128 + (!unsigned(ty, b) & ty.mask()) as u128 + carry_in as u128;
    let bits = ty.bits().min(64);
    ((wide as u64) & ty.mask(), (wide >> bits) & 1 == 1)
}

/// Full product of the two operands as a 128-bit two's-complement value.
#[inline]
fn full_product(ty: ScalarType, a: u64, b: u64) -> u128 {
    if ty.is_signed_int() {
        (signed(ty, a) as i128 * signed(ty, b) as i128) as u128
    } else {
        unsigned(ty, a) as u128 * unsigned(ty, b) as u128
    }
}

/// `mul.lo`: low half of the product.
#[inline]
pub fn mul_lo(ty: ScalarType, a: u64, b: u64) -> u64 {
    a.wrapping_mul(b) & ty.mask()
}

/// `mul.hi`: high half of the double-width product.
#[inline]
pub fn mul_hi(ty: ScalarType, a: u64, b: u64) -> u64 {
    let bits = ty.bits().min(64);
    ((full_product(ty, a, b) >> bits) as u64) & ty.mask()
}

/// `mul.wide`: the double-width product (`.u16`/`.s16` → 32 bits,
/// `.u32`/`.s32` → 64 bits). Returns `None` for 64-bit types, which have no
/// wide form.
#[inline]
pub fn mul_wide(ty: ScalarType, a: u64, b: u64) -> Option<u64> {
    if ty.bits() > 32 {
        return None;
    }
    let mask = if ty.bits() == 32 {
        u64::MAX
    } else {
        (1u64 << (2 * ty.bits())) - 1
    };
    Some(full_product(ty, a, b) as u64 & mask)
}

/// `mad.lo`: `lo(a * b) + c`.
#[inline]
pub fn mad_lo(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    a.wrapping_mul(b).wrapping_add(c) & ty.mask()
}

/// `mad.hi`: `hi(a * b) + c`.
#[inline]
pub fn mad_hi(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    mul_hi(ty, a, b).wrapping_add(c) & ty.mask()
}

/// `mad.hi.sat.s32`: `hi(a * b) + c` clamped to the `s32` range.
#[inline]
pub fn mad_hi_sat_s32(a: u64, b: u64, c: u64) -> u64 {
    let hi = (a as u32 as i32 as i64 * b as u32 as i32 as i64) >> 32;
    let sum = hi + (c as u32 as i32 as i64);
    sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32 as u64
}

/// `mad{.lo,.hi}.cc` / `madc{.lo,.hi}{.cc}` (`.u32`/`.s32`/`.u64`/`.s64`):
/// `lo/hi(a * b) + c + carry_in`, with the carry out of the type width —
/// the building block of multi-word multiplication.
#[inline]
pub fn mad_cc(ty: ScalarType, hi: bool, a: u64, b: u64, c: u64, carry_in: bool) -> (u64, bool) {
    let product = if hi {
        mul_hi(ty, a, b)
    } else {
        mul_lo(ty, a, b)
    };
    addc(ty, product, c, carry_in)
}

/// `mad.wide`: `wide(a * b) + c` where `c` has the double width. `None` for 64-bit types.
#[inline]
pub fn mad_wide(ty: ScalarType, a: u64, b: u64, c: u64) -> Option<u64> {
    let product = mul_wide(ty, a, b)?;
    let mask = if ty.bits() == 32 {
        u64::MAX
    } else {
        (1u64 << (2 * ty.bits())) - 1
    };
    Some(product.wrapping_add(c) & mask)
}

/// The 48-bit product of the low 24 bits of each operand (sign-extended from
/// bit 23 for `.s32`).
#[inline]
fn product24(ty: ScalarType, a: u64, b: u64) -> i64 {
    let ext = |v: u64| {
        if ty.is_signed_int() {
            ((v << 40) as i64) >> 40
        } else {
            (v & 0xff_ffff) as i64
        }
    };
    ext(a) * ext(b)
}

/// `mul24.lo`: low 32 bits of the 48-bit product.
#[inline]
pub fn mul24_lo(ty: ScalarType, a: u64, b: u64) -> u64 {
    product24(ty, a, b) as u64 & 0xffff_ffff
}

/// `mul24.hi`: bits 47..16 of the 48-bit product.
#[inline]
pub fn mul24_hi(ty: ScalarType, a: u64, b: u64) -> u64 {
    (product24(ty, a, b) >> 16) as u64 & 0xffff_ffff
}

/// `mad24.lo`: `mul24.lo(a, b) + c`.
#[inline]
pub fn mad24_lo(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    mul24_lo(ty, a, b).wrapping_add(c) & 0xffff_ffff
}

/// `mad24.hi`: `mul24.hi(a, b) + c`.
#[inline]
pub fn mad24_hi(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    mul24_hi(ty, a, b).wrapping_add(c) & 0xffff_ffff
}

/// `div`. PTX leaves division by zero unspecified; like the hardware's
/// unsigned division sequence this returns all ones (`0xffffffff` for
/// `.u32`), and for signed types also all ones (`-1`). `MIN / -1` wraps to
/// `MIN`.
#[inline]
pub fn div(ty: ScalarType, a: u64, b: u64) -> u64 {
    if ty.is_signed_int() {
        let (x, y) = (signed(ty, a), signed(ty, b));
        if y == 0 {
            return ty.mask();
        }
        // Only MIN / -1 overflows, and wrapping yields MIN as the hardware does.
        x.wrapping_div(y) as u64 & ty.mask()
    } else {
        let (x, y) = (unsigned(ty, a), unsigned(ty, b));
        x.checked_div(y).unwrap_or(ty.mask())
    }
}

/// `rem`: remainder with the sign of the dividend. By zero it returns the
/// dividend (what the hardware sequence yields); `MIN rem -1` is `0`.
#[inline]
pub fn rem(ty: ScalarType, a: u64, b: u64) -> u64 {
    if ty.is_signed_int() {
        let (x, y) = (signed(ty, a), signed(ty, b));
        if y == 0 {
            return a & ty.mask();
        }
        x.wrapping_rem(y) as u64 & ty.mask()
    } else {
        let (x, y) = (unsigned(ty, a), unsigned(ty, b));
        x.checked_rem(y).unwrap_or(x)
    }
}

/// `abs` (signed types): `abs(MIN)` is `MIN`.
#[inline]
pub fn abs(ty: ScalarType, a: u64) -> u64 {
    signed(ty, a).wrapping_abs() as u64 & ty.mask()
}

/// `neg`: two's-complement negation.
#[inline]
pub fn neg(ty: ScalarType, a: u64) -> u64 {
    a.wrapping_neg() & ty.mask()
}

/// `min`, signed or unsigned by type.
#[inline]
pub fn min(ty: ScalarType, a: u64, b: u64) -> u64 {
    if ty.is_signed_int() {
        signed(ty, a).min(signed(ty, b)) as u64 & ty.mask()
    } else {
        unsigned(ty, a).min(unsigned(ty, b))
    }
}

/// `max`, signed or unsigned by type.
#[inline]
pub fn max(ty: ScalarType, a: u64, b: u64) -> u64 {
    if ty.is_signed_int() {
        signed(ty, a).max(signed(ty, b)) as u64 & ty.mask()
    } else {
        unsigned(ty, a).max(unsigned(ty, b))
    }
}

/// `.relu` on a signed result: negative values become zero.
#[inline]
pub fn relu(ty: ScalarType, a: u64) -> u64 {
    if signed(ty, a) < 0 { 0 } else { a & ty.mask() }
}

/// `min`/`max` over packed `.u16x2`/`.s16x2`: applies `op` to each 16-bit half.
#[inline]
pub fn packed16(signed_halves: bool, a: u64, b: u64, op: fn(ScalarType, u64, u64) -> u64) -> u64 {
    let ty = if signed_halves {
        ScalarType::S16
    } else {
        ScalarType::U16
    };
    let lo = op(ty, a & 0xffff, b & 0xffff);
    let hi = op(ty, (a >> 16) & 0xffff, (b >> 16) & 0xffff);
    (hi << 16) | lo
}

/// `sad`: `c + |a - b|`.
#[inline]
pub fn sad(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    let diff = if ty.is_signed_int() {
        let (x, y) = (signed(ty, a), signed(ty, b));
        x.abs_diff(y)
    } else {
        unsigned(ty, a).abs_diff(unsigned(ty, b))
    };
    c.wrapping_add(diff) & ty.mask()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    const EDGES32: [u32; 10] = [
        0,
        1,
        2,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_ffff,
        0xffff_fffe,
        12345,
        0xdead_beef,
    ];

    #[test]
    fn add_sub_wrap_and_saturate() {
        for &a in &EDGES32 {
            for &b in &EDGES32 {
                let (x, y) = (a as u64, b as u64);
                assert_eq!(add(U32, x, y), a.wrapping_add(b) as u64);
                assert_eq!(sub(S32, x, y), a.wrapping_sub(b) as u64);
                assert_eq!(
                    add_sat_s32(x, y) as u32 as i32,
                    (a as i32).saturating_add(b as i32)
                );
                assert_eq!(
                    sub_sat_s32(x, y) as u32 as i32,
                    (a as i32).saturating_sub(b as i32)
                );
                assert_eq!(add(S16, x, y), (a as u16).wrapping_add(b as u16) as u64);
            }
        }
    }

    #[test]
    fn carry_chain_builds_64_bit_arithmetic() {
        let values = [
            0u64,
            1,
            u32::MAX as u64,
            1 << 32,
            u64::MAX,
            0x1234_5678_9abc_def0,
            0x8000_0000_0000_0000,
        ];
        for &a in &values {
            for &b in &values {
                let (lo, c) = add_cc(U32, a & 0xffff_ffff, b & 0xffff_ffff);
                let (hi, _) = addc(U32, a >> 32, b >> 32, c);
                assert_eq!(hi << 32 | lo, a.wrapping_add(b));
                let (lo, carry) = sub_cc(U32, a & 0xffff_ffff, b & 0xffff_ffff);
                let (hi, _) = subc(U32, a >> 32, b >> 32, carry);
                assert_eq!(hi << 32 | lo, a.wrapping_sub(b));
            }
        }
        assert_eq!(add_cc(U64, u64::MAX, 1), (0, true));
        // A borrow leaves the carry clear; none leaves it set.
        assert_eq!(sub_cc(U64, 0, 1), (u64::MAX, false));
        assert_eq!(sub_cc(U32, 5, 5), (0, true));
        assert_eq!(sub_cc(U32, 0x627a_df75, 0x864c_cef5), (0xdc2e_1080, false));
    }

    #[test]
    fn multiply_families() {
        for &a in &EDGES32 {
            for &b in &EDGES32 {
                let (x, y) = (a as u64, b as u64);
                assert_eq!(mul_lo(U32, x, y), a.wrapping_mul(b) as u64);
                assert_eq!(mul_hi(U32, x, y), (a as u64 * b as u64) >> 32);
                assert_eq!(
                    mul_hi(S32, x, y),
                    ((a as i32 as i64 * b as i32 as i64) >> 32) as u32 as u64
                );
                assert_eq!(
                    mul_wide(S32, x, y),
                    Some((a as i32 as i64 * b as i32 as i64) as u64)
                );
                assert_eq!(mul_wide(U32, x, y), Some(a as u64 * b as u64));
                assert_eq!(
                    mul_wide(S16, x, y),
                    Some((a as i16 as i32 * b as i16 as i32) as u32 as u64)
                );
                assert_eq!(
                    mad_hi_sat_s32(x, y, 0x7fff_ffff) as u32 as i32,
                    (((a as i32 as i64 * b as i32 as i64) >> 32) + 0x7fff_ffff).min(i32::MAX as i64)
                        as i32
                );
                assert_eq!(
                    mad_wide(U32, x, y, 5),
                    Some((a as u64 * b as u64).wrapping_add(5))
                );
            }
        }
        assert_eq!(mul_wide(U64, 1, 1), None);
        let big = 0xffff_ffff_ffff_fffe_u64;
        assert_eq!(
            mul_hi(U64, big, big),
            ((big as u128 * big as u128) >> 64) as u64
        );
        assert_eq!(mul_hi(S64, big, 3), u64::MAX); // -2 * 3 = -6: high half all ones
    }

    #[test]
    fn mad_carry_chain_multiplies_64_by_32_bits() {
        // (x1:x0) * y + (c1:c0) with 32-bit limbs equals the 128-bit reference.
        let values = [
            0u64,
            1,
            0xffff_ffff,
            0xffff_ffff_ffff_ffff,
            0x1234_5678_9abc_def0,
        ];
        for &x in &values {
            for &y in &[0u64, 1, 0xffff_ffff, 0x8765_4321] {
                let (x0, x1) = (x & 0xffff_ffff, x >> 32);
                let (lo0, c) = mad_cc(U32, false, x0, y, 0, false);
                let (hi0, c2) = mad_cc(U32, true, x0, y, 0, false);
                assert!(!c && !c2);
                let (lo1, c3) = mad_cc(U32, false, x1, y, hi0, false);
                let (top, _) = mad_cc(U32, true, x1, y, 0, c3);
                let got = (top as u128) << 64 | (lo1 as u128) << 32 | lo0 as u128;
                assert_eq!(got, x as u128 * y as u128, "{x:x} * {y:x}");
            }
        }
    }

    #[test]
    fn mul24_uses_low_24_bits() {
        assert_eq!(mul24_lo(U32, 0xff00_0003, 0x0100_0005), 15);
        assert_eq!(mul24_lo(S32, 0x00ff_ffff, 2), (-2i32) as u32 as u64); // 0xffffff is -1 in 24 bits
        assert_eq!(
            mul24_hi(U32, 0xff_ffff, 0xff_ffff),
            ((0xff_ffffu64 * 0xff_ffff) >> 16) & 0xffff_ffff
        );
        assert_eq!(mad24_lo(U32, 2, 3, 4), 10);
    }

    #[test]
    fn division_edge_cases() {
        assert_eq!(div(U32, 7, 0), 0xffff_ffff);
        assert_eq!(rem(U32, 7, 0), 7);
        assert_eq!(div(S32, 0x8000_0000, 0xffff_ffff), 0x8000_0000);
        assert_eq!(rem(S32, 0x8000_0000, 0xffff_ffff), 0);
        assert_eq!(div(S32, (-7i32) as u32 as u64, 2), (-3i32) as u32 as u64);
        assert_eq!(rem(S32, (-7i32) as u32 as u64, 2), (-1i32) as u32 as u64);
        assert_eq!(div(U64, u64::MAX, 2), u64::MAX / 2);
        assert_eq!(div(S64, i64::MIN as u64, u64::MAX), i64::MIN as u64);
        assert_eq!(div(S16, 0x8000, 0xffff), 0x8000);
    }

    #[test]
    fn abs_neg_min_max_sad() {
        assert_eq!(abs(S32, 0x8000_0000), 0x8000_0000);
        assert_eq!(abs(S32, 0xffff_fffb), 5);
        assert_eq!(neg(S32, 5), 0xffff_fffb);
        assert_eq!(min(S32, 0xffff_ffff, 1), 0xffff_ffff);
        assert_eq!(min(U32, 0xffff_ffff, 1), 1);
        assert_eq!(max(S16, 0x8000, 0x7fff), 0x7fff);
        assert_eq!(relu(S32, 0x8000_0000), 0);
        assert_eq!(sad(S32, (-3i32) as u32 as u64, 4, 10), 17);
        assert_eq!(sad(U32, 3, 4, 10), 11);
        assert_eq!(packed16(true, 0x8000_0001, 0x0001_8000, min), 0x8000_8000);
        assert_eq!(packed16(false, 0x8000_0001, 0x0001_8000, min), 0x0001_0001);
    }
}
