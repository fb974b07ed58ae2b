//! Floating-point-only instructions: `testp` (float arithmetic shares its opcodes with
//! integers and is decoded in `arith`).

use super::*;

pub(super) fn decode(
    m: &mut ModuleCtx<'_>,
    fc: &mut FnCtx<'_>,
    inst: &ast::Instruction,
    mods: &mut Mods<'_>,
) -> Result<Op, String> {
    let un = || unsupported(inst);
    match inst.opcode.as_str() {
        "testp" => {
            let which = match mods.take_any(&[
                ".finite",
                ".infinite",
                ".number",
                ".notanumber",
                ".normal",
                ".subnormal",
            ]) {
                Some(".finite") => 0,
                Some(".infinite") => 1,
                Some(".number") => 2,
                Some(".notanumber") => 3,
                Some(".normal") => 4,
                Some(_) => 5,
                None => return Err(un()),
            };
            let ty = need_type(mods, inst)?;
            if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
                return Err(un());
            }
            let o = operands(inst, 2)?;
            let mut ctx = AluCtx::new(ty);
            ctx.aux = which;
            let a = src(m, fc, &o[1], ty)?;
            Ok(Op::Setp {
                f: alu::testp,
                ctx,
                d: pred_dst(fc, &o[0])?,
                dn: None,
                a,
                b: a,
                combine: None,
            })
        }
        _ => Err(un()),
    }
}
