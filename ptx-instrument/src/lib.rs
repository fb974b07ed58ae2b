//! Instrumenting plain PTX at load: the no-recompile capture path.
//!
//! Start at [`instrument`]: it parses a module with `prlx-ptx`, finds the
//! sites the LLVM pass would record (`llvm-pass/README.md`) — conditional
//! branches, `brx.idx` switches, shared-memory stores, atomics and
//! reductions, compares that predicate other instructions, optionally
//! function entry/exit and global stores — and returns the module with a
//! probe before each site, the recording runtime ([`runtime`]) and the
//! descriptor `__prlx_desc` the shim fills, plus the site table
//! ([`sites`], the pass's id scheme and JSON schema).
//!
//! A `switch` llc lowered to a compare-and-branch tree is recognised
//! (`switch_tree.rs`) and records one Switch event, as the pass does. Each
//! instrumented function picks, at its start, its warp slot and the
//! descriptor it records through: `__prlx_desc`, or the entry of the launch
//! table its grid claimed when several launches of the module record at
//! once (CUDA graph nodes; [`runtime::LAUNCH_TABLE`]).
//!
//! Each instrumented function also keeps its body as compiled, run when
//! the module is not being captured ([`idle_copy`]; [`Layout`]).
//!
//! The rewrite splices probes into the original text at the parsed spans
//! rather than re-printing the tree, so everything it does not touch stays
//! byte for byte as the compiler wrote it (and instrumenting is about as
//! fast as parsing). Each probe is a `{ }` scope with its own registers,
//! which cannot clash with the function's; it reads only the site's
//! operands and writes only the trace buffers, so the instrumented module
//! computes exactly what the original computes.

pub mod idle_copy;
mod instrumented;
pub mod rewrite;
pub mod runtime;
pub mod sites;
mod switch_tree;
pub mod value;

pub use instrumented::{Error, Instrumented};
pub use rewrite::{
    Layout, Options, instrument, instrument_link_input, instrument_parsed, instrument_parsed_with,
    instrument_with,
};
pub use runtime::Runtime;
pub use sites::{Location, Site, SiteKind, SiteTable};
