//! Tensor-core instructions: `ldmatrix`, `stmatrix`, `movmatrix` and `mma.sync`.

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "ldmatrix" => {
            for m in [".sync", ".aligned", ".m8n8", ".b16"] {
                if !mods.take(m) {
                    return Err(un());
                }
            }
            let n = match mods.take_any(&[".x1", ".x2", ".x4"]) {
                Some(".x1") => 1,
                Some(".x2") => 2,
                Some(_) => 4,
                None => return Err(un()),
            };
            let trans = mods.take(".trans");
            if space_of(mods)? != Some(StateSpace::Shared) {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let (_, addr) = address(m, fc, &o[1], Some(StateSpace::Shared))?;
            let d = vector_rows(fc, &o[0], n, dst)?;
            Ok(Op::Ldmatrix { n, trans, d, addr })
        }
        "stmatrix" => {
            for m in [".sync", ".aligned", ".m8n8", ".b16"] {
                if !mods.take(m) {
                    return Err(un());
                }
            }
            let n = match mods.take_any(&[".x1", ".x2", ".x4"]) {
                Some(".x1") => 1,
                Some(".x2") => 2,
                Some(_) => 4,
                None => return Err(un()),
            };
            let trans = mods.take(".trans");
            if !matches!(space_of(mods)?, Some(StateSpace::Shared) | None) {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let (space, addr) = address(m, fc, &o[0], Some(StateSpace::Shared))?;
            if space != Space::Shared {
                return Err(un());
            }
            let mut s = [sreg::ZERO; 4];
            let whole = vector_components(fc, &o[1]).map(Operand::Vector);
            match whole.as_ref().unwrap_or(&o[1]) {
                Operand::Vector(items) if items.len() == n as usize => {
                    for (i, it) in items.iter().enumerate() {
                        s[i] = src(m, fc, it, ScalarType::B32)?;
                    }
                }
                single if n == 1 => s[0] = src(m, fc, single, ScalarType::B32)?,
                _ => return Err("vector width does not match the operand list".into()),
            }
            Ok(Op::Stmatrix { n, trans, s, addr })
        }
        "wmma" => decode_wmma(m, fc, inst, mods),
        "movmatrix" => {
            for m in [".sync", ".aligned", ".m8n8", ".trans", ".b16"] {
                if !mods.take(m) {
                    return Err(un());
                }
            }
            let o = operands(inst, 2)?;
            Ok(Op::Family(Box::new(FamilyOp {
                run: movmatrix_trans,
                ctx: AluCtx::new(ScalarType::B32),
                rows: [
                    dst(fc, &o[0])?,
                    src(m, fc, &o[1], ScalarType::B32)?,
                    sreg::ZERO,
                    sreg::ZERO,
                ],
                pd: [PredIx::MAX; 2],
                ps: PredSrc::Const(true),
            })))
        }
        "mma" => {
            for m in [".sync", ".aligned", ".row", ".col"] {
                if !mods.take(m) {
                    return Err(un());
                }
            }
            let k = match mods.take_any(&[".m16n8k32", ".m16n8k16", ".m16n8k8"]) {
                Some(".m16n8k32") => 32,
                Some(".m16n8k16") => 16,
                Some(_) => 8,
                None => return Err(un()),
            };
            let satfinite = mods.take(".satfinite");
            let types: Vec<ScalarType> = (0..4).filter_map(|_| mods.take_type()).collect();
            // `.f16` accumulators (D and/or C) with `.f16` A and B.
            let (d16, c16) = match types.as_slice() {
                [dt, ScalarType::F16, ScalarType::F16, ct]
                    if matches!(dt, ScalarType::F16 | ScalarType::F32)
                        && matches!(ct, ScalarType::F16 | ScalarType::F32)
                        && (k == 8 || k == 16) =>
                {
                    (*dt == ScalarType::F16, *ct == ScalarType::F16)
                }
                _ => (false, false),
            };
            let types: Vec<ScalarType> = if d16 || c16 {
                vec![
                    ScalarType::F32,
                    ScalarType::F16,
                    ScalarType::F16,
                    ScalarType::F32,
                ]
            } else {
                types
            };
            let elem = match types.as_slice() {
                [
                    ScalarType::F32,
                    ab @ (ScalarType::F16 | ScalarType::BF16),
                    ab2,
                    ScalarType::F32,
                ] if ab == ab2 => {
                    if *ab == ScalarType::F16 {
                        MmaElem::F16
                    } else {
                        MmaElem::Bf16
                    }
                }
                // tf32 comes in m16n8k8 (and m16n8k4, not supported) only.
                [
                    ScalarType::F32,
                    ScalarType::Tf32,
                    ScalarType::Tf32,
                    ScalarType::F32,
                ] if k == 8 && !satfinite => MmaElem::Tf32,
                // Integer MMA: m16n8k16 and m16n8k32 with 8-bit A and B
                // (signedness each its own), s32 accumulators.
                [
                    ScalarType::S32,
                    a @ (ScalarType::S8 | ScalarType::U8),
                    b @ (ScalarType::S8 | ScalarType::U8),
                    ScalarType::S32,
                ] if k == 16 || k == 32 => MmaElem::Int8 {
                    a_signed: *a == ScalarType::S8,
                    b_signed: *b == ScalarType::S8,
                    satfinite,
                },
                _ => return Err(un()),
            };
            if satfinite && !matches!(elem, MmaElem::Int8 { .. }) {
                return Err(un());
            }
            let o = operands(inst, 4)?;
            // Registers per fragment: f16/bf16 pack two elements, tf32 one,
            // 8-bit integers four.
            let (na, nb) = match (k, elem) {
                (32, _) | (16, MmaElem::F16 | MmaElem::Bf16) | (8, MmaElem::Tf32) => (4, 2),
                _ => (2, 1),
            };
            let d = vector_rows(fc, &o[0], if d16 { 2 } else { 4 }, dst)?;
            let mut regs = |op: &Operand, n: usize| -> Result<[Row; 4], String> {
                let Operand::Vector(items) = op else {
                    return Err("mma operands must be register vectors".into());
                };
                if items.len() != n {
                    return Err("mma operand vector has the wrong length".into());
                }
                let mut rows = [sreg::ZERO; 4];
                for (i, it) in items.iter().enumerate() {
                    rows[i] = src(m, fc, it, ScalarType::B32)?;
                }
                Ok(rows)
            };
            let a = regs(&o[1], na)?;
            let b4 = regs(&o[2], nb)?;
            let c = regs(&o[3], if c16 { 2 } else { 4 })?;
            Ok(Op::Mma {
                k,
                elem,
                c16,
                d16,
                d,
                a,
                b: [b4[0], b4[1]],
                c,
            })
        }
        _ => Err(un()),
    }
}

/// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`: the warp holds an 8x8
/// matrix of b16 as in `ldmatrix` (lane `l` has row `l/4`, columns
/// `2(l%4)` and `2(l%4)+1`); each lane receives the same positions of the
/// transpose. A warp-collective (`.aligned`) instruction: every lane's
/// source takes part.
fn movmatrix_trans(op: &FamilyOp, values: &mut [u64], _preds: &mut [u32], exec: u32) {
    let mut mat = [[0u16; 8]; 8];
    for l in 0..32 {
        let v = FamilyOp::get(values, op.rows[1], l);
        let (row, col) = (l / 4, (l % 4) * 2);
        mat[row][col] = v as u16;
        mat[row][col + 1] = (v >> 16) as u16;
    }
    for l in FamilyOp::lanes(exec) {
        let (row, col) = (l / 4, (l % 4) * 2);
        let (lo, hi) = (mat[col][row], mat[col + 1][row]);
        FamilyOp::set(values, op.rows[0], l, lo as u64 | (hi as u64) << 16);
    }
}

/// `wmma.load.{a,b,c}`, `wmma.store.d`, `wmma.mma` for `.m16n16k16` with
/// `.f16` A/B and `.f16`/`.f32` C/D (the layout is in [`WmmaOp`]).
fn decode_wmma(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let verb = mods.take_any(&[".load", ".store", ".mma"]).ok_or_else(un)?;
    for q in [".sync", ".aligned", ".m16n16k16"] {
        if !mods.take(q) {
            return Err(un());
        }
    }
    let regs_of = |m: &mut ModuleCtx<'_>, op: &Operand, n: usize, out: bool| {
        let Operand::Vector(items) = op else {
            return Err("wmma fragments must be register vectors".to_string());
        };
        if items.len() != n {
            return Err(format!("wmma fragment needs {n} registers"));
        }
        let mut rows = [sreg::SINK; 8];
        for (i, it) in items.iter().enumerate() {
            rows[i] = if out {
                dst(fc, it)?
            } else {
                src(m, fc, it, ScalarType::B32)?
            };
        }
        Ok(rows)
    };
    if verb == ".mma" {
        let a_col = mods.take_any(&[".row", ".col"]).ok_or_else(un)?;
        let b_col = mods.take_any(&[".row", ".col"]).ok_or_else(un)?;
        let _ = (a_col, b_col);
        let dt = need_type(mods, inst)?;
        let ct = need_type(mods, inst)?;
        let ok = |t: ScalarType| matches!(t, ScalarType::F16 | ScalarType::F32);
        if !ok(dt) || !ok(ct) || mods.take(".satfinite") {
            return Err(un());
        }
        let (d16, c16) = (dt == ScalarType::F16, ct == ScalarType::F16);
        let o = operands(inst, 4)?;
        return Ok(Op::Wmma(Box::new(WmmaOp::Mma {
            d: regs_of(m, &o[0], if d16 { 4 } else { 8 }, true)?,
            a: regs_of(m, &o[1], 8, false)?,
            b: regs_of(m, &o[2], 8, false)?,
            c: regs_of(m, &o[3], if c16 { 4 } else { 8 }, false)?,
            c16,
            d16,
        })));
    }
    let store = verb == ".store";
    let which = mods.take_any(&[".a", ".b", ".c", ".d"]).ok_or_else(un)?;
    if store != (which == ".d") {
        return Err(un());
    }
    let col_major = mods.take_any(&[".row", ".col"]).ok_or_else(un)? == ".col";
    let space = space_of(mods)?;
    let ty = need_type(mods, inst)?;
    let ab = matches!(which, ".a" | ".b");
    if ty != ScalarType::F16 && (ab || ty != ScalarType::F32) {
        return Err(un());
    }
    let f16 = ty == ScalarType::F16;
    let n = if ab || !f16 { 8 } else { 4 };
    let o = &inst.operands;
    if o.len() != 2 && o.len() != 3 {
        return Err(format!("{}: expects 2 or 3 operands", un()));
    }
    let (frag, mem) = if store {
        (&o[1], &o[0])
    } else {
        (&o[0], &o[1])
    };
    let (sp, addr) = address(m, fc, mem, space)?;
    if !matches!(sp, Space::Global | Space::Shared | Space::Generic) {
        return Err(un());
    }
    let stride = match o.get(2) {
        Some(s) => Some(src(m, fc, s, ScalarType::U32)?),
        None => None,
    };
    Ok(Op::Wmma(Box::new(WmmaOp::Access {
        store,
        space: sp,
        addr,
        stride,
        col_major,
        f16,
        ab,
        regs: regs_of(m, frag, n, !store)?,
    })))
}
