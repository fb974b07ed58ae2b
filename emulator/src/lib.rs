//! prlx-emu: a SIMT interpreter for NVIDIA PTX.
//!
//! Start at [`Device`]: it owns global memory and loaded modules and runs
//! launches. A module is parsed by `prlx-ptx`, then decoded once by
//! `program` into a compact instruction form; `launch` validates a launch and
//! schedules CTAs and warps; the `machine` executes warp-instructions;
//! `memory` holds device allocations and the address windows of generic
//! pointers; `semantics` holds pure scalar instruction semantics.

mod alu;
mod config;
mod decode;
mod device;
mod error;
mod instr;
mod launch;
mod machine;
pub mod memory;
mod observer;
mod program;
pub mod semantics;
mod text;

pub use config::{DeviceAttribute, DeviceConfig};
pub use device::{Device, FunctionId, KernelInfo, LaunchConfig, LaunchStats, ModuleId, ParamInfo};
pub use error::{EmuError, Fault, LaunchError, LoadDiagnostic, LoadError};
pub use observer::{Control, Observer, RegValue, WarpStep};
