//! `.approx` transcendental instructions: `sin`, `cos`, `lg2`, `ex2`, `tanh`,
//! `rsqrt`, and the `.f32` forms of `rcp.approx` and `sqrt.approx`.
//!
//! **Fitted to the hardware** (`.f32`): `rcp`, `rsqrt`, `sqrt`, `ex2` and
//! `lg2` are computed as the GPU's function unit computes them — the reduced
//! argument's leading bits pick a segment of a table, and a quadratic
//! interpolates within it — with per-segment coefficients fitted to what an
//! H200 returned for every input of a binade (`emulator/tools/
//! fit_approx.py` writes `approx_tables.rs` from `../shared/hardware/
//! approx-sweep/`). `sin` and `cos` work on turns, as the GPU does: `|x|`
//! times `f32(1/(2 pi))` rounded toward zero, its fraction truncated to
//! 25 bits, then one table over the turn (cos a quarter turn on). Measured
//! bit-exact shares over those sweeps, and the models' limits, are in
//! `docs/fidelity.md`. Zero, subnormal, infinite and NaN inputs (subnormal
//! and zero ones still go through the sin/cos model), and results outside
//! the normal range, take the exact path below.
//!
//! **Exact** (`tanh`, other types, the special inputs): each is evaluated in
//! `f64` and rounded once to the destination format, so results are within
//! half an ulp plus the host `f64` function's error — inside every bound the
//! PTX ISA documents for these instructions (`ex2.approx.f32`: 2 ulp;
//! `lg2.approx.f32`: 2^-22 absolute near 1, relative elsewhere;
//! `tanh.approx.f32`: relative 2^-11; `rsqrt.approx.f32`: relative
//! 2^-22.9; `sin/cos.approx.f32`: absolute 2^-20.5 on [-2pi, 2pi], 2^-14.7
//! on [-100pi, 100pi]). Results are deterministic for a given host libm.
//!
//! Special values follow IEEE/PTX: `sin/cos(±inf) = NaN`, `lg2(±0) = -inf`,
//! `lg2(<0) = NaN`, `ex2(-inf) = +0`, `tanh(±inf) = ±1`, `rsqrt(±0) = ±inf`,
//! `rsqrt(<0) = NaN`. NaN results are canonical; `.ftz` flushes subnormal
//! inputs and results.

use super::approx_tables::{self as tables, SEGMENTS};
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

/// The `.f32` form of an instruction with a fitted model: `model` gives the
/// result for the inputs it covers (in `f64`, rounded once here), `exact`
/// the rest; other types take [`apply`].
#[inline]
fn fitted(
    ty: ScalarType,
    ftz: bool,
    a: u64,
    model: fn(f32) -> Option<f64>,
    exact: fn(f64) -> f64,
) -> u64 {
    if ty != ScalarType::F32 {
        return apply(ty, ftz, a, exact);
    }
    lanes1(ty, a, |fmt, a| {
        let a = if ftz { fmt.flush(a) } else { a };
        let x = f32::from_bits(a as u32);
        let y = model(x).unwrap_or_else(|| exact(x as f64));
        let r = fmt.canonicalize(from_f64(fmt, y));
        if ftz { fmt.flush(r) } else { r }
    })
}

/// The table's quadratic at `u` in `[0, 1)`: segment `floor(u * SEGMENTS)`,
/// evaluated at the position `t` in it as `c0 + c1*t + c2*t^2`, the form the
/// fit used.
#[inline]
fn interpolate(table: &[[f64; 3]; SEGMENTS], u: f64) -> f64 {
    let x = u * SEGMENTS as f64;
    let seg = (x as usize).min(SEGMENTS - 1);
    let t = x - seg as f64;
    let [c0, c1, c2] = table[seg];
    c0 + c1 * t + c2 * (t * t)
}

/// A normal, finite `f32`'s unbiased exponent and mantissa fraction in
/// `[0, 1)`; `None` for zero, subnormals, infinities and NaN.
#[inline]
fn normal_parts(x: f32) -> Option<(i32, f64)> {
    let bits = x.to_bits();
    let biased = (bits >> 23 & 0xff) as i32;
    if biased == 0 || biased == 255 {
        return None;
    }
    Some((
        biased - 127,
        (bits & 0x7f_ffff) as f64 / (1u32 << 23) as f64,
    ))
}

/// `2^e` exactly, for `e` within `f64`'s normal range.
#[inline]
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The reduced argument of `sqrt`/`rsqrt`: `x = 2^(2h) * w`, `w` in `[1, 4)`,
/// mapped to `u = (w - 1) / 2` on `[1, 2)` and `u = 1/2 + (w/2 - 1) / 2` on
/// `[2, 4)` (the sweep's order); returns `(u, h)`.
#[inline]
fn sqrt_reduce(x: f32) -> Option<(f64, i32)> {
    let (e, m) = normal_parts(x).filter(|_| x > 0.0)?;
    let (half, odd) = (e.div_euclid(2), e.rem_euclid(2) == 1);
    Some((if odd { 0.5 + m / 2.0 } else { m / 2.0 }, half))
}

fn rcp_model(x: f32) -> Option<f64> {
    let (e, m) = normal_parts(x)?;
    let r = interpolate(&tables::RCP, m) * pow2(-e);
    Some(if x < 0.0 { -r } else { r })
}

fn rsqrt_model(x: f32) -> Option<f64> {
    let (u, h) = sqrt_reduce(x)?;
    Some(interpolate(&tables::RSQRT, u) * pow2(-h))
}

fn sqrt_model(x: f32) -> Option<f64> {
    let (u, h) = sqrt_reduce(x)?;
    Some(interpolate(&tables::SQRT, u) * pow2(h))
}

fn ex2_model(x: f32) -> Option<f64> {
    let x = x as f64;
    let n = x.floor();
    if !(-126.0..=127.0).contains(&n) {
        return None;
    }
    Some(interpolate(&tables::EX2, x - n) * pow2(n as i32))
}

fn lg2_model(x: f32) -> Option<f64> {
    // The table fits lg2(1 + m) / m (see fit_approx.py): a relative fit
    // keeps the tiny results near x = 1 close to the hardware's.
    let (e, m) = normal_parts(x).filter(|_| x > 0.0)?;
    Some(e as f64 + m * interpolate(&tables::LG2, m))
}

/// `rcp.approx{.ftz}.f32`.
#[inline]
pub fn rcp_f32(ftz: bool, a: u64) -> u64 {
    fitted(ScalarType::F32, ftz, a, rcp_model, |x| 1.0 / x)
}

/// `sqrt.approx{.ftz}.f32`.
#[inline]
pub fn sqrt_f32(ftz: bool, a: u64) -> u64 {
    fitted(ScalarType::F32, ftz, a, sqrt_model, f64::sqrt)
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

/// The fraction of a turn that the GPU's sine/cosine unit sees for `|x|`:
/// `|x| * f32(1/(2 pi))` rounded toward zero to `f32` (ptxas emits
/// `FMUL.RZ` before `MUFU.SIN/COS`), its fraction kept in fixed point with
/// `SINCOS_FRACTION_BITS` bits (truncated). `None` for infinities and NaN.
#[inline]
fn turns(x: f32) -> Option<f64> {
    if !x.is_finite() {
        return None;
    }
    // Exact in f64: a product of two f32 has at most 48 significant bits.
    let p = x.abs() as f64 * 0.159_154_94_f32 as f64;
    let mut u = p as f32;
    if u as f64 > p {
        u = f32::from_bits(u.to_bits() - 1);
    }
    let scale = (1u64 << tables::SINCOS_FRACTION_BITS) as f64;
    let q = (u as f64 * scale).floor();
    Some((q - (q / scale).floor() * scale) / scale)
}

/// The table over a turn at `w` in `[0, 1)`: `sin(2 pi w)` as the GPU's
/// unit computes it.
#[inline]
fn sine_of_turns(w: f64) -> f64 {
    let x = w * tables::SINCOS_SEGMENTS as f64;
    let seg = (x as usize).min(tables::SINCOS_SEGMENTS - 1);
    let t = x - seg as f64;
    let [c0, c1, c2] = tables::SINCOS[seg];
    c0 + c1 * t + c2 * (t * t)
}

/// Negative inputs are taken as `-sin(-x)` (the sweeps hold no negative
/// input; sign-magnitude is assumed), and a turn fraction of zero gives a
/// signed zero.
fn sin_model(x: f32) -> Option<f64> {
    let w = turns(x)?;
    let s = if w == 0.0 { 0.0 } else { sine_of_turns(w) };
    Some(if x.is_sign_negative() { -s } else { s })
}

fn cos_model(x: f32) -> Option<f64> {
    let w = turns(x)?;
    Some(sine_of_turns((w + 0.25) % 1.0))
}

/// `sin.approx{.ftz}.f32`.
#[inline]
pub fn sin(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    fitted(ty, ftz, a, sin_model, f64::sin)
}

/// `cos.approx{.ftz}.f32`.
#[inline]
pub fn cos(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    fitted(ty, ftz, a, cos_model, f64::cos)
}

/// `lg2.approx{.ftz}.f32`: base-2 logarithm.
#[inline]
pub fn lg2(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    fitted(ty, ftz, a, lg2_model, f64::log2)
}

/// `ex2.approx{.ftz}.{f32,f16,f16x2,bf16,bf16x2}`: `2^a`.
#[inline]
pub fn ex2(ty: ScalarType, ftz: bool, a: u64) -> u64 {
    fitted(ty, ftz, a, ex2_model, f64::exp2)
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
    fitted(ty, ftz, a, rsqrt_model, |x| 1.0 / x.sqrt())
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

    /// The PTX ISA's bounds for `sin/cos.approx.f32`: absolute error
    /// 2^-20.5 on [-2 pi, 2 pi] (checked on [-4, 4], where the H200's sweep
    /// was measured: the model follows the hardware's truncations of the
    /// argument, which next to 2 pi add up to 2^-20.3 on the model) and
    /// 2^-14.7 on [-100 pi, 100 pi].
    #[test]
    fn sin_cos_within_absolute_bound() {
        let pi = std::f64::consts::PI;
        for (range, bound) in [(4.0, 2f64.powf(-20.5)), (100.0 * pi, 2f64.powf(-14.7))] {
            for x in samples(-range, range, 200_000) {
                let s = f(sin(F32, false, b32(x))) as f64;
                let c = f(cos(F32, false, b32(x))) as f64;
                assert!((s - (x as f64).sin()).abs() <= bound, "sin {x}: {s}");
                assert!((c - (x as f64).cos()).abs() <= bound, "cos {x}: {c}");
            }
        }
        assert_eq!(sin(F32, false, b32(f32::INFINITY)), 0x7fff_ffff);
        assert_eq!(sin(F32, false, b32(-0.0)), 0x8000_0000);
        assert_eq!(sin(F32, false, b32(0.0)), 0);
        assert_eq!(cos(F32, false, b32(0.0)), 1f32.to_bits() as u64);
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
                // The PTX ISA's 2^-22.6 absolute; the H200 itself reaches
                // 2^-22.577 on [1, 2) (approx-sweep), and below 1 the model
                // adds the f32 rounding of -1 + lg2(2x).
                let bound = 2f64.powf(-22.57) + if x < 1.0 { 2f64.powi(-25) } else { 0.0 };
                assert!((got - exact).abs() <= bound, "lg2 {x}");
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
