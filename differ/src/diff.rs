//! Trace-level driver: pairs the warps of two traces and aligns each pair in
//! parallel. Warps that overflowed are aligned over what both runs recorded
//! and reported as overflowed, with the part that cannot be judged.
//!
//! Nothing is copied: warps are views into the traces' mappings, and a warp
//! pair with identical bytes costs one `memcmp` and no allocation.

use crate::align::{AlignOptions, Cut, EventDivergence, UnknownTail, align_warp_cut};
use prlx_trace::TraceFile;
use rayon::prelude::*;

/// Knobs for [`diff_traces`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiffOptions {
    pub align: AlignOptions,
}

/// One warp pair with at least one divergence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpDiff {
    pub warp_idx: usize,
    pub divergences: Vec<EventDivergence>,
}

/// A warp that dropped events in either run. Its recorded prefixes are
/// diffed (their divergences are in [`TraceDiff::diverged`]); this says how
/// much was lost and which recorded events could not be judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverflowedWarp {
    pub warp_idx: usize,
    /// Events the device dropped in each run.
    pub dropped_a: u32,
    pub dropped_b: u32,
    /// Events recorded in each run.
    pub recorded_a: u32,
    pub recorded_b: u32,
    /// Buffer slots each run would have needed to keep every event.
    pub needed_a: u32,
    pub needed_b: u32,
    /// Recorded events past the last re-join whose counterparts lie beyond a
    /// cut: neither identical nor divergent, unknown.
    pub unknown: Option<UnknownTail>,
}

/// The raw result of diffing two traces, before ranking and rendering.
#[derive(Clone, Debug, Default)]
pub struct TraceDiff {
    /// Warp pairs aligned (present in both traces; overflowed ones included).
    pub warps_compared: usize,
    /// Warps with divergences, by ascending warp index.
    pub diverged: Vec<WarpDiff>,
    pub overflowed: Vec<OverflowedWarp>,
    /// Mismatches between the two traces' launches (kernel, grid, warp count).
    pub warnings: Vec<String>,
}

#[derive(Default)]
struct Outcome {
    diverged: Option<WarpDiff>,
    overflowed: Option<OverflowedWarp>,
}

/// Warps per rayon task: large enough that scheduling is noise next to a
/// 64 KiB compare, small enough to balance 50%-diverged traces.
const WARPS_PER_TASK: usize = 32;

/// Diffs every warp slot the two traces share.
pub fn diff_traces(a: &TraceFile, b: &TraceFile, opts: &DiffOptions) -> TraceDiff {
    let warnings = launch_mismatches(a, b);
    let shared = a.num_warps().min(b.num_warps());
    let outcomes: Vec<Outcome> = (0..shared)
        .into_par_iter()
        .with_min_len(WARPS_PER_TASK)
        .filter_map(|w| diff_warp(a, b, w, opts))
        .collect();
    let mut diff = TraceDiff {
        warps_compared: shared,
        warnings,
        ..TraceDiff::default()
    };
    for outcome in outcomes {
        diff.diverged.extend(outcome.diverged);
        diff.overflowed.extend(outcome.overflowed);
    }
    diff
}

fn diff_warp(a: &TraceFile, b: &TraceFile, w: usize, opts: &DiffOptions) -> Option<Outcome> {
    let (wa, wb) = (a.warp(w)?, b.warp(w)?);
    let cut = Cut {
        a: wa.overflowed(),
        b: wb.overflowed(),
    };
    let mut divergences = Vec::new();
    let unknown = align_warp_cut(wa.events, wb.events, cut, &opts.align, &mut divergences);
    let overflowed = cut.any().then(|| OverflowedWarp {
        warp_idx: w,
        dropped_a: dropped(&wa),
        dropped_b: dropped(&wb),
        recorded_a: wa.events.len() as u32,
        recorded_b: wb.events.len() as u32,
        needed_a: needed(&wa),
        needed_b: needed(&wb),
        unknown,
    });
    let diverged = (!divergences.is_empty()).then_some(WarpDiff {
        warp_idx: w,
        divergences,
    });
    (diverged.is_some() || overflowed.is_some()).then_some(Outcome {
        diverged,
        overflowed,
    })
}

fn dropped(warp: &prlx_trace::Warp<'_>) -> u32 {
    let past_end = warp
        .header
        .write_idx
        .saturating_sub(warp.events.len() as u32);
    warp.header.overflow_count.max(past_end)
}

/// Slots the warp claimed on the device, dropped ones included.
fn needed(warp: &prlx_trace::Warp<'_>) -> u32 {
    let recorded = warp.events.len() as u32;
    warp.header
        .write_idx
        .max(recorded.saturating_add(warp.header.overflow_count))
}

/// Differences in how the two kernels were launched: reported, not fatal.
fn launch_mismatches(a: &TraceFile, b: &TraceFile) -> Vec<String> {
    let (ha, hb) = (a.header(), b.header());
    let mut warnings = Vec::new();
    let (ka, kb) = (a.kernel_name(), b.kernel_name());
    if ka != kb {
        warnings.push(format!("kernel names differ: A ran `{ka}`, B ran `{kb}`"));
    }
    if ha.grid_dim != hb.grid_dim || ha.block_dim != hb.block_dim {
        warnings.push(format!(
            "launch shapes differ: A is grid {:?} x block {:?}, B is grid {:?} x block {:?}",
            ha.grid_dim, ha.block_dim, hb.grid_dim, hb.block_dim
        ));
    }
    let (na, nb) = (a.num_warps(), b.num_warps());
    if na != nb {
        warnings.push(format!(
            "warp counts differ: A has {na} warp slots, B has {nb}; only the first {} are compared",
            na.min(nb)
        ));
    }
    if ha.sample_rate.max(1) != hb.sample_rate.max(1) {
        warnings.push(format!(
            "sample rates differ (A 1/{}, B 1/{}): event streams are not comparable event for event",
            ha.sample_rate.max(1),
            hb.sample_rate.max(1)
        ));
    }
    warnings
}
