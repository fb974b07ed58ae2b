//! Asynchronous barriers and warp election: `mbarrier.*`,
//! `cp.async.mbarrier.arrive`, `elect.sync`.

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    match inst.opcode.as_str() {
        "mbarrier" => decode_mbarrier(m, fc, inst, mods),
        "elect" => decode_elect(m, fc, inst, mods),
        "mapa" => decode_mapa(m, fc, inst, mods),
        "getctarank" => decode_getctarank(m, fc, inst, mods),
        _ => Err(unsupported(inst)),
    }
}

/// The barrier object operand: `.shared{::cta}` or generic, 8-byte `.b64`.
fn barrier_addr(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    op: &Operand,
    space: Option<StateSpace>,
) -> Result<(Space, Addr), String> {
    let (sp, addr) = address(m, fc, op, space)?;
    if !matches!(sp, Space::Shared | Space::Generic) {
        return Err(format!(
            "mbarrier objects live in shared memory, not the {} space",
            sp.name()
        ));
    }
    Ok((sp, addr))
}

fn decode_mbarrier(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    // One warp-instruction at a time: orderings and scopes hold trivially.
    mods.take_any(&[".relaxed", ".acquire", ".release"]);
    mods.take_any(&[".cta", ".cluster"]);
    let verb = mods
        .take_any(&[
            ".init",
            ".inval",
            ".arrive",
            ".arrive_drop",
            ".expect_tx",
            ".complete_tx",
            ".test_wait",
            ".try_wait",
        ])
        .ok_or_else(un)?;
    mods.take_any(&[".relaxed", ".acquire", ".release"]);
    mods.take_any(&[".cta", ".cluster"]);
    let parity = mods.take(".parity");
    let expect_tx = mods.take(".expect_tx");
    // `.noComplete` promises the arrival does not complete the phase; a
    // plain arrival is the same operation when the promise holds.
    let no_complete = mods.take(".noComplete");
    let space = space_of(mods)?;
    if need_type(mods, inst)? != ScalarType::B64 {
        return Err(un());
    }
    let o = &inst.operands;
    let (kind, d, dp, addr_op, b) = match verb {
        ".init" => {
            let o = operands(inst, 2)?;
            (
                MbarrierKind::Init,
                None,
                None,
                &o[0],
                src(m, fc, &o[1], ScalarType::U32)?,
            )
        }
        ".inval" => {
            let o = operands(inst, 1)?;
            (MbarrierKind::Inval, None, None, &o[0], sreg::ZERO)
        }
        ".arrive" | ".arrive_drop" => {
            if !(2..=3).contains(&o.len()) || (expect_tx || no_complete) && o.len() != 3 {
                return Err(format!("{}: wrong operand count", un()));
            }
            let b = match o.get(2) {
                Some(x) => src(m, fc, x, ScalarType::U32)?,
                None => const_row(m, 1),
            };
            let kind = MbarrierKind::Arrive {
                drop: verb == ".arrive_drop",
                expect_tx,
            };
            let d = match &o[0] {
                Operand::Sink => None,
                x => Some(dst(fc, x)?),
            };
            (kind, d, None, &o[1], b)
        }
        ".expect_tx" | ".complete_tx" => {
            let o = operands(inst, 2)?;
            let kind = MbarrierKind::Tx {
                complete: verb == ".complete_tx",
            };
            (kind, None, None, &o[0], src(m, fc, &o[1], ScalarType::U32)?)
        }
        _ => {
            // test_wait / try_wait: `p, [a], state|parity{, suspendTimeHint}`.
            if !(3..=4).contains(&o.len()) || verb == ".test_wait" && o.len() != 3 {
                return Err(format!("{}: wrong operand count", un()));
            }
            let ty = if parity {
                ScalarType::U32
            } else {
                ScalarType::B64
            };
            let b = src(m, fc, &o[2], ty)?;
            if let Some(hint) = o.get(3) {
                src(m, fc, hint, ScalarType::U32)?;
            }
            let dp = pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink);
            (MbarrierKind::Wait { parity }, None, Some(dp), &o[1], b)
        }
    };
    let (space, addr) = barrier_addr(m, fc, addr_op, space)?;
    Ok(Op::Mbarrier {
        kind,
        space,
        addr,
        d,
        dp,
        b,
    })
}

/// `cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [a]`: an arrival
/// triggered when the thread's prior `cp.async`s complete. Copies complete
/// at once here; without `.noinc` the pending count is raised by one before
/// that arrival, so the net effect on the object is none.
pub(super) fn decode_cp_async_arrive(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    if !mods.take(".arrive") {
        return Err(unsupported(inst));
    }
    let noinc = mods.take(".noinc");
    let space = space_of(mods)?;
    if need_type(mods, inst)? != ScalarType::B64 {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 1)?;
    let (space, addr) = barrier_addr(m, fc, &o[0], space)?;
    if !noinc {
        return Ok(Op::Nop);
    }
    Ok(Op::Mbarrier {
        kind: MbarrierKind::Arrive {
            drop: false,
            expect_tx: false,
        },
        space,
        addr,
        d: None,
        dp: None,
        b: const_row(m, 1),
    })
}

/// `mapa{.shared::cluster}.{u32,u64} d, a, rank`: the address of `a`'s
/// variable in the CTA of cluster rank `rank`: `a`'s offset in the shared
/// window with the rank plus one in bits 24..32 (see
/// `memory::CLUSTER_RANK_SHIFT`); `.u64` maps generic addresses, and the
/// result stays in the shared window. A rank outside the cluster gives an
/// address whose accesses fault naming that rank.
fn decode_mapa(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    mods.take(".shared::cluster");
    let ty = need_type(mods, inst)?;
    if !matches!(ty, ScalarType::U32 | ScalarType::U64) {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 3)?;
    let mut ctx = AluCtx::new(ty);
    ctx.aux = ty.bits();
    Ok(Op::Family(Box::new(FamilyOp {
        run: mapa,
        ctx,
        rows: [
            dst(fc, &o[0])?,
            src(m, fc, &o[1], ty)?,
            src(m, fc, &o[2], ScalarType::U32)?,
            sreg::ZERO,
        ],
        pd: [PredIx::MAX; 2],
        ps: PredSrc::Const(true),
    })))
}

fn mapa(op: &FamilyOp, values: &mut [u64], _preds: &mut [u32], exec: u32) {
    for l in FamilyOp::lanes(exec) {
        let (a, rank) = op.sources(values, l);
        let off = crate::memory::cluster_address(a, rank as u32);
        let mapped = if op.ctx.aux == 32 {
            off
        } else {
            (a & !0xffff_ffff) | off
        };
        FamilyOp::set(values, op.rows[0], l, mapped);
    }
}

/// `getctarank{.shared::cluster}.{u32,u64} d, a`: the cluster rank of the
/// CTA whose shared memory `a` (a shared::cluster or, without the space, a
/// generic address) lies in; `d` is 32 bits.
fn decode_getctarank(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    mods.take(".shared::cluster");
    let ty = need_type(mods, inst)?;
    if !matches!(ty, ScalarType::U32 | ScalarType::U64) {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 2)?;
    Ok(Op::Family(Box::new(FamilyOp {
        run: getctarank,
        ctx: AluCtx::new(ScalarType::U32),
        rows: [
            dst(fc, &o[0])?,
            src(m, fc, &o[1], ty)?,
            sreg::CLUSTER_CTARANK,
            sreg::ZERO,
        ],
        pd: [PredIx::MAX; 2],
        ps: PredSrc::Const(true),
    })))
}

fn getctarank(op: &FamilyOp, values: &mut [u64], _preds: &mut [u32], exec: u32) {
    for l in FamilyOp::lanes(exec) {
        let (a, own) = op.sources(values, l);
        let rank = crate::memory::split_cluster_address(a)
            .0
            .map_or(own, u64::from);
        FamilyOp::set(values, op.rows[0], l, rank);
    }
}

/// `elect.sync d|p, membermask`: the lowest executing lane of the mask is
/// the leader; every member receives its lane id in `d`, only the leader
/// a true `p`.
fn decode_elect(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    if !mods.take(".sync") {
        return Err(unsupported(inst));
    }
    let o = operands(inst, 2)?;
    let (d, p) = match &o[0] {
        Operand::PredicatePair(r, p) => (
            if r.name == "_" {
                sreg::SINK
            } else {
                dst(fc, &Operand::Register(r.clone()))?
            },
            pred_dst(fc, &Operand::Register(p.clone()))?,
        ),
        _ => return Err("elect.sync expects `d|p`".into()),
    };
    Ok(Op::Family(Box::new(FamilyOp {
        run: elect,
        ctx: AluCtx::new(ScalarType::U32),
        rows: [
            d,
            src(m, fc, &o[1], ScalarType::U32)?,
            sreg::ZERO,
            sreg::ZERO,
        ],
        pd: [p.unwrap_or(PredIx::MAX), PredIx::MAX],
        ps: PredSrc::Const(true),
    })))
}

fn elect(op: &FamilyOp, values: &mut [u64], preds: &mut [u32], exec: u32) {
    let mut members = exec;
    for l in FamilyOp::lanes(exec) {
        members &= FamilyOp::get(values, op.rows[1], l) as u32;
    }
    let leader = members.trailing_zeros();
    let leader_bit = if members == 0 { 0 } else { 1u32 << leader };
    for l in FamilyOp::lanes(members) {
        FamilyOp::set(values, op.rows[0], l, leader as u64);
    }
    op.set_pred(preds, 0, leader_bit, members);
}
