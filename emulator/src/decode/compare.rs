//! The comparison and selection family: `setp`, `set`, `selp`, `slct`, in
//! every form of the PTX ISA (integer, `.f32/.f64`, `.f16/.bf16` and the
//! packed `.f16x2/.bf16x2`, with and without a `BoolOp` predicate).
//!
//! Results narrower than their destination register are sign-extended for
//! signed types and zero-extended otherwise (PTX "Operand Size Exceeding
//! Instruction-Type Size"): `selp.s16` into a `.b32` register of `-1` gives
//! `0xffffffff`, `set.lt.s16.f16` gives all ones in the register's width.

use prlx_ptx::ast::{self, Operand};

use super::{
    FnCtx, Mods, ModuleCtx, need_type, operands, pred_dst, pred_src, reg_width, src, unsupported,
};
use crate::alu::{self, AluCtx};
use crate::instr::*;
use crate::program::sreg;
use crate::semantics::compare::{compare_ftz, compare_packed};
use crate::semantics::cvt::widen_to_register;
use crate::semantics::{CmpOp, ScalarType};

/// `.and/.or/.xor` as stored in `AluCtx::aux` bits 0..2 (0: none).
fn bool_op(mods: &mut Mods<'_>) -> u32 {
    match mods.take_any(&[".and", ".or", ".xor"]) {
        Some(".and") => 1,
        Some(".or") => 2,
        Some(".xor") => 3,
        _ => 0,
    }
}

/// The modifiers `setp` and `set` share: `.cmp` (required), `.and/.or/.xor`
/// (see [`bool_op`]) and `.ftz`.
fn compare_modifiers(
    mods: &mut Mods<'_>,
    inst: &ast::Instruction,
) -> Result<(CmpOp, u32, bool), String> {
    let cmp = mods.take_cmp().ok_or_else(|| unsupported(inst))?;
    Ok((cmp, bool_op(mods), mods.take(".ftz")))
}

#[inline]
fn combine(op: u32, t: bool, c: bool) -> bool {
    match op {
        1 => t & c,
        2 => t | c,
        3 => t ^ c,
        _ => t,
    }
}

/// The destination register's width when wider than `ty` (0 otherwise), for
/// extending narrow results.
fn widen_bits(fc: &FnCtx<'_>, op: &Operand, ty: ScalarType) -> u32 {
    match reg_width(fc, op) {
        Some(w) if w > ty.bits() && w <= 64 => w,
        _ => 0,
    }
}

fn no_pred() -> [PredIx; 2] {
    [PredIx::MAX, PredIx::MAX]
}

pub(super) fn decode_setp(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let (cmp, bop, ftz) = compare_modifiers(mods, inst)?;
    let ty = need_type(mods, inst)?;
    if ty.is_packed() && (int_only(cmp) || (ftz && ty == ScalarType::BF16x2)) {
        return Err(un());
    }
    let n = if bop != 0 { 4 } else { 3 };
    let o = operands(inst, n)?;
    let (d, dn) = match &o[0] {
        Operand::PredicatePair(p, q) => (
            pred_dst(fc, &Operand::Register(p.clone()))?,
            pred_dst(fc, &Operand::Register(q.clone()))?,
        ),
        other => (pred_dst(fc, other)?, None),
    };
    let c = if bop != 0 {
        pred_src(fc, &o[3])?
    } else {
        PredSrc::Const(true)
    };
    if ty.is_packed() {
        // setp.f16x2 p|q: p from the lower halves, q from the upper halves,
        // each combined with `c` (not the negation of each other).
        let mut ctx = AluCtx::new(ty);
        ctx.cmp = cmp;
        ctx.mode.ftz = ftz;
        ctx.aux = bop;
        return Ok(Op::Family(Box::new(FamilyOp {
            run: setp_packed,
            ctx,
            rows: [
                sreg::ZERO,
                src(m, fc, &o[1], ty)?,
                src(m, fc, &o[2], ty)?,
                sreg::ZERO,
            ],
            pd: [d.unwrap_or(PredIx::MAX), dn.unwrap_or(PredIx::MAX)],
            ps: c,
        })));
    }
    let f: alu::CmpFn = if ty.is_float() && ty != ScalarType::TF32 {
        alu::cmp_float
    } else if !ty.is_float() && !cmp.is_float_only() && ty != ScalarType::Pred && ty.bits() <= 64 {
        alu::cmp_int
    } else {
        return Err(un());
    };
    let combine = match bop {
        0 => None,
        1 => Some((BoolOp::And, c)),
        2 => Some((BoolOp::Or, c)),
        _ => Some((BoolOp::Xor, c)),
    };
    let mut ctx = AluCtx::new(ty);
    ctx.cmp = cmp;
    ctx.mode.ftz = ftz;
    Ok(Op::Setp {
        f,
        ctx,
        d,
        dn,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], ty)?,
        combine,
    })
}

fn setp_packed(op: &FamilyOp, v: &mut [u64], preds: &mut [u32], exec: u32) {
    let c = op.pred_bits(preds);
    let (mut p, mut q) = (0u32, 0u32);
    for l in FamilyOp::lanes(exec) {
        let (a, b) = op.sources(v, l);
        let (hi, lo) = compare_packed(op.ctx.cmp, op.ctx.ty, op.ctx.mode.ftz, a, b);
        let cl = c >> l & 1 != 0;
        p |= (combine(op.ctx.aux, lo, cl) as u32) << l;
        q |= (combine(op.ctx.aux, hi, cl) as u32) << l;
    }
    op.set_pred(preds, 0, p, exec);
    op.set_pred(preds, 1, q, exec);
}

/// The value `set` writes for true into one element of `dtype`.
fn true_value(dtype: ScalarType) -> u64 {
    match dtype {
        ScalarType::F32 => 1.0f32.to_bits() as u64,
        ScalarType::F16 | ScalarType::F16x2 => 0x3c00,
        ScalarType::BF16 | ScalarType::BF16x2 => 0x3f80,
        t => t.mask(),
    }
}

pub(super) fn decode_set(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    use ScalarType::*;
    let un = || unsupported(inst);
    let (cmp, bop, ftz) = compare_modifiers(mods, inst)?;
    let dty = need_type(mods, inst)?;
    let sty = need_type(mods, inst)?;
    let half_source = matches!(sty, F16 | BF16);
    let legal = match (dty, sty) {
        (U32 | S32 | F32, s) if !s.is_packed() && s != TF32 && s != Pred && s.bits() <= 64 => true,
        (F16 | BF16, s) if !s.is_packed() && s != TF32 && s != Pred && s.bits() <= 64 => true,
        (U16 | S16, _) => half_source,
        (F16x2, F16x2) | (BF16x2, BF16x2) => true,
        (U32 | S32, F16x2 | BF16x2) => true,
        _ => false,
    };
    if !legal || (cmp.is_float_only() && !sty.is_float()) || (int_only(cmp) && sty.is_float()) {
        return Err(un());
    }
    let o = operands(inst, if bop != 0 { 4 } else { 3 })?;
    let mut ctx = AluCtx::new(dty);
    ctx.ty2 = sty;
    ctx.cmp = cmp;
    ctx.mode.ftz = ftz;
    ctx.aux = bop | widen_bits(fc, &o[0], dty) << 8;
    let ps = if bop != 0 {
        pred_src(fc, &o[3])?
    } else {
        PredSrc::Const(true)
    };
    Ok(Op::Family(Box::new(FamilyOp {
        run: if sty.is_packed() {
            set_packed
        } else {
            set_scalar
        },
        ctx,
        rows: [
            super::dst(fc, &o[0])?,
            src(m, fc, &o[1], sty)?,
            src(m, fc, &o[2], sty)?,
            sreg::ZERO,
        ],
        pd: no_pred(),
        ps,
    })))
}

fn set_scalar(op: &FamilyOp, v: &mut [u64], preds: &mut [u32], exec: u32) {
    let c = op.pred_bits(preds);
    let ctx = &op.ctx;
    let (bop, width) = (ctx.aux & 0xff, ctx.aux >> 8);
    let one = true_value(ctx.ty);
    for l in FamilyOp::lanes(exec) {
        let (a, b) = op.sources(v, l);
        let t = compare_ftz(ctx.cmp, ctx.ty2, ctx.mode.ftz, a, b);
        let r = if combine(bop, t, c >> l & 1 != 0) {
            one
        } else {
            0
        };
        let r = if width != 0 {
            widen_to_register(ctx.ty, r, width)
        } else {
            r
        };
        FamilyOp::set(v, op.rows[0], l, r);
    }
}

/// `set.cmp.dtype.f16x2`: each half of `d` from the same half of `a`, `b`.
fn set_packed(op: &FamilyOp, v: &mut [u64], preds: &mut [u32], exec: u32) {
    let c = op.pred_bits(preds);
    let ctx = &op.ctx;
    let bop = ctx.aux & 0xff;
    let one = if ctx.ty.is_packed() {
        true_value(ctx.ty)
    } else {
        0xffff
    };
    for l in FamilyOp::lanes(exec) {
        let (a, b) = op.sources(v, l);
        let (hi, lo) = compare_packed(ctx.cmp, ctx.ty2, ctx.mode.ftz, a, b);
        let cl = c >> l & 1 != 0;
        let lo = if combine(bop, lo, cl) { one } else { 0 };
        let hi = if combine(bop, hi, cl) { one } else { 0 };
        FamilyOp::set(v, op.rows[0], l, hi << 16 | lo);
    }
}

pub(super) fn decode_selp(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let ty = need_type(mods, inst)?;
    if ty == ScalarType::Pred || ty == ScalarType::B128 || ty.is_packed() || ty == ScalarType::TF32
    {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 4)?;
    let (d, a, b) = (
        super::dst(fc, &o[0])?,
        src(m, fc, &o[1], ty)?,
        src(m, fc, &o[2], ty)?,
    );
    let p = pred_src(fc, &o[3])?;
    let width = widen_bits(fc, &o[0], ty);
    if width == 0 {
        return Ok(Op::Selp { d, a, b, p });
    }
    let mut ctx = AluCtx::new(ty);
    ctx.aux = width;
    Ok(Op::Family(Box::new(FamilyOp {
        run: selp_widen,
        ctx,
        rows: [d, a, b, sreg::ZERO],
        pd: no_pred(),
        ps: p,
    })))
}

/// `selp` into a register wider than its type.
fn selp_widen(op: &FamilyOp, v: &mut [u64], preds: &mut [u32], exec: u32) {
    let c = op.pred_bits(preds);
    for l in FamilyOp::lanes(exec) {
        let x = if c >> l & 1 != 0 {
            FamilyOp::get(v, op.rows[1], l)
        } else {
            FamilyOp::get(v, op.rows[2], l)
        };
        let x = widen_to_register(op.ctx.ty, x & op.ctx.ty.mask(), op.ctx.aux);
        FamilyOp::set(v, op.rows[0], l, x);
    }
}

pub(super) fn decode_slct(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let ftz = mods.take(".ftz");
    let dty = need_type(mods, inst)?;
    let sty = need_type(mods, inst)?;
    let dty_ok =
        (dty.is_int() || dty.is_bits() || matches!(dty, ScalarType::F32 | ScalarType::F64))
            && dty.bits() >= 16
            && dty.bits() <= 64;
    if !matches!(sty, ScalarType::S32 | ScalarType::F32)
        || !dty_ok
        || (ftz && sty != ScalarType::F32)
    {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 4)?;
    let mut ctx = AluCtx::new(dty);
    ctx.ty2 = sty;
    ctx.mode.ftz = ftz;
    ctx.aux = widen_bits(fc, &o[0], dty);
    Ok(Op::Alu3 {
        f: alu::slct,
        ctx,
        d: super::dst(fc, &o[0])?,
        a: src(m, fc, &o[1], dty)?,
        b: src(m, fc, &o[2], dty)?,
        c: src(m, fc, &o[3], sty)?,
    })
}

/// Comparison operators that only apply to integers (`lo ls hi hs`).
fn int_only(cmp: CmpOp) -> bool {
    matches!(cmp, CmpOp::Lo | CmpOp::Ls | CmpOp::Hi | CmpOp::Hs)
}
