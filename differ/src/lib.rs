//! prlx-differ: aligns two `.prlx` traces warp by warp and classifies every
//! divergence.
//!
//! Where to start:
//! - [`align::align_warp`] is the core: one warp's two event streams in,
//!   divergences out, over plain slices ([`myers`] is the bounded minimal
//!   alignment it builds on).
//! - [`diff::diff_traces`] runs it over every warp pair of two open traces in
//!   parallel; overflowed warps are aligned over what both runs recorded
//!   ([`align::align_warp_cut`]) and the rest is reported as unknown.
//! - [`report::DiffReport`] ranks and annotates the result (site map,
//!   snapshot lanes, history); [`report::ReportOptions`] adds a [`filter`],
//!   the values recorded before each divergence and a heuristic cause
//!   ([`classify`]). [`render`] prints it for people, `to_json` for CI,
//!   [`csv`] for spreadsheets, [`chrome`] for Perfetto.
//! - [`diff::WarpPairing::ByThread`] pairs warps by global thread id, for
//!   launches of different shapes or warp sizes.

pub mod align;
mod cause;
pub mod chrome;
pub mod classify;
pub mod context;
pub mod csv;
pub mod diff;
pub mod filter;
mod hex;
pub mod myers;
pub mod open;
mod record;
pub mod render;
pub mod report;
pub mod stream;
pub mod view;

pub use align::{
    AlignOptions, Cut, DivergenceKind, EventDivergence, UnknownTail, align_warp, align_warp_cut,
};
pub use classify::{Cause, CauseKind};
pub use diff::{DiffOptions, TraceDiff, WarpPairing, diff_traces, diff_traces_paired};
pub use filter::{BlockSel, DivergenceFilter};
pub use open::open_pair;
pub use report::{DiffReport, EVENTS_PER_WARP_SETTING, OverflowSummary, ReportOptions};
pub use stream::{DiffedPair, OpenedTrace, StreamedTrace, diff_files};
pub use view::TraceView;
