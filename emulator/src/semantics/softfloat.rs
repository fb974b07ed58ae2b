//! Exact IEEE-754 arithmetic with any rounding direction, for every PTX float format.
//!
//! The host FPU only rounds to nearest, so `.rz/.rm/.rp` (and the round-to-nearest
//! operations the host cannot do in one rounding, such as an `f16` fused
//! multiply-add) go through this small soft-float core. A finite operand is an
//! integer significand times a power of two; products are exact in `u128`,
//! sums, quotients and square roots keep more than 60 significant bits plus a
//! sticky bit, which is enough to round correctly to any format of at most 53
//! bits. NaN results are the format's canonical NaN (see [`FloatFormat::canonical_nan`]).

use super::types::FloatRounding;

/// Bit layout of a binary interchange format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FloatFormat {
    pub exp_bits: u32,
    pub man_bits: u32,
}

impl FloatFormat {
    pub const F16: Self = Self {
        exp_bits: 5,
        man_bits: 10,
    };
    pub const BF16: Self = Self {
        exp_bits: 8,
        man_bits: 7,
    };
    /// TensorFloat-32: an `.f32` with 10 mantissa bits.
    pub const TF32: Self = Self {
        exp_bits: 8,
        man_bits: 10,
    };
    pub const F32: Self = Self {
        exp_bits: 8,
        man_bits: 23,
    };
    /// The upper word of an `.f64` (1.11.20), used by the `.approx.ftz.f64` instructions.
    pub const F64_HIGH_WORD: Self = Self {
        exp_bits: 11,
        man_bits: 20,
    };
    pub const F64: Self = Self {
        exp_bits: 11,
        man_bits: 52,
    };

    #[inline]
    pub const fn total_bits(self) -> u32 {
        1 + self.exp_bits + self.man_bits
    }

    #[inline]
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }

    #[inline]
    const fn max_biased_exp(self) -> u64 {
        (1 << self.exp_bits) - 1
    }

    #[inline]
    pub const fn sign_mask(self) -> u64 {
        1 << (self.exp_bits + self.man_bits)
    }

    #[inline]
    pub const fn abs_mask(self) -> u64 {
        self.sign_mask() - 1
    }

    #[inline]
    pub const fn man_mask(self) -> u64 {
        (1 << self.man_bits) - 1
    }

    #[inline]
    pub const fn inf(self) -> u64 {
        self.max_biased_exp() << self.man_bits
    }

    /// The NaN NVIDIA hardware writes for an invalid operation: all exponent and
    /// mantissa bits set, sign clear (`0x7fffffff` for `.f32`, `0x7fff` for `.f16`).
    #[inline]
    pub const fn canonical_nan(self) -> u64 {
        self.abs_mask()
    }

    /// Largest finite magnitude.
    #[inline]
    pub const fn max_finite(self) -> u64 {
        self.inf() - 1
    }

    #[inline]
    pub const fn is_nan(self, bits: u64) -> bool {
        bits & self.abs_mask() > self.inf()
    }

    #[inline]
    pub const fn is_inf(self, bits: u64) -> bool {
        bits & self.abs_mask() == self.inf()
    }

    #[inline]
    pub const fn is_zero(self, bits: u64) -> bool {
        bits & self.abs_mask() == 0
    }

    /// Nonzero with a zero exponent field.
    #[inline]
    pub const fn is_subnormal(self, bits: u64) -> bool {
        let abs = bits & self.abs_mask();
        abs != 0 && abs >> self.man_bits == 0
    }

    #[inline]
    pub const fn is_negative(self, bits: u64) -> bool {
        bits & self.sign_mask() != 0
    }

    /// Replaces a subnormal by a zero of the same sign (`.ftz`).
    #[inline]
    pub const fn flush(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            bits & self.sign_mask()
        } else {
            bits
        }
    }

    /// Replaces any NaN by [`canonical_nan`](Self::canonical_nan).
    #[inline]
    pub const fn canonicalize(self, bits: u64) -> u64 {
        if self.is_nan(bits) {
            self.canonical_nan()
        } else {
            bits
        }
    }

    /// The overflowed result of a finite operation with the given sign.
    const fn overflow(self, negative: bool, mode: FloatRounding) -> u64 {
        let sign = if negative { self.sign_mask() } else { 0 };
        let to_inf = match mode {
            FloatRounding::Rn => true,
            FloatRounding::Rz => false,
            FloatRounding::Rp => !negative,
            FloatRounding::Rm => negative,
        };
        sign | if to_inf {
            self.inf()
        } else {
            self.max_finite()
        }
    }
}

/// A finite nonzero value `(-1)^negative * sig * 2^exp`.
#[derive(Debug, Clone, Copy)]
struct Finite {
    negative: bool,
    exp: i32,
    sig: u128,
}

enum Class {
    Nan,
    Inf(bool),
    Zero(bool),
    Finite(Finite),
}

#[inline]
fn classify(fmt: FloatFormat, bits: u64) -> Class {
    let negative = fmt.is_negative(bits);
    let biased = ((bits & fmt.abs_mask()) >> fmt.man_bits) as i32;
    let man = bits & fmt.man_mask();
    if biased as u64 == fmt.max_biased_exp() {
        return if man == 0 {
            Class::Inf(negative)
        } else {
            Class::Nan
        };
    }
    if biased == 0 && man == 0 {
        return Class::Zero(negative);
    }
    let (sig, e) = if biased == 0 {
        (man, 1)
    } else {
        (man | (1 << fmt.man_bits), biased)
    };
    Class::Finite(Finite {
        negative,
        exp: e - fmt.bias() - fmt.man_bits as i32,
        sig: sig as u128,
    })
}

/// Rounds `(-1)^negative * sig * 2^exp` (sig > 0; a set low bit may stand for
/// a discarded nonzero tail, which callers guarantee lies well below the
/// rounding position) to `fmt`.
fn round_pack(fmt: FloatFormat, negative: bool, exp: i32, sig: u128, mode: FloatRounding) -> u64 {
    debug_assert!(sig != 0);
    let msb = 127 - sig.leading_zeros() as i32;
    let top = exp + msb; // value in [2^top, 2^(top+1))
    let emin = 1 - fmt.bias();
    let lsb_exp = top.max(emin) - fmt.man_bits as i32;
    let shift = lsb_exp - exp;
    let sign = if negative { fmt.sign_mask() } else { 0 };
    let q: u128 = if shift <= 0 {
        // Exact: at most man_bits + 1 significant bits.
        sig << (-shift) as u32
    } else {
        let (q, above_half, at_half, inexact) = if shift > 128 {
            (0, false, false, true)
        } else if shift == 128 {
            let half = 1u128 << 127;
            (0, sig > half, sig == half, true)
        } else {
            let rem = sig & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            (sig >> shift, rem > half, rem == half, rem != 0)
        };
        let up = match mode {
            FloatRounding::Rn => above_half || (at_half && q & 1 == 1),
            FloatRounding::Rz => false,
            FloatRounding::Rp => inexact && !negative,
            FloatRounding::Rm => inexact && negative,
        };
        q + up as u128
    };
    let implicit = 1u128 << fmt.man_bits;
    if q < implicit {
        // Subnormal or zero: the exponent field is zero.
        return sign | q as u64;
    }
    let (q, lsb_exp) = if q >> (fmt.man_bits + 1) != 0 {
        (q >> 1, lsb_exp + 1)
    } else {
        (q, lsb_exp)
    };
    let biased = lsb_exp + fmt.man_bits as i32 + fmt.bias();
    if biased as i64 >= fmt.max_biased_exp() as i64 {
        return fmt.overflow(negative, mode);
    }
    sign | ((biased as u64) << fmt.man_bits) | (q as u64 & fmt.man_mask())
}

/// Shifts `sig` so its most significant bit sits at bit `target`, adjusting `exp`.
#[inline]
fn normalize_to(f: Finite, target: u32) -> Finite {
    let msb = 127 - f.sig.leading_zeros();
    if msb >= target {
        let shift = msb - target;
        let lost = f.sig & ((1u128 << shift) - 1) != 0;
        Finite {
            negative: f.negative,
            exp: f.exp + shift as i32,
            sig: (f.sig >> shift) | lost as u128,
        }
    } else {
        let shift = target - msb;
        Finite {
            negative: f.negative,
            exp: f.exp - shift as i32,
            sig: f.sig << shift,
        }
    }
}

/// Exact sum of two finite nonzero values, or `None` when it is exactly zero.
fn add_finite(a: Finite, b: Finite) -> Option<Finite> {
    // 120 significant bits leave 7 bits of headroom for the carry.
    let a = normalize_to(a, 120);
    let b = normalize_to(b, 120);
    let (big, small) = if a.exp >= b.exp { (a, b) } else { (b, a) };
    let diff = (big.exp - small.exp) as u32;
    let small_sig = if diff == 0 {
        small.sig
    } else if diff >= 127 {
        1 // only the sticky bit survives
    } else {
        (small.sig >> diff) | ((small.sig & ((1u128 << diff) - 1) != 0) as u128)
    };
    if big.negative == small.negative {
        Some(Finite {
            negative: big.negative,
            exp: big.exp,
            sig: big.sig + small_sig,
        })
    } else if big.sig >= small_sig {
        let sig = big.sig - small_sig;
        (sig != 0).then_some(Finite {
            negative: big.negative,
            exp: big.exp,
            sig,
        })
    } else {
        Some(Finite {
            negative: small.negative,
            exp: big.exp,
            sig: small_sig - big.sig,
        })
    }
}

/// The sign of an exact zero sum: `+0` except in round-down, or when both addends are `-0`.
#[inline]
fn zero_sum(fmt: FloatFormat, both_negative: bool, mode: FloatRounding) -> u64 {
    if both_negative || mode == FloatRounding::Rm {
        fmt.sign_mask()
    } else {
        0
    }
}

/// `a + b` rounded once.
pub fn add(fmt: FloatFormat, a: u64, b: u64, mode: FloatRounding) -> u64 {
    match (classify(fmt, a), classify(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf(x), Class::Inf(y)) if x != y => fmt.canonical_nan(),
        (Class::Inf(x), _) | (_, Class::Inf(x)) => inf_bits(fmt, x),
        (Class::Zero(x), Class::Zero(y)) => zero_sum(fmt, x && y, mode),
        (Class::Zero(_), Class::Finite(_)) => b & fmt.sign_mask() | (b & fmt.abs_mask()),
        (Class::Finite(_), Class::Zero(_)) => a,
        (Class::Finite(x), Class::Finite(y)) => match add_finite(x, y) {
            Some(s) => round_pack(fmt, s.negative, s.exp, s.sig, mode),
            None => zero_sum(fmt, false, mode),
        },
    }
}

/// `a - b` rounded once.
#[inline]
pub fn sub(fmt: FloatFormat, a: u64, b: u64, mode: FloatRounding) -> u64 {
    let neg_b = if fmt.is_nan(b) {
        b
    } else {
        b ^ fmt.sign_mask()
    };
    add(fmt, a, neg_b, mode)
}

#[inline]
fn inf_bits(fmt: FloatFormat, negative: bool) -> u64 {
    fmt.inf() | if negative { fmt.sign_mask() } else { 0 }
}

#[inline]
fn zero_bits(fmt: FloatFormat, negative: bool) -> u64 {
    if negative { fmt.sign_mask() } else { 0 }
}

/// `a * b` rounded once.
pub fn mul(fmt: FloatFormat, a: u64, b: u64, mode: FloatRounding) -> u64 {
    let negative = fmt.is_negative(a) != fmt.is_negative(b);
    match (classify(fmt, a), classify(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf(_), Class::Zero(_)) | (Class::Zero(_), Class::Inf(_)) => fmt.canonical_nan(),
        (Class::Inf(_), _) | (_, Class::Inf(_)) => inf_bits(fmt, negative),
        (Class::Zero(_), _) | (_, Class::Zero(_)) => zero_bits(fmt, negative),
        (Class::Finite(x), Class::Finite(y)) => {
            round_pack(fmt, negative, x.exp + y.exp, x.sig * y.sig, mode)
        }
    }
}

/// `a * b + c` with a single rounding.
pub fn fma(fmt: FloatFormat, a: u64, b: u64, c: u64, mode: FloatRounding) -> u64 {
    let product_negative = fmt.is_negative(a) != fmt.is_negative(b);
    let (ca, cb, cc) = (classify(fmt, a), classify(fmt, b), classify(fmt, c));
    if matches!(ca, Class::Nan) || matches!(cb, Class::Nan) || matches!(cc, Class::Nan) {
        return fmt.canonical_nan();
    }
    let product = match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => return fmt.canonical_nan(),
        (Class::Inf(_), Class::Zero(_)) | (Class::Zero(_), Class::Inf(_)) => {
            return fmt.canonical_nan();
        }
        (Class::Inf(_), _) | (_, Class::Inf(_)) => {
            return match cc {
                Class::Inf(neg) if neg != product_negative => fmt.canonical_nan(),
                _ => inf_bits(fmt, product_negative),
            };
        }
        (Class::Zero(_), _) | (_, Class::Zero(_)) => None,
        (Class::Finite(x), Class::Finite(y)) => Some(Finite {
            negative: product_negative,
            exp: x.exp + y.exp,
            sig: x.sig * y.sig,
        }),
    };
    match (product, cc) {
        (_, Class::Nan) => fmt.canonical_nan(),
        (_, Class::Inf(neg)) => inf_bits(fmt, neg),
        (None, Class::Zero(neg)) => zero_sum(fmt, product_negative && neg, mode),
        (None, Class::Finite(_)) => c,
        (Some(p), Class::Zero(_)) => round_pack(fmt, p.negative, p.exp, p.sig, mode),
        (Some(p), Class::Finite(z)) => match add_finite(p, z) {
            Some(s) => round_pack(fmt, s.negative, s.exp, s.sig, mode),
            None => zero_sum(fmt, false, mode),
        },
    }
}

/// `a / b` rounded once.
pub fn div(fmt: FloatFormat, a: u64, b: u64, mode: FloatRounding) -> u64 {
    let negative = fmt.is_negative(a) != fmt.is_negative(b);
    match (classify(fmt, a), classify(fmt, b)) {
        (Class::Nan, _) | (_, Class::Nan) => fmt.canonical_nan(),
        (Class::Inf(_), Class::Inf(_)) | (Class::Zero(_), Class::Zero(_)) => fmt.canonical_nan(),
        (Class::Inf(_), _) | (_, Class::Zero(_)) => inf_bits(fmt, negative),
        (Class::Zero(_), _) | (_, Class::Inf(_)) => zero_bits(fmt, negative),
        (Class::Finite(x), Class::Finite(y)) => {
            let x = normalize_to(x, 52);
            let y = normalize_to(y, 52);
            // x.sig / y.sig lies in (1/2, 2); 70 extra bits give a quotient of 70+ bits.
            let num = x.sig << 70;
            let q = num / y.sig;
            let sticky = (num % y.sig != 0) as u128;
            round_pack(fmt, negative, x.exp - y.exp - 70, q | sticky, mode)
        }
    }
}

/// Square root rounded once (`-0` stays `-0`, negative operands give NaN).
pub fn sqrt(fmt: FloatFormat, a: u64, mode: FloatRounding) -> u64 {
    match classify(fmt, a) {
        Class::Nan => fmt.canonical_nan(),
        Class::Zero(_) => a,
        Class::Inf(false) => a,
        Class::Inf(true) => fmt.canonical_nan(),
        Class::Finite(x) if x.negative => fmt.canonical_nan(),
        Class::Finite(x) => {
            // Put ~120 bits in the radicand with an even exponent.
            let mut x = normalize_to(x, 120);
            if x.exp & 1 != 0 {
                x = Finite {
                    negative: false,
                    exp: x.exp + 1,
                    sig: x.sig >> 1 | (x.sig & 1),
                };
            }
            let root = x.sig.isqrt();
            let sticky = (root * root != x.sig) as u128;
            round_pack(fmt, false, x.exp / 2, root | sticky, mode)
        }
    }
}

/// Converts a finite-or-special value between formats with one rounding.
pub fn convert(from: FloatFormat, to: FloatFormat, bits: u64, mode: FloatRounding) -> u64 {
    match classify(from, bits) {
        Class::Nan => to.canonical_nan(),
        Class::Inf(neg) => inf_bits(to, neg),
        Class::Zero(neg) => zero_bits(to, neg),
        Class::Finite(x) => round_pack(to, x.negative, x.exp, x.sig, mode),
    }
}

/// Rounds the exact integer `(-1)^negative * magnitude` to `fmt`.
pub fn from_int(fmt: FloatFormat, negative: bool, magnitude: u64, mode: FloatRounding) -> u64 {
    if magnitude == 0 {
        return 0;
    }
    round_pack(fmt, negative, 0, magnitude as u128, mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODES: [FloatRounding; 4] = [
        FloatRounding::Rn,
        FloatRounding::Rz,
        FloatRounding::Rm,
        FloatRounding::Rp,
    ];

    /// xorshift64*: deterministic pseudo-random bit patterns.
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    fn interesting_f32(rng: &mut Rng) -> f32 {
        let r = rng.next();
        match r % 8 {
            0 => f32::from_bits(r as u32 >> 9 | ((r >> 40) as u32 & 0x8000_0000)), // subnormal
            1 => [
                0.0,
                -0.0,
                1.0,
                -1.0,
                f32::MAX,
                f32::MIN_POSITIVE,
                f32::INFINITY,
            ][(r >> 8) as usize % 7],
            _ => f32::from_bits((r >> 16) as u32),
        }
    }

    #[test]
    fn nearest_matches_host_f32() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let f = FloatFormat::F32;
        for _ in 0..200_000 {
            let (a, b, c) = (
                interesting_f32(&mut rng),
                interesting_f32(&mut rng),
                interesting_f32(&mut rng),
            );
            let canon = |x: f32| f.canonicalize(x.to_bits() as u64);
            let (ab, bb, cb) = (a.to_bits() as u64, b.to_bits() as u64, c.to_bits() as u64);
            assert_eq!(
                add(f, ab, bb, FloatRounding::Rn),
                canon(a + b),
                "{a:e} + {b:e}"
            );
            assert_eq!(
                sub(f, ab, bb, FloatRounding::Rn),
                canon(a - b),
                "{a:e} - {b:e}"
            );
            assert_eq!(
                mul(f, ab, bb, FloatRounding::Rn),
                canon(a * b),
                "{a:e} * {b:e}"
            );
            assert_eq!(
                div(f, ab, bb, FloatRounding::Rn),
                canon(a / b),
                "{a:e} / {b:e}"
            );
            assert_eq!(
                fma(f, ab, bb, cb, FloatRounding::Rn),
                canon(a.mul_add(b, c)),
                "fma {a:e} {b:e} {c:e}"
            );
            assert_eq!(
                sqrt(f, ab, FloatRounding::Rn),
                canon(a.sqrt()),
                "sqrt {a:e}"
            );
        }
    }

    #[test]
    fn nearest_matches_host_f64() {
        let mut rng = Rng(0x0bad_cafe_dead_beef);
        let f = FloatFormat::F64;
        let pick = |rng: &mut Rng| {
            let r = rng.next();
            match r % 6 {
                0 => f64::from_bits(r >> 12), // subnormal
                1 => f64::from_bits((r & 0x800f_ffff_ffff_ffff) | (1000 << 52)), // similar exponents
                _ => f64::from_bits(rng.next()),
            }
        };
        for _ in 0..200_000 {
            let (a, b, c) = (pick(&mut rng), pick(&mut rng), pick(&mut rng));
            let canon = |x: f64| f.canonicalize(x.to_bits());
            let (ab, bb, cb) = (a.to_bits(), b.to_bits(), c.to_bits());
            assert_eq!(
                add(f, ab, bb, FloatRounding::Rn),
                canon(a + b),
                "{a:e} + {b:e}"
            );
            assert_eq!(
                mul(f, ab, bb, FloatRounding::Rn),
                canon(a * b),
                "{a:e} * {b:e}"
            );
            assert_eq!(
                div(f, ab, bb, FloatRounding::Rn),
                canon(a / b),
                "{a:e} / {b:e}"
            );
            assert_eq!(
                fma(f, ab, bb, cb, FloatRounding::Rn),
                canon(a.mul_add(b, c)),
                "fma {a:e} {b:e} {c:e}"
            );
            assert_eq!(
                sqrt(f, ab, FloatRounding::Rn),
                canon(a.sqrt()),
                "sqrt {a:e}"
            );
        }
    }

    /// Directed results must bracket the exact value (checked in f64, where
    /// every f16 product and sum is exact) and be adjacent to each other.
    #[test]
    fn directed_f16_add_mul_bracket_exact_value_exhaustively_for_a_slice() {
        let f = FloatFormat::F16;
        let mut rng = Rng(99);
        for _ in 0..300_000 {
            let a = rng.next() & 0xffff;
            let b = rng.next() & 0xffff;
            let (x, y) = (
                half::f16::from_bits(a as u16).to_f64(),
                half::f16::from_bits(b as u16).to_f64(),
            );
            if x.is_nan() || y.is_nan() || x.is_infinite() || y.is_infinite() {
                continue;
            }
            for (exact, op) in [(x + y, 0), (x * y, 1)] {
                let results: Vec<f64> = MODES
                    .iter()
                    .map(|&m| {
                        let r = if op == 0 {
                            add(f, a, b, m)
                        } else {
                            mul(f, a, b, m)
                        };
                        half::f16::from_bits(r as u16).to_f64()
                    })
                    .collect();
                let [rn, rz, rm, rp] = [results[0], results[1], results[2], results[3]];
                assert!(
                    rm <= exact && exact <= rp,
                    "op{op} {x} {y}: {rm} {exact} {rp}"
                );
                assert_eq!(rn, half::f16::from_f64(exact).to_f64(), "op{op} {x} {y}");
                let toward_zero = if exact >= 0.0 { rm } else { rp };
                assert_eq!(rz, toward_zero, "op{op} {x} {y}");
                if rm == rp {
                    assert!(rm == exact || rm.is_infinite() || rm.abs() == 65504.0);
                }
            }
        }
    }

    #[test]
    fn directed_f32_ops_bracket_f64_exact_values() {
        let f = FloatFormat::F32;
        let mut rng = Rng(7);
        for _ in 0..100_000 {
            let a = interesting_f32(&mut rng);
            let b = interesting_f32(&mut rng);
            if !a.is_finite() || !b.is_finite() {
                continue;
            }
            let (ab, bb) = (a.to_bits() as u64, b.to_bits() as u64);
            // Products of two f32 are exact in f64; quotients and roots are checked
            // through the remainder sign.
            let exact_mul = a as f64 * b as f64;
            let lo = f32::from_bits(mul(f, ab, bb, FloatRounding::Rm) as u32) as f64;
            let hi = f32::from_bits(mul(f, ab, bb, FloatRounding::Rp) as u32) as f64;
            assert!(lo <= exact_mul && exact_mul <= hi, "{a:e}*{b:e}");
            assert!(next_up_f32(lo as f32) as f64 >= hi || lo == hi);
            if b != 0.0 {
                let lo = f32::from_bits(div(f, ab, bb, FloatRounding::Rm) as u32);
                let hi = f32::from_bits(div(f, ab, bb, FloatRounding::Rp) as u32);
                // lo*b <= a <= hi*b for b>0 (reversed for b<0), exactly in f64.
                let (p_lo, p_hi) = (lo as f64 * b as f64, hi as f64 * b as f64);
                let a64 = a as f64;
                if lo.is_finite() && hi.is_finite() {
                    if b > 0.0 {
                        assert!(p_lo <= a64 && a64 <= p_hi, "{a:e}/{b:e}");
                    } else {
                        assert!(p_lo >= a64 && a64 >= p_hi, "{a:e}/{b:e}");
                    }
                    assert!(
                        lo == hi || next_up_f32(lo) == hi,
                        "{a:e}/{b:e}: {lo:e} {hi:e}"
                    );
                }
            }
            if a >= 0.0 {
                let lo = f32::from_bits(sqrt(f, ab, FloatRounding::Rm) as u32) as f64;
                let hi = f32::from_bits(sqrt(f, ab, FloatRounding::Rp) as u32) as f64;
                assert!(lo * lo <= a as f64 && a as f64 <= hi * hi, "sqrt {a:e}");
            }
        }
    }

    fn next_up_f32(x: f32) -> f32 {
        if x.is_nan() || x == f32::INFINITY {
            return x;
        }
        if x == 0.0 {
            return f32::from_bits(1);
        }
        let bits = x.to_bits();
        f32::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
    }

    #[test]
    fn directed_f32_add_and_fma_agree_with_f64_two_sum_reference() {
        // Reference: the exact sum is s + e (TwoSum in f64, exact for f32 inputs);
        // the correctly rounded result is the f32 neighbour of s on the right side.
        let f = FloatFormat::F32;
        let mut rng = Rng(31337);
        for _ in 0..200_000 {
            let (a, b, c) = (
                interesting_f32(&mut rng),
                interesting_f32(&mut rng),
                interesting_f32(&mut rng),
            );
            if !a.is_finite() || !b.is_finite() || !c.is_finite() {
                continue;
            }
            let product = a as f64 * b as f64;
            for (hi, lo_part, mode_res) in [
                (
                    a as f64,
                    b as f64,
                    [FloatRounding::Rz, FloatRounding::Rm, FloatRounding::Rp]
                        .map(|m| add(f, a.to_bits() as u64, b.to_bits() as u64, m)),
                ),
                (
                    product,
                    c as f64,
                    [FloatRounding::Rz, FloatRounding::Rm, FloatRounding::Rp].map(|m| {
                        fma(
                            f,
                            a.to_bits() as u64,
                            b.to_bits() as u64,
                            c.to_bits() as u64,
                            m,
                        )
                    }),
                ),
            ] {
                let s = hi + lo_part;
                let bb = s - hi;
                let e = (hi - (s - bb)) + (lo_part - bb);
                let reference = |mode: FloatRounding| -> u32 {
                    let r = s as f32;
                    let cmp = if r as f64 != s {
                        (r as f64).partial_cmp(&s).unwrap()
                    } else {
                        0.0f64.partial_cmp(&e).unwrap()
                    };
                    let exact_positive = s > 0.0 || (s == 0.0 && e > 0.0);
                    let want_down = match mode {
                        FloatRounding::Rm => true,
                        FloatRounding::Rp => false,
                        _ => exact_positive,
                    };
                    let out = match cmp {
                        std::cmp::Ordering::Greater if want_down => next_down_f32(r),
                        std::cmp::Ordering::Less if !want_down => next_up_f32(r),
                        _ => r,
                    };
                    out.to_bits()
                };
                if s == 0.0 && e == 0.0 {
                    continue; // signed-zero rules are tested separately
                }
                for (i, mode) in [FloatRounding::Rz, FloatRounding::Rm, FloatRounding::Rp]
                    .into_iter()
                    .enumerate()
                {
                    assert_eq!(
                        mode_res[i] as u32,
                        reference(mode),
                        "{mode:?} {hi:e} + {lo_part:e}"
                    );
                }
            }
        }
    }

    /// `f64::next_up` for positive finite or negative finite values (the
    /// std method needs Rust 1.86, above the workspace MSRV).
    fn next_up_f64(x: f64) -> f64 {
        if x == 0.0 {
            return f64::from_bits(1);
        }
        let bits = x.to_bits();
        f64::from_bits(if x > 0.0 { bits + 1 } else { bits - 1 })
    }

    fn next_down_f32(x: f32) -> f32 {
        -next_up_f32(-x)
    }

    /// f64 directed results bracket the exact product/quotient/root, checked
    /// through exact residuals computed by the host fma (normal-range values
    /// only, where the residual is exact).
    #[test]
    fn directed_f64_results_bracket_exact_values() {
        let f = FloatFormat::F64;
        let mut rng = Rng(4242);
        let val = |b: u64| f64::from_bits(b);
        for _ in 0..100_000 {
            let a = f64::from_bits(
                (rng.next() & 0x800f_ffff_ffff_ffff) | ((rng.next() % 200 + 923) << 52),
            );
            let b = f64::from_bits(
                (rng.next() & 0x800f_ffff_ffff_ffff) | ((rng.next() % 200 + 923) << 52),
            );
            let (ab, bb) = (a.to_bits(), b.to_bits());
            let lo = val(mul(f, ab, bb, FloatRounding::Rm));
            let hi = val(mul(f, ab, bb, FloatRounding::Rp));
            // a*b - lo >= 0 and a*b - hi <= 0, exactly.
            assert!(
                a.mul_add(b, -lo) >= 0.0 && a.mul_add(b, -hi) <= 0.0,
                "{a:e}*{b:e}"
            );
            assert!(lo == hi || next_up_f64(lo) == hi);
            let rz = val(mul(f, ab, bb, FloatRounding::Rz));
            assert_eq!(rz, if a * b > 0.0 { lo } else { hi });
            let lo = val(div(f, ab, bb, FloatRounding::Rm));
            let hi = val(div(f, ab, bb, FloatRounding::Rp));
            // a - lo*b has the sign of b when lo <= a/b.
            let (rl, rh) = ((-lo).mul_add(b, a), (-hi).mul_add(b, a));
            assert!(
                rl * b.signum() >= 0.0 && rh * b.signum() <= 0.0,
                "{a:e}/{b:e}"
            );
            assert!(lo == hi || next_up_f64(lo) == hi);
            let s = a.abs();
            let lo = val(sqrt(f, s.to_bits(), FloatRounding::Rm));
            let hi = val(sqrt(f, s.to_bits(), FloatRounding::Rp));
            assert!(
                (-lo).mul_add(lo, s) >= 0.0 && (-hi).mul_add(hi, s) <= 0.0,
                "sqrt {s:e}"
            );
            assert!(lo == hi || next_up_f64(lo) == hi);
            let sum_lo = val(add(f, ab, bb, FloatRounding::Rm));
            let sum_hi = val(add(f, ab, bb, FloatRounding::Rp));
            // TwoSum error term gives the exact side.
            let s = a + b;
            let bv = s - a;
            let e = (a - (s - bv)) + (b - bv);
            if e == 0.0 {
                assert!(sum_lo == s && sum_hi == s);
            } else {
                assert!(next_up_f64(sum_lo) == sum_hi && (sum_lo == s || sum_hi == s));
                assert_eq!(sum_hi == s, e < 0.0, "{a:e}+{b:e}");
            }
        }
    }

    /// `x` as `m * 2^e` with an odd (or zero) integer `m`.
    fn decompose(x: f64) -> (i128, i32) {
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let man = (bits & ((1 << 52) - 1)) as i128;
        let (mut m, mut e) = if biased == 0 {
            (man, -1074)
        } else {
            (man | 1 << 52, biased - 1075)
        };
        if m == 0 {
            return (0, 0);
        }
        while m & 1 == 0 {
            m >>= 1;
            e += 1;
        }
        (if x < 0.0 { -m } else { m }, e)
    }

    /// f64 fma in every direction against exact 128-bit integer arithmetic:
    /// operands are drawn so that `a*b` and `c` overlap within 20 bits, making
    /// `a*b + c = N * 2^E` exact in an i128.
    #[test]
    fn directed_f64_fma_brackets_exact_integer_reference() {
        let f = FloatFormat::F64;
        let mut rng = Rng(2718);
        for _ in 0..100_000 {
            let draw = |r: u64, exp: u64| f64::from_bits((r & 0x800f_ffff_ffff_ffff) | (exp << 52));
            let ea = 1023 + rng.next() % 40;
            let eb = 1023 - 20 + rng.next() % 40;
            let (a, b) = (draw(rng.next(), ea), draw(rng.next(), eb));
            let ec = (ea + eb - 1023) as i64 + (rng.next() % 41) as i64 - 20;
            let c = draw(rng.next(), ec as u64);
            let ((ma, qa), (mb, qb), (mc, qc)) = (decompose(a), decompose(b), decompose(c));
            let e = (qa + qb).min(qc);
            let exact = ((ma * mb) << (qa + qb - e)) + (mc << (qc - e));
            // Compares f64 `x` with exact N * 2^e.
            let cmp = |x: f64| {
                let (m, q) = decompose(x);
                assert!(q >= e || m == 0, "result finer than the exact value's grid");
                let scaled = if m == 0 { 0 } else { m << (q - e) };
                scaled.cmp(&exact)
            };
            let (ab, bb, cb) = (a.to_bits(), b.to_bits(), c.to_bits());
            let r = |m| f64::from_bits(fma(f, ab, bb, cb, m));
            let (rn, rz, rm, rp) = (
                r(FloatRounding::Rn),
                r(FloatRounding::Rz),
                r(FloatRounding::Rm),
                r(FloatRounding::Rp),
            );
            assert_ne!(cmp(rm), std::cmp::Ordering::Greater, "rm {a:e} {b:e} {c:e}");
            assert_ne!(cmp(rp), std::cmp::Ordering::Less, "rp {a:e} {b:e} {c:e}");
            assert!(rm == rp || next_up_f64(rm) == rp, "{a:e} {b:e} {c:e}");
            assert_eq!(rz, if exact >= 0 { rm } else { rp });
            assert!(rn == rm || rn == rp);
            assert_eq!(rn.to_bits(), a.mul_add(b, c).to_bits());
        }
    }

    #[test]
    fn exact_zero_sums_follow_ieee_sign_rules() {
        let f = FloatFormat::F32;
        let one = 1.0f32.to_bits() as u64;
        let m_one = (-1.0f32).to_bits() as u64;
        assert_eq!(add(f, one, m_one, FloatRounding::Rn), 0);
        assert_eq!(add(f, one, m_one, FloatRounding::Rm), 0x8000_0000);
        assert_eq!(
            add(f, 0x8000_0000, 0x8000_0000, FloatRounding::Rp),
            0x8000_0000
        );
        assert_eq!(add(f, 0, 0x8000_0000, FloatRounding::Rz), 0);
        assert_eq!(fma(f, one, m_one, one, FloatRounding::Rm), 0x8000_0000);
    }

    #[test]
    fn overflow_saturates_by_direction() {
        let f = FloatFormat::F32;
        let max = f32::MAX.to_bits() as u64;
        assert_eq!(add(f, max, max, FloatRounding::Rn), f.inf());
        assert_eq!(add(f, max, max, FloatRounding::Rz), max);
        assert_eq!(add(f, max, max, FloatRounding::Rm), max);
        assert_eq!(add(f, max, max, FloatRounding::Rp), f.inf());
        let neg = max | f.sign_mask();
        assert_eq!(add(f, neg, neg, FloatRounding::Rp), neg);
        assert_eq!(add(f, neg, neg, FloatRounding::Rm), f.inf() | f.sign_mask());
    }

    #[test]
    fn f16_conversions_match_half_crate_for_every_f32_rounding_to_nearest() {
        let mut rng = Rng(5);
        for _ in 0..200_000 {
            let x = f32::from_bits(rng.next() as u32);
            let ours = convert(
                FloatFormat::F32,
                FloatFormat::F16,
                x.to_bits() as u64,
                FloatRounding::Rn,
            );
            let theirs = half::f16::from_f32(x).to_bits() as u64;
            assert_eq!(ours, FloatFormat::F16.canonicalize(theirs), "{x:e}");
            let ours = convert(
                FloatFormat::F32,
                FloatFormat::BF16,
                x.to_bits() as u64,
                FloatRounding::Rn,
            );
            let theirs = half::bf16::from_f32(x).to_bits() as u64;
            assert_eq!(ours, FloatFormat::BF16.canonicalize(theirs), "{x:e}");
        }
    }
}
