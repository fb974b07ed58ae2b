//! Texture and surface instructions (PTX ISA "Texture Instructions" and
//! "Surface Instructions"), in unified mode with 64-bit object handles in
//! registers (what nvcc and clang emit for `cudaTextureObject_t` and
//! `cudaSurfaceObject_t`):
//!
//! - `tex{.level,.grad}.{1d,2d,3d,a1d,a2d,cube,acube}.v4.{f32,s32,u32}.{f32,s32}
//!   d, [h, {c…}]{, lod | , dPdx, dPdy}`
//! - `tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32 d, [h, {x, y}]`
//! - `txq{.level}.query.b32 d, [h]{, lod}`
//! - `suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}{.trap,.clamp,.zero} d, [h, {c…}]`
//! - `sust.b.… [h, {c…}], s`
//! - `suq.query.b32 d, [h]`
//!
//! `h` is a 64-bit register holding an object handle, or the name of a
//! module-scope `.texref`/`.surfref` variable (a texture or surface
//! reference, which the driver binds: `cuTexRefSet*`, `cuSurfRefSetArray`).
//!
//! Refused with a message: independent mode (a separate `.samplerref`
//! operand), explicit offsets, the
//! sparse-residency predicate, `.f16`/`.f16x2` results and formatted
//! stores (`sust.p`). Execution is `machine/texture.rs`.

use super::*;
use crate::instr::texture_op::{Geometry, Gradients, OutOfRange, Query, TexKind, TextureOp};

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = |why: &str| format!("{}: {why}", unsupported(inst));
    mods.take_memory_qualifiers();
    let op = match inst.opcode.as_str() {
        "tex" => {
            let level = mods.take(".level");
            let gradients = !level && mods.take(".grad");
            let geom = geometry(mods).ok_or_else(|| un("missing geometry"))?;
            if !mods.take(".v4") {
                return Err(un("only .v4 results are emulated"));
            }
            let (dtype, ctype) = (need_type(mods, inst)?, need_type(mods, inst)?);
            result_type(dtype).map_err(|e| un(&e))?;
            let int_coords = coord_type(ctype).map_err(|e| un(&e))?;
            let expected = if level {
                3
            } else if gradients {
                4
            } else {
                2
            };
            let o = operands(inst, expected)?;
            let lod = if level {
                Some(src(m, fc, &o[2], ScalarType::F32)?)
            } else {
                None
            };
            let grad = if gradients {
                let (dx, n) = gradient(m, fc, &o[2])?;
                let (dy, n2) = gradient(m, fc, &o[3])?;
                if n != n2 {
                    return Err(un("dPdx and dPdy differ in length"));
                }
                Some(Gradients { dx, dy, n })
            } else {
                None
            };
            let (handle, reference, coords, ncoords) =
                handle_and_coords(m, fc, &o[1], Some(geom), ctype)?;
            let data = dst4(fc, &o[0], 4)?;
            TextureOp {
                kind: TexKind::Tex {
                    geom,
                    int_coords,
                    lod,
                    grad,
                },
                handle,
                reference,
                coords,
                ncoords,
                data,
                ndata: 4,
            }
        }
        "tld4" => {
            let comp = match mods.take_any(&[".r", ".g", ".b", ".a"]) {
                Some(".r") => 0,
                Some(".g") => 1,
                Some(".b") => 2,
                Some(_) => 3,
                None => return Err(un("missing component (.r .g .b .a)")),
            };
            if geometry(mods) != Some(Geometry::D2) {
                return Err(un("only tld4.2d is emulated"));
            }
            if !mods.take(".v4") {
                return Err(un("tld4 needs .v4"));
            }
            let (dtype, ctype) = (need_type(mods, inst)?, need_type(mods, inst)?);
            result_type(dtype).map_err(|e| un(&e))?;
            let int_coords = coord_type(ctype).map_err(|e| un(&e))?;
            let o = operands(inst, 2)?;
            let (handle, reference, coords, ncoords) =
                handle_and_coords(m, fc, &o[1], Some(Geometry::D2), ctype)?;
            TextureOp {
                kind: TexKind::Tld4 { comp, int_coords },
                handle,
                reference,
                coords,
                ncoords,
                data: dst4(fc, &o[0], 4)?,
                ndata: 4,
            }
        }
        "txq" | "suq" => {
            let level = inst.opcode == "txq" && mods.take(".level");
            let query = mods
                .take_where(|q| Query::parse(q).is_some())
                .and_then(Query::parse)
                .ok_or_else(|| un("unknown query"))?;
            if need_type(mods, inst)? != ScalarType::B32 {
                return Err(un("queries return .b32"));
            }
            if level && !matches!(query, Query::Width | Query::Height | Query::Depth) {
                return Err(un("txq.level queries width, height or depth"));
            }
            let o = operands(inst, if level { 3 } else { 2 })?;
            let lod = if level {
                Some(src(m, fc, &o[2], ScalarType::U32)?)
            } else {
                None
            };
            let (handle, reference, coords, ncoords) =
                handle_and_coords(m, fc, &o[1], None, ScalarType::S32)?;
            let kind = if inst.opcode == "txq" {
                TexKind::Txq { query, lod }
            } else {
                TexKind::Suq { query }
            };
            TextureOp {
                kind,
                handle,
                reference,
                coords,
                ncoords,
                data: dst4(fc, &o[0], 1)?,
                ndata: 1,
            }
        }
        "suld" | "sust" => {
            if mods.take(".p") {
                return Err(un("formatted surface access (.p) is not emulated"));
            }
            if !mods.take(".b") {
                return Err(un("needs .b"));
            }
            let geom = geometry(mods).ok_or_else(|| un("missing geometry"))?;
            if matches!(geom, Geometry::Cube | Geometry::ACube) {
                return Err(un("surfaces take .1d/.2d/.3d/.a1d/.a2d"));
            }
            let n = vec_count(mods);
            let size = match need_type(mods, inst)? {
                ScalarType::B8 => 1,
                ScalarType::B16 => 2,
                ScalarType::B32 => 4,
                ScalarType::B64 => 8,
                _ => return Err(un("element type must be .b8/.b16/.b32/.b64")),
            };
            let oob = match mods.take_any(&[".trap", ".clamp", ".zero"]) {
                Some(".clamp") => OutOfRange::Clamp,
                Some(".zero") => OutOfRange::Zero,
                _ => OutOfRange::Trap,
            };
            let o = operands(inst, 2)?;
            let store = inst.opcode == "sust";
            let (addr_op, data_op) = if store {
                (&o[0], &o[1])
            } else {
                (&o[1], &o[0])
            };
            let (handle, reference, coords, ncoords) =
                handle_and_coords(m, fc, addr_op, Some(geom), ScalarType::S32)?;
            let data = if store {
                src4(m, fc, data_op, n, bits_type(size as u32 * 8))?
            } else {
                dst4(fc, data_op, n)?
            };
            let kind = if store {
                TexKind::Sust { geom, size, oob }
            } else {
                TexKind::Suld { geom, size, oob }
            };
            TextureOp {
                kind,
                handle,
                reference,
                coords,
                ncoords,
                data,
                ndata: n,
            }
        }
        _ => return Err(unsupported(inst)),
    };
    Ok(Op::Texture(Box::new(op)))
}

/// A `tex.grad` gradient: a vector (or scalar) of `.f32` values.
fn gradient(m: &mut ModuleCtx<'_>, fc: &FnCtx<'_>, op: &Operand) -> Result<([Row; 4], u8), String> {
    let items = match vector_components(fc, op).map(Operand::Vector) {
        Some(Operand::Vector(v)) => v,
        _ => match op {
            Operand::Vector(v) => v.clone(),
            single => vec![single.clone()],
        },
    };
    if !matches!(items.len(), 1 | 2 | 4) {
        return Err(format!(
            "a gradient of {} components (1, 2 or 4)",
            items.len()
        ));
    }
    let mut rows = [sreg::ZERO; 4];
    for (i, it) in items.iter().enumerate() {
        rows[i] = match it {
            Operand::Sink => sreg::ZERO,
            other => src(m, fc, other, ScalarType::F32)?,
        };
    }
    Ok((rows, items.len() as u8))
}

fn geometry(mods: &mut Mods<'_>) -> Option<Geometry> {
    mods.take_where(|g| Geometry::parse(g).is_some())
        .and_then(Geometry::parse)
}

fn result_type(t: ScalarType) -> Result<(), String> {
    match t {
        ScalarType::F32 | ScalarType::S32 | ScalarType::U32 => Ok(()),
        other => Err(format!("result type {other} is not emulated")),
    }
}

/// Whether the coordinates are integers.
fn coord_type(t: ScalarType) -> Result<bool, String> {
    match t {
        ScalarType::F32 => Ok(false),
        ScalarType::S32 => Ok(true),
        other => Err(format!("coordinate type {other} (must be .f32 or .s32)")),
    }
}

/// `n` destination rows of a vector (or scalar) operand; `_` is a sink.
fn dst4(fc: &FnCtx<'_>, op: &Operand, n: u8) -> Result<[Row; 4], String> {
    if let Operand::PredicatePair(..) = op {
        return Err("the sparse-residency predicate destination (d|p) is not emulated".into());
    }
    vector_rows(fc, op, n, dst)
}

/// `n` source rows of a vector (or scalar) operand, immediates allowed.
fn src4(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    op: &Operand,
    n: u8,
    ty: ScalarType,
) -> Result<[Row; 4], String> {
    let mut rows = [sreg::ZERO; 4];
    let items = match vector_components(fc, op).map(Operand::Vector) {
        Some(Operand::Vector(v)) => v,
        _ => match op {
            Operand::Vector(v) => v.clone(),
            single => vec![single.clone()],
        },
    };
    if items.len() != n as usize {
        return Err(format!("{} source values for a .v{n} store", items.len()));
    }
    for (i, it) in items.iter().enumerate() {
        rows[i] = src(m, fc, it, ty)?;
    }
    Ok(rows)
}

/// The handle register (or reference variable's address) and coordinate
/// rows of `[h, {c…}]` (or `[h]` for queries, `geom` None).
fn handle_and_coords(
    m: &mut ModuleCtx<'_>,
    fc: &FnCtx<'_>,
    op: &Operand,
    geom: Option<Geometry>,
    ctype: ScalarType,
) -> Result<(Row, Option<u64>, [Row; 4], u8), String> {
    let Operand::Address(a) = op else {
        return Err("expected a [handle, {coordinates}] operand".into());
    };
    let (handle, reference) = match &a.base {
        ast::AddressBase::Register(r) if a.offset == 0 => (
            src(m, fc, &Operand::Register(r.clone()), ScalarType::U64)?,
            None,
        ),
        // A module's `.texref`/`.surfref` variable: the driver binds it.
        ast::AddressBase::Symbol(name) if a.offset == 0 => match lookup_sym(m, fc, name) {
            Some(Sym::Global(addr)) => (sreg::ZERO, Some(addr)),
            _ => {
                return Err(format!(
                    "`{name}` is not a module-scope .texref or .surfref variable"
                ));
            }
        },
        _ => {
            return Err(
                "the texture or surface operand must be a 64-bit handle register or a .texref/.surfref variable"
                    .into(),
            );
        }
    };
    let Some(geom) = geom else {
        if !a.trailing.is_empty() {
            return Err("queries take only the handle: [h]".into());
        }
        return Ok((handle, reference, [sreg::ZERO; 4], 0));
    };
    let coords_op = match a.trailing.as_slice() {
        [c] => c,
        [] => return Err("missing the coordinate vector".into()),
        _ => {
            return Err(
                "a separate sampler operand (independent texture mode) is not emulated".into(),
            );
        }
    };
    let items = match vector_components(fc, coords_op).map(Operand::Vector) {
        Some(Operand::Vector(v)) => v,
        _ => match coords_op {
            Operand::Vector(v) => v.clone(),
            single => vec![single.clone()],
        },
    };
    let want = geom.coord_count();
    if items.len() != want {
        return Err(format!(
            "{} coordinates for this geometry (PTX requires a vector of {want})",
            items.len()
        ));
    }
    let mut rows = [sreg::ZERO; 4];
    for (i, it) in items.iter().enumerate() {
        // The array index of .a1d/.a2d/.acube is an unsigned 32-bit integer.
        let ty = if i == 0 && geom.arrayed() {
            ScalarType::U32
        } else {
            ctype
        };
        rows[i] = match it {
            Operand::Sink => sreg::ZERO,
            other => src(m, fc, other, ty)?,
        };
    }
    Ok((handle, reference, rows, want as u8))
}
