//! Every exported HIP function, one module per part of `hip_runtime_api.h`.

pub mod context;
pub mod device;
pub mod memory;
pub mod misc;
pub mod module;
mod signatures;
pub mod stream;
pub mod unsupported;
