//! `libamdhip64.so.5`: the HIP 5.2 runtime API over the prlx RDNA3 emulator
//! (`prlx-rdna`).
//!
//! Programs built by clang (`-x hip --offload-arch=gfx1100`) or Debian's
//! `hipcc` against Debian's HIP 5.2 run unmodified when the library
//! `build.sh` makes is first on `LD_LIBRARY_PATH` (`docs/hip-runtime.md`).
//!
//! Where to start:
//! - [`api`] holds every exported function, one module per part of
//!   `hip_runtime_api.h`: [`api::module`] is registration (`__hipRegister*`),
//!   `<<<>>>`/`hipLaunchKernel` and the module API, and builds kernarg
//!   segments from the code object's metadata.
//! - [`runtime`] is the state behind them under one lock: modules,
//!   functions, registered fat binaries and variables, allocations, streams,
//!   events, the sticky fault.
//! - [`device`] wraps the emulator (`prlx_rdna::Device`) and maps its faults
//!   to `hipError_t`.
//! - [`bundle`] reads clang offload bundles (plain and `CCOB`-compressed).
//! - [`entry`] is the FFI boundary: panics become `hipErrorUnknown`, errors
//!   are remembered for `hipGetLastError`.
//! - [`abi`] has HIP 5.2's types and values.
//!
//! Layering, each module using only those below it (checked by
//! `prlx-structure-check --acyclic hip-runtime`): [`abi`], [`bundle`] and
//! [`hostcall`] at the bottom; [`device`] over `abi` and `hostcall`;
//! [`runtime`] over `device` and `bundle`; [`entry`] over `abi`; [`api`] on
//! top of them all. `api::signatures` ties the exported functions to the
//! shared ABI's signatures, so `abi` never names `api`.

pub mod abi;
// The C API's own names (hipMalloc, hipDeviceAttributeWarpSize, ...).
#[allow(non_upper_case_globals, non_snake_case)]
pub mod api;
pub mod bundle;
pub mod device;
pub mod entry;
pub mod hostcall;
pub mod runtime;
