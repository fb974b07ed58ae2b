//! `libcuda.so.1`: the CUDA driver API over the prlx PTX emulator.
//!
//! Built as a cdylib with NVIDIA's soname, so a program linked with `-lcuda`
//! runs on the emulator when this library's directory is on
//! `LD_LIBRARY_PATH` (see `README.md` and `build.sh`).
//!
//! Where to start:
//! - [`api`] holds every exported `cu*` function, one module per `cuda.h`
//!   section; each module lists its own `cuGetProcAddress` entries
//!   (`entries()`), which [`api::proc_address`] only collects.
//!   [`api::export_table`] is the private tables the CUDA runtime needs,
//!   [`api::graph`] the graph and stream-capture entry points.
//! - [`driver`] is the state behind them: the emulator's `Device` under one
//!   global lock, handle tables for contexts, modules, functions, streams,
//!   events and link states, and each thread's context stack. The
//!   per-subsystem state it owns (virtual memory, pools, IPC) is in
//!   [`state`].
//! - [`graph`] is graphs and stream capture below the entry points: the
//!   model and the capture hooks every stream-ordered call asks first
//!   (`graph::capture`).
//! - [`entry`] is the FFI boundary (`prlx-ffi-guard`): panics become
//!   `CUDA_ERROR_UNKNOWN`, NULL out-pointers `CUDA_ERROR_INVALID_VALUE`;
//!   it also defines `exports!` and the `procs!` entry lists.
//! - [`fatbin`] parses nvcc's fatbinaries; [`integrity`] answers cudart's
//!   driver check.
//! - [`image`], [`jit`], [`link`] and [`params`] turn C-side inputs (module
//!   images, JIT option arrays, PTX link inputs, kernel arguments) into what
//!   the emulator takes; [`clock`] models time for events; [`tex_format`]
//!   holds the texture limits and channel formats.
//!
//! Dependencies point one way: `api::*` uses `graph`, `driver`, `state`
//! and the input modules, never the reverse; API modules build on each
//! other without cycles (`library` on `module` and `launch`, `export_table`
//! on `context`, `device` and `module`, `graph::exec` runs nodes through
//! the stream entry points), and `api::proc_address` collects every
//! module's entries.

pub mod api;
/// `cuda.h`'s types and constants, shared with the shim.
pub use prlx_cuda_abi as cu;
pub mod clock;
pub mod driver;
pub mod entry;
pub mod error_table;
pub mod graph;
/// nvcc's fatbinaries, shared with the shim.
pub use prlx_fatbin as fatbin;
pub mod handles;
pub mod image;
pub mod integrity;
pub mod jit;
pub mod link;
pub mod params;
pub mod state;
pub mod tex_format;
