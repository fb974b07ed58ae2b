//! Warp-level instructions: `shfl.sync`, `vote`, `activemask`, `match.sync`, `redux.sync`.

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "shfl" => {
            if !mods.take(".sync") {
                return Err(format!("{}: only shfl.sync is supported", un()));
            }
            let mode = match mods.take_any(&[".up", ".down", ".bfly", ".idx"]) {
                Some(".up") => ShflMode::Up,
                Some(".down") => ShflMode::Down,
                Some(".bfly") => ShflMode::Bfly,
                Some(_) => ShflMode::Idx,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let o = operands(inst, 5)?;
            let (d, dp) = dst_and_pred(fc, &o[0])?;
            Ok(Op::Shfl {
                mode,
                d,
                dp,
                a: src(m, fc, &o[1], ty)?,
                b: src(m, fc, &o[2], ScalarType::U32)?,
                c: src(m, fc, &o[3], ScalarType::U32)?,
                mask: src(m, fc, &o[4], ScalarType::U32)?,
            })
        }
        "vote" => {
            let sync = mods.take(".sync");
            let mode = match mods.take_any(&[".all", ".any", ".uni", ".ballot"]) {
                Some(".all") => VoteMode::All,
                Some(".any") => VoteMode::Any,
                Some(".uni") => VoteMode::Uni,
                Some(_) => VoteMode::Ballot,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            let o = operands(inst, if sync { 3 } else { 2 })?;
            let mask = if sync {
                src(m, fc, &o[2], ScalarType::U32)?
            } else {
                const_row(m, 0xffff_ffff)
            };
            let (d, dp) = if mode == VoteMode::Ballot {
                if ty != ScalarType::B32 {
                    return Err(un());
                }
                (Some(dst(fc, &o[0])?), None)
            } else {
                if ty != ScalarType::Pred {
                    return Err(un());
                }
                (None, pred_dst(fc, &o[0])?)
            };
            Ok(Op::Vote {
                mode,
                d,
                dp,
                p: pred_src(fc, &o[1])?,
                mask,
            })
        }
        "activemask" => {
            let ty = need_type(mods, inst)?;
            if ty != ScalarType::B32 {
                return Err(un());
            }
            let o = operands(inst, 1)?;
            Ok(Op::Activemask { d: dst(fc, &o[0])? })
        }
        "match" => {
            let all = match mods.take_any(&[".any", ".all"]) {
                Some(".all") => true,
                Some(_) => false,
                None => return Err(un()),
            };
            if !mods.take(".sync") {
                return Err(un());
            }
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::B32 | ScalarType::B64) {
                return Err(un());
            }
            let o = operands(inst, 3)?;
            let (d, dp) = dst_and_pred(fc, &o[0])?;
            if dp.is_some() && !all {
                return Err(un());
            }
            Ok(Op::Match {
                all,
                wide: ty == ScalarType::B64,
                d,
                dp,
                a: src(m, fc, &o[1], ty)?,
                mask: src(m, fc, &o[2], ScalarType::U32)?,
            })
        }
        "redux" => {
            if !mods.take(".sync") {
                return Err(un());
            }
            let op = match mods.take_any(&[".add", ".min", ".max", ".and", ".or", ".xor"]) {
                Some(".add") => ReduxOp::Add,
                Some(".min") => ReduxOp::Min,
                Some(".max") => ReduxOp::Max,
                Some(".and") => ReduxOp::And,
                Some(".or") => ReduxOp::Or,
                Some(_) => ReduxOp::Xor,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::U32 | ScalarType::S32 | ScalarType::B32) {
                return Err(un());
            }
            let o = operands(inst, 3)?;
            Ok(Op::Redux {
                op,
                signed: ty == ScalarType::S32,
                d: dst(fc, &o[0])?,
                a: src(m, fc, &o[1], ty)?,
                mask: src(m, fc, &o[2], ScalarType::U32)?,
            })
        }
        _ => Err(un()),
    }
}

/// The destination of `shfl` and `match`: a register, or `d|p`, a register
/// and a predicate.
fn dst_and_pred(fc: &FnCtx<'_>, op: &Operand) -> Result<(Row, Option<PredIx>), String> {
    match op {
        Operand::PredicatePair(r, p) => Ok((
            dst(fc, &Operand::Register(r.clone()))?,
            pred_dst(fc, &Operand::Register(p.clone()))?,
        )),
        other => Ok((dst(fc, other)?, None)),
    }
}
