//! `.approx` transcendental instructions: `sin`, `cos`, `lg2`, `ex2`, `tanh`,
//! `rsqrt`.
//!
//! Each is evaluated in `f64` and rounded once to the destination format, so
//! results are within half an ulp plus the host `f64` function's error (well
//! under 1 ulp of the destination) — inside every bound the PTX ISA documents
//! for these instructions (e.g. `sin/cos.approx.f32`: absolute error 2^-20.5
//! on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi];
//! `ex2.approx.f32`: 2 ulp; `lg2.approx.f32`: 2^-22 absolute near 1, relative
//! elsewhere; `tanh.approx.f32`: relative 2^-11; `rsqrt.approx.f32`: relative
//! 2^-22.9). Results are deterministic for a given host libm.
//!
//! Special values follow IEEE/PTX: `sin/cos(±inf) = NaN`, `lg2(±0) = -inf`,
//! `lg2(<0) = NaN`, `ex2(-inf) = +0`, `tanh(±inf) = ±1`, `rsqrt(±0) = ±inf`,
//! `rsqrt(<0) = NaN`. NaN results are canonical; `.ftz` flushes subnormal
//! inputs and results.

use super::float::{f64_high_word_approx, format_of, from_f64, lanes1};
use super::softfloat::FloatFormat;
use super::types::ScalarType;

#[inline]
fn apply(ty: ScalarType, ftz: bool, a: u64, f: fn(f64) -> f64) -> u64 {
    lanes1(ty, a, |fmt, a| {
        let a = if ftz { fmt.flush(a) } else { a };
        let x = element_to_f64(fmt, a);
        let r = fmt.canonicalize(from_f64(fmt, f(x)));
        if ftz { fmt.flush(r) } else { r }
    })
}

#[inline]
fn element_to_f64(fmt: FloatFormat, bits: u64) -> f64 {
    match fmt.man_bits {
        52 => f64::from_bits(bits),
        23 => f32::from_bits(bits as u32) as f64,
        10 => half::f16::from_bits(bits as u16).to_f64(),
        _ => half::bf16::from_bits(bits as u16).to_f64(),
    }
}

/// `sin.approx{.ftz}.f32`.
#[inline]
pub fn sin(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    apply(ty, ftz, a, f64::sin)
}

/// `cos.approx{.ftz}.f32`.
#[inline]
pub fn cos(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    apply(ty, ftz, a, f64::cos)
}

/// `lg2.approx{.ftz}.f32`: base-2 logarithm.
#[inline]
pub fn lg2(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    apply(ty, ftz, a, f64::log2)
}

/// `ex2.approx{.ftz}.{f32,f16,f16x2,bf16,bf16x2}`: `2^a`.
#[inline]
pub fn ex2(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    apply(ty, ftz, a, f64::exp2)
}

/// `tanh.approx.{f32,f16,f16x2,bf16,bf16x2}`.
#[inline]
pub fn tanh(ty: ScalarType, a: u64) -> u64 {
    apply(ty, false, a, f64::tanh)
}

/// `rsqrt.approx{.ftz}.{f32,f64}`: `1/sqrt(a)`. `rsqrt.approx.ftz.f64` works
/// on the upper word only, as PTX defines it (see
/// [`float::rcp_approx_ftz_f64`](super::float::rcp_approx_ftz_f64)); the result's
/// low 32 bits are zero.
#[inline]
pub fn rsqrt(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    if ty == ScalarType::F64 && ftz {
        return f64_high_word_approx(a, |x| 1.0 / x.sqrt());
    }
    apply(ty, ftz, a, |x| 1.0 / x.sqrt())
}

/// The element format used by these functions, for callers validating types.
#[inline]
pub const fn element_format(ty: ScalarType) -> FloatFormat {
    format_of(ty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn b32(x: f32) -> u64 {
        x.to_bits() as u64
    }
    fn f(x: u64) -> f32 {
        f32::from_bits(x as u32)
    }
    fn ulp_f32(x: f64) -> f64 {
        let x = x.abs().max(f32::MIN_POSITIVE as f64) as f32;
        let e = (x.to_bits() >> 23) as i32;
        2f64.powi(e - 127 - 23)
    }

    /// Evenly spread sample points over [lo, hi].
    fn samples(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f32> {
        (0..=n).map(move |i| (lo + (hi - lo) * i as f64 / n as f64) as f32)
    }

    #[test]
    fn sin_cos_within_absolute_bound() {
        let bound = 2f64.powf(-20.5);
        for x in samples(
            -100.0 * std::f64::consts::PI,
            100.0 * std::f64::consts::PI,
            200_000,
        ) {
            let s = f(sin(F32, false, b32(x))) as f64;
            let c = f(cos(F32, false, b32(x))) as f64;
            assert!((s - (x as f64).sin()).abs() <= bound, "sin {x}");
            assert!((c - (x as f64).cos()).abs() <= bound, "cos {x}");
        }
        assert_eq!(sin(F32, false, b32(f32::INFINITY)), 0x7fff_ffff);
        assert_eq!(sin(F32, false, b32(-0.0)), 0x8000_0000);
    }

    #[test]
    fn ex2_lg2_within_bounds() {
        for x in samples(-125.0, 127.9, 200_000) {
            let got = f(ex2(F32, false, b32(x))) as f64;
            let exact = (x as f64).exp2();
            assert!((got - exact).abs() <= 2.0 * ulp_f32(exact), "ex2 {x}");
        }
        for x in samples(1e-30, 1e30, 100_000).chain(samples(0.5, 2.0, 100_000)) {
            let got = f(lg2(F32, false, b32(x))) as f64;
            let exact = (x as f64).log2();
            if (0.5..=2.0).contains(&x) {
                assert!((got - exact).abs() <= 2f64.powf(-22.6), "lg2 {x}");
            } else {
                assert!(
                    (got - exact).abs() <= 2f64.powi(-22) * exact.abs(),
                    "lg2 {x}"
                );
            }
        }
        assert_eq!(f(ex2(F32, false, b32(f32::NEG_INFINITY))), 0.0);
        assert_eq!(f(ex2(F32, false, b32(10.0))), 1024.0);
        assert_eq!(f(lg2(F32, false, b32(0.0))), f32::NEG_INFINITY);
        assert_eq!(lg2(F32, false, b32(-1.0)), 0x7fff_ffff);
        assert_eq!(f(lg2(F32, false, 1)), -149.0); // subnormal input supported without .ftz
        assert_eq!(f(lg2(F32, true, 1)), f32::NEG_INFINITY); // flushed to zero with .ftz
        assert_eq!(ex2(F32, true, b32(-140.0)), 0); // subnormal result flushed
        assert_ne!(ex2(F32, false, b32(-140.0)), 0);
    }

    #[test]
    fn tanh_rsqrt_within_bounds() {
        for x in samples(-20.0, 20.0, 100_000) {
            let got = f(tanh(F32, b32(x))) as f64;
            let exact = (x as f64).tanh();
            assert!(
                (got - exact).abs()
                    <= 2f64.powf(-10.987) * exact.abs().max(f32::MIN_POSITIVE as f64),
                "tanh {x}"
            );
        }
        for x in samples(1e-30, 1e30, 100_000) {
            let got = f(rsqrt(F32, false, b32(x))) as f64;
            let exact = 1.0 / (x as f64).sqrt();
            assert!((got - exact).abs() <= 2f64.powf(-22.9) * exact, "rsqrt {x}");
        }
        assert_eq!(f(rsqrt(F32, false, b32(-0.0))), f32::NEG_INFINITY);
        assert_eq!(rsqrt(F32, false, b32(-4.0)), 0x7fff_ffff);
        assert_eq!(f64::from_bits(rsqrt(F64, false, 4f64.to_bits())), 0.5);
        assert_eq!(f(tanh(F32, b32(f32::INFINITY))), 1.0);
        let r = rsqrt(F64, true, 4f64.to_bits());
        assert_eq!(f64::from_bits(r), 0.5);
        let r = f64::from_bits(rsqrt(F64, true, 2f64.to_bits()));
        assert_eq!(r.to_bits() & 0xffff_ffff, 0);
        assert!((r - std::f64::consts::FRAC_1_SQRT_2).abs() < 2f64.powi(-21));
        assert_eq!(rsqrt(F64, true, (-1.0f64).to_bits()), 0x7fff_ffff_0000_0000);
        assert_eq!(
            f64::from_bits(rsqrt(F64, true, (-0.0f64).to_bits())),
            f64::NEG_INFINITY
        );
    }

    /// `bits` is an f16 no farther from `y` than either neighbouring f16.
    fn is_nearest_f16(bits: u64, y: f64) -> bool {
        let val = |b: u64| half::f16::from_bits(b as u16).to_f64();
        if y.is_nan() {
            return bits == 0x7fff;
        }
        let r = val(bits);
        if r.is_infinite() || y.is_infinite() {
            return r == y || y.abs() >= 65520.0;
        }
        let d = (r - y).abs();
        let neighbours = [
            bits.wrapping_add(1) & 0xffff,
            bits.wrapping_sub(1) & 0xffff,
            bits ^ 0x8000,
        ];
        neighbours.iter().all(|&n| {
            let v = val(n);
            v.is_nan() || (v - y).abs() >= d
        })
    }

    #[test]
    fn half_precision_forms_cover_every_f16_input() {
        for bits in 0..=0xffffu16 {
            let x = half::f16::from_bits(bits).to_f64();
            assert!(
                is_nearest_f16(ex2(F16, false, bits as u64), x.exp2()),
                "ex2 {x}"
            );
            assert!(is_nearest_f16(tanh(F16, bits as u64), x.tanh()), "tanh {x}");
        }
        let pack = (half::f16::from_f32(3.0).to_bits() as u64) << 16
            | half::f16::from_f32(-1.0).to_bits() as u64;
        let want = (half::f16::from_f32(8.0).to_bits() as u64) << 16
            | half::f16::from_f32(0.5).to_bits() as u64;
        assert_eq!(ex2(F16x2, false, pack), want);
    }
}
