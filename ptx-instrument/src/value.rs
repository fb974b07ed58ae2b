//! Operands as the one 32-bit word an event records, converted the way the
//! pass converts IR values (`llvm-pass/README.md`): narrow integers
//! zero-extended (sign-extended for signed compares), wide ones truncated to
//! their low word, `f16`/`bf16` widened and `f64` rounded to `f32` bits,
//! predicates as 0/1. Vectors record their first element; what cannot be
//! converted (`.b128`, addresses, symbols) records 0.

use std::collections::HashMap;
use std::fmt::Write as _;

use prlx_ptx::{Immediate, Operand, ScalarType};

/// Declared register types of one function: exact names and `%r<N>` ranges.
#[derive(Default)]
pub struct RegisterTypes<'a> {
    exact: HashMap<&'a str, ScalarType>,
    ranges: HashMap<&'a str, (ScalarType, u32)>,
}

impl<'a> RegisterTypes<'a> {
    pub fn declare(&mut self, name: &'a str, ty: ScalarType, range: Option<u32>) {
        match range {
            Some(n) => {
                self.ranges.insert(name, (ty, n));
            }
            None => {
                self.exact.insert(name, ty);
            }
        }
    }

    pub fn get(&self, name: &str) -> Option<ScalarType> {
        if let Some(&ty) = self.exact.get(name) {
            return Some(ty);
        }
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits == name.len() {
            return None;
        }
        let (prefix, number) = name.split_at(name.len() - digits);
        let index: u32 = number.parse().ok()?;
        match self.ranges.get(prefix) {
            Some(&(ty, n)) if index < n => Some(ty),
            _ => None,
        }
    }
}

/// The data type an instruction's modifiers name (the last type modifier).
pub fn instruction_type(modifiers: &[String]) -> Option<ScalarType> {
    modifiers
        .iter()
        .rev()
        .find_map(|m| ScalarType::from_directive(m))
}

fn is_float(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::F16 | ScalarType::BF16 | ScalarType::F32 | ScalarType::F64 | ScalarType::TF32
    )
}

fn is_signed(ty: ScalarType) -> bool {
    matches!(
        ty,
        ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
    )
}

fn width(ty: ScalarType) -> u32 {
    match ty {
        ScalarType::Pred => 1,
        other => other.size_bytes().map_or(0, |b| b * 8),
    }
}

/// Scratch registers every probe declares.
pub const SCRATCH_DECLS: &str = "\t.reg .pred 	%prlx_p;
	.reg .b32 	%prlx_w<4>;
	.reg .b64 	%prlx_d;
";
/// Declared only by probes whose conversions use them.
pub const HALF_DECL: &str = "\t.reg .b16 	%prlx_h;\n";
pub const FLOAT_DECL: &str = "\t.reg .f32 	%prlx_f;\n";

/// Emits into `code` what turns `operand` (of an instruction whose data
/// type is `ty`) into a 32-bit word, and returns the word's operand text:
/// an immediate or a register. `scratch` (0..=3) picks the `%prlx_w`
/// register to use. `signed` sign-extends narrow integers (signed compares).
pub fn word(
    code: &mut String,
    operand: &Operand,
    ty: Option<ScalarType>,
    signed: bool,
    regs: &RegisterTypes<'_>,
    scratch: u32,
) -> String {
    let out = format!("%prlx_w{scratch}");
    match operand {
        Operand::Vector(items) => match items.first() {
            Some(first) => word(code, first, ty, signed, regs, scratch),
            None => "0".into(),
        },
        Operand::Immediate(imm) => immediate_word(*imm, ty).to_string(),
        Operand::Register(reg) => {
            // Special registers are read by `mov` into a typed register first.
            let text = reg.to_string();
            let declared = regs.get(&reg.name).filter(|_| reg.component.is_none());
            let reg_ty = declared.or(ty).unwrap_or(ScalarType::B32);
            let value_ty = ty.unwrap_or(reg_ty);
            convert(code, &text, reg_ty, value_ty, signed, &out)
        }
        Operand::Not(reg) => {
            let _ = writeln!(code, "\tselp.u32 	{out}, 0, 1, {reg};");
            out
        }
        // `%r1 + k` (a stored value): for 32- and 64-bit integers, the
        // register's word (its low 32 bits) plus the constant's low 32 bits.
        Operand::RegisterOffset(reg, offset)
            if ty.is_some_and(|t| !is_float(t) && matches!(width(t), 32 | 64)) =>
        {
            let base = word(
                code,
                &Operand::Register(reg.clone()),
                ty,
                signed,
                regs,
                scratch,
            );
            let _ = writeln!(code, "\tadd.u32 	{out}, {base}, {};", *offset as u32);
            out
        }
        _ => "0".into(),
    }
}

fn convert(
    code: &mut String,
    reg: &str,
    reg_ty: ScalarType,
    value_ty: ScalarType,
    signed: bool,
    out: &str,
) -> String {
    let reg_bits = width(reg_ty);
    let value_bits = width(value_ty).min(reg_bits.max(1));
    if reg_ty == ScalarType::Pred {
        let _ = writeln!(code, "\tselp.u32 	{out}, 1, 0, {reg};");
        return out.into();
    }
    let result = match reg_bits {
        8 => {
            let s = if signed || is_signed(reg_ty) {
                "s"
            } else {
                "u"
            };
            let _ = writeln!(code, "\tcvt.{s}32.{s}8 	{out}, {reg};");
            out.to_string()
        }
        16 => {
            let _ = writeln!(code, "\tmov.b16 	%prlx_h, {reg};");
            match value_ty {
                ScalarType::F16 => {
                    let _ = writeln!(code, "\tcvt.f32.f16 	%prlx_f, %prlx_h;");
                    return "%prlx_f".into();
                }
                ScalarType::BF16 => {
                    let _ = writeln!(code, "\tcvt.u32.u16 	{out}, %prlx_h;");
                    let _ = writeln!(code, "\tshl.b32 	{out}, {out}, 16;");
                    return out.into();
                }
                _ => {
                    let s = if signed && value_bits >= 16 { "s" } else { "u" };
                    let _ = writeln!(code, "\tcvt.{s}32.{s}16 	{out}, %prlx_h;");
                }
            }
            out.to_string()
        }
        32 => reg.to_string(),
        64 => {
            if value_ty == ScalarType::F64 {
                let _ = writeln!(code, "\tcvt.rn.f32.f64 	%prlx_f, {reg};");
                return "%prlx_f".into();
            }
            let _ = writeln!(code, "\tmov.b64 	{{{out}, %prlx_w3}}, {reg};");
            out.to_string()
        }
        _ => return "0".into(),
    };
    // A sub-word value held in a wider register: keep only its bits.
    if !is_float(value_ty) && value_bits < 32 && value_bits < reg_bits {
        let mask = (1u64 << value_bits) - 1;
        if signed && is_signed(value_ty) {
            let _ = writeln!(code, "\tcvt.s32.s{value_bits} 	{out}, {result};");
        } else {
            let _ = writeln!(code, "\tand.b32 	{out}, {result}, {mask};");
        }
        return out.into();
    }
    result
}

/// An immediate's recorded word, as the instruction type reads it.
pub fn immediate_word(imm: Immediate, ty: Option<ScalarType>) -> u32 {
    let as_f32_bits = |v: f64| (v as f32).to_bits();
    match (imm, ty) {
        (Immediate::F32Bits(b), _) => b,
        (Immediate::F64Bits(b), _) => as_f32_bits(f64::from_bits(b)),
        (Immediate::Decimal(v), _) => as_f32_bits(v),
        (Immediate::Int(v), Some(t)) if is_float(t) => as_f32_bits(v as f64),
        (Immediate::Int(v), Some(t)) if width(t) < 32 && !is_signed(t) => {
            (v as u32) & ((1u32 << width(t)) - 1)
        }
        (Immediate::Int(v), _) => v as u32,
        (Immediate::UInt(v), _) => v as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_ranges_resolve() {
        let mut regs = RegisterTypes::default();
        regs.declare("%r", ScalarType::B32, Some(10));
        regs.declare("%rd", ScalarType::B64, Some(3));
        regs.declare("%tmp", ScalarType::F64, None);
        assert_eq!(regs.get("%r9"), Some(ScalarType::B32));
        assert_eq!(regs.get("%r10"), None);
        assert_eq!(regs.get("%rd2"), Some(ScalarType::B64));
        assert_eq!(regs.get("%tmp"), Some(ScalarType::F64));
        assert_eq!(regs.get("%x1"), None);
    }

    #[test]
    fn immediates_become_words() {
        assert_eq!(
            immediate_word(Immediate::Int(-1), Some(ScalarType::S32)),
            u32::MAX
        );
        assert_eq!(
            immediate_word(Immediate::Int(300), Some(ScalarType::U8)),
            44
        );
        assert_eq!(
            immediate_word(Immediate::F64Bits(1.5f64.to_bits()), Some(ScalarType::F64)),
            1.5f32.to_bits()
        );
        assert_eq!(
            immediate_word(Immediate::Int(2), Some(ScalarType::F32)),
            2.0f32.to_bits()
        );
    }

    #[test]
    fn wide_and_narrow_registers_convert() {
        let mut regs = RegisterTypes::default();
        regs.declare("%rd", ScalarType::B64, Some(4));
        regs.declare("%rs", ScalarType::B16, Some(4));
        regs.declare("%fd", ScalarType::F64, Some(4));
        let reg = |n: &str| Operand::Register(prlx_ptx::Register::new(n));
        let mut code = String::new();
        let w = word(
            &mut code,
            &reg("%rd1"),
            Some(ScalarType::U64),
            false,
            &regs,
            0,
        );
        assert_eq!(w, "%prlx_w0");
        assert!(
            code.contains("mov.b64 	{%prlx_w0, %prlx_w3}, %rd1;"),
            "{code}"
        );
        code.clear();
        let w = word(
            &mut code,
            &reg("%rs1"),
            Some(ScalarType::S16),
            true,
            &regs,
            1,
        );
        assert_eq!(w, "%prlx_w1");
        assert!(code.contains("cvt.s32.s16 	%prlx_w1, %prlx_h;"), "{code}");
        code.clear();
        let w = word(
            &mut code,
            &reg("%fd2"),
            Some(ScalarType::F64),
            false,
            &regs,
            0,
        );
        assert_eq!(w, "%prlx_f");
        assert!(code.contains("cvt.rn.f32.f64"), "{code}");
        code.clear();
        // A byte stored from a 16-bit register keeps only the byte.
        word(
            &mut code,
            &reg("%rs2"),
            Some(ScalarType::U8),
            false,
            &regs,
            0,
        );
        assert!(code.contains("and.b32 	%prlx_w0, %prlx_w0, 255;"), "{code}");
    }
}
