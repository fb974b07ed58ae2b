//! `prlxctl report`: one self-contained HTML file (summary, kernel ranking,
//! flame graph, and per launch the annotated source, a block × warp heat
//! map, lane masks and operands, the divergences), and the folded stacks
//! behind the flame graph for flamegraph.pl or speedscope.
//!
//! [`html::render`] writes the page from a [`crate::Comparison`];
//! [`flame::folded`] the stacks; [`heatmap`] the per-launch SVG.

pub mod flame;
pub mod heatmap;
pub mod html;

pub use flame::{flame_svg, flame_svg_inline, folded};
pub use html::{ReportOptions, render};
