//! Bit manipulation: logic ops, `lop3`, shifts (`shl`, `shr`, `shf`), `popc`,
//! `clz`, `bfind`, `brev`, `bfe`, `bfi`, `fns`, `prmt`, `dp4a`/`dp2a`.

use super::types::ScalarType;

/// Width in bits of `ty`, at most 64 (`.b128` is only moved, never computed on).
#[inline]
fn width(ty: ScalarType) -> u32 {
    ty.bits().min(64)
}

#[inline]
pub fn and(a: u64, b: u64) -> u64 {
    a & b
}

#[inline]
pub fn or(a: u64, b: u64) -> u64 {
    a | b
}

#[inline]
pub fn xor(a: u64, b: u64) -> u64 {
    a ^ b
}

/// `not`: bitwise complement within the type width (for `.pred`, logical not).
#[inline]
pub fn not(ty: ScalarType, a: u64) -> u64 {
    !a & ty.mask()
}

/// `cnot`: `1` if `a` is zero, else `0`.
#[inline]
pub fn cnot(ty: ScalarType, a: u64) -> u64 {
    (a & ty.mask() == 0) as u64
}

/// `lop3.b32`: the 3-input function whose truth table is `imm_lut`
/// (bit `(a<<2)|(b<<1)|c` of the table, i.e. `F(0xF0, 0xCC, 0xAA) == imm_lut`).
#[inline]
pub fn lop3(a: u64, b: u64, c: u64, imm_lut: u8) -> u64 {
    // Sum of the minterms the table selects, without branches: minterm i
    // covers the bit positions where (a, b, c) spell i in binary.
    let lut = imm_lut as u64;
    let on = |i: u32| 0u64.wrapping_sub((lut >> i) & 1);
    let (na, nb, nc) = (!a, !b, !c);
    let r = (on(0) & na & nb & nc)
        | (on(1) & na & nb & c)
        | (on(2) & na & b & nc)
        | (on(3) & na & b & c)
        | (on(4) & a & nb & nc)
        | (on(5) & a & nb & c)
        | (on(6) & a & b & nc)
        | (on(7) & a & b & c);
    r & 0xffff_ffff
}

/// `shl`: shift amounts of the width or more give zero.
#[inline]
pub fn shl(ty: ScalarType, a: u64, amount: u32) -> u64 {
    if amount >= width(ty) {
        0
    } else {
        (a << amount) & ty.mask()
    }
}

/// `shr`: arithmetic for signed types, logical otherwise; amounts are clamped
/// to the width (a signed value shifted that far is all sign bits).
#[inline]
pub fn shr(ty: ScalarType, a: u64, amount: u32) -> u64 {
    let w = width(ty);
    let amount = amount.min(w);
    if ty.is_signed_int() {
        let v = ty.extend(a) as i64;
        (v >> amount.min(63)) as u64 & ty.mask()
    } else if amount >= w {
        0
    } else {
        (a & ty.mask()) >> amount
    }
}

/// `shf.l.{wrap,clamp}.b32`: the upper 32 bits of `{b, a} << n`.
#[inline]
pub fn shf_l(a: u64, b: u64, amount: u32, clamp: bool) -> u64 {
    let n = if clamp { amount.min(32) } else { amount & 31 };
    let wide = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    ((wide << n) >> 32) & 0xffff_ffff
}

/// `shf.r.{wrap,clamp}.b32`: the lower 32 bits of `{b, a} >> n`.
#[inline]
pub fn shf_r(a: u64, b: u64, amount: u32, clamp: bool) -> u64 {
    let n = if clamp { amount.min(32) } else { amount & 31 };
    let wide = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    (wide >> n) & 0xffff_ffff
}

/// `bmsk.{clamp,wrap}.b32 d, a, b`: a mask of `b` ones starting at bit `a`
/// (bits past 31 are dropped). `.wrap` takes both operands modulo 32;
/// `.clamp` limits them to 32.
#[inline]
pub fn bmsk(a: u32, b: u32, clamp: bool) -> u64 {
    let (pos, len) = if clamp {
        (a.min(32), b.min(32))
    } else {
        (a & 31, b & 31)
    };
    let ones = if len >= 32 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    if pos >= 32 {
        0
    } else {
        (ones << pos) & 0xffff_ffff
    }
}

/// `szext.{clamp,wrap}.{s32,u32} d, a, b`: sign- (`.s32`) or zero-extends the
/// low `b` bits of `a`; `b == 0` gives 0. `.wrap` takes `b` modulo 32,
/// `.clamp` limits it to 32.
#[inline]
pub fn szext(signed: bool, a: u64, b: u32, clamp: bool) -> u64 {
    let len = if clamp { b.min(32) } else { b & 31 };
    if len == 0 {
        return 0;
    }
    let shift = 32 - len;
    let v = (a as u32) << shift;
    (if signed {
        ((v as i32) >> shift) as u32
    } else {
        v >> shift
    }) as u64
}

/// `popc`: number of set bits.
#[inline]
pub fn popc(ty: ScalarType, a: u64) -> u32 {
    (a & ty.mask()).count_ones()
}

/// `clz`: leading zeros within the type width.
#[inline]
pub fn clz(ty: ScalarType, a: u64) -> u32 {
    (a & ty.mask()).leading_zeros() - (64 - width(ty))
}

/// `bfind{.shiftamt}`: position of the most significant non-sign bit, or
/// `0xffffffff` when there is none.
#[inline]
pub fn bfind(ty: ScalarType, a: u64, shiftamt: bool) -> u32 {
    let w = width(ty);
    let mut v = a & ty.mask();
    if ty.is_signed_int() && v >> (w - 1) & 1 == 1 {
        v = !v & ty.mask();
    }
    if v == 0 {
        return u32::MAX;
    }
    let pos = 63 - v.leading_zeros();
    if shiftamt { w - 1 - pos } else { pos }
}

/// `brev`: reverses the bits within the type width.
#[inline]
pub fn brev(ty: ScalarType, a: u64) -> u64 {
    a.reverse_bits() >> (64 - width(ty))
}

/// `bfe`: extracts `len` bits at `pos` (both taken modulo 256), zero- or
/// sign-extended; a field past the msb is filled with the field's sign bit.
#[inline]
pub fn bfe(ty: ScalarType, a: u64, pos: u32, len: u32) -> u64 {
    let msb = width(ty) - 1;
    let (pos, len) = (pos & 0xff, len & 0xff);
    let a = a & ty.mask();
    let sbit = if !ty.is_signed_int() || len == 0 {
        0
    } else {
        a >> (pos + len - 1).min(msb) & 1
    };
    // Bits i < len with pos + i <= msb come from a; all others are sbit.
    let take = if pos > msb { 0 } else { len.min(msb + 1 - pos) };
    let field = if take == 0 {
        0
    } else {
        let field_mask = if take >= 64 {
            u64::MAX
        } else {
            (1u64 << take) - 1
        };
        (a >> pos) & field_mask
    };
    let fill = if sbit == 1 {
        if take >= 64 { 0 } else { !0u64 << take }
    } else {
        0
    };
    (field | fill) & ty.mask()
}

/// `bfi`: inserts the low `len` bits of `a` into `b` at `pos` (both modulo 256).
#[inline]
pub fn bfi(ty: ScalarType, a: u64, b: u64, pos: u32, len: u32) -> u64 {
    let msb = width(ty) - 1;
    let (pos, len) = (pos & 0xff, len & 0xff);
    if pos > msb || len == 0 {
        return b & ty.mask();
    }
    let take = len.min(msb + 1 - pos);
    let field_mask = if take >= 64 {
        u64::MAX
    } else {
        (1u64 << take) - 1
    } << pos;
    ((b & !field_mask) | ((a << pos) & field_mask)) & ty.mask()
}

/// `fns.b32`: position of the `offset`-th set bit of `mask` counting from
/// `base` (upwards for positive, downwards for negative offsets; offset 0
/// tests bit `base` itself), or `0xffffffff`. `base` above 31 is undefined in
/// PTX; here it finds nothing.
#[inline]
pub fn fns(mask: u32, base: u32, offset: i32) -> u32 {
    if base > 31 {
        return u32::MAX;
    }
    if offset == 0 {
        return if mask >> base & 1 == 1 {
            base
        } else {
            u32::MAX
        };
    }
    let mut remaining = offset.unsigned_abs();
    if offset > 0 {
        let mut m = mask & (u32::MAX << base);
        while m != 0 {
            remaining -= 1;
            if remaining == 0 {
                return m.trailing_zeros();
            }
            m &= m - 1;
        }
    } else {
        let mut m = mask & (u32::MAX >> (31 - base));
        while m != 0 {
            let top = 31 - m.leading_zeros();
            remaining -= 1;
            if remaining == 0 {
                return top;
            }
            m &= !(1 << top);
        }
    }
    u32::MAX
}

/// `prmt` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrmtMode {
    /// Four 4-bit selectors in `c[15:0]`, each with a sign-replicate bit.
    Generic,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

impl PrmtMode {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.strip_prefix('.').unwrap_or(text) {
            "f4e" => Self::F4e,
            "b4e" => Self::B4e,
            "rc8" => Self::Rc8,
            "ecl" => Self::Ecl,
            "ecr" => Self::Ecr,
            "rc16" => Self::Rc16,
            _ => return None,
        })
    }
}

/// Source byte for each destination byte (b0..b3), indexed by `c[1:0]`.
const PRMT_TABLE: [[[u8; 4]; 4]; 6] = [
    [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]], // f4e
    [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]], // b4e
    [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]], // rc8
    [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]], // ecl
    [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]], // ecr
    [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]], // rc16
];

/// `prmt.b32{.mode}`: picks four bytes out of `{b, a}`.
#[inline]
pub fn prmt(a: u64, b: u64, c: u64, mode: PrmtMode) -> u64 {
    let source = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    let byte = |i: u32| (source >> (8 * i)) & 0xff;
    let mut out = 0u64;
    match mode {
        PrmtMode::Generic => {
            for i in 0..4 {
                let sel = (c >> (4 * i)) as u32 & 0xf;
                let value = byte(sel & 7);
                let value = if sel & 8 != 0 {
                    if value & 0x80 != 0 { 0xff } else { 0 }
                } else {
                    value
                };
                out |= value << (8 * i);
            }
        }
        _ => {
            let table = match mode {
                PrmtMode::F4e => &PRMT_TABLE[0],
                PrmtMode::B4e => &PRMT_TABLE[1],
                PrmtMode::Rc8 => &PRMT_TABLE[2],
                PrmtMode::Ecl => &PRMT_TABLE[3],
                PrmtMode::Ecr => &PRMT_TABLE[4],
                _ => &PRMT_TABLE[5],
            };
            let row = &table[(c & 3) as usize];
            for (i, &sel) in row.iter().enumerate() {
                out |= byte(sel as u32) << (8 * i);
            }
        }
    }
    out
}

/// `dp4a.atype.btype`: `c + Σ a.byte[i] * b.byte[i]` (bytes sign-extended
/// when their operand type is signed), wrapping at 32 bits.
#[inline]
pub fn dp4a(a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let ext = |v: u64, i: u32, s: bool| {
        let byte = (v >> (8 * i)) as u8;
        if s { byte as i8 as i32 } else { byte as i32 }
    };
    let mut acc = c as u32 as i32;
    for i in 0..4 {
        acc = acc.wrapping_add(ext(a, i, a_signed).wrapping_mul(ext(b, i, b_signed)));
    }
    acc as u32 as u64
}

/// `dp2a.{lo,hi}.atype.btype`: `c + a.half[0] * b.byte[k] + a.half[1] * b.byte[k+1]`
/// with `k = 0` for `.lo` and `2` for `.hi`.
#[inline]
pub fn dp2a(hi: bool, a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let half = |i: u32| {
        let h = (a >> (16 * i)) as u16;
        if a_signed { h as i16 as i32 } else { h as i32 }
    };
    let byte = |i: u32| {
        let v = (b >> (8 * i)) as u8;
        if b_signed { v as i8 as i32 } else { v as i32 }
    };
    let k = if hi { 2 } else { 0 };
    let acc = (c as u32 as i32)
        .wrapping_add(half(0).wrapping_mul(byte(k)))
        .wrapping_add(half(1).wrapping_mul(byte(k + 1)));
    acc as u32 as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn lop3_matches_named_functions() {
        let (a, b, c) = (0xf0f0_1234u64, 0xcccc_5678u64, 0xaaaa_9abcu64);
        assert_eq!(lop3(a, b, c, 0x80), a & b & c);
        assert_eq!(lop3(a, b, c, 0xfe), a | b | c);
        assert_eq!(lop3(a, b, c, 0x96), a ^ b ^ c);
        assert_eq!(lop3(a, b, c, 0xf0), a);
        assert_eq!(lop3(a, b, c, 0xe8), (a & b) | (a & c) | (b & c)); // majority
        assert_eq!(lop3(a, b, c, 0xca), (a & b) | (!a & c) & 0xffff_ffff); // select
        // The lut is the function applied to the canonical patterns.
        for lut in 0..=255u8 {
            assert_eq!(lop3(0xf0, 0xcc, 0xaa, lut) & 0xff, lut as u64);
            // Bit-by-bit reference on arbitrary operands.
            let mut expect = 0;
            for bit in 0..32 {
                let index = (a >> bit & 1) << 2 | (b >> bit & 1) << 1 | (c >> bit & 1);
                expect |= ((lut as u64) >> index & 1) << bit;
            }
            assert_eq!(lop3(a, b, c, lut), expect, "lut {lut:#x}");
        }
    }

    #[test]
    fn shifts_clamp() {
        assert_eq!(shl(B32, 1, 31), 0x8000_0000);
        assert_eq!(shl(B32, 1, 32), 0);
        assert_eq!(shl(B64, 1, 63), 1 << 63);
        assert_eq!(shl(B16, 0xffff, 4), 0xfff0);
        assert_eq!(shr(S32, 0x8000_0000, 100), 0xffff_ffff);
        assert_eq!(shr(S32, 0x8000_0000, 4), 0xf800_0000);
        assert_eq!(shr(U32, 0x8000_0000, 32), 0);
        assert_eq!(shr(S64, 1 << 63, 64), u64::MAX);
        assert_eq!(shr(S16, 0x8000, 1), 0xc000);
        assert_eq!(shf_l(0x8000_0000, 0x1, 1, false), 0x3);
        assert_eq!(shf_l(0x8000_0000, 0x1, 33, false), 0x3);
        assert_eq!(shf_l(0x8000_0000, 0x1, 33, true), 0x8000_0000);
        assert_eq!(shf_r(0x1, 0x3, 1, false), 0x8000_0000);
        assert_eq!(shf_r(0x1, 0x3, 40, true), 0x3);
        assert_eq!(shf_r(0x1, 0x3, 0, false), 0x1);
    }

    #[test]
    fn counting() {
        assert_eq!(popc(B32, 0xffff_ffff_0000_000f), 4);
        assert_eq!(popc(B64, u64::MAX), 64);
        assert_eq!(clz(B32, 0), 32);
        assert_eq!(clz(B32, 1), 31);
        assert_eq!(clz(B64, 1), 63);
        assert_eq!(bfind(U32, 0, false), u32::MAX);
        assert_eq!(bfind(U32, 0x10, false), 4);
        assert_eq!(bfind(U32, 0x10, true), 27);
        assert_eq!(bfind(S32, 0xffff_ffff, false), u32::MAX);
        assert_eq!(bfind(S32, 0xffff_fff0, false), 3);
        assert_eq!(bfind(S64, 1 << 40, true), 23);
        assert_eq!(brev(B32, 1), 0x8000_0000);
        assert_eq!(brev(B64, 1), 1 << 63);
    }

    /// Bit-by-bit transcription of the PTX pseudocode for bfe and bfi.
    fn bfe_reference(ty: ScalarType, a: u64, b: u32, c: u32) -> u64 {
        let msb = width(ty) - 1;
        let (pos, len) = (b & 0xff, c & 0xff);
        let sbit = if !ty.is_signed_int() || len == 0 {
            0
        } else {
            a >> (pos + len - 1).min(msb) & 1
        };
        let mut d = 0;
        for i in 0..=msb {
            let bit = if i < len && pos + i <= msb {
                a >> (pos + i) & 1
            } else {
                sbit
            };
            d |= bit << i;
        }
        d
    }

    fn bfi_reference(ty: ScalarType, a: u64, b: u64, c: u32, d: u32) -> u64 {
        let msb = width(ty) - 1;
        let (pos, len) = (c & 0xff, d & 0xff);
        let mut f = b & ty.mask();
        let mut i = 0;
        while i < len && pos + i <= msb {
            f = (f & !(1 << (pos + i))) | ((a >> i & 1) << (pos + i));
            i += 1;
        }
        f
    }

    #[test]
    fn bfe_bfi_match_pseudocode() {
        let values = [
            0u64,
            u64::MAX,
            0x8000_0000,
            0xdead_beef_0bad_f00d,
            0x7fff_ffff,
            0x1234_5678,
        ];
        let positions = [
            0u32, 1, 7, 15, 16, 31, 32, 33, 63, 64, 100, 255, 256, 257, 0x1_0003,
        ];
        for ty in [U32, S32, U64, S64] {
            for &a in &values {
                let a = a & ty.mask();
                for &pos in &positions {
                    for &len in &positions {
                        assert_eq!(
                            bfe(ty, a, pos, len),
                            bfe_reference(ty, a, pos, len),
                            "{ty:?} {a:x} {pos} {len}"
                        );
                        let bty = if ty.bits() == 32 { B32 } else { B64 };
                        assert_eq!(
                            bfi(bty, a, 0x5555_5555_5555_5555, pos, len),
                            bfi_reference(bty, a, 0x5555_5555_5555_5555, pos, len)
                        );
                    }
                }
            }
        }
    }

    fn fns_reference(mask: u32, base: u32, offset: i32) -> u32 {
        if offset == 0 {
            return if mask >> base & 1 == 1 {
                base
            } else {
                u32::MAX
            };
        }
        let (mut pos, mut count, inc) = (
            base as i32,
            offset.unsigned_abs() - 1,
            if offset > 0 { 1 } else { -1 },
        );
        while (0..32).contains(&pos) {
            if mask >> pos & 1 == 1 {
                if count == 0 {
                    return pos as u32;
                }
                count -= 1;
            }
            pos += inc;
        }
        u32::MAX
    }

    #[test]
    fn fns_matches_pseudocode_and_examples() {
        assert_eq!(fns(0xaaaa_aaaa, 3, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 3, -1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, 1), 3);
        assert_eq!(fns(0xaaaa_aaaa, 2, -1), 1);
        for mask in [0u32, 1, 0xaaaa_aaaa, 0x8000_0001, 0xffff_ffff, 0x0f0f_1234] {
            for base in 0..32 {
                for offset in -34..34 {
                    assert_eq!(
                        fns(mask, base, offset),
                        fns_reference(mask, base, offset),
                        "{mask:x} {base} {offset}"
                    );
                }
            }
        }
    }

    #[test]
    fn prmt_modes() {
        let (a, b) = (0x0302_0100u64, 0x0706_0504u64);
        assert_eq!(prmt(a, b, 0x7531, PrmtMode::Generic), 0x0705_0301);
        assert_eq!(prmt(0x0000_0080, 0, 0x4448, PrmtMode::Generic), 0x0000_00ff); // sign replicate
        assert_eq!(prmt(0x0000_0080, 0, 0x0008, PrmtMode::Generic), 0x8080_80ff);
        assert_eq!(prmt(a, b, 1, PrmtMode::F4e), 0x0403_0201);
        assert_eq!(prmt(a, b, 0, PrmtMode::B4e), 0x0506_0700);
        assert_eq!(prmt(a, b, 3, PrmtMode::B4e), 0x0001_0203);
        assert_eq!(prmt(a, b, 2, PrmtMode::Rc8), 0x0202_0202);
        assert_eq!(prmt(a, b, 1, PrmtMode::Ecl), 0x0302_0101);
        assert_eq!(prmt(a, b, 2, PrmtMode::Ecr), 0x0202_0100);
        assert_eq!(prmt(a, b, 1, PrmtMode::Rc16), 0x0302_0302);
        assert_eq!(prmt(a, b, 6, PrmtMode::Rc16), 0x0100_0100);
    }

    #[test]
    fn dot_products() {
        let a = 0xff02_0304u64; // bytes 4, 3, 2, -1 / 255
        let b = 0x0101_0101u64;
        assert_eq!(dp4a(false, false, a, b, 10), 10 + 4 + 3 + 2 + 255);
        assert_eq!(dp4a(true, false, a, b, 10), 10 + 4 + 3 + 2 - 1);
        assert_eq!(
            dp4a(true, true, a, 0xffff_ffff, 0),
            (-(4 + 3 + 2) + 1i32) as u32 as u64
        );
        let a2 = 0xffff_0002u64; // halves 2, -1
        let b2 = 0x0403_0201u64;
        assert_eq!(dp2a(false, true, false, a2, b2, 0), (2 - 2) as u64);
        assert_eq!(
            dp2a(true, true, false, a2, b2, 100),
            (100 + 2 * 3 - 4) as u64
        );
        assert_eq!(
            dp2a(true, false, false, a2, b2, 0),
            (2 * 3 + 0xffff * 4) as u64
        );
    }

    #[test]
    fn bmsk_and_szext() {
        assert_eq!(bmsk(4, 4, false), 0xf0);
        assert_eq!(bmsk(28, 8, false), 0xf000_0000);
        assert_eq!(bmsk(0, 32, true), 0xffff_ffff);
        assert_eq!(bmsk(0, 32, false), 0);
        assert_eq!(bmsk(33, 1, true), 0);
        assert_eq!(bmsk(33, 1, false), 0x2);
        assert_eq!(szext(true, 0xf, 4, false), 0xffff_ffff);
        assert_eq!(szext(false, 0xff, 4, false), 0xf);
        assert_eq!(szext(true, 0x8000_0000, 40, true), 0x8000_0000);
        assert_eq!(szext(true, 0x7, 0, true), 0);
        assert_eq!(szext(true, 0x7, 35, false), 0xffff_ffff); // 35 wraps to 3
    }

    #[test]
    fn logic() {
        assert_eq!(not(B32, 0), 0xffff_ffff);
        assert_eq!(not(Pred, 1), 0);
        assert_eq!(cnot(B32, 0), 1);
        assert_eq!(cnot(B32, 7), 0);
        assert_eq!(cnot(B16, 0x1_0000), 1);
    }
}
