//! prlx-views: ways to look at a diff rather than read it.
//!
//! Where to start:
//! - [`model::Comparison::load`] diffs two traces or two sessions and keeps
//!   per launch its report, traces, site map and launching CPU stack; both
//!   views read only this.
//! - [`tui`]: the terminal UI (`prlxctl tui`): [`tui::App`] is state and
//!   keys, [`tui::draw`] renders into any ratatui backend.
//! - [`report`]: the self-contained HTML report (`prlxctl report`) and the
//!   folded stacks behind its flame graph.
//! - Shared pieces: [`source`] finds source files, [`stream`] aligns one
//!   warp's two event streams for display, [`lanes`] lays out the 32 lanes'
//!   masks and operands at a divergence, [`why`] adds the differ's likely
//!   cause and the values recorded before it.
//! - Feature `planted`: [`planted`] writes a pair of sessions with known
//!   divergences, for the tests here and in prlxctl (and `examples/planted.rs`
//!   to try the views by hand); `examples/bench_views.rs` times them.

pub mod lanes;
pub mod model;
#[cfg(feature = "planted")]
pub mod planted;
pub mod report;
pub mod source;
pub mod stream;
pub mod tui;
pub mod why;

pub use model::{Comparison, Inputs, Launch, LoadError};
pub use source::SourceFinder;
