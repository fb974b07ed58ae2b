//! The slice of HIP 5.2's `hip_runtime_api.h` this runtime implements, as
//! the shared `prlx-hip-abi` crate defines it for this runtime and for the
//! capture shim: error codes, `hipDeviceProp_t`, `hipFuncAttributes`,
//! `hipPointerAttribute_t`, `dim3` and the enums the exported functions
//! take. The bottom of the crate: it refers to no other module. The layouts
//! are checked against the C headers by `tests/abi.rs`; the signatures of the
//! entry points the shim calls are checked against this runtime's
//! definitions at compile time by `api::signatures`.

pub use prlx_hip_abi::*;
