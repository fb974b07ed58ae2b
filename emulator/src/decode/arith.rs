//! Arithmetic whose opcode serves integers and floats alike: `add/sub/mul/div/rem/min/max`,
//! the bitwise `and/or/xor` and shifts, `mad/fma`, the unary `neg/abs/not/.../sqrt/rcp/sin/...`
//! (the implementation is picked by type in `select_binary`/`select_unary`), and `mov`.

use super::*;
use crate::semantics::int;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    match inst.opcode.as_str() {
        "mov" => decode_mov(m, fc, inst, mods),
        "add" | "sub" | "mul" | "div" | "rem" | "min" | "max" | "and" | "or" | "xor" | "shl"
        | "shr" | "copysign" => decode_binary(m, fc, inst, mods),
        "mad" | "fma" => decode_mad_fma(m, fc, inst, mods),
        "neg" | "abs" | "not" | "cnot" | "popc" | "clz" | "brev" | "bfind" | "sqrt" | "rcp"
        | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => decode_unary(m, fc, inst, mods),
        _ => Err(unsupported(inst)),
    }
}

/// The two-operand forms: integer, bit, predicate and float `add/sub/mul/div/rem/min/max`,
/// the bitwise operations and shifts, `copysign`.
fn decode_binary(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let is_mul = inst.opcode == "mul";
    let wide = is_mul && mods.take(".wide");
    let hi = is_mul && mods.take(".hi");
    if is_mul {
        mods.take(".lo");
    }
    let min_max = matches!(inst.opcode.as_str(), "min" | "max");
    if let Some(op) = decode_packed_or_relu_int(m, fc, inst, mods)? {
        return Ok(op);
    }
    let approx = mods.take(".approx");
    let full = mods.take(".full");
    let propagate_nan = min_max && mods.take(".NaN");
    let xorsign_abs = min_max && mods.list.contains(&".xorsign") && mods.take(".abs");
    if xorsign_abs {
        mods.take(".xorsign");
    }
    let mode = fmode(mods);
    let ty = need_type(mods, inst)?;
    if propagate_nan
        && !matches!(
            ty,
            ScalarType::F32
                | ScalarType::F16
                | ScalarType::F16x2
                | ScalarType::BF16
                | ScalarType::BF16x2
        )
    {
        return Err(un());
    }
    if ty == ScalarType::Pred {
        let o = operands(inst, 3)?;
        let op = match inst.opcode.as_str() {
            "and" => BoolOp::And,
            "or" => BoolOp::Or,
            "xor" => BoolOp::Xor,
            _ => return Err(un()),
        };
        return Ok(Op::PredLogic {
            op: Some(op),
            d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
            a: pred_src(fc, &o[1])?,
            b: pred_src(fc, &o[2])?,
        });
    }
    if (approx || full) && !(inst.opcode == "div" && ty == ScalarType::F32) {
        return Err(un());
    }
    let f = if xorsign_abs {
        // `min/max{.ftz}{.NaN}.xorsign.abs.{f32,f16,f16x2,bf16,bf16x2}`.
        if !matches!(
            ty,
            ScalarType::F32
                | ScalarType::F16
                | ScalarType::F16x2
                | ScalarType::BF16
                | ScalarType::BF16x2
        ) || mode.sat
            || mode.rounding != FloatRounding::Rn
        {
            return Err(un());
        }
        if inst.opcode == "min" {
            min_xorsign_abs as Alu2Fn
        } else {
            max_xorsign_abs
        }
    } else {
        select_binary(&inst.opcode, ty, mode, wide, hi, approx || full).ok_or_else(un)?
    };
    let o = operands(inst, 3)?;
    let mut ctx = AluCtx::new(ty);
    ctx.mode = mode;
    ctx.aux = propagate_nan as u32;
    ctx.div = if approx {
        crate::semantics::DivKind::Approx
    } else if full {
        crate::semantics::DivKind::Full
    } else {
        crate::semantics::DivKind::Ieee
    };
    let bty = if matches!(inst.opcode.as_str(), "shl" | "shr") {
        ScalarType::U32
    } else {
        ty
    };
    Ok(Op::Alu2 {
        f,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], bty)?,
    })
}

/// `mad` (integer and float) and `fma` (float, with `.relu` for the half types).
fn decode_mad_fma(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let wide = mods.take(".wide");
    let hi = mods.take(".hi");
    mods.take(".lo");
    let relu = inst.opcode == "fma" && mods.take(".relu");
    let mut mode = fmode(mods);
    let ty = need_type(mods, inst)?;
    if relu {
        // `fma.rn{.ftz}.relu.{f16,f16x2,bf16,bf16x2}` only.
        let half = matches!(
            ty,
            ScalarType::F16 | ScalarType::F16x2 | ScalarType::BF16 | ScalarType::BF16x2
        );
        if !half || mode.sat || mode.rounding != FloatRounding::Rn {
            return Err(un());
        }
        mode.relu = true;
    }
    let f: Alu3Fn = match ty {
        ScalarType::F32
        | ScalarType::F64
        | ScalarType::F16
        | ScalarType::F16x2
        | ScalarType::BF16
        | ScalarType::BF16x2 => alu::fma_f,
        // `mad.hi.sat.s32`: the high half of `a * b + c`, saturated.
        ScalarType::S32 if inst.opcode == "mad" && mode.sat && hi => {
            |_, a, b, c| int::mad_hi_sat_s32(a, b, c)
        }
        t if t.is_int() && inst.opcode == "mad" && !mode.sat => {
            if wide {
                if t.bits() > 32 {
                    return Err(un());
                }
                alu::mad_wide
            } else if hi {
                alu::mad_hi
            } else if t.bits() == 32 {
                alu::mad_lo_b32
            } else {
                alu::mad_lo
            }
        }
        _ => return Err(un()),
    };
    let o = operands(inst, 4)?;
    let cty = if wide { wide_of(ty) } else { ty };
    let mut ctx = AluCtx::new(ty);
    ctx.mode = mode;
    Ok(Op::Alu3 {
        f,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], ty)?,
        c: src(m, fc, &o[3], cty)?,
    })
}

/// The one-operand forms: `neg/abs/not/cnot`, the bit counts, and the float functions.
fn decode_unary(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let approx = mods.take(".approx");
    let full = mods.take(".full");
    let shiftamt = mods.take(".shiftamt");
    let mode = fmode(mods);
    let ty = need_type(mods, inst)?;
    if ty == ScalarType::Pred && inst.opcode == "not" {
        let o = operands(inst, 2)?;
        return Ok(Op::PredLogic {
            op: None,
            d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
            a: match pred_src(fc, &o[1])? {
                PredSrc::Reg(i, n) => PredSrc::Reg(i, !n),
                PredSrc::Const(c) => PredSrc::Const(!c),
            },
            b: PredSrc::Const(false),
        });
    }
    let f = select_unary(&inst.opcode, ty, mode, approx, full).ok_or_else(un)?;
    let o = operands(inst, 2)?;
    let mut ctx = AluCtx::new(ty);
    ctx.mode = mode;
    ctx.aux = shiftamt as u32;
    if approx {
        ctx.div = crate::semantics::DivKind::Approx;
    }
    Ok(Op::Alu1 {
        f,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
    })
}

/// The rows of an `n`-element vector operand: a whole vector register or a
/// `{…}` list of `n` items.
fn vector_operand_rows(
    fc: &FnCtx<'_>,
    op: &Operand,
    n: usize,
    mut f: impl FnMut(&FnCtx<'_>, &Operand) -> Result<Row, String>,
) -> Result<Vec<Row>, String> {
    let whole = vector_components(fc, op).map(Operand::Vector);
    match whole.as_ref().unwrap_or(op) {
        Operand::Vector(items) if items.len() == n => items.iter().map(|it| f(fc, it)).collect(),
        _ => Err(format!("a vector of {n} elements is needed here")),
    }
}

fn decode_mov(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let lanes = match mods.take_any(&[".v2", ".v4", ".v8"]) {
        Some(".v2") => Some(2),
        Some(".v4") => Some(4),
        Some(_) => Some(8),
        None => None,
    };
    let ty = need_type(mods, inst)?;
    if ty == ScalarType::B128 {
        // 128-bit registers are not emulated (their declarations are refused).
        return Err(unsupported(inst));
    }
    let o = operands(inst, 2)?;
    if let Some(n) = lanes {
        if ty == ScalarType::Pred {
            return Err(unsupported(inst));
        }
        let d = vector_operand_rows(fc, &o[0], n, dst)?;
        let s = vector_operand_rows(fc, &o[1], n, |fc, op| src(m, fc, op, ty))?;
        return Ok(Op::MovVector(d.into_iter().zip(s).collect()));
    }
    if ty == ScalarType::Pred
        && let Operand::Register(r) = &o[1]
        && r.name == "%is_explicit_cluster"
    {
        return Ok(Op::Family(Box::new(FamilyOp {
            run: pred_from_row,
            ctx: AluCtx::new(ScalarType::U32),
            rows: [
                sreg::SINK,
                sreg::IS_EXPLICIT_CLUSTER,
                sreg::ZERO,
                sreg::ZERO,
            ],
            pd: [pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink), PredIx::MAX],
            ps: PredSrc::Const(true),
        })));
    }
    if ty == ScalarType::Pred {
        return Ok(Op::PredLogic {
            op: None,
            d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
            a: pred_src(fc, &o[1])?,
            b: PredSrc::Const(false),
        });
    }
    // Pack / unpack, between a scalar and a `{…}` list or a whole vector
    // register (`mov.b64 %rd1, %v2;` with `%v2` a `.v2 .u32`).
    let whole_src = vector_components(fc, &o[1]).map(Operand::Vector);
    let whole_dst = vector_components(fc, &o[0]).map(Operand::Vector);
    let (o0, o1) = (
        whole_dst.as_ref().unwrap_or(&o[0]),
        whole_src.as_ref().unwrap_or(&o[1]),
    );
    if let Operand::Vector(items) = o1 {
        let n = items.len();
        if !(2..=4).contains(&n) || ty.bits() % n as u32 != 0 {
            return Err(unsupported(inst));
        }
        let width = (ty.bits() / n as u32) as u8;
        let pty = bits_type(width as u32);
        let mut s = [sreg::ZERO; 4];
        for (i, it) in items.iter().enumerate() {
            s[i] = src(m, fc, it, pty)?;
        }
        return Ok(Op::Pack {
            d: dst(fc, o0)?,
            s,
            n: n as u8,
            width,
        });
    }
    if let Operand::Vector(items) = o0 {
        let n = items.len();
        if !(2..=4).contains(&n) || ty.bits() % n as u32 != 0 {
            return Err(unsupported(inst));
        }
        let d = vector_rows(fc, o0, n as u8, dst)?;
        return Ok(Op::Unpack {
            d,
            n: n as u8,
            width: (ty.bits() / n as u32) as u8,
            a: src(m, fc, o1, ty)?,
        });
    }
    let d = dst(fc, &o[0])?;
    if let Operand::Register(r) = &o[1] {
        if let Some(which) = timer_of(r) {
            return Ok(Op::Timer { d, which });
        }
        if let Some(RegKind::Pred(i)) = lookup_reg(fc, &r.name) {
            return Ok(Op::PredToReg {
                d,
                p: PredSrc::Reg(i, false),
            });
        }
    }
    if let Operand::Symbol(name) = &o[1]
        && let Some(Sym::LocalFrame(off)) = lookup_sym(m, fc, name)
    {
        return Ok(Op::LocalAddr { d, offset: off });
    }
    if let Operand::Symbol(name) = &o[1]
        && let Some(Sym::FrameParam(_)) = lookup_sym(m, fc, name)
    {
        return Err(format!(
            "unsupported: taking the address of .param symbol `{name}` in a function"
        ));
    }
    Ok(Op::Mov {
        d,
        a: src(m, fc, &o[1], ty)?,
    })
}

fn select_binary(
    opcode: &str,
    ty: ScalarType,
    mode: FloatMode,
    wide: bool,
    hi: bool,
    approx: bool,
) -> Option<Alu2Fn> {
    use ScalarType::*;
    let rn = mode.rounding == FloatRounding::Rn;
    let plain = rn && !mode.ftz && !mode.sat;
    if ty.is_int() || ty.is_bits() {
        if mode.ftz || (mode.sat && !(ty == S32 && matches!(opcode, "add" | "sub"))) || approx {
            return None;
        }
        if ty == B128 {
            return None;
        }
        let bits_ok = ty.is_bits();
        return Some(match opcode {
            "add" if mode.sat => alu::add_sat_s32,
            "sub" if mode.sat => alu::sub_sat_s32,
            "add" if ty.bits() == 32 => alu::add_b32,
            "add" if ty.bits() == 64 => alu::add_b64,
            "add" => alu::add_int,
            "sub" if ty.bits() == 32 => alu::sub_b32,
            "sub" if ty.bits() == 64 => alu::sub_b64,
            "sub" => alu::sub_int,
            "mul" if bits_ok => return None,
            "mul" if wide => {
                if ty.bits() > 32 {
                    return None;
                }
                alu::mul_wide
            }
            "mul" if hi => alu::mul_hi,
            "mul" if ty.bits() == 32 => alu::mul_lo_b32,
            "mul" => alu::mul_lo,
            "div" if !bits_ok => alu::div_int,
            "rem" if !bits_ok => alu::rem_int,
            "min" if !bits_ok => alu::min_int,
            "max" if !bits_ok => alu::max_int,
            "and" if bits_ok => alu::and,
            "or" if bits_ok => alu::or,
            "xor" if bits_ok => alu::xor,
            "shl" if bits_ok => alu::shl,
            "shr" => alu::shr,
            _ => return None,
        });
    }
    if !matches!(ty, F32 | F64 | F16 | F16x2 | BF16 | BF16x2) {
        return None;
    }
    let wide = matches!(ty, F32 | F64);
    let _ = (rn, plain);
    Some(match opcode {
        "add" => alu::add_f,
        "sub" => alu::sub_f,
        "mul" => alu::mul_f,
        "div" if wide => alu::div_f,
        "min" if !mode.sat => alu::min_f,
        "max" if !mode.sat => alu::max_f,
        "copysign" if wide && !mode.sat && !mode.ftz => alu::copysign_f,
        _ => return None,
    })
}

fn select_unary(
    opcode: &str,
    ty: ScalarType,
    mode: FloatMode,
    approx: bool,
    full: bool,
) -> Option<Alu1Fn> {
    use ScalarType::*;
    let rn = mode.rounding == FloatRounding::Rn;
    if ty.is_int() || ty.is_bits() {
        if mode.ftz || mode.sat || approx || full || ty == B128 {
            return None;
        }
        let signed = ty.is_signed_int();
        return Some(match opcode {
            "neg" if signed => alu::neg_int,
            "abs" if signed => alu::abs_int,
            "not" if ty.is_bits() => alu::not,
            "cnot" if ty.is_bits() => alu::cnot,
            "popc" if ty.is_bits() && ty.bits() >= 32 => alu::popc,
            "clz" if ty.is_bits() && ty.bits() >= 32 => alu::clz,
            "brev" if ty.is_bits() && ty.bits() >= 32 => alu::brev,
            "bfind" if ty.is_int() && ty.bits() >= 32 => alu::bfind,
            _ => return None,
        });
    }
    let _ = full;
    if !matches!(ty, F32 | F64 | F16 | F16x2 | BF16 | BF16x2) || mode.sat {
        return None;
    }
    let half = !matches!(ty, F32 | F64);
    Some(match opcode {
        "neg" if rn => alu::neg_f,
        "abs" if rn => alu::abs_f,
        "sqrt" if !half => alu::sqrt_f,
        "rcp" if !half => alu::rcp_f,
        "rsqrt" if approx && !half => alu::rsqrt_f,
        "sin" if approx && ty == F32 => alu::sin_f,
        "cos" if approx && ty == F32 => alu::cos_f,
        "lg2" if approx && ty == F32 => alu::lg2_f,
        "ex2" if approx && ty != F64 => alu::ex2_f,
        "tanh" if approx && ty != F64 => alu::tanh_f,
        _ => return None,
    })
}

fn wide_of(ty: ScalarType) -> ScalarType {
    match ty {
        ScalarType::S16 => ScalarType::S32,
        ScalarType::U16 => ScalarType::U32,
        ScalarType::S32 => ScalarType::S64,
        _ => ScalarType::U64,
    }
}

/// `min/max.xorsign.abs`: the min (max) of the magnitudes, signed with
/// `sign(a) ^ sign(b)`; `ctx.aux` is `.NaN`.
fn min_xorsign_abs(c: &AluCtx, a: u64, b: u64) -> u64 {
    crate::semantics::float::min_max_xorsign_abs(c.ty, c.mode.ftz, c.aux == 1, false, a, b)
}

fn max_xorsign_abs(c: &AluCtx, a: u64, b: u64) -> u64 {
    crate::semantics::float::min_max_xorsign_abs(c.ty, c.mode.ftz, c.aux == 1, true, a, b)
}

/// `add/sub/min/max.{u16x2,s16x2}` (each 16-bit half on its own, wrapping
/// for `add`/`sub`) and `min/max.relu.{s32,s16x2}` (negative results become
/// zero); `None` for every other form.
fn decode_packed_or_relu_int(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Option<Op>, String> {
    let opcode = inst.opcode.as_str();
    if !matches!(opcode, "add" | "sub" | "min" | "max") {
        return Ok(None);
    }
    let packed = mods.list.iter().find_map(|x| match *x {
        ".s16x2" => Some(true),
        ".u16x2" => Some(false),
        _ => None,
    });
    let relu = mods.list.contains(&".relu");
    if packed.is_none() && !relu {
        return Ok(None);
    }
    mods.take(".relu");
    let ty = match packed {
        Some(signed) => {
            mods.take(if signed { ".s16x2" } else { ".u16x2" });
            if relu && !signed {
                return Err(unsupported(inst));
            }
            if signed {
                ScalarType::S16
            } else {
                ScalarType::U16
            }
        }
        None => {
            if need_type(mods, inst)? != ScalarType::S32 || !matches!(opcode, "min" | "max") {
                return Err(unsupported(inst));
            }
            ScalarType::S32
        }
    };
    let f: Alu2Fn = match (opcode, packed.is_some(), relu) {
        ("add", true, false) => |_, a, b| int::packed16(false, a, b, int::add),
        ("sub", true, false) => |_, a, b| int::packed16(false, a, b, int::sub),
        ("min", true, false) => |c, a, b| int::packed16(c.ty == ScalarType::S16, a, b, int::min),
        ("max", true, false) => |c, a, b| int::packed16(c.ty == ScalarType::S16, a, b, int::max),
        ("min", true, true) => {
            |_, a, b| int::packed16(true, a, b, |t, x, y| int::relu(t, int::min(t, x, y)))
        }
        ("max", true, true) => {
            |_, a, b| int::packed16(true, a, b, |t, x, y| int::relu(t, int::max(t, x, y)))
        }
        ("min", false, true) => |c, a, b| int::relu(c.ty, int::min(c.ty, a, b)),
        ("max", false, true) => |c, a, b| int::relu(c.ty, int::max(c.ty, a, b)),
        _ => return Err(unsupported(inst)),
    };
    let o = operands(inst, 3)?;
    let reg_ty = if ty == ScalarType::S32 {
        ty
    } else {
        ScalarType::B32
    };
    Ok(Some(Op::Alu2 {
        f,
        ctx: AluCtx::new(ty),
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], reg_ty)?,
        b: src(m, fc, &o[2], reg_ty)?,
    }))
}

/// A predicate special register held as a 0/1 row (`%is_explicit_cluster`):
/// the predicate is whether the row is non-zero.
fn pred_from_row(op: &FamilyOp, values: &mut [u64], preds: &mut [u32], exec: u32) {
    let mut bits = 0u32;
    for l in FamilyOp::lanes(exec) {
        bits |= ((FamilyOp::get(values, op.rows[1], l) != 0) as u32) << l;
    }
    op.set_pred(preds, 0, bits, exec);
}
