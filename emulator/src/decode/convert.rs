//! The conversion family: every form of `cvt` the PTX ISA defines for the
//! types the machine holds.
//!
//! - Scalar integer/float conversions (`semantics::cvt`): rounding,
//!   saturation, `.ftz`, `.relu`, `.satfinite`; a destination register wider
//!   than the destination type receives the result sign-extended (signed
//!   types) or zero-extended (PTX "Operand Size Exceeding Instruction-Type
//!   Size").
//! - Packed halves from two `.f32`: `cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`
//!   (`a` to the upper half).
//! - TF32: `cvt.rna{.satfinite}.tf32.f32`, `cvt.{rn,rz}{.relu}{.satfinite}.tf32.f32`.
//! - FP8 pairs (`semantics::fp8`): `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b`
//!   (`a` to the upper byte), `cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a`,
//!   `cvt.rn{.relu}.{f16x2,bf16x2}.{e4m3x2,e5m2x2} d, a`.
//!
//! - Packing with saturation: `cvt.pack.sat.{u16,s16}.s32 d, a, b` and
//!   `cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c` (`b` in the low
//!   bits, `a` above it, then `c`).
//!
//! Anything else (stochastic rounding `.rs`, FP4/FP6 `.e2m1x2` …, `.ue8m0x2`)
//! is refused at load naming the instruction.

use prlx_ptx::ast;

use super::{
    FnCtx, Mods, ModuleCtx, dst, is_pred_operand, need_type, operands, reg_width, src, unsupported,
};
use crate::alu::{self, Alu1Fn, Alu2Fn, AluCtx};
use crate::instr::*;
use crate::semantics::cvt::{cvt_rna_tf32, cvt_tf32};
use crate::semantics::fp8::{Fp8, from_fp8, to_fp8};
use crate::semantics::softfloat::FloatFormat;
use crate::semantics::{CvtMode, FloatRounding, IntRounding, ScalarType, parse_type};

pub(super) fn decode_cvt(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    if mods.list.iter().any(|x| {
        matches!(
            *x,
            ".rs" | ".e2m1x2" | ".e2m3x2" | ".e3m2x2" | ".ue8m0x2" | ".rpi.ue8m0x2" | ".s2f6x2"
        )
    }) {
        return Err(format!(
            "{}: stochastic rounding and FP4/FP6/UE8M0 conversions are not emulated",
            un()
        ));
    }
    if let Some(i) = mods.list.iter().position(|x| Fp8::parse(x).is_some()) {
        return decode_fp8(m, fc, inst, mods, i);
    }
    if mods.take(".pack") {
        return decode_pack(m, fc, inst, mods);
    }
    let rna = mods.take(".rna");
    let int_rounding = mods
        .take_where(|m| IntRounding::parse(m).is_some() && m.starts_with('.'))
        .and_then(IntRounding::parse);
    let float_rounding = mods.take_rounding();
    let cvt_mode = CvtMode {
        int_rounding,
        float_rounding,
        ftz: mods.take(".ftz"),
        sat: mods.take(".sat"),
        relu: mods.take(".relu"),
        satfinite: mods.take(".satfinite"),
    };
    let dty = need_type(mods, inst)?;
    let sty = need_type(mods, inst)?;
    let mut ctx = AluCtx::new(dty);
    ctx.ty2 = sty;
    ctx.cvt = cvt_mode;
    if dty == ScalarType::TF32 {
        // cvt.rna{.satfinite}.tf32.f32, cvt.{rn,rz}{.relu}{.satfinite}.tf32.f32
        let rounding_ok = if rna {
            float_rounding.is_none() && !cvt_mode.relu
        } else {
            matches!(float_rounding, Some(FloatRounding::Rn | FloatRounding::Rz))
        };
        if sty != ScalarType::F32
            || !rounding_ok
            || int_rounding.is_some()
            || cvt_mode.ftz
            || cvt_mode.sat
        {
            return Err(un());
        }
        ctx.aux = rna as u32;
        return alu1(m, fc, inst, tf32, ctx, sty);
    }
    if rna {
        return Err(un());
    }
    if dty.is_packed() {
        // cvt.rn.f16x2.f32 d, a, b
        if sty != ScalarType::F32 || float_rounding.is_none() || int_rounding.is_some() {
            return Err(un());
        }
        return alu2(m, fc, inst, alu::cvt_pack_half2, ctx, sty);
    }
    crate::semantics::cvt::validate(dty, sty, cvt_mode).map_err(|e| format!("{} ({e})", un()))?;
    let o = operands(inst, 2)?;
    if is_pred_operand(fc, &o[1]) {
        return Err(un());
    }
    // A destination register wider than the type: sign- or zero-extend.
    if let Some(w) = reg_width(fc, &o[0])
        && w > dty.bits()
        && w <= 64
    {
        ctx.aux = w;
    }
    Ok(Op::Alu1 {
        f: alu::cvt,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], sty)?,
    })
}

/// `aux` 1: `.rna`; otherwise `cvt.mode`'s rounding.
fn tf32(c: &AluCtx, a: u64) -> u64 {
    if c.aux == 1 {
        cvt_rna_tf32(a, c.cvt.satfinite)
    } else {
        cvt_tf32(
            c.cvt.float_rounding.unwrap_or_default(),
            c.cvt.relu,
            c.cvt.satfinite,
            a,
        )
    }
}

/// FP8 pair conversions; `fp8_at` is the index of the FP8 type modifier.
fn decode_fp8(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
    fp8_at: usize,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let fp8_name = mods.list[fp8_at];
    let fmt = Fp8::parse(fp8_name).ok_or_else(un)?;
    if !fp8_name.ends_with("x2") {
        return Err(format!(
            "{}: FP8 conversions take pairs (`{fp8_name}x2`)",
            un()
        ));
    }
    mods.used[fp8_at] = true;
    let rn = mods.take(".rn");
    let satfinite = mods.take(".satfinite");
    let relu = mods.take(".relu");
    let other = mods.take_type();
    // The FP8 type comes first when it is the destination.
    let other_first = mods
        .list
        .iter()
        .position(|x| parse_type(x).is_some())
        .is_some_and(|i| i < fp8_at);
    let mut ctx = AluCtx::new(ScalarType::B16);
    ctx.aux = (fmt == Fp8::E5M2) as u32 | (relu as u32) << 1;
    match (other, other_first) {
        (Some(ScalarType::F32), false) if rn && satfinite => {
            alu2(m, fc, inst, f32x2_to_fp8x2, ctx, ScalarType::F32)
        }
        (Some(ScalarType::F16x2), false) if rn && satfinite => {
            alu1(m, fc, inst, f16x2_to_fp8x2, ctx, ScalarType::F16x2)
        }
        (Some(ty @ (ScalarType::F16x2 | ScalarType::BF16x2)), true) if rn && !satfinite => alu1(
            m,
            fc,
            inst,
            if ty == ScalarType::F16x2 {
                fp8x2_to_f16x2
            } else {
                fp8x2_to_bf16x2
            },
            ctx,
            ScalarType::B16,
        ),
        _ => Err(format!(
            "{}: FP8 conversions are cvt.rn.satfinite{{.relu}}.f8x2.{{f32,f16x2}} and cvt.rn{{.relu}}.{{f16x2,bf16x2}}.f8x2",
            un()
        )),
    }
}

fn fp8_of(c: &AluCtx) -> (Fp8, bool) {
    let fmt = if c.aux & 1 != 0 { Fp8::E5M2 } else { Fp8::E4M3 };
    (fmt, c.aux & 2 != 0)
}

/// `cvt.rn.satfinite.f8x2.f32 d, a, b`: `a` to the upper byte.
fn f32x2_to_fp8x2(c: &AluCtx, a: u64, b: u64) -> u64 {
    let (fmt, relu) = fp8_of(c);
    let f = |x: u64| to_fp8(fmt, f32::from_bits(x as u32) as f64, relu) as u64;
    f(a) << 8 | f(b)
}

fn f16_value(bits: u64) -> f64 {
    half::f16::from_bits(bits as u16).to_f64()
}

/// `cvt.rn.satfinite.f8x2.f16x2 d, a`: each half to the byte in its place.
fn f16x2_to_fp8x2(c: &AluCtx, a: u64) -> u64 {
    let (fmt, relu) = fp8_of(c);
    let f = |x: u64| to_fp8(fmt, f16_value(x & 0xffff), relu) as u64;
    f(a >> 16) << 8 | f(a)
}

/// `cvt.rn.f16x2.f8x2 d, a`: exact; each byte to the half in its place.
fn fp8x2_to_f16x2(c: &AluCtx, a: u64) -> u64 {
    fp8x2_widen(c, a, FloatFormat::F16, |v| half::f16::from_f64(v).to_bits())
}

/// Each byte of `a`'s low half (an fp8 of `c`'s format) to the 16-bit float
/// of format `to` in its place (`bits` rounds an f64 to it; fp8 values are
/// exact in both f16 and bf16).
#[inline(always)]
fn fp8x2_widen(c: &AluCtx, a: u64, to: FloatFormat, bits: impl Fn(f64) -> u16) -> u64 {
    let (fmt, relu) = fp8_of(c);
    let f = |x: u64| {
        let v = from_fp8(fmt, x as u8);
        if v.is_nan() {
            to.canonical_nan()
        } else if relu && v.is_sign_negative() {
            0
        } else {
            bits(v) as u64
        }
    };
    f((a >> 8) & 0xff) << 16 | f(a & 0xff)
}

/// `cvt.pack.sat`: `aux` is the converted width in bits.
fn decode_pack(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    if !mods.take(".sat") {
        return Err(format!("{}: cvt.pack needs .sat", un()));
    }
    let (bits, signed) =
        match mods.take_any(&[".u16", ".s16", ".u8", ".s8", ".u4", ".s4", ".u2", ".s2"]) {
            Some(t) => (
                t[2..].parse::<u32>().map_err(|_| un())?,
                t.starts_with(".s"),
            ),
            None => return Err(un()),
        };
    if !mods.take(".s32") {
        return Err(un());
    }
    let with_c = bits < 16;
    if with_c && !mods.take(".b32") {
        return Err(un());
    }
    let o = operands(inst, if with_c { 4 } else { 3 })?;
    let mut ctx = AluCtx::new(if signed {
        ScalarType::S32
    } else {
        ScalarType::U32
    });
    ctx.aux = bits;
    Ok(Op::Alu3 {
        f: pack_sat,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ScalarType::S32)?,
        b: src(m, fc, &o[2], ScalarType::S32)?,
        c: if with_c {
            src(m, fc, &o[3], ScalarType::B32)?
        } else {
            crate::program::sreg::ZERO
        },
    })
}

/// Saturates `a` and `b` (`.s32`) to `aux` bits (signed when `ty` is
/// `.s32`) and packs `b | a << aux | c << 2 * aux` into 32 bits.
fn pack_sat(c: &AluCtx, a: u64, b: u64, upper: u64) -> u64 {
    let bits = c.aux;
    let (lo, hi) = if c.ty == ScalarType::S32 {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    let mask = (1u64 << bits) - 1;
    let sat = |x: u64| ((x as u32 as i32 as i64).clamp(lo, hi) as u64) & mask;
    let packed = sat(b) | sat(a) << bits;
    if bits >= 16 {
        packed
    } else {
        (packed | upper << (2 * bits)) & 0xffff_ffff
    }
}

/// `cvt.rn.bf16x2.f8x2 d, a`: exact, like [`fp8x2_to_f16x2`].
fn fp8x2_to_bf16x2(c: &AluCtx, a: u64) -> u64 {
    fp8x2_widen(c, a, FloatFormat::BF16, |v| {
        half::bf16::from_f64(v).to_bits()
    })
}

/// `d, a` of a one-source conversion: both operands checked, `a` read as `sty`.
fn alu1(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    inst: &ast::Instruction,
    f: Alu1Fn,
    ctx: AluCtx,
    sty: ScalarType,
) -> Result<Op, String> {
    let o = operands(inst, 2)?;
    Ok(Op::Alu1 {
        f,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], sty)?,
    })
}

/// `d, a, b` of a two-source conversion (a pair packed into `d`), both
/// sources read as `sty`.
fn alu2(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    inst: &ast::Instruction,
    f: Alu2Fn,
    ctx: AluCtx,
    sty: ScalarType,
) -> Result<Op, String> {
    let o = operands(inst, 3)?;
    Ok(Op::Alu2 {
        f,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], sty)?,
        b: src(m, fc, &o[2], sty)?,
    })
}
