//! The read-modify-write step of `atom` and `red`: given the old memory value
//! and the operands, the value to store. (`atom` returns `old` to the thread;
//! the memory system performs the load and store.)

use super::float;
use super::int;
use super::softfloat::FloatFormat;
use super::types::{FloatMode, ScalarType};

/// `atom`/`red` operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomOp {
    Add,
    /// Not a PTX `atom` operation (compilers negate and add), kept for
    /// runtimes that express `atomicSub` directly.
    Sub,
    Min,
    Max,
    Inc,
    Dec,
    Cas,
    Exch,
    And,
    Or,
    Xor,
}

impl AtomOp {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text.strip_prefix('.').unwrap_or(text) {
            "add" => Self::Add,
            "sub" => Self::Sub,
            "min" => Self::Min,
            "max" => Self::Max,
            "inc" => Self::Inc,
            "dec" => Self::Dec,
            "cas" => Self::Cas,
            "exch" => Self::Exch,
            "and" => Self::And,
            "or" => Self::Or,
            "xor" => Self::Xor,
            _ => return None,
        })
    }

    /// Whether PTX defines this operation on `ty` (the decoder's check).
    pub fn supports(self, ty: ScalarType) -> bool {
        use ScalarType::*;
        match self {
            Self::Add => matches!(
                ty,
                U32 | S32 | U64 | S64 | F32 | F64 | F16 | F16x2 | BF16 | BF16x2
            ),
            Self::Sub => matches!(ty, U32 | S32 | U64 | S64 | F32 | F64),
            Self::Min | Self::Max => matches!(
                ty,
                U32 | S32 | U64 | S64 | F32 | F64 | F16 | F16x2 | BF16 | BF16x2
            ),
            Self::Inc | Self::Dec => ty == U32,
            Self::Cas => matches!(
                ty,
                B16 | B32 | B64 | U32 | S32 | U64 | S64 | F32 | F64 | B128
            ),
            Self::Exch => matches!(
                ty,
                B16 | B32 | B64 | U32 | S32 | U64 | S64 | F32 | F64 | B128
            ),
            Self::And | Self::Or | Self::Xor => matches!(ty, B32 | B64 | U32 | S32 | U64 | S64),
        }
    }
}

/// The new memory value of `atom.op.type [a], b{, c}` given `old = [a]`,
/// `operand = b` and (for `cas`) `compare = b`, `operand = c` — i.e.
/// `cas` stores `operand` when `old == compare`.
///
/// Float `add` rounds to nearest; `.f32` add flushes subnormal inputs and
/// results to zero (the PTX rule for `atom.add.f32`), `.f64`, `.f16`, `.bf16`
/// and the packed forms keep subnormals. `inc`: `old >= b ? 0 : old + 1`;
/// `dec`: `old == 0 || old > b ? b : old - 1` (unsigned). Float `min`/`max`
/// follow [`float::min`]. Results are masked to the type width.
#[inline]
pub fn atomic_apply(op: AtomOp, ty: ScalarType, old: u64, operand: u64, compare: u64) -> u64 {
    let mask = ty.mask();
    let (old, operand) = (old & mask, operand & mask);
    match op {
        AtomOp::Add | AtomOp::Sub if ty.is_float() => {
            let mode = FloatMode::RN.with_ftz(ty == ScalarType::F32);
            if op == AtomOp::Add {
                float::add(ty, mode, old, operand)
            } else {
                float::sub(ty, mode, old, operand)
            }
        }
        AtomOp::Add => int::add(ty, old, operand),
        AtomOp::Sub => int::sub(ty, old, operand),
        AtomOp::Min if ty.is_float() => float::min(ty, false, false, old, operand),
        AtomOp::Max if ty.is_float() => float::max(ty, false, false, old, operand),
        AtomOp::Min => int::min(ty, old, operand),
        AtomOp::Max => int::max(ty, old, operand),
        AtomOp::Inc => {
            if old >= operand {
                0
            } else {
                (old + 1) & mask
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > operand {
                operand
            } else {
                old - 1
            }
        }
        AtomOp::Cas => {
            if old == compare & mask {
                operand
            } else {
                old
            }
        }
        AtomOp::Exch => operand,
        AtomOp::And => old & operand,
        AtomOp::Or => old | operand,
        AtomOp::Xor => old ^ operand,
    }
}

/// Canonical NaN of `ty`'s element format, for callers building float atomics.
pub const fn canonical_nan(ty: ScalarType) -> u64 {
    let fmt: FloatFormat = float::format_of(ty);
    fmt.canonical_nan()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn integer_ops() {
        assert_eq!(atomic_apply(AtomOp::Add, U32, 0xffff_ffff, 2, 0), 1);
        assert_eq!(atomic_apply(AtomOp::Add, U64, u64::MAX, 2, 0), 1);
        assert_eq!(atomic_apply(AtomOp::Sub, S32, 0, 1, 0), 0xffff_ffff);
        assert_eq!(
            atomic_apply(AtomOp::Min, S32, 0xffff_ffff, 5, 0),
            0xffff_ffff
        );
        assert_eq!(atomic_apply(AtomOp::Min, U32, 0xffff_ffff, 5, 0), 5);
        assert_eq!(atomic_apply(AtomOp::Max, S64, u64::MAX, 0, 0), 0);
        assert_eq!(atomic_apply(AtomOp::And, B32, 0b1100, 0b1010, 0), 0b1000);
        assert_eq!(atomic_apply(AtomOp::Or, B32, 0b1100, 0b1010, 0), 0b1110);
        assert_eq!(atomic_apply(AtomOp::Xor, B32, 0b1100, 0b1010, 0), 0b0110);
        assert_eq!(atomic_apply(AtomOp::Exch, B32, 1, 2, 0), 2);
    }

    #[test]
    fn inc_dec_wrap_exactly_as_ptx() {
        let inc = |old, b| atomic_apply(AtomOp::Inc, U32, old, b, 0);
        let dec = |old, b| atomic_apply(AtomOp::Dec, U32, old, b, 0);
        assert_eq!(inc(0, 3), 1);
        assert_eq!(inc(2, 3), 3);
        assert_eq!(inc(3, 3), 0);
        assert_eq!(inc(7, 3), 0);
        assert_eq!(inc(0xffff_fffe, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(inc(0xffff_ffff, 0xffff_ffff), 0);
        assert_eq!(dec(0, 3), 3);
        assert_eq!(dec(1, 3), 0);
        assert_eq!(dec(3, 3), 2);
        assert_eq!(dec(4, 3), 3);
        // A counter cycling through inc stays in [0, b].
        let mut v = 0;
        for i in 1..=10 {
            v = inc(v, 4);
            assert_eq!(v, i % 5);
        }
    }

    #[test]
    fn cas_compares_then_swaps() {
        assert_eq!(atomic_apply(AtomOp::Cas, B32, 5, 9, 5), 9);
        assert_eq!(atomic_apply(AtomOp::Cas, B32, 5, 9, 6), 5);
        assert_eq!(atomic_apply(AtomOp::Cas, B64, u64::MAX, 1, u64::MAX), 1);
        assert_eq!(atomic_apply(AtomOp::Cas, B32, 5, 9, 0x1_0000_0005), 9); // compare masked
    }

    #[test]
    fn float_ops() {
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(atomic_apply(AtomOp::Add, F32, f(1.5), f(2.25), 0), f(3.75));
        // atom.add.f32 flushes subnormals.
        assert_eq!(atomic_apply(AtomOp::Add, F32, 1, 0, 0), 0);
        assert_eq!(atomic_apply(AtomOp::Add, F64, 1, 0, 0), 1);
        assert_eq!(
            atomic_apply(AtomOp::Add, F64, 1.5f64.to_bits(), 1.0f64.to_bits(), 0),
            2.5f64.to_bits()
        );
        assert_eq!(
            atomic_apply(AtomOp::Add, F16x2, 0x3c00_4000, 0x3c00_3c00, 0),
            0x4000_4200
        );
        assert_eq!(
            atomic_apply(AtomOp::Add, BF16x2, 0x3f80_4000, 0x3f80_3f80, 0),
            0x4000_4040
        );
        assert_eq!(atomic_apply(AtomOp::Min, F32, f(1.0), f(-2.0), 0), f(-2.0));
        assert_eq!(
            atomic_apply(AtomOp::Max, F32, 0x7fc0_0000, f(-2.0), 0),
            f(-2.0)
        );
        assert_eq!(canonical_nan(F32), 0x7fff_ffff);
    }

    #[test]
    fn supported_types() {
        assert!(AtomOp::Add.supports(F32));
        assert!(!AtomOp::Inc.supports(U64));
        assert!(!AtomOp::And.supports(F32));
        assert!(AtomOp::Cas.supports(B64));
        assert_eq!(AtomOp::parse(".exch"), Some(AtomOp::Exch));
    }
}
