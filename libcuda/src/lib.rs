//! `libcuda.so.1`: the CUDA driver API over the prlx PTX emulator.
//!
//! Built as a cdylib with NVIDIA's soname, so a program linked with `-lcuda`
//! runs on the emulator when this library's directory is on
//! `LD_LIBRARY_PATH` (see `README.md` and `build.sh`).
//!
//! Where to start:
//! - [`api`] holds every exported `cu*` function, one module per `cuda.h`
//!   section; [`api::proc_address`] is the `cuGetProcAddress` table and
//!   [`api::export_table`] the private tables the CUDA runtime needs.
//!   [`api::graph`] is CUDA graphs and stream capture (the capture hooks
//!   every stream-ordered call asks first live in `api::graph::capture`).
//! - [`driver`] is the state behind them: the emulator's `Device` under one
//!   global lock, handle tables for contexts, modules, functions, streams,
//!   events and link states, and each thread's context stack.
//! - [`entry`] is the FFI boundary: panics become `CUDA_ERROR_UNKNOWN`,
//!   NULL out-pointers `CUDA_ERROR_INVALID_VALUE`.
//! - [`fatbin`] parses nvcc's fatbinaries; [`integrity`] answers cudart's
//!   driver check.
//! - [`image`], [`jit`], [`link`] and [`params`] turn C-side inputs (module
//!   images, JIT option arrays, PTX link inputs, kernel arguments) into what
//!   the emulator takes; [`clock`] models time for events.

pub mod api;
/// `cuda.h`'s types and constants, shared with the shim.
pub use prlx_cuda_abi as cu;
pub mod clock;
pub mod driver;
pub mod entry;
pub mod error_table;
/// nvcc's fatbinaries, shared with the shim.
pub use prlx_fatbin as fatbin;
pub mod handles;
pub mod image;
pub mod integrity;
pub mod jit;
pub mod link;
pub mod params;
