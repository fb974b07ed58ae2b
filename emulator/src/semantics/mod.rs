//! Scalar PTX instruction semantics as pure functions over bit patterns.
//!
//! Every value travels as a `u64` whose low bits hold the operand in the
//! register's natural width (an `.f32` lives in the low 32 bits, an `.s16` in
//! the low 16 bits, a predicate is `0` or `1`); results come back the same way,
//! zero-extended to the instruction type's width (use
//! [`ScalarType::extend`] or [`cvt::widen_to_register`] where PTX asks for a
//! signed result to be sign-extended into a wider register). Functions never
//! allocate and never panic on any bit pattern. The decoder validates type
//! combinations when a module loads, so the per-lane
//! functions take already validated types; the checks it needs are
//! [`cvt::validate`], [`atomic::AtomOp::supports`], [`int::mul_wide`]'s
//! `Option` and the `parse` constructors on the modifier types.
//!
//! Where to start: [`ScalarType`] and the modifier types in this module, then
//! one module per instruction family:
//! - [`int`]: `add sub mul mad mul24 mad24 div rem abs neg min max sad`, carries;
//! - [`bits`]: logic, `lop3`, shifts, `shf`, `popc clz bfind brev bfe bfi fns prmt dp4a dp2a`;
//! - [`float`]: float `add sub mul fma div rcp sqrt min max abs neg copysign testp`;
//! - [`approx`]: `sin cos lg2 ex2 tanh rsqrt` (`.approx`);
//! - [`compare`](mod@compare): `setp set selp slct`;
//! - [`cvt`](mod@cvt): conversions;
//! - [`atomic`]: the read-modify-write step of `atom`/`red`;
//! - [`softfloat`]: exact arithmetic in any rounding direction, behind `.rz .rm .rp`.
//!
//! Floating-point results that are NaN are always the canonical NaN of the
//! format (see [`float`]), and every arithmetic result is the correctly
//! rounded one, so runs are bit-identical across hosts. The one host
//! dependence is [`approx`], evaluated through the host's `f64` libm: a libm
//! differing in the last `f64` bit could, very rarely, flip a rounded result.
//!
//! Hot entry points (`.f32`/`.f64` round-to-nearest, 16-bit floats, common
//! `cvt` pairs, integer ops) take short host-arithmetic fast paths; each fast
//! path is tested bit-for-bit against the general path.

pub mod approx;
pub mod atomic;
pub mod bits;
pub mod compare;
pub mod cvt;
pub mod float;
pub mod int;
pub mod softfloat;
mod types;

pub use atomic::{AtomOp, atomic_apply};
pub use bits::PrmtMode;
pub use compare::{BoolOp, compare, compare_ftz};
pub use cvt::{CvtError, CvtMode, cvt};
pub use float::{DivKind, TestpOp};
pub use softfloat::FloatFormat;
pub use types::{CmpOp, FloatMode, FloatRounding, IntRounding, ScalarType};
