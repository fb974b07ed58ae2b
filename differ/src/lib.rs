//! prlx-differ: aligns two `.prlx` traces warp by warp and classifies every
//! divergence.
//!
//! Where to start:
//! - [`align::align_warp`] is the core: one warp's two event streams in,
//!   divergences out, over plain slices ([`myers`] is the bounded minimal
//!   alignment it builds on).
//! - [`diff::diff_traces`] runs it over every warp pair of two open traces in
//!   parallel and sets aside overflowed warps.
//! - [`report::DiffReport`] ranks and annotates the result (site map,
//!   snapshot lanes, history); [`render`] prints it for people, `to_json` for
//!   CI, [`chrome`] for Perfetto.

pub mod align;
pub mod chrome;
pub mod context;
pub mod diff;
pub mod myers;
pub mod render;
pub mod report;

pub use align::{AlignOptions, DivergenceKind, EventDivergence, align_warp};
pub use diff::{DiffOptions, TraceDiff, diff_traces};
pub use report::DiffReport;
