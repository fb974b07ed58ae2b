//! Memory instructions: `ld/ldu/st`, `atom/red`, `cp.async` and its groups, `cvta`, `isspacep`,
//! `membar/fence`, and the hints `prefetch/nanosleep/pmevent`.

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "cp" => decode_cp_async(m, fc, inst, mods),
        "cvta" => decode_cvta(m, fc, inst, mods),
        "isspacep" => decode_isspacep(m, fc, inst, mods),
        "ld" | "ldu" => decode_ld(m, fc, inst, mods),
        "st" => decode_st(m, fc, inst, mods),
        "atom" | "red" => decode_atom(m, fc, inst, mods),
        "membar" => {
            mods.take_memory_qualifiers();
            mods.take_any(&[".gl", ".cta", ".sys"]);
            if mods.take(".proxy") {
                mods.take_any(&[".alias", ".async", ".const", ".texture", ".surface"]);
            }
            Ok(Op::Nop)
        }
        // Every fence form (`.sc/.acq_rel` at any scope, `.proxy.*` with
        // its state space, `.mbarrier_init`, `.op_restrict`) orders memory
        // operations; a machine that runs one warp-instruction at a time
        // and makes each write visible at once already orders them.
        "fence" => {
            for i in 0..mods.used.len() {
                mods.used[i] = true;
            }
            if !inst.operands.is_empty() && mods.list.iter().all(|x| !x.starts_with(".proxy")) {
                return Err(un());
            }
            Ok(Op::Nop)
        }
        "createpolicy" => decode_createpolicy(m, fc, inst, mods),
        // Launches in a stream run one after another, so the prerequisite
        // grid has completed and its writes are visible: nothing to wait for.
        "griddepcontrol" if mods.take_any(&[".wait", ".launch_dependents"]).is_some() => {
            Ok(Op::Nop)
        }
        // `discard` leaves the line's contents indeterminate (keeping them is
        // one allowed outcome); `applypriority` is a cache hint.
        "discard" | "applypriority" => {
            for i in 0..mods.used.len() {
                mods.used[i] = true;
            }
            let o = operands(inst, 2)?;
            address(m, fc, &o[0], Some(StateSpace::Global))?;
            Ok(Op::Nop)
        }
        "nanosleep" | "prefetch" | "prefetchu" | "pmevent" => {
            for i in 0..mods.used.len() {
                mods.used[i] = true;
            }
            Ok(Op::Nop)
        }
        _ => Err(un()),
    }
}

/// `cp.async` (global to shared) and its group and mbarrier forms.
fn decode_cp_async(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    if !mods.take(".async") {
        return Err(un());
    }
    if mods.take(".mbarrier") {
        return super::sync::decode_cp_async_arrive(m, fc, inst, mods);
    }
    if mods.take(".wait_all") || mods.take(".commit_group") {
        return Ok(Op::Nop);
    }
    if mods.take(".wait_group") {
        let _ = operands(inst, 1)?;
        return Ok(Op::Nop);
    }
    if mods.take_any(&[".ca", ".cg"]).is_none() {
        return Err(un());
    }
    let to_shared = mods.take(".shared") || mods.take(".shared::cta");
    if !to_shared || !mods.take(".global") {
        return Err(un());
    }
    mods.take_memory_qualifiers();
    let o = without_cache_hint(m, fc, inst, mods)?;
    if o.len() != 3 && o.len() != 4 {
        return Err(format!("{}: expects 3 or 4 operands", un()));
    }
    let (_, dst_addr) = address(m, fc, &o[0], Some(StateSpace::Shared))?;
    let (_, src_addr) = address(m, fc, &o[1], Some(StateSpace::Global))?;
    let size = match &o[2] {
        Operand::Immediate(ast::Immediate::Int(v)) if matches!(v, 4 | 8 | 16) => *v as u8,
        _ => return Err("cp.async size must be 4, 8 or 16".into()),
    };
    let src_size = match o.get(3) {
        Some(op) => Some(src(m, fc, op, ScalarType::U32)?),
        None => None,
    };
    Ok(Op::CpAsync {
        dst: dst_addr,
        src: src_addr,
        size,
        src_size,
    })
}

/// `cvta{.to}`: between a state space's address and the generic address.
fn decode_cvta(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let to = mods.take(".to");
    let space = match space_of(mods)? {
        Some(StateSpace::Global) => Space::Global,
        Some(StateSpace::Shared) => Space::Shared,
        Some(StateSpace::Local) => Space::Local,
        Some(StateSpace::Const) => Space::Const,
        Some(StateSpace::Param) if fc.is_kernel => Space::KernelParam,
        _ => return Err(un()),
    };
    let ty = need_type(mods, inst)?;
    if !matches!(
        ty,
        ScalarType::U64 | ScalarType::U32 | ScalarType::B64 | ScalarType::B32 | ScalarType::S64
    ) {
        return Err(un());
    }
    let o = operands(inst, 2)?;
    if let Operand::Symbol(name) = &o[1]
        && let Some(Sym::LocalFrame(_)) = lookup_sym(m, fc, name)
    {
        return Err("cvta of a frame-local symbol: load its address with mov first".into());
    }
    Ok(Op::Cvta {
        to_generic: !to,
        space,
        d: dst(fc, &o[0])?,
        a: src(m, fc, &o[1], ty)?,
        a32: reg_width(fc, &o[1]) == Some(32) || ty.bits() == 32,
    })
}

/// `isspacep`: whether a generic address falls in a state space.
fn decode_isspacep(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let space = match space_of(mods)? {
        Some(StateSpace::Global) => Space::Global,
        Some(StateSpace::Shared) => Space::Shared,
        Some(StateSpace::Local) => Space::Local,
        Some(StateSpace::Const) => Space::Const,
        Some(StateSpace::Param) => Space::KernelParam,
        _ => return Err(un()),
    };
    let o = operands(inst, 2)?;
    Ok(Op::Isspacep {
        space,
        d: pred_dst(fc, &o[0])?.unwrap_or(m.pred_sink),
        a: src(m, fc, &o[1], ScalarType::U64)?,
    })
}

/// `ld`/`ldu`: scalar and vector loads.
fn decode_ld(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let (space, n, ty) = ld_st_shape(m, inst, mods)?;
    let o = exactly(inst, without_cache_hint(m, fc, inst, mods)?, 2)?;
    let (sp, addr) = address(m, fc, &o[1], space)?;
    let size = ty.size_bytes().unwrap_or(1) as u8;
    let signed = ty.is_signed_int();
    if n == 8 {
        return Ok(Op::LdStRare(Box::new(LdStRare {
            store: false,
            space: sp,
            size,
            signed,
            n,
            rows: vector_rows(fc, &o[0], n, dst)?,
            adds: [0; 8],
            addr,
        })));
    }
    let d = vector_rows(fc, &o[0], n, dst)?;
    Ok(Op::Ld {
        space: sp,
        size,
        signed,
        n,
        d,
        addr,
    })
}

/// `st`: scalar and vector stores (never to a read-only space).
fn decode_st(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let (space, n, ty) = ld_st_shape(m, inst, mods)?;
    let o = exactly(inst, without_cache_hint(m, fc, inst, mods)?, 2)?;
    let (sp, addr) = address(m, fc, &o[0], space)?;
    if sp == Space::KernelParam || sp == Space::Const {
        return Err(format!("{}: the {} space is read-only", un(), sp.name()));
    }
    let mut rows = [sreg::ZERO; 8];
    let mut adds = [0u64; 8];
    let mut value = |i: usize, op: &Operand| -> Result<(), String> {
        // `%rd1 + 1`: the register, and the constant the store adds to it.
        let (op, add) = match op {
            Operand::RegisterOffset(r, k) => (&Operand::Register(r.clone()), *k as u64),
            other => (other, 0),
        };
        rows[i] = src(m, fc, op, ty)?;
        adds[i] = add;
        Ok(())
    };
    let whole = vector_components(fc, &o[1]).map(Operand::Vector);
    match whole.as_ref().unwrap_or(&o[1]) {
        Operand::Vector(items) if items.len() == n as usize => {
            for (i, it) in items.iter().enumerate() {
                value(i, it)?;
            }
        }
        single if n == 1 => value(0, single)?,
        _ => return Err("vector width does not match the operand list".into()),
    }
    let size = ty.size_bytes().unwrap_or(1) as u8;
    if n == 8 || adds.iter().any(|&k| k != 0) {
        return Ok(Op::LdStRare(Box::new(LdStRare {
            store: true,
            space: sp,
            size,
            signed: false,
            n,
            rows,
            adds,
            addr,
        })));
    }
    let mut s = [sreg::ZERO; 4];
    s.copy_from_slice(&rows[..4]);
    Ok(Op::St {
        space: sp,
        size,
        n,
        s,
        addr,
    })
}

/// `createpolicy`: an opaque cache policy.
fn decode_createpolicy(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    // The policy is an opaque 64-bit value only `.L2::cache_hint`
    // operands consume, and cache hints do not change results.
    for i in 0..mods.used.len() {
        mods.used[i] = true;
    }
    match inst.operands.first() {
        Some(d) if (1..=4).contains(&inst.operands.len()) => Ok(Op::Mov {
            d: dst(fc, d)?,
            a: const_row(m, CACHE_POLICY),
        }),
        _ => Err(format!("{}: wrong operand count", un())),
    }
}

/// The value `createpolicy` produces (any 64-bit value is a valid opaque policy).
const CACHE_POLICY: u64 = 0x1000_0000_0000_0000;

/// The operands of an instruction that may carry `.L2::cache_hint`: its
/// trailing cache-policy operand is checked and dropped (hints do not
/// change results).
fn without_cache_hint<'i>(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    inst: &'i ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<&'i [Operand], String> {
    let o = &inst.operands[..];
    if !mods.take(".L2::cache_hint") {
        return Ok(o);
    }
    let (policy, rest) = o
        .split_last()
        .ok_or_else(|| format!("{}: missing cache-policy operand", unsupported(inst)))?;
    src(m, fc, policy, ScalarType::B64)?;
    Ok(rest)
}

/// `o` when it has `n` operands.
fn exactly<'i>(
    inst: &ast::Instruction,
    o: &'i [Operand],
    n: usize,
) -> Result<&'i [Operand], String> {
    if o.len() != n {
        return Err(format!(
            "`{}` expects {n} operands, found {}",
            inst.opcode,
            o.len()
        ));
    }
    Ok(o)
}

/// What `ld`, `ldu` and `st` share: their memory qualifiers, state space,
/// vector count and element type (neither `.b128` nor `.pred`).
fn ld_st_shape(
    m: &ModuleCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<(Option<StateSpace>, u8, ScalarType), String> {
    if mods.list.contains(&".async") {
        // `st.async`/`ld.async` with `mbarrier::complete_tx` (cluster transfers).
        return Err(unsupported(inst));
    }
    mods.take_memory_qualifiers();
    let space = space_of(mods)?;
    let v8 = mods.take(".v8");
    let n = if v8 { 8 } else { vec_count(mods) };
    let ty = need_type(mods, inst)?;
    if ty == ScalarType::B128 || ty == ScalarType::Pred {
        return Err(unsupported(inst));
    }
    // PTX ISA 8.8 (sm_100 and later): `.v8` is a 256-bit access of 32-bit
    // elements (`.b32 .u32 .s32 .f32`), in the `.global` space only.
    if v8 && (ty.bits() != 32 || space != Some(StateSpace::Global)) {
        return Err(format!(
            "{}: `.v8` is a 256-bit access of 32-bit elements in the .global space",
            unsupported(inst)
        ));
    }
    if v8 && m.target_sm < 100 {
        return Err(format!(
            "{}: `.v8` needs .target sm_100 or later",
            unsupported(inst)
        ));
    }
    Ok((space, n, ty))
}

fn decode_atom(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let is_red = inst.opcode == "red";
    mods.take_memory_qualifiers();
    let space = space_of(mods)?;
    let op = mods
        .take_where(|m| AtomOp::parse(m).is_some() && m.starts_with('.'))
        .and_then(AtomOp::parse)
        .ok_or_else(|| unsupported(inst))?;
    mods.take(".noftz");
    let vector = vec_count(mods);
    let ty = need_type(mods, inst)?;
    let ok = op.supports(ty) && ty != ScalarType::B128;
    if !ok {
        return Err(unsupported(inst));
    }
    if vector > 1 {
        return decode_atom_vector(m, fc, inst, mods, (op, ty, vector, space));
    }
    let n = match (is_red, op) {
        (true, _) => 2,
        (false, AtomOp::Cas) => 4,
        (false, _) => 3,
    };
    let o = exactly(inst, without_cache_hint(m, fc, inst, mods)?, n)?;
    let (d, rest) = if is_red {
        (None, o)
    } else {
        (Some(dst(fc, &o[0])?), &o[1..])
    };
    let (sp, addr) = address(m, fc, &rest[0], space)?;
    if !matches!(sp, Space::Global | Space::Shared | Space::Generic) {
        return Err(format!(
            "{}: atomics on the {} space",
            unsupported(inst),
            sp.name()
        ));
    }
    let b = src(m, fc, &rest[1], ty)?;
    let c = if op == AtomOp::Cas && !is_red {
        src(m, fc, &rest[2], ty)?
    } else {
        sreg::ZERO
    };
    Ok(Op::Atom {
        space: sp,
        op,
        ty,
        d,
        addr,
        b,
        c,
    })
}

/// `atom/red{.global}.{v2,v4}`: `.add` on `.f32`, `.add/.min/.max` on
/// `.f16/.bf16/.f16x2/.bf16x2` (PTX 8.1, sm_90); global memory only.
fn decode_atom_vector(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
    (op, ty, n, space): (AtomOp, ScalarType, u8, Option<StateSpace>),
) -> Result<Op, String> {
    use ScalarType::*;
    let is_red = inst.opcode == "red";
    let ok = match ty {
        F32 => op == AtomOp::Add,
        F16 | BF16 | F16x2 | BF16x2 => matches!(op, AtomOp::Add | AtomOp::Min | AtomOp::Max),
        _ => false,
    };
    if !ok || !matches!(space, None | Some(StateSpace::Global)) {
        return Err(unsupported(inst));
    }
    let o = exactly(
        inst,
        without_cache_hint(m, fc, inst, mods)?,
        if is_red { 2 } else { 3 },
    )?;
    let (d, rest) = if is_red {
        ([sreg::SINK; 4], o)
    } else {
        (vector_rows(fc, &o[0], n, dst)?, &o[1..])
    };
    let (sp, addr) = address(m, fc, &rest[0], space)?;
    let mut b = [sreg::ZERO; 4];
    match vector_components(fc, &rest[1])
        .map(Operand::Vector)
        .as_ref()
        .unwrap_or(&rest[1])
    {
        Operand::Vector(items) if items.len() == n as usize => {
            for (i, it) in items.iter().enumerate() {
                b[i] = src(m, fc, it, ty)?;
            }
        }
        _ => return Err("vector width does not match the operand list".into()),
    }
    Ok(Op::AtomVector {
        space: sp,
        op,
        ty,
        n,
        d,
        addr,
        b,
    })
}
