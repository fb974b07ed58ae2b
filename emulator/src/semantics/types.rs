//! Operand types and instruction modifiers shared by every semantics family.

/// A PTX fundamental type as written in an instruction suffix (`.s32`,
/// `.f16x2`, ...): the parser's type, one definition for both crates. The
/// emulator takes only the types [`is_emulated`] accepts.
pub use prlx_ptx::ast::ScalarType;

/// The type a suffix names, with its leading dot (`.s32`), when the emulator
/// models its values; `None` for any other spelling and for the types it
/// does not emulate, which are refused as unsupported where they appear.
pub fn parse_type(suffix: &str) -> Option<ScalarType> {
    ScalarType::from_directive(suffix).filter(|ty| is_emulated(*ty))
}

/// Whether the emulator models values of `ty`: not the FP8 types (their
/// conversions name them by suffix, see [`super::fp8`]) nor the opaque
/// texture, sampler and surface references.
pub const fn is_emulated(ty: ScalarType) -> bool {
    use ScalarType::*;
    match ty {
        Pred | B8 | B16 | B32 | B64 | B128 | U8 | U16 | U32 | U64 | S8 | S16 | S32 | S64 | F16
        | F16x2 | BF16 | BF16x2 | TF32 | F32 | F64 => true,
        E4M3 | E5M2 | E4M3x2 | E5M2x2 | TexRef | SamplerRef | SurfRef => false,
    }
}

/// Rounding of a floating-point result (`.rn .rz .rm .rp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FloatRounding {
    /// Round to nearest, ties to even.
    #[default]
    Rn,
    /// Round towards zero.
    Rz,
    /// Round towards negative infinity.
    Rm,
    /// Round towards positive infinity.
    Rp,
}

impl FloatRounding {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.strip_prefix('.').unwrap_or(text) {
            "rn" => Self::Rn,
            "rz" => Self::Rz,
            "rm" => Self::Rm,
            "rp" => Self::Rp,
            _ => return None,
        })
    }
}

/// Rounding of a float to an integral value (`cvt` `.rni .rzi .rmi .rpi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IntRounding {
    /// Nearest integer, ties to even.
    #[default]
    Rni,
    /// Towards zero.
    Rzi,
    /// Towards negative infinity.
    Rmi,
    /// Towards positive infinity.
    Rpi,
}

impl IntRounding {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.strip_prefix('.').unwrap_or(text) {
            "rni" => Self::Rni,
            "rzi" => Self::Rzi,
            "rmi" => Self::Rmi,
            "rpi" => Self::Rpi,
            _ => return None,
        })
    }
}

/// Modifiers of a floating-point arithmetic instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FloatMode {
    pub rounding: FloatRounding,
    /// `.ftz`: subnormal inputs and results become sign-preserving zero.
    pub ftz: bool,
    /// `.sat`: clamp the result to `[0.0, 1.0]`, NaN becomes `+0.0`.
    pub sat: bool,
    /// `.relu` (`.f16`/`.bf16` forms): negative results become `+0.0`, NaN
    /// becomes the canonical NaN.
    pub relu: bool,
}

impl FloatMode {
    pub const RN: Self = Self::new(FloatRounding::Rn);

    pub const fn new(rounding: FloatRounding) -> Self {
        Self {
            rounding,
            ftz: false,
            sat: false,
            relu: false,
        }
    }

    pub const fn with_ftz(self, ftz: bool) -> Self {
        Self { ftz, ..self }
    }

    pub const fn with_sat(self, sat: bool) -> Self {
        Self { sat, ..self }
    }

    pub const fn with_relu(self, relu: bool) -> Self {
        Self { relu, ..self }
    }
}

/// Comparison operator of `setp`/`set`/`slct`-style instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unsigned `<` (integers only).
    Lo,
    /// Unsigned `<=`.
    Ls,
    /// Unsigned `>`.
    Hi,
    /// Unsigned `>=`.
    Hs,
    /// Unordered variants: true when either operand is NaN.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    /// Both operands are numbers.
    Num,
    /// Either operand is NaN.
    Nan,
}

impl CmpOp {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.strip_prefix('.').unwrap_or(text) {
            "eq" => Self::Eq,
            "ne" => Self::Ne,
            "lt" => Self::Lt,
            "le" => Self::Le,
            "gt" => Self::Gt,
            "ge" => Self::Ge,
            "lo" => Self::Lo,
            "ls" => Self::Ls,
            "hi" => Self::Hi,
            "hs" => Self::Hs,
            "equ" => Self::Equ,
            "neu" => Self::Neu,
            "ltu" => Self::Ltu,
            "leu" => Self::Leu,
            "gtu" => Self::Gtu,
            "geu" => Self::Geu,
            "num" => Self::Num,
            "nan" => Self::Nan,
            _ => return None,
        })
    }

    /// Whether the operator is only meaningful for floating-point operands.
    pub const fn is_float_only(self) -> bool {
        matches!(
            self,
            Self::Equ
                | Self::Neu
                | Self::Ltu
                | Self::Leu
                | Self::Gtu
                | Self::Geu
                | Self::Num
                | Self::Nan
        )
    }
}
