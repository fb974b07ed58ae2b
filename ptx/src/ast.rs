//! The PTX abstract syntax tree.
//!
//! The tree mirrors the text closely: instructions keep their opcode and
//! modifiers as strings in source order, so the parser accepts any
//! instruction shape and consumers (the emulator's decoder, a rewriter)
//! decide what they understand. Declarations (types, state spaces,
//! directives) are typed enums because every consumer needs them decoded.
//!
//! Every node that a diagnostic may point at carries a [`Span`]. The derived
//! `PartialEq` compares spans too; use [`same_module`] (or
//! [`Module::without_spans`]) to compare two trees by content only, as the
//! parse → print → parse round trip does.

use std::fmt;

/// A 1-based source position: the first character of the construct.
/// Columns count bytes (a tab is one column; PTX is ASCII outside strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub line: u32,
    pub col: u32,
}

impl Span {
    pub const fn new(line: u32, col: u32) -> Self {
        Span { line, col }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A whole `.ptx` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// `.version MAJOR.MINOR`.
    pub version: Version,
    /// `.target sm_80, texmode_independent, debug` → `["sm_80", "texmode_independent", "debug"]`.
    pub target: Vec<String>,
    /// `.address_size 64`; `None` when the directive is absent (PTX then defaults to 32).
    pub address_size: Option<u32>,
    /// Module-level items in source order.
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

/// A module-level construct.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `.entry` / `.func`, with a body or as a prototype (`.extern .func …;`).
    Function(Function),
    /// `.global` / `.const` / `.shared` / `.extern .shared` … variables.
    Variable(VarDecl),
    /// `.file IDX "path" [, timestamp, size]`.
    File(FileDirective),
    /// `.section .debug_info { … }`, kept as raw text.
    Section(Section),
    /// `.pragma "…";` at module scope.
    Pragma(Pragma),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Function(f) => f.span,
            Item::Variable(v) => v.span,
            Item::File(f) => f.span,
            Item::Section(s) => s.span,
            Item::Pragma(p) => p.span,
        }
    }
}

/// `.file 1 "/path/k.cu", 1700000000, 1234`.
#[derive(Debug, Clone, PartialEq)]
pub struct FileDirective {
    pub index: u32,
    pub path: String,
    /// Modification timestamp, when the producer wrote one.
    pub timestamp: Option<u64>,
    /// File size in bytes, when the producer wrote one.
    pub size: Option<u64>,
    pub span: Span,
}

/// `.section .debug_abbrev { … }`. `raw` is the exact text between the braces.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// The section name with its leading dot: `.debug_info`.
    pub name: String,
    pub raw: String,
    pub span: Span,
}

/// `.pragma "nounroll";` — the string arguments, unquoted.
#[derive(Debug, Clone, PartialEq)]
pub struct Pragma {
    pub values: Vec<String>,
    pub span: Span,
}

/// Visibility of a module-level symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// No linkage directive: the symbol is local to the module.
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

/// A kernel or device function.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub linkage: Linkage,
    pub kind: FunctionKind,
    pub name: String,
    /// `.func (.param .b32 func_retval0) name(…)`: the return parameters.
    /// Always empty for `.entry`.
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    /// Performance and attribute directives between the parameter list and the body.
    pub directives: Vec<FunctionDirective>,
    /// `None` for a declaration (`.extern .func f(…);`).
    pub body: Option<Vec<Statement>>,
    pub span: Span,
}

/// A directive attached to a function header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FunctionDirective {
    /// `.maxntid x[, y[, z]]`.
    MaxNTid(Vec<u32>),
    /// `.reqntid x[, y[, z]]`.
    ReqNTid(Vec<u32>),
    /// `.minnctapersm n`.
    MinNCtaPerSm(u32),
    /// `.maxnctapersm n` (deprecated, still accepted).
    MaxNCtaPerSm(u32),
    /// `.maxnreg n`.
    MaxNReg(u32),
    /// `.noreturn`.
    NoReturn,
    /// `.pragma "nounroll";` written in the header.
    Pragma(Vec<String>),
    /// `.reqnctapercluster x[, y[, z]]`.
    ReqNCtaPerCluster(Vec<u32>),
    /// `.maxclusterrank n`.
    MaxClusterRank(u32),
    /// `.explicitcluster`.
    ExplicitCluster,
}

/// State space of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamSpace {
    /// `.param` (the usual case).
    Param,
    /// `.reg` (allowed for `.func` parameters).
    Reg,
}

/// A function parameter or return value, also used in `.callprototype`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub space: ParamSpace,
    /// `.align N` on the parameter itself.
    pub align: Option<u32>,
    /// `.v2` / `.v4` element count.
    pub vector: Option<u32>,
    pub ty: ScalarType,
    /// `.ptr [.space] [.align N]` (kernel pointer parameters), if present.
    pub ptr: Option<PtrAttr>,
    /// Name; `_` in `.callprototype` parameter lists.
    pub name: String,
    /// Array dimensions: `[16]` → `Some(16)`, `[]` → `None`.
    pub array_dims: Vec<Option<u64>>,
    pub span: Span,
}

/// `.ptr .global .align 16` on a kernel parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtrAttr {
    pub space: Option<StateSpace>,
    pub align: Option<u32>,
}

/// A PTX state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

impl StateSpace {
    /// The directive spelling, with its leading dot.
    pub fn as_str(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg",
            StateSpace::Sreg => ".sreg",
            StateSpace::Const => ".const",
            StateSpace::Global => ".global",
            StateSpace::Local => ".local",
            StateSpace::Param => ".param",
            StateSpace::Shared => ".shared",
            StateSpace::Tex => ".tex",
        }
    }

    /// Parses a directive spelling with its leading dot.
    pub fn from_directive(s: &str) -> Option<Self> {
        Some(match s {
            ".reg" => StateSpace::Reg,
            ".sreg" => StateSpace::Sreg,
            ".const" => StateSpace::Const,
            ".global" => StateSpace::Global,
            ".local" => StateSpace::Local,
            ".param" => StateSpace::Param,
            ".shared" => StateSpace::Shared,
            ".tex" => StateSpace::Tex,
            _ => return None,
        })
    }
}

/// A fundamental PTX type as written in declarations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    BF16,
    BF16x2,
    TF32,
    F32,
    F64,
    E4M3,
    E5M2,
    E4M3x2,
    E5M2x2,
    Pred,
    TexRef,
    SamplerRef,
    SurfRef,
}

impl ScalarType {
    const ALL: [(ScalarType, &'static str); 28] = [
        (ScalarType::B8, ".b8"),
        (ScalarType::B16, ".b16"),
        (ScalarType::B32, ".b32"),
        (ScalarType::B64, ".b64"),
        (ScalarType::B128, ".b128"),
        (ScalarType::U8, ".u8"),
        (ScalarType::U16, ".u16"),
        (ScalarType::U32, ".u32"),
        (ScalarType::U64, ".u64"),
        (ScalarType::S8, ".s8"),
        (ScalarType::S16, ".s16"),
        (ScalarType::S32, ".s32"),
        (ScalarType::S64, ".s64"),
        (ScalarType::F16, ".f16"),
        (ScalarType::F16x2, ".f16x2"),
        (ScalarType::BF16, ".bf16"),
        (ScalarType::BF16x2, ".bf16x2"),
        (ScalarType::TF32, ".tf32"),
        (ScalarType::F32, ".f32"),
        (ScalarType::F64, ".f64"),
        (ScalarType::E4M3, ".e4m3"),
        (ScalarType::E5M2, ".e5m2"),
        (ScalarType::E4M3x2, ".e4m3x2"),
        (ScalarType::E5M2x2, ".e5m2x2"),
        (ScalarType::Pred, ".pred"),
        (ScalarType::TexRef, ".texref"),
        (ScalarType::SamplerRef, ".samplerref"),
        (ScalarType::SurfRef, ".surfref"),
    ];

    /// The directive spelling, with its leading dot.
    pub fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(t, _)| *t == self)
            .map(|(_, s)| *s)
            .unwrap_or(".b8")
    }

    /// Parses a type spelling with its leading dot (`.u32`).
    pub fn from_directive(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n)| *n == s).map(|(t, _)| *t)
    }

    /// Storage size in bytes; `None` for `.pred` and the opaque reference types.
    pub fn size_bytes(self) -> Option<u32> {
        use ScalarType::*;
        Some(match self {
            B8 | U8 | S8 | E4M3 | E5M2 => 1,
            B16 | U16 | S16 | F16 | BF16 | E4M3x2 | E5M2x2 => 2,
            B32 | U32 | S32 | F32 | F16x2 | BF16x2 | TF32 => 4,
            B64 | U64 | S64 | F64 => 8,
            B128 => 16,
            Pred | TexRef | SamplerRef | SurfRef => return None,
        })
    }

    /// Width in bits of a register holding this type: 1 for a predicate, 64
    /// for the opaque `.texref/.samplerref/.surfref` (handles).
    pub const fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 | E4M3 | E5M2 => 8,
            B16 | U16 | S16 | F16 | BF16 | E4M3x2 | E5M2x2 => 16,
            B32 | U32 | S32 | F16x2 | BF16x2 | TF32 | F32 => 32,
            B64 | U64 | S64 | F64 | TexRef | SamplerRef | SurfRef => 64,
            B128 => 128,
        }
    }

    /// The mask selecting the low [`bits`](Self::bits) of a `u64` (all ones
    /// for 64 and 128).
    pub const fn mask(self) -> u64 {
        let bits = self.bits();
        if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    }

    /// `.s8` … `.s64`.
    pub const fn is_signed_int(self) -> bool {
        matches!(
            self,
            ScalarType::S8 | ScalarType::S16 | ScalarType::S32 | ScalarType::S64
        )
    }

    /// `.u8` … `.u64`.
    pub const fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            ScalarType::U8 | ScalarType::U16 | ScalarType::U32 | ScalarType::U64
        )
    }

    /// The untyped bit-size types, `.b8` … `.b128`.
    pub const fn is_bits(self) -> bool {
        matches!(
            self,
            ScalarType::B8 | ScalarType::B16 | ScalarType::B32 | ScalarType::B64 | ScalarType::B128
        )
    }

    /// A signed or unsigned integer (not `.bN`).
    pub const fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Scalar or packed floating point, `.tf32` and the FP8 types included.
    pub const fn is_float(self) -> bool {
        use ScalarType::*;
        matches!(
            self,
            F16 | F16x2 | BF16 | BF16x2 | TF32 | F32 | F64 | E4M3 | E5M2 | E4M3x2 | E5M2x2
        )
    }

    /// The packed two-element types (`.f16x2`, `.bf16x2`, `.e4m3x2`, `.e5m2x2`).
    pub const fn is_packed(self) -> bool {
        use ScalarType::*;
        matches!(self, F16x2 | BF16x2 | E4M3x2 | E5M2x2)
    }

    /// The element type of a packed type; the type itself otherwise.
    pub const fn element(self) -> Self {
        use ScalarType::*;
        match self {
            F16x2 => F16,
            BF16x2 => BF16,
            E4M3x2 => E4M3,
            E5M2x2 => E5M2,
            other => other,
        }
    }

    /// Sign-extends (signed integers) or zero-extends (every other type) the
    /// low [`bits`](Self::bits) of `value` to a full `u64`.
    #[inline]
    pub const fn extend(self, value: u64) -> u64 {
        let bits = self.bits();
        if bits >= 64 {
            value
        } else if self.is_signed_int() {
            let shift = 64 - bits;
            (((value << shift) as i64) >> shift) as u64
        } else {
            value & self.mask()
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A variable declaration: module-level (`.global`, `.const`, `.shared`, …)
/// or inside a function body (`.local`, `.shared`, `.param`, …).
/// `.reg` declarations are [`RegDecl`] instead.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub linkage: Linkage,
    pub space: StateSpace,
    /// `.attribute(.managed)` → `["managed"]`.
    pub attributes: Vec<String>,
    pub align: Option<u32>,
    /// `.v2` / `.v4` element count.
    pub vector: Option<u32>,
    pub ty: ScalarType,
    pub name: String,
    /// Array dimensions: `[16]` → `Some(16)`, `[]` → `None` (size from initializer or extern).
    pub array_dims: Vec<Option<u64>>,
    pub init: Option<Initializer>,
    pub span: Span,
}

/// The value after `=` in a variable declaration.
#[derive(Debug, Clone, PartialEq)]
pub enum Initializer {
    /// A scalar constant.
    Immediate(Immediate),
    /// The address of a variable or function, plus a byte offset: `foo`, `foo+8`.
    Symbol { name: String, offset: i64 },
    /// `generic(foo)` / `generic(foo)+8`: the generic address of a variable.
    Generic { name: String, offset: i64 },
    /// `{a, b, …}`; nested for multi-dimensional arrays.
    List(Vec<Initializer>),
}

/// A `.reg` declaration: `.reg .b32 %r<10>, %tmp;`.
#[derive(Debug, Clone, PartialEq)]
pub struct RegDecl {
    pub align: Option<u32>,
    pub vector: Option<u32>,
    pub ty: ScalarType,
    pub names: Vec<RegName>,
    pub span: Span,
}

/// One declared register name, or a parameterized range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegName {
    /// `%r` for `%r<10>`, `%tmp` for `%tmp`.
    pub name: String,
    /// `Some(10)` for `%r<10>` (declares `%r0` … `%r9`); `None` for a single register.
    pub range: Option<u32>,
}

/// A statement inside a function body or `{ }` scope.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    Reg(RegDecl),
    Var(VarDecl),
    Label(Label),
    Instruction(Instruction),
    Loc(Loc),
    /// A `{ … }` block: clang's `callseq` blocks, Triton's inline-asm scopes.
    Scope(Scope),
    Pragma(Pragma),
    /// `prototype_0 : .callprototype (.param .b32 _) _ (.param .b64 _);`.
    CallPrototype(CallPrototype),
    /// `ts: .branchtargets L1, L2, L3;` (used by `brx.idx`).
    BranchTargets(BranchTargets),
}

impl Statement {
    pub fn span(&self) -> Span {
        match self {
            Statement::Reg(s) => s.span,
            Statement::Var(s) => s.span,
            Statement::Label(s) => s.span,
            Statement::Instruction(s) => s.span,
            Statement::Loc(s) => s.span,
            Statement::Scope(s) => s.span,
            Statement::Pragma(s) => s.span,
            Statement::CallPrototype(s) => s.span,
            Statement::BranchTargets(s) => s.span,
        }
    }
}

/// `$L__BB0_2:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub name: String,
    pub span: Span,
}

/// `{ … }`.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    pub body: Vec<Statement>,
    pub span: Span,
}

/// `.loc FILE LINE COL [, function_name NAME, inlined_at FILE LINE COL]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// The inlined call site, present only on `.loc`s of inlined code.
    pub inlined: Option<InlinedAt>,
    pub span: Span,
}

/// The `function_name …, inlined_at …` tail of a `.loc`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlinedAt {
    /// The label naming the inlined function's string in `.debug_str`,
    /// with any `+offset` kept verbatim: `$L__info_string0`, `$L__info_string0+5`.
    pub function_name: String,
    pub file: u32,
    pub line: u32,
    pub col: u32,
}

/// `NAME: .callprototype (RETURNS) _ (PARAMS) [.noreturn];`.
#[derive(Debug, Clone, PartialEq)]
pub struct CallPrototype {
    pub name: String,
    pub returns: Vec<Param>,
    pub params: Vec<Param>,
    pub noreturn: bool,
    pub span: Span,
}

/// `NAME: .branchtargets L1, L2;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchTargets {
    pub name: String,
    pub labels: Vec<String>,
    pub span: Span,
}

/// `@%p` / `@!%p` in front of an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    pub register: Register,
    pub negated: bool,
}

/// One PTX instruction.
///
/// `ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1+16];` is
/// `opcode: "ld"`, `modifiers: [".global", ".nc", ".v4", ".f32"]`,
/// `operands: [Vector([...]), Address { base: %rd1, offset: 16 }]`.
///
/// `call` keeps its parenthesised lists as [`Operand::List`]; use
/// [`Instruction::as_call`] for the decoded form.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    pub guard: Option<Guard>,
    /// The first dotted component: `add`, `ld`, `setp`, `mma`, `cp`, …
    pub opcode: String,
    /// The remaining dotted components, each with its leading dot, in source
    /// order: `.s32`, `.global`, `.v4`, `.rn`, `.L2::128B`, …
    pub modifiers: Vec<String>,
    pub operands: Vec<Operand>,
    /// Position of the guard's `@` or, without a guard, of the opcode.
    pub span: Span,
}

impl Instruction {
    /// Whether `modifier` (with its leading dot) is among the modifiers.
    pub fn has_modifier(&self, modifier: &str) -> bool {
        self.modifiers.iter().any(|m| m == modifier)
    }

    /// Decodes `call` operands:
    /// `call[.uni] [(rets),] target [, (args)] [, prototype];`.
    /// Returns `None` for other opcodes or a malformed operand list.
    pub fn as_call(&self) -> Option<CallForm<'_>> {
        if self.opcode != "call" {
            return None;
        }
        let mut ops = self.operands.as_slice();
        let returns: &[Operand] = match ops.first() {
            Some(Operand::List(list)) => {
                ops = &ops[1..];
                list
            }
            _ => &[],
        };
        let (target, rest) = ops.split_first()?;
        if matches!(target, Operand::List(_)) {
            return None;
        }
        let (args, rest): (&[Operand], _) = match rest.split_first() {
            Some((Operand::List(list), rest)) => (list, rest),
            _ => (&[], rest),
        };
        let prototype = match rest {
            [] => None,
            [Operand::Symbol(name)] => Some(name.as_str()),
            _ => return None,
        };
        Some(CallForm {
            returns,
            target,
            args,
            prototype,
        })
    }
}

/// The decoded operands of a `call` instruction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallForm<'a> {
    /// `(retval0)`; empty when the callee returns nothing.
    pub returns: &'a [Operand],
    /// The callee: a [`Operand::Symbol`] (direct) or a register (indirect).
    pub target: &'a Operand,
    pub args: &'a [Operand],
    /// The `.callprototype` label or function name of an indirect call.
    pub prototype: Option<&'a str>,
}

/// A `.x`/`.y`/`.z`/`.w` (or `.r`/`.g`/`.b`/`.a`) component selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Component {
    X,
    Y,
    Z,
    W,
}

impl Component {
    pub fn index(self) -> usize {
        match self {
            Component::X => 0,
            Component::Y => 1,
            Component::Z => 2,
            Component::W => 3,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Component::X => ".x",
            Component::Y => ".y",
            Component::Z => ".z",
            Component::W => ".w",
        }
    }
}

/// A register reference: `%r1`, `%tid.x` (`name: "%tid"`, `component: Some(X)`), `%laneid`,
/// or a register declared without `%` (`.reg .u64 in_addr;` → `name: "in_addr"`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Register {
    /// The name as declared, including its `%` if it has one.
    pub name: String,
    pub component: Option<Component>,
}

impl Register {
    pub fn new(name: impl Into<String>) -> Self {
        Register {
            name: name.into(),
            component: None,
        }
    }

    /// Whether this is one of PTX's predefined, read-only special registers
    /// (`%tid`, `%laneid`, `%clock64`, `%pm3`, `%envreg7`, …), which only
    /// `mov` (and a few other instructions) may read, and never a register
    /// a module declares.
    pub fn is_special(&self) -> bool {
        is_special_register(&self.name)
    }
}

/// Whether `name` (with its `%`, without a vector component) is one of
/// PTX's predefined special registers (PTX ISA, "Special Registers").
pub fn is_special_register(name: &str) -> bool {
    const NAMES: &[&str] = &[
        "%tid",
        "%ntid",
        "%laneid",
        "%warpid",
        "%nwarpid",
        "%ctaid",
        "%nctaid",
        "%smid",
        "%nsmid",
        "%gridid",
        "%is_explicit_cluster",
        "%clusterid",
        "%nclusterid",
        "%cluster_ctaid",
        "%cluster_nctaid",
        "%cluster_ctarank",
        "%cluster_nctarank",
        "%lanemask_eq",
        "%lanemask_le",
        "%lanemask_lt",
        "%lanemask_ge",
        "%lanemask_gt",
        "%clock",
        "%clock_hi",
        "%clock64",
        "%globaltimer",
        "%globaltimer_lo",
        "%globaltimer_hi",
        "%total_smem_size",
        "%aggr_smem_size",
        "%dynamic_smem_size",
        "%current_graph_exec",
    ];
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
    };
    NAMES.contains(&name)
        || numbered("%pm")
        || numbered("%envreg")
        || name.starts_with("%reserved_smem_offset_")
}

/// A numeric literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Immediate {
    /// An integer that fits `i64` (decimal, hex `0x…`, octal `0…`, binary `0b…`, possibly negated).
    Int(i64),
    /// A positive integer above `i64::MAX` (e.g. `0xFFFFFFFFFFFFFFFF`).
    UInt(u64),
    /// `0fXXXXXXXX`: exact single-precision bits.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: exact double-precision bits.
    F64Bits(u64),
    /// A decimal floating-point literal (`1.5`, `1e-3`); PTX treats it as `.f64`.
    Decimal(f64),
}

/// The base of a `[ … ]` address operand.
#[derive(Debug, Clone, PartialEq)]
pub enum AddressBase {
    Register(Register),
    /// A variable, parameter or label name.
    Symbol(String),
    /// An absolute address: `[0x1000]`.
    Immediate(u64),
}

/// `[base+offset]`, or a texture/surface operand `[tex, sampler, {x, y}]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Address {
    pub base: AddressBase,
    pub offset: i64,
    /// Further comma-separated operands inside the brackets, as texture and
    /// surface instructions write them (`tex.2d… d, [%rd1, {%f1, %f2}]`).
    /// Empty for memory addresses.
    pub trailing: Vec<Operand>,
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Register(Register),
    /// `!%p`: a negated predicate source.
    Not(Register),
    /// `{%r1, %r2, _, %r4}`.
    Vector(Vec<Operand>),
    Immediate(Immediate),
    /// A variable, function or label name (`bra $L__BB0_2`, `mov.u64 %rd1, smem`).
    Symbol(String),
    /// `[%rd1+8]`, `[param0]`, `[0x100]`.
    Address(Address),
    /// `%p|%q`: the two destination predicates of `setp`/`set`.
    PredicatePair(Register, Register),
    /// `_`: a discarded result.
    Sink,
    /// `(a, b, …)`: the return and argument lists of `call`.
    List(Vec<Operand>),
    /// `%rd1 + 1`, `%r2 - 4`: a register plus a constant as a source operand
    /// (ptxas accepts it, as in `st.u64 [a], %rd1 + 1;`): the register's
    /// value plus the offset, at the operand's width. Only after the first
    /// operand (never a destination).
    RegisterOffset(Register, i64),
}

/// Whether two modules are equal ignoring spans.
pub fn same_module(a: &Module, b: &Module) -> bool {
    a.without_spans() == b.without_spans()
}

impl Function {
    /// Every statement of the body in source order, descending into `{ }`
    /// scopes (a scope is yielded before its contents). Empty for declarations.
    pub fn statements(&self) -> Statements<'_> {
        Statements {
            stack: vec![self.body.as_deref().unwrap_or(&[]).iter()],
        }
    }

    /// Every instruction of the body in source order, including those in scopes.
    pub fn instructions(&self) -> impl Iterator<Item = &Instruction> {
        self.statements().filter_map(|s| match s {
            Statement::Instruction(i) => Some(i),
            _ => None,
        })
    }
}

/// Depth-first iterator over statements; see [`Function::statements`].
#[derive(Debug, Clone)]
pub struct Statements<'a> {
    stack: Vec<std::slice::Iter<'a, Statement>>,
}

impl<'a> Iterator for Statements<'a> {
    type Item = &'a Statement;

    fn next(&mut self) -> Option<&'a Statement> {
        loop {
            let top = self.stack.last_mut()?;
            match top.next() {
                Some(stmt) => {
                    if let Statement::Scope(scope) = stmt {
                        self.stack.push(scope.body.iter());
                    }
                    return Some(stmt);
                }
                None => {
                    self.stack.pop();
                }
            }
        }
    }
}

impl Module {
    /// A copy with every span zeroed, for content comparison.
    pub fn without_spans(&self) -> Module {
        let mut m = self.clone();
        m.for_each_span_mut(&mut |s| *s = Span::default());
        m
    }

    /// Visits every span in the tree, in source order.
    pub fn for_each_span_mut(&mut self, f: &mut dyn FnMut(&mut Span)) {
        for item in &mut self.items {
            match item {
                Item::Function(func) => {
                    f(&mut func.span);
                    for p in func.returns.iter_mut().chain(func.params.iter_mut()) {
                        f(&mut p.span);
                    }
                    if let Some(body) = &mut func.body {
                        statements_spans_mut(body, f);
                    }
                }
                Item::Variable(v) => f(&mut v.span),
                Item::File(d) => f(&mut d.span),
                Item::Section(s) => f(&mut s.span),
                Item::Pragma(p) => f(&mut p.span),
            }
        }
    }

    /// The functions (definitions and declarations) in source order.
    pub fn functions(&self) -> impl Iterator<Item = &Function> {
        self.items.iter().filter_map(|i| match i {
            Item::Function(f) => Some(f),
            _ => None,
        })
    }

    /// The function named `name`, preferring a definition over a declaration.
    pub fn function(&self, name: &str) -> Option<&Function> {
        let mut found = None;
        for f in self.functions().filter(|f| f.name == name) {
            if f.body.is_some() {
                return Some(f);
            }
            found = Some(f);
        }
        found
    }
}

fn statements_spans_mut(body: &mut [Statement], f: &mut dyn FnMut(&mut Span)) {
    for stmt in body {
        match stmt {
            Statement::Reg(s) => f(&mut s.span),
            Statement::Var(s) => f(&mut s.span),
            Statement::Label(s) => f(&mut s.span),
            Statement::Instruction(s) => f(&mut s.span),
            Statement::Loc(s) => f(&mut s.span),
            Statement::Scope(s) => {
                f(&mut s.span);
                statements_spans_mut(&mut s.body, f);
            }
            Statement::Pragma(s) => f(&mut s.span),
            Statement::CallPrototype(s) => {
                f(&mut s.span);
                for p in s.returns.iter_mut().chain(s.params.iter_mut()) {
                    f(&mut p.span);
                }
            }
            Statement::BranchTargets(s) => f(&mut s.span),
        }
    }
}
