//! Prints decoded-from instructions back as PTX text, for observers and
//! fault messages.

use prlx_ptx::ast::{AddressBase, Immediate, Instruction, Operand, Register};

fn register(r: &Register) -> String {
    match r.component {
        Some(c) => format!("{}{}", r.name, c.as_str()),
        None => r.name.clone(),
    }
}

fn immediate(i: &Immediate) -> String {
    match i {
        Immediate::Int(v) => v.to_string(),
        Immediate::UInt(v) => v.to_string(),
        Immediate::F32Bits(b) => format!("0f{b:08X}"),
        Immediate::F64Bits(b) => format!("0d{b:016X}"),
        Immediate::Decimal(x) => format!("{x:?}"),
    }
}

fn operand(o: &Operand) -> String {
    match o {
        Operand::Register(r) => register(r),
        Operand::Not(r) => format!("!{}", register(r)),
        Operand::Vector(v) => format!(
            "{{{}}}",
            v.iter().map(operand).collect::<Vec<_>>().join(", ")
        ),
        Operand::Immediate(i) => immediate(i),
        Operand::Symbol(s) => s.clone(),
        Operand::Address(a) => {
            let base = match &a.base {
                AddressBase::Register(r) => register(r),
                AddressBase::Symbol(s) => s.clone(),
                AddressBase::Immediate(v) => v.to_string(),
            };
            // Texture and surface operands: `[h, {x, y}]`, `[t, s, {x}]`.
            let trailing: String = a
                .trailing
                .iter()
                .map(|t| format!(", {}", operand(t)))
                .collect();
            if a.offset == 0 {
                format!("[{base}{trailing}]")
            } else if a.offset > 0 {
                format!("[{base}+{}{trailing}]", a.offset)
            } else {
                format!("[{base}{}{trailing}]", a.offset)
            }
        }
        Operand::PredicatePair(a, b) => format!("{}|{}", register(a), register(b)),
        Operand::Sink => "_".to_string(),
        Operand::RegisterOffset(r, o) if *o >= 0 => format!("{}+{o}", register(r)),
        Operand::RegisterOffset(r, o) => format!("{}{o}", register(r)),
        Operand::List(v) => format!("({})", v.iter().map(operand).collect::<Vec<_>>().join(", ")),
    }
}

/// `@%p1 ld.global.u32 %r1, [%rd1+4];`
pub fn instruction(i: &Instruction) -> String {
    let mut s = String::new();
    if let Some(g) = &i.guard {
        s.push('@');
        if g.negated {
            s.push('!');
        }
        s.push_str(&register(&g.register));
        s.push(' ');
    }
    s.push_str(&i.opcode);
    for m in &i.modifiers {
        s.push_str(m);
    }
    for (k, o) in i.operands.iter().enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        s.push_str(&operand(o));
    }
    s.push(';');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_text_keeps_the_coordinates() {
        let ptx = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 t)\n{\n.reg .f32 %f<7>;\n.reg .b64 %rd<2>;\n.reg .b32 %r<3>;\ntex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];\nsust.b.a1d.b32.zero [%rd1, {%r1, %r2}], {%r1};\nret;\n}\n";
        let m = prlx_ptx::parse(ptx, "t.ptx").expect("parses");
        let f = m.functions().next().expect("a kernel");
        let text: Vec<String> = f.instructions().map(instruction).collect();
        assert_eq!(
            text[0],
            "tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {%f5, %f6}];"
        );
        assert_eq!(text[1], "sust.b.a1d.b32.zero [%rd1, {%r1, %r2}], {%r1};");
    }
}
