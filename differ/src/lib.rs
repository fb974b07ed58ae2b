//! prlx-differ: aligns two `.prlx` traces warp by warp and classifies every
//! divergence.
//!
//! Start at [`align::align_warp`], the per-warp core over plain event slices
//! ([`myers`] supplies the bounded minimal alignment it builds on).

pub mod align;
pub mod myers;

pub use align::{AlignOptions, DivergenceKind, EventDivergence, align_warp};
