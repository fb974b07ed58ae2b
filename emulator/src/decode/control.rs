//! Control flow: `bra`, `brx.idx`, `call` (direct, indirect, `vprintf`, `malloc`/`free`, `__assertfail`),
//! `ret`, `exit`, `trap`, and the CTA barriers `bar/barrier`.

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "bra" => {
            mods.take(".uni");
            let o = operands(inst, 1)?;
            match &o[0] {
                Operand::Symbol(l) => match fc.labels.get(l) {
                    Some(pc) => Ok(Op::Bra { target: *pc }),
                    None => Err(format!("unknown label `{l}`")),
                },
                _ => Err("branch target must be a label".into()),
            }
        }
        "brx" => {
            if !mods.take(".idx") {
                return Err(un());
            }
            mods.take(".uni");
            let o = operands(inst, 2)?;
            let Operand::Symbol(table) = &o[1] else {
                return Err("brx.idx needs a .branchtargets label".into());
            };
            let targets = fc
                .branch_tables
                .get(table)
                .cloned()
                .ok_or_else(|| format!("unknown .branchtargets `{table}`"))?;
            Ok(Op::BrxIdx {
                index: src(m, fc, &o[0], ScalarType::U32)?,
                targets,
            })
        }
        "call" => decode_call(m, fc, inst, mods),
        "ret" => {
            mods.take(".uni");
            Ok(if fc.is_kernel { Op::Exit } else { Op::Ret })
        }
        "exit" => Ok(Op::Exit),
        "trap" | "brkpt" => Ok(Op::Trap),
        "bar" | "barrier" => decode_bar(m, fc, inst, mods),
        _ => Err(un()),
    }
}

fn decode_call(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    mods.take(".uni");
    let call = inst.as_call().ok_or("malformed call")?;
    // Immediate arguments take the width of the callee's parameter.
    let callee_params: Vec<(u32, u32)> = match call.target {
        Operand::Symbol(name) => match m.syms.get(name) {
            Some(Sym::Func(i)) if *i != u32::MAX => m.funcs[*i as usize].params.clone(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let mut slot = |op: &Operand, k: usize, is_ret: bool| -> Result<CallSlot, String> {
        match op {
            Operand::Symbol(s) => match lookup_sym(m, fc, s) {
                Some(Sym::FrameParam(off)) => Ok(CallSlot::Frame(off)),
                _ => Err(format!(
                    "call argument `{s}` is not a .param variable or register"
                )),
            },
            Operand::Register(r) if r.component.is_none() => match lookup_reg(fc, &r.name) {
                Some(RegKind::Pred(p)) => Ok(CallSlot::Pred(p)),
                Some(RegKind::Vector(row, ty, n)) => Ok(CallSlot::Rows {
                    row,
                    n,
                    elem: ty.size_bytes().unwrap_or(1) as u8,
                }),
                _ if is_ret => dst(fc, op).map(CallSlot::Reg),
                _ => src(m, fc, op, ScalarType::B64).map(CallSlot::Reg),
            },
            Operand::Register(_) if is_ret => dst(fc, op).map(CallSlot::Reg),
            Operand::Register(_) => src(m, fc, op, ScalarType::B64).map(CallSlot::Reg),
            Operand::Immediate(imm) if !is_ret => {
                let bytes = callee_params.get(k).map_or(8, |p| p.1);
                Ok(CallSlot::Reg(const_row(
                    m,
                    imm_bits(*imm, bits_type(bytes * 8)),
                )))
            }
            _ => Err("unsupported call argument".into()),
        }
    };
    let args = call
        .args
        .iter()
        .enumerate()
        .map(|(k, op)| slot(op, k, false))
        .collect::<Result<Vec<_>, _>>()?;
    let rets = call
        .returns
        .iter()
        .enumerate()
        .map(|(k, op)| slot(op, k, true))
        .collect::<Result<Vec<_>, _>>()?;
    let returned_rows: usize = rets
        .iter()
        .map(|s| match s {
            CallSlot::Frame(_) => 0,
            CallSlot::Reg(_) | CallSlot::Pred(_) => 1,
            CallSlot::Rows { n, .. } => *n as usize,
        })
        .sum();
    if returned_rows > MAX_RETURNED_REGS {
        return Err(format!(
            "unsupported: more than {MAX_RETURNED_REGS} registers returned by one call"
        ));
    }
    let frame_only = |slots: &[CallSlot]| -> Option<Vec<u32>> {
        slots
            .iter()
            .map(|s| match s {
                CallSlot::Frame(o) => Some(*o),
                CallSlot::Reg(_) | CallSlot::Rows { .. } | CallSlot::Pred(_) => None,
            })
            .collect()
    };
    let target = match call.target {
        Operand::Symbol(name) => {
            let callee = match m.syms.get(name) {
                Some(Sym::Func(i)) if *i != u32::MAX => *i,
                Some(Sym::Func(_)) => {
                    let (Some(args), Some(rets)) = (frame_only(&args), frame_only(&rets)) else {
                        return Err(format!(
                            "unsupported: register arguments to external function `{name}`"
                        ));
                    };
                    return match (name.as_str(), args.as_slice(), rets.as_slice()) {
                        ("vprintf", [fmt, a], r) if r.len() <= 1 => Ok(Op::Vprintf {
                            fmt: *fmt,
                            args: *a,
                            ret: r.first().copied(),
                        }),
                        ("malloc", [size], [ret]) => Ok(Op::DeviceMalloc {
                            size: *size,
                            ret: *ret,
                        }),
                        ("free", [ptr], []) => Ok(Op::DeviceFree { ptr: *ptr }),
                        ("__assertfail", [message, file, line, ..], _) => Ok(Op::AssertFail {
                            message: *message,
                            file: *file,
                            line: *line,
                        }),
                        _ => Err(format!(
                            "unsupported: call to external function `{name}` (no body in this module)"
                        )),
                    };
                }
                _ => return Err(format!("unknown function `{name}`")),
            };
            let cinfo = &m.funcs[callee as usize];
            if cinfo.is_kernel {
                return Err("unsupported: calling a kernel".into());
            }
            if args.len() != cinfo.params.len() || rets.len() != cinfo.returns.len() {
                return Err(format!(
                    "call to `{name}` passes the wrong number of arguments or returns"
                ));
            }
            CallTarget::Direct(callee)
        }
        Operand::Register(r) => match value_reg(fc, r) {
            Some((row, _)) => CallTarget::Indirect {
                row,
                params: args.len() as u32,
                returns: rets.len() as u32,
            },
            _ => {
                return Err(format!(
                    "indirect call target `{}` is not a value register",
                    r.name
                ));
            }
        },
        _ => return Err("unsupported call target".into()),
    };
    Ok(Op::Call(Box::new(CallInfo { target, args, rets })))
}

fn decode_bar(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    if inst.opcode == "bar" && mods.take(".warp") {
        if !mods.take(".sync") {
            return Err(unsupported(inst));
        }
        let o = operands(inst, 1)?;
        return Ok(Op::WarpSync {
            mask: src(m, fc, &o[0], ScalarType::B32)?,
        });
    }
    if inst.opcode == "barrier" && mods.take(".cluster") {
        // `barrier.cluster.arrive{.release|.relaxed}{.aligned}` and
        // `barrier.cluster.wait{.acquire}{.aligned}`: one warp-instruction
        // runs at a time, so the orderings hold trivially.
        let wait = match mods.take_any(&[".arrive", ".wait"]) {
            Some(".arrive") => {
                mods.take_any(&[".release", ".relaxed"]);
                false
            }
            Some(_) => {
                mods.take(".acquire");
                true
            }
            None => return Err(unsupported(inst)),
        };
        mods.take(".aligned");
        if !inst.operands.is_empty() {
            return Err("`barrier.cluster` takes no operands".into());
        }
        return Ok(Op::ClusterBar { wait });
    }
    // `barrier.cta.*` (PTX 8.0) is `barrier.*`.
    if inst.opcode == "barrier" {
        mods.take(".cta");
    }
    mods.take(".aligned");
    let kind = match mods.take_any(&[".sync", ".arrive", ".red"]) {
        Some(".sync") => BarKind::Sync,
        Some(".arrive") => BarKind::Arrive,
        Some(_) => match mods.take_any(&[".popc", ".and", ".or"]) {
            Some(".popc") => BarKind::RedPopc,
            Some(".and") => BarKind::RedAnd,
            Some(_) => BarKind::RedOr,
            None => return Err(unsupported(inst)),
        },
        None if inst.opcode == "bar" && inst.modifiers.is_empty() => BarKind::Sync,
        None => return Err(unsupported(inst)),
    };
    mods.take(".aligned");
    let o = &inst.operands;
    let mut d = None;
    let mut dp = None;
    let mut p = PredSrc::Const(true);
    let rest: &[Operand] = match kind {
        BarKind::RedPopc => {
            if !mods.take(".u32") {
                return Err(unsupported(inst));
            }
            if o.len() < 3 {
                return Err("bar.red needs a destination, a barrier and a predicate".into());
            }
            d = Some(dst(fc, &o[0])?);
            p = pred_src(fc, &o[o.len() - 1])?;
            &o[1..o.len() - 1]
        }
        BarKind::RedAnd | BarKind::RedOr => {
            if !mods.take(".pred") {
                return Err(unsupported(inst));
            }
            if o.len() < 3 {
                return Err("bar.red needs a destination, a barrier and a predicate".into());
            }
            dp = pred_dst(fc, &o[0])?;
            p = pred_src(fc, &o[o.len() - 1])?;
            &o[1..o.len() - 1]
        }
        _ => o,
    };
    if rest.is_empty() || rest.len() > 2 {
        return Err(format!(
            "`{}` expects a barrier id and an optional thread count",
            inst.opcode
        ));
    }
    let id = src(m, fc, &rest[0], ScalarType::U32)?;
    let count = match rest.get(1) {
        Some(c) => Some(src(m, fc, c, ScalarType::U32)?),
        None => None,
    };
    Ok(Op::Bar {
        kind,
        id,
        count,
        d,
        dp,
        p,
    })
}
