//! Operand types and instruction modifiers shared by every semantics family.

/// A PTX fundamental type as written in an instruction suffix (`.s32`, `.f16x2`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    Pred,
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
    Tf32,
    F32,
    F64,
}

impl ScalarType {
    /// Parses a type suffix, with or without the leading dot (`".s32"`, `"s32"`).
    pub fn parse(text: &str) -> Option<Self> {
        let name = text.strip_prefix('.').unwrap_or(text);
        Some(match name {
            "pred" => Self::Pred,
            "b8" => Self::B8,
            "b16" => Self::B16,
            "b32" => Self::B32,
            "b64" => Self::B64,
            "b128" => Self::B128,
            "u8" => Self::U8,
            "u16" => Self::U16,
            "u32" => Self::U32,
            "u64" => Self::U64,
            "s8" => Self::S8,
            "s16" => Self::S16,
            "s32" => Self::S32,
            "s64" => Self::S64,
            "f16" => Self::F16,
            "f16x2" => Self::F16x2,
            "bf16" => Self::BF16,
            "bf16x2" => Self::BF16x2,
            "tf32" => Self::Tf32,
            "f32" => Self::F32,
            "f64" => Self::F64,
            _ => return None,
        })
    }

    /// The suffix as PTX spells it, including the dot.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pred => ".pred",
            Self::B8 => ".b8",
            Self::B16 => ".b16",
            Self::B32 => ".b32",
            Self::B64 => ".b64",
            Self::B128 => ".b128",
            Self::U8 => ".u8",
            Self::U16 => ".u16",
            Self::U32 => ".u32",
            Self::U64 => ".u64",
            Self::S8 => ".s8",
            Self::S16 => ".s16",
            Self::S32 => ".s32",
            Self::S64 => ".s64",
            Self::F16 => ".f16",
            Self::F16x2 => ".f16x2",
            Self::BF16 => ".bf16",
            Self::BF16x2 => ".bf16x2",
            Self::Tf32 => ".tf32",
            Self::F32 => ".f32",
            Self::F64 => ".f64",
        }
    }

    /// Width in bits of a register holding this type (a predicate counts as 1).
    pub const fn bits(self) -> u32 {
        match self {
            Self::Pred => 1,
            Self::B8 | Self::U8 | Self::S8 => 8,
            Self::B16 | Self::U16 | Self::S16 | Self::F16 | Self::BF16 => 16,
            Self::B32
            | Self::U32
            | Self::S32
            | Self::F16x2
            | Self::BF16x2
            | Self::Tf32
            | Self::F32 => 32,
            Self::B64 | Self::U64 | Self::S64 | Self::F64 => 64,
            Self::B128 => 128,
        }
    }

    /// Size in bytes in memory (a predicate is not addressable; reported as 1).
    pub const fn size_bytes(self) -> u32 {
        match self {
            Self::Pred => 1,
            other => other.bits() / 8,
        }
    }

    /// Mask selecting the low [`bits`](Self::bits) of a `u64` (all ones for 64 and 128).
    pub const fn mask(self) -> u64 {
        let bits = self.bits();
        if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        }
    }

    pub const fn is_signed_int(self) -> bool {
        matches!(self, Self::S8 | Self::S16 | Self::S32 | Self::S64)
    }

    pub const fn is_unsigned_int(self) -> bool {
        matches!(self, Self::U8 | Self::U16 | Self::U32 | Self::U64)
    }

    /// Untyped bit-size types (`.b8` ... `.b128`).
    pub const fn is_bits(self) -> bool {
        matches!(
            self,
            Self::B8 | Self::B16 | Self::B32 | Self::B64 | Self::B128
        )
    }

    /// Signed or unsigned integer (not `.bN`).
    pub const fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    /// Scalar or packed floating point (including `.tf32`).
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            Self::F16
                | Self::F16x2
                | Self::BF16
                | Self::BF16x2
                | Self::Tf32
                | Self::F32
                | Self::F64
        )
    }

    /// Packed two-element types (`.f16x2`, `.bf16x2`).
    pub const fn is_packed(self) -> bool {
        matches!(self, Self::F16x2 | Self::BF16x2)
    }

    /// The element type of a packed type; the type itself otherwise.
    pub const fn element(self) -> Self {
        match self {
            Self::F16x2 => Self::F16,
            Self::BF16x2 => Self::BF16,
            other => other,
        }
    }

    /// Sign-extends (signed types) or zero-extends (all others) the low
    /// [`bits`](Self::bits) of `value` to a full `u64`.
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
