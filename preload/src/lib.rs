//! `libprlx.so`: `LD_PRELOAD=libprlx.so ./app` records every kernel launch
//! of an unmodified application.
//!
//! Start at [`hooks`]: the exported driver entry points (`cuLaunchKernel`,
//! the module loaders, `cuGetProcAddress` …). They forward to the real
//! driver ([`driver`]); loads and lookups go to [`state`], which keeps the
//! registry of loaded code ([`registry`]) after [`module_load`] decided how
//! each module is captured; launches go through the launch path
//! ([`launch`]), which captures launches of modules that record
//! ([`capture`]) and hands every launch to the session writer ([`sink`]),
//! which writes session directories through [`session_dir`]. Configuration
//! comes from `PRLX_*` variables ([`config`], read once in [`process`]).
//!
//! The other roads in: [`dl`] (`dlsym` on a `dlopen`ed driver, as cudart
//! does it), [`link`] (`cuLibraryLoadFromFile` and the JIT linker's inputs),
//! [`export_table`] (cudart's private module loads), [`graph_hooks`] (CUDA
//! graphs, whose kernel nodes [`graphs`] keeps, and stream capture,
//! [`stream_capture`]) and [`hip`] (the HIP runtime, whose memory calls
//! [`hip_driver`] presents as a driver table; [`backend`] says which runtime
//! a launch came through). [`nvbit`] takes traces from prlx's NVBit tool
//! when that is the mode. Each launch carries its device and context;
//! [`rank`] names one session per rank of a multi-process job; [`stack`]
//! records the launching CPU stack as module + address, named later
//! outside the application.
//!
//! Modules depend one way, top down: `dl` → `hooks` → the other hook
//! modules (`graph_hooks`, `link`, `export_table`, `hip`) → `launch` →
//! `graphs`, `args` → `state` → `module_load`, `sink`, `capture`, … →
//! `log`, `process`, `config`, `ffi`.
//!
//! The shim never breaks its host: every hook forwards the application's
//! call unchanged, a failure inside the shim is logged once and the call
//! passes through, and no panic crosses the C boundary ([`guard`]).

// The crate's MSRV is 1.88 (the naked `dlsym` in `dl`), where clippy would
// rewrite nested `if let`s as let-chains; the nested form stays accepted.
#![allow(clippy::collapsible_if)]

pub mod args;
pub mod backend;
pub mod capture;
pub mod config;
pub mod cubin;
pub mod daemon_sink;
pub mod dl;
pub mod driver;
pub mod export_table;
pub mod ffi;
pub mod graph_hooks;
pub mod graphs;
pub mod guard;
pub mod hip;
pub mod hip_driver;
pub mod hooks;
pub mod launch;
pub mod link;
pub mod log;
pub mod marks;
pub mod module_load;
pub mod nvbit;
pub mod process;
pub mod rank;
pub mod registry;
pub mod session_dir;
pub mod sink;
pub mod stack;
pub mod state;
pub mod stream_capture;
