//! The CUDA graph entry points (the state and capture hooks behind them
//! are [`crate::graph`]):
//!
//! - [`build`]: making and inspecting graphs (`cuGraphCreate`,
//!   `cuGraphAdd*Node`, dependencies, node parameters, `cuGraphClone`).
//! - [`exec`]: `cuGraphInstantiate*`, `cuGraphLaunch`, executable-graph
//!   updates. A launch runs the nodes in a topological order on the launch
//!   stream, each through the same entry point the stream call would use
//!   (`cuLaunchKernelEx`, `cuMemcpy3DAsync`, ...), so a graph does exactly
//!   what the same work issued to the stream does.
//! - [`capture`]: `cuStreamBeginCapture` .. `cuStreamEndCapture`.
//! - [`user_object`]: user objects and the references graphs hold.

/// `cuda.h`'s graph types, at their public path.
pub use crate::graph::abi;
pub mod build;
pub mod capture;
pub mod exec;
pub mod user_object;

use crate::entry::ProcEntry;

/// The `cuGetProcAddress` entries of everything this module exports.
pub fn entries() -> Vec<ProcEntry> {
    let mut v = build::entries();
    v.extend(exec::entries());
    v.extend(capture::entries());
    v.extend(user_object::entries());
    v
}
