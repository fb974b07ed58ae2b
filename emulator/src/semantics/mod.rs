//! Scalar PTX instruction semantics as pure functions over bit patterns.
//!
//! Every value travels as a `u64` whose low bits hold the operand in the
//! register's natural width (an `.f32` lives in the low 32 bits, an `.s16` in
//! the low 16 bits, a predicate is `0` or `1`); results come back the same way,
//! zero-extended to the instruction type's width (use
//! [`ScalarType::extend`] or [`cvt::widen_to_register`] where PTX asks for a
//! signed result to be sign-extended into a wider register). Functions never
//! allocate and never panic on any bit pattern. The decoder validates type
//! combinations when a module loads, so the per-lane
//! functions take already validated types; the checks it needs are
//! [`cvt::validate`], [`atomic::AtomOp::supports`], [`int::mul_wide`]'s
//! `Option` and the `parse` constructors on the modifier types.
//!
//! Where to start: [`ScalarType`] and the modifier types in this module, then
//! one module per instruction family:
//! - [`int`]: `add sub mul mad mul24 mad24 div rem abs neg min max sad`, carries;
//! - [`bits`]: logic, `lop3`, shifts, `shf`, `popc clz bfind brev bfe bfi fns prmt dp4a dp2a`;
//! - [`float`]: float `add sub mul fma div rcp sqrt min max abs neg copysign testp`;
//! - [`approx`]: `sin cos lg2 ex2 tanh rsqrt` (`.approx`);
//! - [`compare`](mod@compare): `setp set selp slct`;
//! - [`cvt`](mod@cvt): conversions;
//! - [`atomic`]: the read-modify-write step of `atom`/`red`;
//! - [`mbarrier`]: the `mbarrier` object's phases, arrivals and transactions;
//! - [`softfloat`]: exact arithmetic in any rounding direction, behind `.rz .rm .rp`.
//!
//! Floating-point results that are NaN are always the canonical NaN of the
//! format (see [`float`]), and every arithmetic result is the correctly
//! rounded one, so runs are bit-identical across hosts. The one host
//! dependence is [`approx`], evaluated through the host's `f64` libm: a libm
//! differing in the last `f64` bit could, very rarely, flip a rounded result.
//!
//! Hot entry points (`.f32`/`.f64` round-to-nearest, 16-bit floats, common
//! `cvt` pairs, integer ops) take short host-arithmetic fast paths; each fast
//! path is tested bit-for-bit against the general path.

pub mod approx;
mod approx_tables;
pub mod atomic;
pub mod bits;
pub mod compare;
pub mod cvt;
pub mod float;
pub mod fp8;
pub mod int;
pub mod mbarrier;
pub mod softfloat;
mod types;

pub use atomic::{AtomOp, atomic_apply};
pub use bits::PrmtMode;
pub use compare::{BoolOp, compare, compare_ftz};
pub use cvt::{CvtError, CvtMode, cvt};
pub use float::{DivKind, TestpOp};
pub use softfloat::FloatFormat;
pub use types::{
    CmpOp, FloatMode, FloatRounding, IntRounding, ScalarType, is_emulated, parse_type,
};

/// Every entry point, every type, arbitrary bit patterns: nothing may panic
/// (debug builds check arithmetic overflow, so this also guards the
/// "no overflow on any input" claim).
#[cfg(test)]
mod no_panic_tests {
    use super::*;
    use ScalarType::*;

    const TYPES: [ScalarType; 21] = [
        Pred, B8, B16, B32, B64, B128, U8, U16, U32, U64, S8, S16, S32, S64, F16, F16x2, BF16,
        BF16x2, TF32, F32, F64,
    ];
    const FLOATS: [ScalarType; 6] = [F16, F16x2, BF16, BF16x2, F32, F64];
    const ROUNDINGS: [FloatRounding; 4] = [
        FloatRounding::Rn,
        FloatRounding::Rz,
        FloatRounding::Rm,
        FloatRounding::Rp,
    ];

    fn operands() -> Vec<u64> {
        let mut v = vec![
            0,
            1,
            u64::MAX,
            1 << 63,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x7f80_0000,
            0x7fc0_0000,
            0x0000_0001_0000_0000,
        ];
        let mut s = 0x0123_4567_89ab_cdefu64;
        for _ in 0..24 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(s);
        }
        v
    }

    #[test]
    fn integer_and_bit_families_accept_any_bits() {
        let ops = operands();
        for &ty in &TYPES {
            for &a in &ops {
                for &b in &ops {
                    let amount = b as u32;
                    let _ = (
                        int::add(ty, a, b),
                        int::sub(ty, a, b),
                        int::mul_lo(ty, a, b),
                        int::mul_hi(ty, a, b),
                    );
                    let _ = (
                        int::mul_wide(ty, a, b),
                        int::mad_wide(ty, a, b, a),
                        int::div(ty, a, b),
                        int::rem(ty, a, b),
                    );
                    let _ = (
                        int::abs(ty, a),
                        int::neg(ty, a),
                        int::min(ty, a, b),
                        int::max(ty, a, b),
                        int::sad(ty, a, b, a),
                    );
                    let _ = (
                        int::addc(ty, a, b, true),
                        int::subc(ty, a, b, true),
                        int::mad_cc(ty, true, a, b, a, true),
                    );
                    let _ = (
                        int::mul24_hi(ty, a, b),
                        int::mad24_lo(ty, a, b, a),
                        int::relu(ty, a),
                    );
                    let _ = (
                        bits::shl(ty, a, amount),
                        bits::shr(ty, a, amount),
                        bits::popc(ty, a),
                        bits::clz(ty, a),
                    );
                    let _ = (
                        bits::bfind(ty, a, true),
                        bits::brev(ty, a),
                        bits::not(ty, a),
                        bits::cnot(ty, a),
                    );
                    let _ = (
                        bits::bfe(ty, a, amount, (b >> 8) as u32),
                        bits::bfi(ty, a, b, amount, (b >> 8) as u32),
                    );
                    let _ = (
                        bits::fns(a as u32, amount, (b >> 32) as i32),
                        bits::bmsk(a as u32, amount, b & 1 == 1),
                    );
                    let _ = (
                        bits::szext(true, a, amount, false),
                        bits::lop3(a, b, a ^ b, b as u8),
                    );
                    let _ = (
                        bits::dp4a(true, false, a, b, a),
                        bits::dp2a(true, true, false, a, b, a),
                    );
                    for mode in [PrmtMode::Generic, PrmtMode::B4e, PrmtMode::Rc16] {
                        let _ = bits::prmt(a, b, a ^ b, mode);
                    }
                    for op in [CmpOp::Lt, CmpOp::Hs, CmpOp::Neu, CmpOp::Nan] {
                        let _ = (compare(op, ty, a, b), compare_ftz(op, ty, true, a, b));
                    }
                    let _ = compare::slct(ty, true, a, b, a ^ b);
                    for op in [
                        AtomOp::Add,
                        AtomOp::Sub,
                        AtomOp::Min,
                        AtomOp::Max,
                        AtomOp::Inc,
                        AtomOp::Dec,
                        AtomOp::Cas,
                    ] {
                        if op.supports(ty) {
                            let _ = atomic_apply(op, ty, a, b, a ^ b);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn float_families_accept_any_bits() {
        let ops = operands();
        for &ty in &FLOATS {
            for &a in &ops {
                for &b in &ops {
                    for rounding in ROUNDINGS {
                        for (ftz, sat, relu) in [
                            (false, false, false),
                            (true, true, false),
                            (false, false, true),
                        ] {
                            let m = FloatMode::new(rounding)
                                .with_ftz(ftz)
                                .with_sat(sat)
                                .with_relu(relu);
                            let _ = (
                                float::add(ty, m, a, b),
                                float::sub(ty, m, a, b),
                                float::mul(ty, m, a, b),
                            );
                            let _ = (
                                float::fma(ty, m, a, b, a ^ b),
                                float::rcp(ty, m, a),
                                float::sqrt(ty, m, a),
                            );
                            for kind in [DivKind::Ieee, DivKind::Approx, DivKind::Full] {
                                let _ = float::div(ty, m, kind, a, b);
                            }
                        }
                    }
                    let _ = (
                        float::min(ty, true, true, a, b),
                        float::max(ty, false, false, a, b),
                    );
                    let _ = float::min_max_xorsign_abs(ty, false, true, true, a, b);
                    let _ = (
                        float::abs(ty, true, a),
                        float::neg(ty, false, a),
                        float::copysign(ty, a, b),
                    );
                    let _ = (
                        float::testp(ty, TestpOp::Subnormal, a),
                        compare::compare_packed(CmpOp::Geu, ty, true, a, b),
                    );
                    let _ = (
                        approx::sin(ty, true, a),
                        approx::cos(ty, false, a),
                        approx::lg2(ty, false, a),
                    );
                    let _ = (
                        approx::ex2(ty, true, a),
                        approx::tanh(ty, a),
                        approx::rsqrt(ty, true, a),
                    );
                }
            }
        }
    }

    #[test]
    fn every_cvt_pair_accepts_any_bits() {
        let ops = operands();
        let modes = [
            CvtMode::default(),
            CvtMode {
                int_rounding: Some(IntRounding::Rmi),
                ftz: true,
                sat: true,
                ..CvtMode::default()
            },
            CvtMode {
                float_rounding: Some(FloatRounding::Rp),
                relu: true,
                satfinite: true,
                ..CvtMode::default()
            },
        ];
        for &dst in &TYPES {
            for &src in &TYPES {
                for mode in modes {
                    if cvt::validate(dst, src, mode).is_err() {
                        continue;
                    }
                    for &a in &ops {
                        let r = cvt(dst, src, mode, a);
                        assert_eq!(
                            r & !dst.mask(),
                            0,
                            "{dst:?} <- {src:?}: result wider than the type"
                        );
                        let _ = cvt::widen_to_register(dst, r, 64);
                    }
                }
            }
        }
        for &a in &ops {
            let _ = (
                cvt::cvt_rna_tf32(a, true),
                cvt::cvt_tf32(FloatRounding::Rz, true, true, a),
            );
            let _ = cvt::cvt_pack_f32x2(BF16x2, modes[2], a, a >> 32);
        }
    }
}
