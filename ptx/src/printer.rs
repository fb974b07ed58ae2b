//! PTX text output: `Display` for the AST.
//!
//! The output is valid PTX that parses back to the same tree (spans aside);
//! layout follows the NVPTX backend's (tab-indented bodies, labels flush left).

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;

impl Display for Module {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        writeln!(f, ".version {}.{}", self.version.major, self.version.minor)?;
        if !self.target.is_empty() {
            writeln!(f, ".target {}", self.target.join(", "))?;
        }
        if let Some(size) = self.address_size {
            writeln!(f, ".address_size {size}")?;
        }
        for item in &self.items {
            writeln!(f)?;
            writeln!(f, "{item}")?;
        }
        Ok(())
    }
}

impl Display for Item {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Item::Function(func) => func.fmt(f),
            Item::Variable(v) => v.fmt(f),
            Item::File(d) => d.fmt(f),
            Item::Section(s) => write!(f, ".section {} {{{}}}", s.name, s.raw),
            Item::Pragma(p) => p.fmt(f),
        }
    }
}

impl Display for FileDirective {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".file {} ", self.index)?;
        write_string(f, &self.path)?;
        if let Some(ts) = self.timestamp {
            write!(f, ", {ts}")?;
            if let Some(size) = self.size {
                write!(f, ", {size}")?;
            }
        }
        Ok(())
    }
}

impl Display for Pragma {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(".pragma ")?;
        write_strings(f, &self.values)?;
        f.write_char(';')
    }
}

fn write_string(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\t' => f.write_str("\\t")?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

fn write_strings(f: &mut Formatter<'_>, values: &[String]) -> fmt::Result {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write_string(f, v)?;
    }
    Ok(())
}

fn write_separated<T: Display>(f: &mut Formatter<'_>, items: &[T], sep: &str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        item.fmt(f)?;
    }
    Ok(())
}

impl Display for Linkage {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Linkage::None => "",
            Linkage::Visible => ".visible ",
            Linkage::Extern => ".extern ",
            Linkage::Weak => ".weak ",
            Linkage::Common => ".common ",
        })
    }
}

impl Display for Function {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.linkage)?;
        f.write_str(match self.kind {
            FunctionKind::Entry => ".entry ",
            FunctionKind::Func => ".func ",
        })?;
        if !self.returns.is_empty() {
            f.write_char('(')?;
            write_separated(f, &self.returns, ", ")?;
            f.write_str(") ")?;
        }
        f.write_str(&self.name)?;
        if self.params.is_empty() {
            f.write_str("()")?;
        } else {
            f.write_str("(\n")?;
            for (i, p) in self.params.iter().enumerate() {
                write!(f, "\t{p}")?;
                f.write_str(if i + 1 < self.params.len() {
                    ",\n"
                } else {
                    "\n"
                })?;
            }
            f.write_char(')')?;
        }
        for d in &self.directives {
            write!(f, "\n{d}")?;
        }
        match &self.body {
            None => f.write_char(';'),
            Some(body) => {
                f.write_str("\n{\n")?;
                write_statements(f, body, 1)?;
                f.write_char('}')
            }
        }
    }
}

impl Display for FunctionDirective {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let dims = |f: &mut Formatter<'_>, name: &str, d: &[u32]| {
            f.write_str(name)?;
            write_separated(f, d, ", ")
        };
        match self {
            FunctionDirective::MaxNTid(d) => dims(f, ".maxntid ", d),
            FunctionDirective::ReqNTid(d) => dims(f, ".reqntid ", d),
            FunctionDirective::ReqNCtaPerCluster(d) => dims(f, ".reqnctapercluster ", d),
            FunctionDirective::MinNCtaPerSm(n) => write!(f, ".minnctapersm {n}"),
            FunctionDirective::MaxNCtaPerSm(n) => write!(f, ".maxnctapersm {n}"),
            FunctionDirective::MaxNReg(n) => write!(f, ".maxnreg {n}"),
            FunctionDirective::MaxClusterRank(n) => write!(f, ".maxclusterrank {n}"),
            FunctionDirective::NoReturn => f.write_str(".noreturn"),
            FunctionDirective::ExplicitCluster => f.write_str(".explicitcluster"),
            FunctionDirective::Pragma(values) => {
                f.write_str(".pragma ")?;
                write_strings(f, values)?;
                f.write_char(';')
            }
        }
    }
}

fn write_dims(f: &mut Formatter<'_>, dims: &[Option<u64>]) -> fmt::Result {
    for d in dims {
        match d {
            Some(n) => write!(f, "[{n}]")?,
            None => f.write_str("[]")?,
        }
    }
    Ok(())
}

impl Display for Param {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self.space {
            ParamSpace::Param => ".param",
            ParamSpace::Reg => ".reg",
        })?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " {}", self.ty)?;
        if let Some(ptr) = &self.ptr {
            f.write_str(" .ptr")?;
            if let Some(space) = ptr.space {
                write!(f, " {}", space.as_str())?;
            }
            if let Some(a) = ptr.align {
                write!(f, " .align {a}")?;
            }
        }
        write!(f, " {}", self.name)?;
        write_dims(f, &self.array_dims)
    }
}

impl Display for VarDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.linkage, self.space.as_str())?;
        if !self.attributes.is_empty() {
            f.write_str(" .attribute(")?;
            for (i, a) in self.attributes.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, ".{a}")?;
            }
            f.write_char(')')?;
        }
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " {} {}", self.ty, self.name)?;
        write_dims(f, &self.array_dims)?;
        if let Some(init) = &self.init {
            write!(f, " = {init}")?;
        }
        f.write_char(';')
    }
}

fn write_offset(f: &mut Formatter<'_>, offset: i64) -> fmt::Result {
    match offset {
        0 => Ok(()),
        o if o > 0 => write!(f, "+{o}"),
        o => write!(f, "{o}"),
    }
}

impl Display for Initializer {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Initializer::Immediate(imm) => imm.fmt(f),
            Initializer::Symbol { name, offset } => {
                f.write_str(name)?;
                write_offset(f, *offset)
            }
            Initializer::Generic { name, offset } => {
                write!(f, "generic({name})")?;
                write_offset(f, *offset)
            }
            Initializer::List(items) => {
                f.write_char('{')?;
                write_separated(f, items, ", ")?;
                f.write_char('}')
            }
        }
    }
}

impl Display for RegDecl {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(".reg")?;
        if let Some(a) = self.align {
            write!(f, " .align {a}")?;
        }
        if let Some(v) = self.vector {
            write!(f, " .v{v}")?;
        }
        write!(f, " {} ", self.ty)?;
        for (i, n) in self.names.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(&n.name)?;
            if let Some(count) = n.range {
                write!(f, "<{count}>")?;
            }
        }
        f.write_char(';')
    }
}

impl Display for Loc {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, ".loc {} {} {}", self.file, self.line, self.col)?;
        if let Some(i) = &self.inlined {
            write!(
                f,
                ", function_name {}, inlined_at {} {} {}",
                i.function_name, i.file, i.line, i.col
            )?;
        }
        Ok(())
    }
}

fn write_statements(f: &mut Formatter<'_>, body: &[Statement], indent: usize) -> fmt::Result {
    for stmt in body {
        match stmt {
            Statement::Label(l) => writeln!(f, "{}:", l.name)?,
            Statement::Scope(s) => {
                write_indent(f, indent)?;
                f.write_str("{\n")?;
                write_statements(f, &s.body, indent + 1)?;
                write_indent(f, indent)?;
                f.write_str("}\n")?;
            }
            other => {
                write_indent(f, indent)?;
                writeln!(f, "{other}")?;
            }
        }
    }
    Ok(())
}

fn write_indent(f: &mut Formatter<'_>, indent: usize) -> fmt::Result {
    for _ in 0..indent {
        f.write_char('\t')?;
    }
    Ok(())
}

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Reg(r) => r.fmt(f),
            Statement::Var(v) => v.fmt(f),
            Statement::Label(l) => write!(f, "{}:", l.name),
            Statement::Instruction(i) => i.fmt(f),
            Statement::Loc(l) => l.fmt(f),
            Statement::Scope(s) => {
                f.write_str("{\n")?;
                write_statements(f, &s.body, 1)?;
                f.write_char('}')
            }
            Statement::Pragma(p) => p.fmt(f),
            Statement::CallPrototype(p) => {
                write!(f, "{}: .callprototype (", p.name)?;
                write_separated(f, &p.returns, ", ")?;
                f.write_str(") _ (")?;
                write_separated(f, &p.params, ", ")?;
                f.write_char(')')?;
                if p.noreturn {
                    f.write_str(" .noreturn")?;
                }
                f.write_char(';')
            }
            Statement::BranchTargets(b) => {
                write!(f, "{}: .branchtargets {};", b.name, b.labels.join(", "))
            }
        }
    }
}

impl Display for Instruction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(g) = &self.guard {
            write!(f, "@{}{} ", if g.negated { "!" } else { "" }, g.register)?;
        }
        f.write_str(&self.opcode)?;
        for m in &self.modifiers {
            f.write_str(m)?;
        }
        if !self.operands.is_empty() {
            f.write_char('\t')?;
            write_separated(f, &self.operands, ", ")?;
        }
        f.write_char(';')
    }
}

impl Display for Register {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(c) = self.component {
            f.write_str(c.as_str())?;
        }
        Ok(())
    }
}

impl Display for Operand {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Register(r) => r.fmt(f),
            Operand::Not(r) => write!(f, "!{r}"),
            Operand::Vector(items) => {
                f.write_char('{')?;
                write_separated(f, items, ", ")?;
                f.write_char('}')
            }
            Operand::Immediate(imm) => imm.fmt(f),
            Operand::Symbol(s) => f.write_str(s),
            Operand::Address(a) => a.fmt(f),
            Operand::PredicatePair(a, b) => write!(f, "{a}|{b}"),
            Operand::Sink => f.write_char('_'),
            // `+0` kept, so that the form reads back as itself.
            Operand::RegisterOffset(r, offset) if *offset >= 0 => write!(f, "{r}+{offset}"),
            Operand::RegisterOffset(r, offset) => write!(f, "{r}{offset}"),
            Operand::List(items) => {
                f.write_char('(')?;
                write_separated(f, items, ", ")?;
                f.write_char(')')
            }
        }
    }
}

impl Display for Address {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        match &self.base {
            AddressBase::Register(r) => r.fmt(f)?,
            AddressBase::Symbol(s) => f.write_str(s)?,
            AddressBase::Immediate(a) => write!(f, "{a}")?,
        }
        write_offset(f, self.offset)?;
        for op in &self.trailing {
            write!(f, ", {op}")?;
        }
        f.write_char(']')
    }
}

impl Display for Immediate {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Immediate::Int(v) => write!(f, "{v}"),
            Immediate::UInt(v) => write!(f, "{v}"),
            Immediate::F32Bits(bits) => write!(f, "0f{bits:08X}"),
            Immediate::F64Bits(bits) => write!(f, "0d{bits:016X}"),
            Immediate::Decimal(v) => {
                // Rust's shortest round-trip form, with a `.` so it reads as a float.
                let text = format!("{v:?}");
                if text.contains('.') {
                    f.write_str(&text)
                } else if let Some((mantissa, exp)) = text.split_once('e') {
                    write!(f, "{mantissa}.0e{exp}")
                } else {
                    write!(f, "{text}.0")
                }
            }
        }
    }
}
