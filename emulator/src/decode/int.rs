//! Integer-only instructions: the carry chain (`add.cc/addc/sub.cc/subc/mad.cc/madc`), `mul24/mad24`,
//! `dp4a/dp2a`, `bfe`, `bfi`, `prmt`, `shf`, `lop3`, `sad`, `fns`, the video shifts `vshl/vshr`
//! (`bmsk/szext` are in `bitfield`).

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "fns" => decode_fns(m, fc, inst, mods),
        "add" | "sub" | "addc" | "subc"
            if inst.opcode.ends_with('c') || mods.list.contains(&".cc") =>
        {
            decode_add_sub_carry(m, fc, inst, mods)
        }
        "mad" | "madc" if inst.opcode == "madc" || mods.list.contains(&".cc") => {
            decode_mad_carry(m, fc, inst, mods)
        }
        "mul24" | "mad24" => decode_mul24(m, fc, inst, mods),
        "dp4a" | "dp2a" => decode_dot_product(m, fc, inst, mods),
        "bfe" => decode_bfe(m, fc, inst, mods),
        "bfi" => decode_bfi(m, fc, inst, mods),
        "prmt" => decode_prmt(m, fc, inst, mods),
        "shf" => decode_funnel_shift(m, fc, inst, mods),
        "vshl" | "vshr" => decode_vshift(m, fc, inst, mods),
        "lop3" => decode_lop3(m, fc, inst, mods),
        "sad" => decode_sad(m, fc, inst, mods),
        "bmsk" | "szext" => bitfield::decode(m, fc, inst, mods),
        _ => Err(un()),
    }
}

/// `fns.b32 d, mask, base, offset`: the `offset`-th set bit of `mask`
/// from bit `base` (`base`: `.b32/.u32/.s32` register or immediate).
fn decode_fns(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    if need_type(mods, inst)? != ScalarType::B32 {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    Ok(Op::Alu3 {
        f: |_, mask, base, offset| {
            crate::semantics::bits::fns(mask as u32, base as u32, offset as u32 as i32) as u64
        },
        ctx: AluCtx::new(ScalarType::B32),
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ScalarType::B32)?,
        b: src(m, fc, &o[2], ScalarType::U32)?,
        c: src(m, fc, &o[3], ScalarType::S32)?,
    })
}

/// `add.cc`/`sub.cc` set the carry flag; `addc`/`subc` read it, and
/// set it too with `.cc`.
fn decode_add_sub_carry(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let cin = inst.opcode.ends_with('c');
    let cout = mods.take(".cc");
    let ty = need_type(mods, inst)?;
    if ty.bits() < 32 || ty.is_float() {
        return Err(un());
    }
    let o = operands(inst, 3)?;
    Ok(Op::AddCarry {
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], ty)?,
        sub: inst.opcode.starts_with("sub"),
        cin,
        cout,
        wide: ty.bits() == 64,
    })
}

/// `mad.cc`/`madc`: the carry chain's multiply-add (32- and 64-bit integers).
fn decode_mad_carry(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let cout = mods.take(".cc");
    let hi = mods.take(".hi");
    mods.take(".lo");
    let ty = need_type(mods, inst)?;
    if !matches!(
        ty,
        ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64
    ) {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    Ok(Op::MadCarry {
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], ty)?,
        c: src(m, fc, &o[3], ty)?,
        ty,
        hi,
        cin: inst.opcode == "madc",
        cout,
    })
}

/// `mul24`/`mad24`: the product of the low 24 bits of each operand, its low or high half.
fn decode_mul24(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let hi = mods.take(".hi");
    mods.take(".lo");
    let ty = need_type(mods, inst)?;
    if !matches!(ty, ScalarType::U32 | ScalarType::S32) {
        return Err(un());
    }
    let ctx = AluCtx::new(ty);
    if inst.opcode == "mul24" {
        let o = operands(inst, 3)?;
        Ok(Op::Alu2 {
            f: if hi { alu::mul24_hi } else { alu::mul24_lo },
            ctx,
            d: dst(fc, &o[0])?,
            a: src(m, fc, &o[1], ty)?,
            b: src(m, fc, &o[2], ty)?,
        })
    } else {
        let o = operands(inst, 4)?;
        alu3(
            m,
            fc,
            o,
            if hi { alu::mad24_hi } else { alu::mad24_lo },
            ctx,
            [ty, ty, ty],
        )
    }
}

/// `dp4a`/`dp2a`: the dot product of packed bytes (and half-words) accumulated into a 32-bit integer.
fn decode_dot_product(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let hi = match (inst.opcode.as_str(), mods.take_any(&[".lo", ".hi"])) {
        ("dp2a", Some(".hi")) => 1,
        ("dp2a", Some(_)) => 0,
        ("dp4a", None) => 0,
        _ => return Err(un()),
    };
    let aty = need_type(mods, inst)?;
    let bty = need_type(mods, inst)?;
    let int32 = |t: ScalarType| matches!(t, ScalarType::U32 | ScalarType::S32);
    if !int32(aty) || !int32(bty) {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    let mut ctx = AluCtx::new(aty);
    ctx.ty2 = bty;
    ctx.aux = hi;
    let cty = if aty == ScalarType::S32 || bty == ScalarType::S32 {
        ScalarType::S32
    } else {
        ScalarType::U32
    };
    Ok(Op::Alu3 {
        f: if inst.opcode == "dp4a" {
            alu::dp4a
        } else {
            alu::dp2a
        },
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], aty)?,
        b: src(m, fc, &o[2], bty)?,
        c: src(m, fc, &o[3], cty)?,
    })
}

/// `bfe`: extract a bit field (sign-extended for signed types).
fn decode_bfe(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let ty = need_type(mods, inst)?;
    if !ty.is_int() || ty.bits() < 32 {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    alu3(
        m,
        fc,
        o,
        alu::bfe,
        AluCtx::new(ty),
        [ty, ScalarType::U32, ScalarType::U32],
    )
}

/// `bfi`: insert a bit field.
fn decode_bfi(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let ty = need_type(mods, inst)?;
    if ty.bits() < 32 || ty.is_float() {
        return Err(un());
    }
    let o = operands(inst, 5)?;
    Ok(Op::Bfi {
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], ty)?,
        pos: src(m, fc, &o[3], ScalarType::U32)?,
        len: src(m, fc, &o[4], ScalarType::U32)?,
        wide: ty.bits() == 64,
    })
}

/// `prmt`: permute bytes, in the generic or one of the special modes.
fn decode_prmt(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let mode = mods
        .take_any(&[".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"])
        .and_then(crate::semantics::PrmtMode::parse)
        .unwrap_or(crate::semantics::PrmtMode::Generic);
    let ty = need_type(mods, inst)?;
    if ty != ScalarType::B32 {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    let mut ctx = AluCtx::new(ty);
    ctx.prmt = mode;
    alu3(m, fc, o, alu::prmt, ctx, [ty, ty, ty])
}

/// `shf.{l,r}.{wrap,clamp}`: the funnel shift of a 64-bit pair.
fn decode_funnel_shift(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let right = match mods.take_any(&[".l", ".r"]) {
        Some(".r") => 1,
        Some(_) => 0,
        None => return Err(un()),
    };
    let clamp = match mods.take_any(&[".wrap", ".clamp"]) {
        Some(".clamp") => 2,
        Some(_) => 0,
        None => return Err(un()),
    };
    let ty = need_type(mods, inst)?;
    if ty != ScalarType::B32 {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    let mut ctx = AluCtx::new(ty);
    ctx.aux = right | clamp;
    alu3(m, fc, o, alu::shf, ctx, [ty, ty, ScalarType::U32])
}

/// `lop3`: an arbitrary three-input logic operation given by its truth table.
fn decode_lop3(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let ty = need_type(mods, inst)?;
    let o = operands(inst, 5)?;
    let lut = match &o[4] {
        Operand::Immediate(ast::Immediate::Int(v)) if (0..=255).contains(v) => *v as u32,
        _ => return Err("lop3 truth table must be an immediate 0..255".into()),
    };
    if ty != ScalarType::B32 {
        return Err(un());
    }
    let mut ctx = AluCtx::new(ty);
    ctx.aux = lut;
    alu3(m, fc, o, alu::lop3, ctx, [ty, ty, ty])
}

/// `sad`: the sum of absolute differences.
fn decode_sad(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let ty = need_type(mods, inst)?;
    if !ty.is_int() {
        return Err(un());
    }
    let o = operands(inst, 4)?;
    alu3(m, fc, o, alu::sad, AluCtx::new(ty), [ty, ty, ty])
}

/// `vshl/vshr` on whole 32-bit words ([`alu::vshift`]). Byte and half-word
/// selectors and merges into a destination part (`.b0`, `.h1`, `d.h0`)
/// are refused, and so is `.sat` with a secondary operation (the ISA's
/// saturation of the combined result is not modelled).
fn decode_vshift(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let mut types = [false; 3];
    for t in types.iter_mut() {
        *t = mods
            .take_where(|x| x == ".u32" || x == ".s32")
            .ok_or_else(un)?
            == ".s32";
    }
    let [signed_d, signed_a, signed_b] = types;
    if signed_b {
        return Err(un());
    }
    let sat = mods.take(".sat");
    let clamp = match mods.take_any(&[".clamp", ".wrap"]) {
        Some(".clamp") => true,
        Some(_) => false,
        None => return Err(un()),
    };
    let op2 = match mods.take_any(&[".add", ".min", ".max"]) {
        Some(".add") => 1,
        Some(".min") => 2,
        Some(".max") => 3,
        _ => 0,
    };
    if sat && op2 != 0 {
        return Err(un());
    }
    let o = &inst.operands;
    let plain = |op: &Operand| {
        matches!(op, Operand::Register(r) if r.component.is_none())
            || matches!(op, Operand::Immediate(_))
    };
    let want = if op2 == 0 { 3 } else { 4 };
    if o.len() != want || !o[1..].iter().all(plain) {
        return Err(un());
    }
    let mut ctx = AluCtx::new(if signed_d {
        ScalarType::S32
    } else {
        ScalarType::U32
    });
    ctx.aux = (inst.opcode == "vshr") as u32
        | (clamp as u32) << 1
        | (signed_a as u32) << 2
        | (signed_d as u32) << 3
        | (sat as u32) << 4
        | op2 << 5;
    let ty = ScalarType::B32;
    Ok(Op::Alu3 {
        f: alu::vshift,
        ctx,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        b: src(m, fc, &o[2], ty)?,
        c: if op2 == 0 {
            sreg::ZERO
        } else {
            src(m, fc, &o[3], ty)?
        },
    })
}
