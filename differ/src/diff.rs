//! Trace-level driver: pairs the warps of two traces and aligns each pair in
//! parallel. Warps that overflowed are aligned over what both runs recorded
//! and reported as overflowed, with the part that cannot be judged.
//!
//! Nothing is copied: warps are views into the traces' mappings, and a warp
//! pair with identical bytes costs one `memcmp` and no allocation.

use crate::align::{
    AlignOptions, Cut, DivergenceKind, EventDivergence, UnknownTail, align_warp_cut,
};
use prlx_trace::{TraceEvent, TraceFile};
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
    /// B's warp slot paired with it (the same slot unless warps were remapped).
    pub warp_idx_b: usize,
    pub divergences: Vec<EventDivergence>,
}

/// How the warps of A are paired with the warps of B.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WarpPairing {
    /// Slot i with slot i: the launches had the same shape.
    #[default]
    BySlot,
    /// By global thread id (`block_linear * threads_per_block + thread`), for
    /// launches of different grid or block shapes or warp sizes: each warp of
    /// the side with the narrower warps is paired with the other side's warp
    /// that ran its first thread. Across warp sizes lane masks cannot be
    /// compared (bit i is another thread), so only control flow and values are.
    ByThread,
}

/// A warp that dropped events in either run. Its recorded prefixes are
/// diffed (their divergences are in [`TraceDiff::diverged`]); this says how
/// much was lost and which recorded events could not be judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverflowedWarp {
    pub warp_idx: usize,
    pub warp_idx_b: usize,
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
    /// Value divergences set aside by [`TraceDiff::set_aside_values`]: events
    /// where control flow matched but the recorded values differ, kept out
    /// of `diverged` when values were not asked for, so that the summary can
    /// still say so. By ascending warp index.
    pub values_set_aside: Vec<WarpDiff>,
}

impl TraceDiff {
    /// Moves every `Value` divergence out of `diverged` into
    /// [`TraceDiff::values_set_aside`] (a warp left with none leaves
    /// `diverged`). What stays is exactly what a diff without
    /// `compare_values` finds: a matched pair yields a Value divergence only
    /// when its direction, mask and taken lanes agree. Diff with
    /// `compare_values` on, then call this when values were not asked for.
    pub fn set_aside_values(&mut self) {
        let mut kept = Vec::with_capacity(self.diverged.len());
        for mut warp in std::mem::take(&mut self.diverged) {
            let (values, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut warp.divergences)
                .into_iter()
                .partition(|d| d.kind == DivergenceKind::Value);
            if !values.is_empty() {
                self.values_set_aside.push(WarpDiff {
                    warp_idx: warp.warp_idx,
                    warp_idx_b: warp.warp_idx_b,
                    divergences: values,
                });
            }
            if !rest.is_empty() {
                warp.divergences = rest;
                kept.push(warp);
            }
        }
        self.diverged = kept;
    }

    /// Events whose recorded values differ though control flow matched,
    /// among those set aside.
    pub fn values_differing(&self) -> usize {
        self.values_set_aside
            .iter()
            .map(|w| w.divergences.len())
            .sum()
    }
}

#[derive(Default)]
pub(crate) struct Outcome {
    pub(crate) diverged: Option<WarpDiff>,
    pub(crate) overflowed: Option<OverflowedWarp>,
}

/// Warps per rayon task: large enough that scheduling is noise next to a
/// 64 KiB compare, small enough to balance 50%-diverged traces.
const WARPS_PER_TASK: usize = 32;

/// Diffs every warp slot the two traces share.
pub fn diff_traces(a: &TraceFile, b: &TraceFile, opts: &DiffOptions) -> TraceDiff {
    diff_traces_paired(a, b, opts, WarpPairing::BySlot)
}

/// [`diff_traces`] with warps paired as `pairing` says.
///
/// Values are always compared; without `compare_values` the Value
/// divergences are set aside ([`TraceDiff::set_aside_values`]) rather than
/// reported, so a report can still say that values differ.
pub fn diff_traces_paired(
    a: &TraceFile,
    b: &TraceFile,
    opts: &DiffOptions,
    pairing: WarpPairing,
) -> TraceDiff {
    let mut diff = diff_traces_values(a, b, &with_values(opts), pairing);
    if !opts.align.compare_values {
        diff.set_aside_values();
    }
    diff
}

/// `opts` with values compared.
pub(crate) fn with_values(opts: &DiffOptions) -> DiffOptions {
    let mut all = *opts;
    all.align.compare_values = true;
    all
}

fn diff_traces_values(
    a: &TraceFile,
    b: &TraceFile,
    opts: &DiffOptions,
    pairing: WarpPairing,
) -> TraceDiff {
    let mut warnings = launch_mismatches(
        (a.header(), a.num_warps()),
        (b.header(), b.num_warps()),
        pairing,
    );
    let outcomes: Vec<Outcome>;
    let compared;
    match pairing {
        WarpPairing::BySlot => {
            compared = a.num_warps().min(b.num_warps());
            outcomes = (0..compared)
                .into_par_iter()
                .with_min_len(WARPS_PER_TASK)
                .filter_map(|w| diff_warp(a, b, (w, w), true, opts))
                .collect();
        }
        WarpPairing::ByThread => {
            let (ga, gb) = (Geometry::of(a), Geometry::of(b));
            let masks = ga.warp_size == gb.warp_size;
            if !masks {
                warnings.push(format!(
                    "warp sizes differ (A {}, B {}): lane masks are not compared",
                    ga.warp_size, gb.warp_size
                ));
            }
            let pairs = thread_pairs(&ga, &gb);
            if pairs.unpaired > 0 {
                warnings.push(format!(
                    "{} warp(s) ran threads the other launch did not have and were not compared",
                    pairs.unpaired
                ));
            }
            compared = pairs.pairs.len();
            outcomes = pairs
                .pairs
                .par_iter()
                .with_min_len(WARPS_PER_TASK)
                .filter_map(|&pair| diff_warp(a, b, pair, masks, opts))
                .collect();
        }
    }
    let mut diff = TraceDiff {
        warps_compared: compared,
        warnings,
        ..TraceDiff::default()
    };
    for outcome in outcomes {
        diff.diverged.extend(outcome.diverged);
        diff.overflowed.extend(outcome.overflowed);
    }
    diff
}

fn diff_warp(
    a: &TraceFile,
    b: &TraceFile,
    (w, wb_idx): (usize, usize),
    masks: bool,
    opts: &DiffOptions,
) -> Option<Outcome> {
    diff_warp_pair(&a.warp(w)?, &b.warp(wb_idx)?, masks, opts)
}

/// One warp pair, wherever its events live.
pub(crate) fn diff_warp_pair(
    wa: &prlx_trace::Warp<'_>,
    wb: &prlx_trace::Warp<'_>,
    masks: bool,
    opts: &DiffOptions,
) -> Option<Outcome> {
    let (w, wb_idx) = (wa.index, wb.index);
    let cut = Cut {
        a: wa.overflowed(),
        b: wb.overflowed(),
    };
    let mut divergences = Vec::new();
    let unknown = if masks {
        align_warp_cut(wa.events, wb.events, cut, &opts.align, &mut divergences)
    } else {
        let (ea, eb) = (without_masks(wa.events), without_masks(wb.events));
        align_warp_cut(&ea, &eb, cut, &opts.align, &mut divergences)
    };
    let overflowed = cut.any().then(|| OverflowedWarp {
        warp_idx: w,
        warp_idx_b: wb_idx,
        dropped_a: dropped(wa),
        dropped_b: dropped(wb),
        recorded_a: wa.events.len() as u32,
        recorded_b: wb.events.len() as u32,
        needed_a: needed(wa),
        needed_b: needed(wb),
        unknown,
    });
    let diverged = (!divergences.is_empty()).then_some(WarpDiff {
        warp_idx: w,
        warp_idx_b: wb_idx,
        divergences,
    });
    (diverged.is_some() || overflowed.is_some()).then_some(Outcome {
        diverged,
        overflowed,
    })
}

/// Events with lane masks (active, and taken masks in `value_a`) cleared:
/// across warp sizes the same bit is another thread.
fn without_masks(events: &[TraceEvent]) -> Vec<TraceEvent> {
    events
        .iter()
        .map(|e| {
            let taken = e.taken_mask().is_some();
            TraceEvent {
                active_mask: 0,
                value_a: if taken { 0 } else { e.value_a },
                ..*e
            }
        })
        .collect()
}

/// A launch's thread layout, as far as pairing warps by thread needs it.
#[derive(Clone, Copy, Debug)]
struct Geometry {
    threads_per_block: u64,
    warps_per_block: u64,
    warp_size: u64,
    blocks: u64,
}

impl Geometry {
    fn of(t: &TraceFile) -> Geometry {
        Geometry::of_header(t.header())
    }

    fn of_header(h: &prlx_trace::TraceFileHeader) -> Geometry {
        let dims = |d: [u32; 3]| d.iter().map(|&x| u64::from(x.max(1))).product::<u64>();
        let threads_per_block = dims(h.block_dim);
        let warps_per_block = u64::from(h.warps_per_block.max(1));
        // The narrowest hardware warp that gives this many warps per block.
        let warp_size = [32, 64]
            .into_iter()
            .find(|&ws| threads_per_block.div_ceil(ws) == warps_per_block)
            .unwrap_or_else(|| threads_per_block.div_ceil(warps_per_block).max(1));
        Geometry {
            threads_per_block,
            warps_per_block,
            warp_size,
            blocks: dims(h.grid_dim),
        }
    }

    /// The warp slot that ran global thread `thread`, if the launch had it.
    fn slot_of(&self, thread: u64) -> Option<usize> {
        let block = thread / self.threads_per_block;
        let in_block = thread % self.threads_per_block;
        (block < self.blocks)
            .then(|| block * self.warps_per_block + in_block / self.warp_size)
            .and_then(|slot| usize::try_from(slot).ok())
    }

    /// Global id of the first thread of warp slot `slot`.
    fn first_thread(&self, slot: usize) -> u64 {
        let slot = slot as u64;
        (slot / self.warps_per_block) * self.threads_per_block
            + (slot % self.warps_per_block) * self.warp_size
    }
}

struct ThreadPairs {
    /// (A's slot, B's slot).
    pairs: Vec<(usize, usize)>,
    /// Warps of the narrower side whose first thread the other launch lacks.
    unpaired: usize,
}

fn thread_pairs(ga: &Geometry, gb: &Geometry) -> ThreadPairs {
    let slots = |g: &Geometry| (g.blocks * g.warps_per_block) as usize;
    let mut pairs = Vec::new();
    let mut unpaired = 0;
    if ga.warp_size <= gb.warp_size {
        for w in 0..slots(ga) {
            match gb.slot_of(ga.first_thread(w)) {
                Some(v) => pairs.push((w, v)),
                None => unpaired += 1,
            }
        }
    } else {
        for v in 0..slots(gb) {
            match ga.slot_of(gb.first_thread(v)) {
                Some(w) => pairs.push((w, v)),
                None => unpaired += 1,
            }
        }
        pairs.sort_unstable();
    }
    ThreadPairs { pairs, unpaired }
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

/// Differences in how the two kernels were launched (headers and warp
/// slot counts): reported, not fatal.
pub(crate) fn launch_mismatches(
    (ha, na): (&prlx_trace::TraceFileHeader, usize),
    (hb, nb): (&prlx_trace::TraceFileHeader, usize),
    pairing: WarpPairing,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let (ka, kb) = (ha.kernel_name(), hb.kernel_name());
    if ka != kb {
        warnings.push(format!("kernel names differ: A ran `{ka}`, B ran `{kb}`"));
    } else if ha.kernel_name_hash != hb.kernel_name_hash {
        // The header keeps 63 bytes of the name but hashes all of it: two
        // kernels whose long (mangled) names share those bytes, or a trace
        // written by another tool.
        warnings.push(format!(
            "kernel name hashes differ under the same name `{ka}` (A {:#018x}, B {:#018x}): \
             the full names differ past the 63 bytes a trace keeps, so these may be different kernels",
            ha.kernel_name_hash, hb.kernel_name_hash
        ));
    }
    let reshaped = ha.grid_dim != hb.grid_dim || ha.block_dim != hb.block_dim;
    if reshaped && pairing == WarpPairing::BySlot {
        warnings.push(format!(
            "launch shapes differ: A is grid {:?} x block {:?}, B is grid {:?} x block {:?}; \
             warps are paired by slot (--remap pairs them by thread)",
            ha.grid_dim, ha.block_dim, hb.grid_dim, hb.block_dim
        ));
    } else if reshaped {
        warnings.push(format!(
            "launch shapes differ: A is grid {:?} x block {:?}, B is grid {:?} x block {:?}; \
             warps are paired by global thread id",
            ha.grid_dim, ha.block_dim, hb.grid_dim, hb.block_dim
        ));
    }
    if na != nb && pairing == WarpPairing::BySlot {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(grid: u32, block: u32, warps_per_block: u32) -> Geometry {
        let mut h: prlx_trace::TraceFileHeader = bytemuck::Zeroable::zeroed();
        h.grid_dim = [grid, 1, 1];
        h.block_dim = [block, 1, 1];
        h.warps_per_block = warps_per_block;
        Geometry::of_header(&h)
    }

    #[test]
    fn warps_pair_by_their_first_thread() {
        // 4 blocks of 48 threads (2 warps, the second half full) against
        // 2 blocks of 96 (3 warps): the same 192 threads.
        let (a, b) = (geometry(4, 48, 2), geometry(2, 96, 3));
        let p = thread_pairs(&a, &b);
        assert_eq!(
            p.pairs,
            vec![
                (0, 0),
                (1, 1),
                (2, 1),
                (3, 2),
                (4, 3),
                (5, 4),
                (6, 4),
                (7, 5)
            ]
        );
        assert_eq!(p.unpaired, 0);
    }

    #[test]
    fn narrow_warps_pair_with_the_wide_warp_holding_their_threads() {
        // 32-wide warps against 64-wide wavefronts, one block of 128 threads.
        let (a, b) = (geometry(1, 128, 2), geometry(1, 128, 4));
        assert_eq!((a.warp_size, b.warp_size), (64, 32));
        let p = thread_pairs(&a, &b);
        assert_eq!(p.pairs, vec![(0, 0), (0, 1), (1, 2), (1, 3)]);
        // A grid B lacks: its warps are counted, not paired.
        let p = thread_pairs(&geometry(2, 64, 2), &geometry(1, 64, 2));
        assert_eq!((p.pairs.len(), p.unpaired), (2, 2));
    }
}
