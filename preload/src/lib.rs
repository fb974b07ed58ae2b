//! `libprlx.so`: `LD_PRELOAD=libprlx.so ./app` records every kernel launch
//! of an unmodified application.
//!
//! Start at [`hooks`]: the exported driver entry points (`cuLaunchKernel`,
//! the module loaders, `cuGetProcAddress` …). They forward to the real
//! driver ([`driver`]) and report to [`state`], which keeps the registry of
//! loaded code ([`registry`]), captures launches of kernels built with the
//! prlx pass ([`capture`]) and hands every launch to the session writer
//! ([`sink`]), which writes session directories through [`session_dir`].
//! Configuration comes from `PRLX_*` variables ([`config`]).
//!
//! The other roads in: [`dl`] (`dlsym` on a `dlopen`ed driver, as cudart
//! does it), [`link`] (`cuLibraryLoadFromFile` and the JIT linker's inputs)
//! and [`graphs`] (CUDA graph launches, traced per kernel node, and stream
//! capture). [`module_load`] decides how each module is captured; [`nvbit`]
//! takes traces from prlx's NVBit tool when that is the mode. Each
//! launch carries its device and context; [`rank`] names one session per
//! rank of a multi-process job; [`stack`] records the launching CPU stack
//! as module + address, named later outside the application.
//!
//! The shim never breaks its host: every hook forwards the application's
//! call unchanged, a failure inside the shim is logged once and the call
//! passes through, and no panic crosses the C boundary.

// The crate's MSRV is 1.88 (the naked `dlsym` in `dl`), where clippy would
// rewrite nested `if let`s as let-chains; the nested form stays accepted.
#![allow(clippy::collapsible_if)]

pub mod capture;
pub mod config;
pub mod cubin;
pub mod daemon_sink;
pub mod device_pool;
pub mod dl;
pub mod driver;
pub mod export_table;
pub mod ffi;
pub mod graphs;
pub mod hip;
pub mod hooks;
pub mod link;
pub mod log;
pub mod marks;
pub mod module_load;
pub mod nvbit;
pub mod rank;
pub mod registry;
pub mod session_dir;
pub mod sink;
pub mod stack;
pub mod state;
