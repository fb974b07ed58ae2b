//! The 8-bit float formats of `cvt`: `.e4m3` (1.4.3, bias 7, no
//! infinities, NaN `S.1111.111`, largest finite 448) and `.e5m2` (1.5.2,
//! bias 15, IEEE-like with infinities, largest finite 57344).
//!
//! - To FP8 (`cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.{f32,f16x2}`): round to
//!   nearest even; `.satfinite` (mandatory in PTX) turns infinities and
//!   values beyond the largest finite into the largest finite of their
//!   sign; NaN gives `0x7f`; `.relu` turns negative results into `+0`.
//! - From FP8 (`cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}`): exact.

/// An 8-bit float format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp8 {
    E4M3,
    E5M2,
}

impl Fp8 {
    /// `.e4m3x2` / `.e5m2x2` (also accepts the scalar names).
    pub fn parse(text: &str) -> Option<Fp8> {
        match text.strip_prefix('.').unwrap_or(text) {
            "e4m3x2" | "e4m3" => Some(Fp8::E4M3),
            "e5m2x2" | "e5m2" => Some(Fp8::E5M2),
            _ => None,
        }
    }

    const fn man_bits(self) -> i32 {
        match self {
            Fp8::E4M3 => 3,
            Fp8::E5M2 => 2,
        }
    }

    const fn bias(self) -> i32 {
        match self {
            Fp8::E4M3 => 7,
            Fp8::E5M2 => 15,
        }
    }

    /// The largest finite value.
    pub fn max_finite(self) -> f64 {
        match self {
            Fp8::E4M3 => 448.0,
            Fp8::E5M2 => 57344.0,
        }
    }
}

/// `2^e` as an `f64`, exactly (for `-1074 <= e <= 1023`).
fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// `floor(log2(a))` for a finite `a > 0`.
fn exponent(a: f64) -> i32 {
    let bits = a.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        // Subnormal f64: below every FP8 value, the exact figure is irrelevant.
        -1023
    } else {
        field - 1023
    }
}

/// Rounds `x` to `fmt` with `.rn.satfinite` (and `.relu`).
pub fn to_fp8(fmt: Fp8, x: f64, relu: bool) -> u8 {
    if x.is_nan() {
        return 0x7f;
    }
    let negative = x.is_sign_negative();
    if relu && negative {
        return 0;
    }
    let sign = (negative as u8) << 7;
    let a = x.abs();
    let max = fmt.max_finite();
    if a >= max {
        // Infinities and overflow saturate (`.satfinite`); rounding cannot
        // bring a value at or past the largest finite below it.
        return sign | encode(fmt, max);
    }
    if a == 0.0 {
        return sign;
    }
    let (man, emin) = (fmt.man_bits(), 1 - fmt.bias());
    let quantum = exponent(a).max(emin) - man;
    let rounded = (a * pow2(-quantum)).round_ties_even() * pow2(quantum);
    sign | encode(fmt, rounded.min(max))
}

/// The bits of a non-negative value representable in `fmt`.
fn encode(fmt: Fp8, v: f64) -> u8 {
    if v == 0.0 {
        return 0;
    }
    let (man, bias) = (fmt.man_bits(), fmt.bias());
    let emin = 1 - bias;
    if v < pow2(emin) {
        return (v * pow2(man - emin)) as u8;
    }
    let e = exponent(v);
    let fraction = (v * pow2(man - e)) as u32 - (1 << man);
    (((e + bias) as u32) << man | fraction) as u8
}

/// The value of FP8 bits (exact; NaN and infinities as `f64`).
pub fn from_fp8(fmt: Fp8, bits: u8) -> f64 {
    let negative = bits & 0x80 != 0;
    let (man, bias) = (fmt.man_bits(), fmt.bias());
    let field = ((bits & 0x7f) >> man) as i32;
    let fraction = (bits & ((1 << man) - 1)) as f64;
    let all_ones = (1 << (7 - man)) - 1;
    let v = match fmt {
        Fp8::E4M3 if field == all_ones && fraction == 7.0 => f64::NAN,
        Fp8::E5M2 if field == all_ones && fraction != 0.0 => f64::NAN,
        Fp8::E5M2 if field == all_ones => f64::INFINITY,
        _ if field == 0 => fraction * pow2(1 - bias - man),
        _ => (fraction + pow2(man)) * pow2(field - bias - man),
    };
    if negative { -v } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fp8_value_round_trips() {
        for fmt in [Fp8::E4M3, Fp8::E5M2] {
            for bits in 0..=255u8 {
                let v = from_fp8(fmt, bits);
                if v.is_nan() {
                    assert_eq!(to_fp8(fmt, v, false), 0x7f);
                } else if v.is_infinite() {
                    assert_eq!(to_fp8(fmt, v, false), (bits & 0x80) | 0x7b);
                } else {
                    assert_eq!(to_fp8(fmt, v, false), bits, "{fmt:?} {bits:#x} = {v}");
                }
            }
        }
    }

    #[test]
    fn rounding_saturation_and_relu() {
        use Fp8::*;
        // 1.0625 lies halfway between 1.0 and 1.125: ties to even (1.0).
        assert_eq!(to_fp8(E4M3, 1.0625, false), 0x38);
        // Just above the tie rounds up.
        assert_eq!(to_fp8(E4M3, 1.0626, false), 0x39);
        // Beyond 448 and infinity saturate; so does e5m2 beyond 57344.
        assert_eq!(to_fp8(E4M3, 1e6, false), 0x7e);
        assert_eq!(to_fp8(E4M3, f64::NEG_INFINITY, false), 0xfe);
        assert_eq!(to_fp8(E5M2, 1e9, false), 0x7b);
        // The smallest subnormals: 2^-9 (e4m3), 2^-16 (e5m2); half of them ties to 0.
        assert_eq!(to_fp8(E4M3, 2f64.powi(-9), false), 0x01);
        assert_eq!(to_fp8(E4M3, 2f64.powi(-10), false), 0x00);
        assert_eq!(to_fp8(E5M2, 2f64.powi(-16), false), 0x01);
        assert_eq!(to_fp8(E4M3, -2.0, true), 0x00);
        assert_eq!(to_fp8(E4M3, -2.0, false), 0xc0);
        assert_eq!(from_fp8(E4M3, 0x7e), 448.0);
        assert!(from_fp8(E4M3, 0xff).is_nan());
        assert_eq!(from_fp8(E5M2, 0x7c), f64::INFINITY);
        assert_eq!(from_fp8(E5M2, 0x3c), 1.0);
    }
}
