//! Helpers of the kernel corpus test (`tests/corpus.rs`): toolchain discovery
//! and PTX caching, the table-driven harness, CPU reference semantics, and
//! the cases themselves, one module per kernel origin.

pub mod cuda_cases;
pub mod harness;
pub mod nvcc_cases;
pub mod ptx_cases;
pub mod reference;
pub mod toolchain;
