//! Per-warp alignment of two event streams and classification of every
//! divergence between them.
//!
//! Events are aligned on their control-flow identity: (site, event type,
//! branch direction). A direction is part of the identity because a loop that
//! ran 40 more iterations must align as 40 extra "taken" back-edges and one
//! shared exit, not as a flipped branch followed by 39 extras. A flipped branch
//! is recognised explicitly instead: the same site on both sides with
//! opposite directions, after which the streams re-join or part ways.
//!
//! The steps, cheapest first:
//! 1. identical bytes: nothing to do, no allocation;
//! 2. lockstep over the common prefix, skipping identical 1 KiB chunks by
//!    `memcmp` and comparing the rest pair by pair (a same-site pair with the
//!    other direction, followed by the same sites, is a Branch);
//! 3. from the first structural mismatch, bounded Myers: a quick pass with a
//!    small budget, then (unless a linear-time lower bound on the edits proves
//!    it hopeless) the full budget, then the same on (site, event type) alone,
//!    so flipped branches after a structural change do not exhaust the budget.
//!
//! Every gap between re-joins becomes exactly one divergence: one-sided gaps
//! (including a tail one run has and the other lacks) are `ExtraEvents`,
//! two-sided gaps followed by a re-join are `ExtraEvents` on both sides, and a
//! two-sided gap that reaches the end, or a search over budget, is one `Path`
//! (see [`AlignOptions::min_resync`] for what counts as a re-join).
//!
//! A stream cut short by an overflowed buffer ([`align_warp_cut`]) is judged
//! the same way up to the last re-join; events the other side ran past the
//! cut are an [`UnknownTail`], never a divergence and never "identical".

use crate::myers::{self, MatchRun};
use prlx_trace::TraceEvent;
use serde::Serialize;

/// What kind of difference a divergence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum DivergenceKind {
    /// Same site, the branch went the other way.
    Branch,
    /// Same site and direction, different lanes active.
    ActiveMask,
    /// Same site, different recorded operand (only with `compare_values`).
    Value,
    /// The streams part ways and never re-join.
    Path,
    /// One side (or both) ran events the other did not, then they re-join
    /// (or one stream simply ends first).
    ExtraEvents,
}

impl DivergenceKind {
    pub const ALL: [DivergenceKind; 5] = [
        DivergenceKind::Branch,
        DivergenceKind::ActiveMask,
        DivergenceKind::Value,
        DivergenceKind::Path,
        DivergenceKind::ExtraEvents,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DivergenceKind::Branch => "Branch",
            DivergenceKind::ActiveMask => "ActiveMask",
            DivergenceKind::Value => "Value",
            DivergenceKind::Path => "Path",
            DivergenceKind::ExtraEvents => "ExtraEvents",
        }
    }
}

/// One divergence inside one warp, by event index on both sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventDivergence {
    pub kind: DivergenceKind,
    /// Index in A's stream (for extra events in B only: where they are inserted).
    pub event_idx: u32,
    /// Index in B's stream.
    pub event_idx_b: u32,
    /// The site in A at `event_idx`, or B's when A has no event there.
    pub site_id: u32,
    /// For `ExtraEvents` and `Path`: events on each side of the divergent
    /// region; for the other kinds, 1 and 1.
    pub events_a: u32,
    pub events_b: u32,
}

/// Knobs for [`align_warp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlignOptions {
    /// Most insertions + deletions Myers may spend on one warp; past this the
    /// rest of the warp is one `Path` divergence.
    pub max_edits: usize,
    /// A run of matched events shorter than this between two-sided changes is
    /// treated as coincidence, not as a re-join (a lone shared site inside two
    /// different paths does not split one divergence into two).
    pub min_resync: usize,
    /// Report `Value` divergences (operand differences at matched events).
    pub compare_values: bool,
}

impl Default for AlignOptions {
    fn default() -> Self {
        AlignOptions {
            max_edits: 256,
            min_resync: 2,
            compare_values: false,
        }
    }
}

/// The alignment identity of an event: site, type and direction.
fn same_flow(a: &TraceEvent, b: &TraceEvent) -> bool {
    a.site_id == b.site_id && a.event_type == b.event_type && a.branch_dir == b.branch_dir
}

fn same_site(a: &TraceEvent, b: &TraceEvent) -> bool {
    a.site_id == b.site_id && a.event_type == b.event_type
}

type KeyFn = fn(&TraceEvent) -> u64;

fn site_key(e: &TraceEvent) -> u64 {
    u64::from(e.site_id) | u64::from(e.event_type) << 32
}

fn flow_key(e: &TraceEvent) -> u64 {
    site_key(e) | u64::from(e.branch_dir) << 40
}

/// Edit budget of the first, cheap alignment attempt.
const QUICK_EDITS: usize = 32;

/// Buckets of the key histogram in [`edit_lower_bound`].
const HISTOGRAM_BITS: u32 = 10;
const HISTOGRAM_BUCKETS: usize = 1 << HISTOGRAM_BITS;

/// A lower bound on the edits any alignment of `a` and `b` needs:
/// `|a| + |b| - 2·LCS`, with the LCS bounded above by how many keys the two
/// sides have in common (counted per hash bucket; collisions only raise the
/// bound on the LCS, so the edit bound stays valid). Disjoint tails, the
/// common shape of a Path, are rejected in linear time this way.
fn edit_lower_bound(a: &[TraceEvent], b: &[TraceEvent], key: KeyFn) -> usize {
    let bucket = |e: &TraceEvent| {
        // murmur3's finaliser: synthetic site ids are often consecutive, and
        // two shifted runs of them must not land in the same buckets.
        let mut h = key(e);
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        (h >> (64 - HISTOGRAM_BITS)) as usize
    };
    let mut count_a = [0u32; HISTOGRAM_BUCKETS];
    let mut count_b = [0u32; HISTOGRAM_BUCKETS];
    for e in a {
        count_a[bucket(e)] += 1;
    }
    for e in b {
        count_b[bucket(e)] += 1;
    }
    let common: usize = count_a
        .iter()
        .zip(&count_b)
        .map(|(&x, &y)| x.min(y) as usize)
        .sum();
    a.len() + b.len() - 2 * common
}

fn as_bytes(events: &[TraceEvent]) -> &[u8] {
    bytemuck::cast_slice(events)
}

/// Which sides' recorded streams are only a prefix of what the warp ran:
/// the device's event buffer filled up and later events were dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    pub a: bool,
    pub b: bool,
}

impl Cut {
    pub fn any(self) -> bool {
        self.a || self.b
    }
}

/// The end of a cut warp's recorded streams that cannot be judged: events
/// one side recorded whose counterparts, if any, lie past the other side's
/// cut. It starts after the last re-join of the two streams (or at a Path,
/// when the streams part and a re-join might lie past the cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UnknownTail {
    /// First event of the region in A's stream.
    pub event_idx: u32,
    /// First event of the region in B's stream.
    pub event_idx_b: u32,
    /// Recorded events of the region in each run.
    pub events_a: u32,
    pub events_b: u32,
}

/// Appends the divergences between `a` and `b` to `out`, in stream order.
pub fn align_warp(
    a: &[TraceEvent],
    b: &[TraceEvent],
    opts: &AlignOptions,
    out: &mut Vec<EventDivergence>,
) {
    align_warp_cut(a, b, Cut::default(), opts, out);
}

/// [`align_warp`] for streams that may be cut short (overflowed buffers):
/// everything up to the last re-join is judged as usual; the final region is
/// judged only as far as the recorded events allow. Events one side ran past
/// the end of a cut stream are not divergences but unknown, returned as the
/// [`UnknownTail`]; a final two-sided region is still a Path (the streams did
/// part there), but whether they re-join past the cut is unknown too.
pub fn align_warp_cut(
    a: &[TraceEvent],
    b: &[TraceEvent],
    cut: Cut,
    opts: &AlignOptions,
    out: &mut Vec<EventDivergence>,
) -> Option<UnknownTail> {
    if as_bytes(a) == as_bytes(b) {
        return None;
    }
    let common = a.len().min(b.len());
    let mut i = identical_prefix(&a[..common], &b[..common]);
    while i < common {
        if same_flow(&a[i], &b[i]) {
            compare_pair(a, b, i, i, opts, out);
        } else if same_site(&a[i], &b[i]) && rejoins_after(a, b, i, opts.min_resync) {
            // One divergence per event pair: the flip hides a mask change.
            out.push(single(DivergenceKind::Branch, i, i, a[i].site_id));
        } else {
            break;
        }
        i += 1;
        i += identical_prefix(&a[i..common], &b[i..common]);
    }
    let (rest_a, rest_b) = (&a[i..], &b[i..]);
    if rest_a.is_empty() && rest_b.is_empty() {
        return None;
    }
    if rest_a.is_empty() || rest_b.is_empty() {
        // One side simply ran on: nothing left to re-join with.
        return final_region(a, b, (i, a.len()), (i, b.len()), cut, out);
    }
    match align_rest(rest_a, rest_b, opts) {
        Some(runs) => classify_runs(a, b, i, &runs, cut, opts, out),
        None => final_region(a, b, (i, a.len()), (i, b.len()), cut, out),
    }
}

/// The region after the last re-join, reaching the end of both streams: a
/// one-sided region is ExtraEvents when the side that ended was complete and
/// unknown when it was cut; a two-sided one is a Path, unknown past the
/// start when either side was cut.
fn final_region(
    a: &[TraceEvent],
    b: &[TraceEvent],
    ra: (usize, usize),
    rb: (usize, usize),
    cut: Cut,
    out: &mut Vec<EventDivergence>,
) -> Option<UnknownTail> {
    let (len_a, len_b) = (ra.1 - ra.0, rb.1 - rb.0);
    let unknown = UnknownTail {
        event_idx: ra.0 as u32,
        event_idx_b: rb.0 as u32,
        events_a: len_a as u32,
        events_b: len_b as u32,
    };
    let ended_cut = (len_a == 0 && cut.a) || (len_b == 0 && cut.b);
    if len_a == 0 && len_b == 0 {
        return None;
    }
    if ended_cut {
        return Some(unknown);
    }
    let kind = if len_a > 0 && len_b > 0 {
        DivergenceKind::Path
    } else {
        DivergenceKind::ExtraEvents
    };
    out.push(region(kind, a, b, ra, rb));
    (kind == DivergenceKind::Path && cut.any()).then_some(unknown)
}

/// Myers over the streams after their first structural mismatch, or `None`
/// when no alignment fits the budget (the rest is a Path).
///
/// Aligning on direction too keeps loops exact, but spends two edits per
/// flipped branch; when that blows the budget, align on sites alone (flips
/// become matched pairs that differ in direction) before giving up.
/// Near-identical warps finish in the quick pass; only when they do not is
/// the linear-time bound worth computing before the full O(D²) searches.
fn align_rest(a: &[TraceEvent], b: &[TraceEvent], opts: &AlignOptions) -> Option<Vec<MatchRun>> {
    let quick_budget = opts.max_edits.min(QUICK_EDITS);
    if let Some(runs) = myers::matched_runs(a, b, quick_budget, same_flow) {
        return Some(runs);
    }
    // Sites alone are the weaker key: if even they cannot fit, nothing can.
    if edit_lower_bound(a, b, site_key) > opts.max_edits {
        return None;
    }
    let by_direction = (opts.max_edits > quick_budget
        && edit_lower_bound(a, b, flow_key) <= opts.max_edits)
        .then(|| myers::matched_runs(a, b, opts.max_edits, same_flow))
        .flatten();
    by_direction.or_else(|| myers::matched_runs(a, b, opts.max_edits, same_site))
}

/// Events per `memcmp` when skipping identical stretches: identical events
/// cannot diverge, so only the chunk that differs is examined event by event.
const SKIP_CHUNK: usize = 64;

/// How many leading events of `a` and `b` are byte-for-byte identical.
fn identical_prefix(a: &[TraceEvent], b: &[TraceEvent]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + SKIP_CHUNK <= n && as_bytes(&a[i..i + SKIP_CHUNK]) == as_bytes(&b[i..i + SKIP_CHUNK])
    {
        i += SKIP_CHUNK;
    }
    while i < n && as_bytes(&a[i..i + 1]) == as_bytes(&b[i..i + 1]) {
        i += 1;
    }
    i
}

/// After a same-site, opposite-direction pair at `i`: do the streams carry
/// on through the same sites for `min_resync` events (or to a shared end)?
/// Directions may differ there too: adjacent flipped branches are each a
/// Branch divergence, not a change of path.
fn rejoins_after(a: &[TraceEvent], b: &[TraceEvent], i: usize, min_resync: usize) -> bool {
    let (tail_a, tail_b) = (&a[i + 1..], &b[i + 1..]);
    let k = min_resync.min(tail_a.len()).min(tail_b.len());
    let long_enough = k == min_resync || tail_a.len() == tail_b.len();
    long_enough
        && tail_a[..k]
            .iter()
            .zip(&tail_b[..k])
            .all(|(x, y)| same_site(x, y))
}

/// Walks Myers' matched runs over `a[base..]`/`b[base..]`: compares matched
/// pairs, and turns each gap between re-joins into one divergence.
fn classify_runs(
    a: &[TraceEvent],
    b: &[TraceEvent],
    base: usize,
    runs: &[MatchRun],
    cut: Cut,
    opts: &AlignOptions,
    out: &mut Vec<EventDivergence>,
) -> Option<UnknownTail> {
    // Start of the pending gap, as absolute indices.
    let (mut gap_a, mut gap_b) = (base, base);
    for run in runs {
        let (run_a, run_b) = (base + run.a_start, base + run.b_start);
        let one_sided = run_a == gap_a || run_b == gap_b;
        if run.len < opts.min_resync && !one_sided {
            continue; // coincidental match inside a two-sided change
        }
        gap(a, b, (gap_a, run_a), (gap_b, run_b), out);
        let (pairs_a, pairs_b) = (&a[run_a..run_a + run.len], &b[run_b..run_b + run.len]);
        let mut k = identical_prefix(pairs_a, pairs_b);
        while k < run.len {
            compare_pair(a, b, run_a + k, run_b + k, opts, out);
            k += 1;
            k += identical_prefix(&pairs_a[k..], &pairs_b[k..]);
        }
        gap_a = run_a + run.len;
        gap_b = run_b + run.len;
    }
    let (ra, rb) = flipped_head(a, b, (gap_a, a.len()), (gap_b, b.len()), out);
    final_region(a, b, ra, rb, cut, out)
}

/// Classifies one gap `a[ra.0..ra.1]` vs `b[rb.0..rb.1]` that matched
/// events follow.
fn gap(
    a: &[TraceEvent],
    b: &[TraceEvent],
    ra: (usize, usize),
    rb: (usize, usize),
    out: &mut Vec<EventDivergence>,
) {
    let (ra, rb) = flipped_head(a, b, ra, rb, out);
    if ra.0 == ra.1 && rb.0 == rb.1 {
        return;
    }
    if let Some(split) = split_loop_exit(a, b, ra, rb) {
        out.push(split);
    }
    out.push(region(DivergenceKind::ExtraEvents, a, b, ra, rb));
}

/// A one-sided gap of extra loop iterations where the same lanes reached
/// the loop test in both runs and split differently: one run left with all
/// of them, the other kept some (its event records a taken mask that is
/// neither none nor all of its active lanes). The lanes that went the other
/// way are a Branch divergence, as when both runs kept some lanes (then the
/// pair matches and its taken masks differ): which of the two happens
/// depends on how the code groups lanes, not on the program's logic (the
/// pass-built and the PTX-instrumented builds of one kernel differ here).
/// The whole warp staying on is not a split: those are extra iterations only.
fn split_loop_exit(
    a: &[TraceEvent],
    b: &[TraceEvent],
    ra: (usize, usize),
    rb: (usize, usize),
) -> Option<EventDivergence> {
    // The side that ran on, its first extra event, and the other side's exit.
    let (extra, exit, ia, ib) = if ra.0 == ra.1 && rb.0 < rb.1 {
        (b.get(rb.0)?, a.get(ra.1)?, ra.1, rb.0)
    } else if rb.0 == rb.1 && ra.0 < ra.1 {
        (a.get(ra.0)?, b.get(rb.1)?, ra.0, rb.1)
    } else {
        return None;
    };
    let kept = extra.taken_mask()?;
    let split = same_site(extra, exit)
        && extra.active_mask == exit.active_mask
        && extra.branch_dir != exit.branch_dir
        && kept != 0
        && kept != extra.active_mask;
    split.then(|| single(DivergenceKind::Branch, ia, ib, extra.site_id))
}

/// Branches that went the other way head a gap: they are the root cause,
/// the rest of the gap is where the two directions led. Reports them and
/// returns what is left of the gap.
fn flipped_head(
    a: &[TraceEvent],
    b: &[TraceEvent],
    mut ra: (usize, usize),
    mut rb: (usize, usize),
    out: &mut Vec<EventDivergence>,
) -> ((usize, usize), (usize, usize)) {
    while ra.0 < ra.1 && rb.0 < rb.1 && same_site(&a[ra.0], &b[rb.0]) {
        out.push(single(DivergenceKind::Branch, ra.0, rb.0, a[ra.0].site_id));
        ra.0 += 1;
        rb.0 += 1;
    }
    (ra, rb)
}

fn single(kind: DivergenceKind, ia: usize, ib: usize, site_id: u32) -> EventDivergence {
    EventDivergence {
        kind,
        event_idx: ia as u32,
        event_idx_b: ib as u32,
        site_id,
        events_a: 1,
        events_b: 1,
    }
}

fn region(
    kind: DivergenceKind,
    a: &[TraceEvent],
    b: &[TraceEvent],
    ra: (usize, usize),
    rb: (usize, usize),
) -> EventDivergence {
    let site_id = if ra.0 < ra.1 {
        a[ra.0].site_id
    } else {
        b[rb.0].site_id
    };
    EventDivergence {
        kind,
        event_idx: ra.0 as u32,
        event_idx_b: rb.0 as u32,
        site_id,
        events_a: (ra.1 - ra.0) as u32,
        events_b: (rb.1 - rb.0) as u32,
    }
}

/// A matched pair (same site and type): direction, then mask, then the
/// taken lanes, then value; one divergence per pair at most.
///
/// With equal active masks, branch events that record their taken mask
/// (`event_flags::TAKEN_MASK`) and disagree on it are a Branch divergence:
/// some lane went the other way even though "any lane took it" agrees.
fn compare_pair(
    a: &[TraceEvent],
    b: &[TraceEvent],
    ia: usize,
    ib: usize,
    opts: &AlignOptions,
    out: &mut Vec<EventDivergence>,
) {
    let (ea, eb) = (&a[ia], &b[ib]);
    if ea.branch_dir != eb.branch_dir {
        out.push(single(DivergenceKind::Branch, ia, ib, ea.site_id));
    } else if ea.active_mask != eb.active_mask {
        out.push(single(DivergenceKind::ActiveMask, ia, ib, ea.site_id));
    } else if matches!((ea.taken_mask(), eb.taken_mask()), (Some(x), Some(y)) if x != y) {
        out.push(single(DivergenceKind::Branch, ia, ib, ea.site_id));
    } else if opts.compare_values && ea.value_a != eb.value_a {
        out.push(single(DivergenceKind::Value, ia, ib, ea.site_id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event() -> impl Strategy<Value = TraceEvent> {
        (0u32..5, 0u8..2, 0u8..2).prop_map(|(site_id, event_type, branch_dir)| TraceEvent {
            site_id,
            event_type,
            branch_dir,
            ..TraceEvent::default()
        })
    }

    proptest! {
        /// The pruning bound never exceeds the true minimal edit count, so
        /// it can only skip searches that would fail.
        #[test]
        fn edit_lower_bound_is_a_lower_bound(
            a in prop::collection::vec(event(), 0..60),
            b in prop::collection::vec(event(), 0..60),
        ) {
            for (key, by_direction) in [(flow_key as KeyFn, true), (site_key, false)] {
                let eq = if by_direction { same_flow } else { same_site };
                let runs = myers::matched_runs(&a, &b, 200, eq).expect("within 120 edits");
                let matched: usize = runs.iter().map(|r| r.len).sum();
                let edits = a.len() + b.len() - 2 * matched;
                prop_assert!(edit_lower_bound(&a, &b, key) <= edits);
            }
        }
    }

    #[test]
    fn disjoint_streams_are_rejected_by_the_bound() {
        let at = |site_id| TraceEvent {
            site_id,
            ..TraceEvent::default()
        };
        let a: Vec<TraceEvent> = (0..100).map(at).collect();
        let b: Vec<TraceEvent> = (1000..1100).map(at).collect();
        // 200 minus hash-bucket collisions among the 200 distinct keys.
        let bound = edit_lower_bound(&a, &b, site_key);
        assert!((150..=200).contains(&bound), "{bound}");
        assert_eq!(edit_lower_bound(&a, &a, site_key), 0);
    }
}
