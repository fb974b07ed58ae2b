//! Bit-field masks and extensions: `bmsk.{clamp,wrap}.b32` and
//! `szext.{clamp,wrap}.{s32,u32}` (sm_70+). The semantics are
//! `semantics::bits::{bmsk, szext}`.

use prlx_ptx::ast;

use super::{FnCtx, Mods, ModuleCtx, need_type, operands, src, unsupported};
use crate::alu::AluCtx;
use crate::instr::*;
use crate::program::sreg;
use crate::semantics::ScalarType;
use crate::semantics::bits::{bmsk, szext};

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let clamp = match mods.take_any(&[".clamp", ".wrap"]) {
        Some(".clamp") => true,
        Some(_) => false,
        None => return Err(format!("{}: needs .clamp or .wrap", unsupported(inst))),
    };
    let ty = need_type(mods, inst)?;
    let (run, legal): (FamilyFn, bool) = if inst.opcode == "bmsk" {
        (run_bmsk, ty == ScalarType::B32)
    } else {
        (run_szext, matches!(ty, ScalarType::S32 | ScalarType::U32))
    };
    if !legal {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 3)?;
    let mut ctx = AluCtx::new(ty);
    ctx.aux = clamp as u32;
    Ok(Op::Family(Box::new(FamilyOp {
        run,
        ctx,
        rows: [
            super::dst(fc, &o[0])?,
            src(m, fc, &o[1], ty)?,
            src(m, fc, &o[2], ScalarType::U32)?,
            sreg::ZERO,
        ],
        pd: [PredIx::MAX; 2],
        ps: PredSrc::Const(true),
    })))
}

fn for_lanes(op: &FamilyOp, v: &mut [u64], exec: u32, f: impl Fn(u64, u64) -> u64) {
    for l in FamilyOp::lanes(exec) {
        let (a, b) = op.sources(v, l);
        FamilyOp::set(v, op.rows[0], l, f(a, b));
    }
}

fn run_bmsk(op: &FamilyOp, v: &mut [u64], _: &mut [u32], exec: u32) {
    let clamp = op.ctx.aux != 0;
    for_lanes(op, v, exec, |a, b| bmsk(a as u32, b as u32, clamp));
}

fn run_szext(op: &FamilyOp, v: &mut [u64], _: &mut [u32], exec: u32) {
    let (clamp, signed) = (op.ctx.aux != 0, op.ctx.ty == ScalarType::S32);
    for_lanes(op, v, exec, |a, b| szext(signed, a, b as u32, clamp));
}
