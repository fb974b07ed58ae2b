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
            // `.shared` may be left out: the address is then generic and
            // must point into shared memory, whose generic window's low 32
            // bits are the shared offset (as for `stmatrix`).
            if !matches!(space_of(mods)?, Some(StateSpace::Shared) | None) {
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
                    ScalarType::TF32,
                    ScalarType::TF32,
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

/// `wmma.load.{a,b,c}`, `wmma.store.d`, `wmma.mma` for the sm_80 shapes
/// and types (PTX ISA "Warp-level Matrix Instructions"): f16/bf16 and
/// s8/u8 `.m16n16k16`/`.m32n8k16`/`.m8n32k16`, tf32 `.m16n16k8`, f64
/// `.m8n8k4`. The sub-byte forms (`.s4`/`.u4`/`.b1`) are refused by name.
fn decode_wmma(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    let verb = mods.take_any(&[".load", ".store", ".mma"]).ok_or_else(un)?;
    for q in [".sync", ".aligned"] {
        if !mods.take(q) {
            return Err(un());
        }
    }
    if mods.take_any(&[".m8n8k32", ".m8n8k128"]).is_some() {
        return Err(format!(
            "{}: sub-byte wmma (.s4/.u4/.b1) is not supported",
            un()
        ));
    }
    let shape = match mods.take_any(&[
        ".m16n16k16",
        ".m32n8k16",
        ".m8n32k16",
        ".m16n16k8",
        ".m8n8k4",
    ]) {
        Some(".m16n16k16") => (16, 16, 16),
        Some(".m32n8k16") => (32, 8, 16),
        Some(".m8n32k16") => (8, 32, 16),
        Some(".m16n16k8") => (16, 16, 8),
        Some(_) => (8, 8, 4),
        None => return Err(un()),
    };
    let regs_of = |m: &mut ModuleCtx<'_>, op: &Operand, n: usize, out: bool, elem: WmmaElem| {
        let Operand::Vector(items) = op else {
            return Err("wmma fragments must be register vectors".to_string());
        };
        if items.len() != n {
            return Err(format!("{}: the fragment needs {n} registers", un()));
        }
        let ty = if elem == WmmaElem::F64 {
            ScalarType::B64
        } else {
            ScalarType::B32
        };
        let mut rows = [sreg::SINK; 8];
        for (i, it) in items.iter().enumerate() {
            rows[i] = if out {
                dst(fc, it)?
            } else {
                src(m, fc, it, ty)?
            };
        }
        Ok(rows)
    };
    if verb == ".mma" {
        let _a_col = mods.take_any(&[".row", ".col"]).ok_or_else(un)?;
        let _b_col = mods.take_any(&[".row", ".col"]).ok_or_else(un)?;
        let satfinite = mods.take(".satfinite");
        let rounding = mods.take_any(&[".rn", ".rz", ".rm", ".rp"]);
        let mut types = Vec::new();
        while let Some(t) = mods.take_type() {
            types.push(wmma_elem(t).ok_or_else(un)?);
        }
        use WmmaElem::*;
        let elems = match types[..] {
            // `.dtype.ctype` of the f16 form.
            [d, c] if matches!(d, F16 | F32) && matches!(c, F16 | F32) => [F16, F16, c, d],
            [d, a, b, c] => [a, b, c, d],
            _ => return Err(un()),
        };
        let family_ok = match elems {
            [F16, F16, F16 | F32, F16 | F32] => matches!(shape.2, 16) && !satfinite,
            [Bf16, Bf16, F32, F32] => shape.2 == 16 && !satfinite,
            [Tf32, Tf32, F32, F32] => shape == (16, 16, 8) && !satfinite,
            [S8 | U8, S8 | U8, S32, S32] => shape.2 == 16,
            [F64, F64, F64, F64] => shape == (8, 8, 4) && !satfinite,
            _ => false,
        };
        // f64 takes a rounding modifier; only the default `.rn` is modelled.
        let rounding_ok = match rounding {
            None => true,
            Some(r) => elems[0] == F64 && r == ".rn",
        };
        if !family_ok || !rounding_ok {
            return Err(un());
        }
        let (mm, nn, kk) = shape;
        let o = operands(inst, 4)?;
        return Ok(Op::Wmma(Box::new(WmmaOp::Mma {
            d: regs_of(
                m,
                &o[0],
                fragment_regs(mm, nn, elems[3], false),
                true,
                elems[3],
            )?,
            a: regs_of(
                m,
                &o[1],
                fragment_regs(mm, kk, elems[0], true),
                false,
                elems[0],
            )?,
            b: regs_of(
                m,
                &o[2],
                fragment_regs(kk, nn, elems[1], true),
                false,
                elems[1],
            )?,
            c: regs_of(
                m,
                &o[3],
                fragment_regs(mm, nn, elems[2], false),
                false,
                elems[2],
            )?,
            shape: (mm as u8, nn as u8, kk as u8),
            elems,
            satfinite,
        })));
    }
    let store = verb == ".store";
    let which = mods.take_any(&[".a", ".b", ".c", ".d"]).ok_or_else(un)?;
    if store != (which == ".d") {
        return Err(un());
    }
    let col_major = mods.take_any(&[".row", ".col"]).ok_or_else(un)? == ".col";
    let space = space_of(mods)?;
    let elem = wmma_elem(need_type(mods, inst)?).ok_or_else(un)?;
    let ab = matches!(which, ".a" | ".b");
    use WmmaElem::*;
    let type_ok = match (ab, elem) {
        (true, F16 | Bf16 | S8 | U8) => shape.2 == 16,
        (true, Tf32) => shape == (16, 16, 8),
        (false, F16 | S32) => shape.2 == 16,
        (false, F32) => shape.2 != 4,
        (_, F64) => shape == (8, 8, 4),
        _ => false,
    };
    if !type_ok {
        return Err(un());
    }
    let (mm, nn, kk) = shape;
    let (rows, cols) = match which {
        ".a" => (mm, kk),
        ".b" => (kk, nn),
        _ => (mm, nn),
    };
    let n = fragment_regs(rows, cols, elem, ab);
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
        rows: rows as u8,
        cols: cols as u8,
        elem,
        regs: regs_of(m, frag, n, !store, elem)?,
        count: n as u8,
    })))
}

fn wmma_elem(t: ScalarType) -> Option<WmmaElem> {
    Some(match t {
        ScalarType::F16 => WmmaElem::F16,
        ScalarType::BF16 => WmmaElem::Bf16,
        ScalarType::TF32 => WmmaElem::Tf32,
        ScalarType::S8 => WmmaElem::S8,
        ScalarType::U8 => WmmaElem::U8,
        ScalarType::F32 => WmmaElem::F32,
        ScalarType::S32 => WmmaElem::S32,
        ScalarType::F64 => WmmaElem::F64,
        _ => return None,
    })
}

/// The registers of a `rows x cols` fragment (PTX ISA, "Matrix Data-types"
/// of wmma): the packed elements, except that f16 A and B fragments always
/// take 8 registers whatever the shape.
fn fragment_regs(rows: usize, cols: usize, elem: WmmaElem, ab: bool) -> usize {
    let per_lane = rows * cols / 32;
    match elem {
        WmmaElem::F16 if ab => 8,
        WmmaElem::F64 => per_lane,
        e => per_lane * e.bits() as usize / 32,
    }
}
