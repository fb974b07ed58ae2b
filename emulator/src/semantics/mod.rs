//! Scalar PTX instruction semantics as pure functions over bit patterns.
//!
//! Every value travels as a `u64` whose low bits hold the operand in the
//! register's natural width (an `.f32` lives in the low 32 bits, an `.s16` in
//! the low 16 bits, a predicate is `0` or `1`). Functions never allocate and
//! never panic on any bit pattern; the decoder validates type combinations
//! when a module loads, so hot-path functions take already validated types and
//! only the entry points that can meet an invalid combination return
//! `Option`/`Result`.
//!
//! Start with [`ScalarType`] and the mode types below.

pub mod approx;
pub mod bits;
pub mod compare;
pub mod cvt;
pub mod float;
pub mod int;
pub mod softfloat;
mod types;

pub use types::{CmpOp, FloatMode, FloatRounding, IntRounding, ScalarType};
