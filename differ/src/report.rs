//! The diff report: per-warp divergences turned into what a person (or a CI
//! script) reads first: counts, the root-cause candidate, ranked sites, and
//! the evidence at that site. Serialises to PRLX's JSON field names.

use crate::align::{DivergenceKind, EventDivergence};
use crate::classify;
use crate::context::{self, HistoryBefore, HistoryContext, SnapshotContext};
use crate::diff::{OverflowedWarp, TraceDiff, WarpDiff};
use crate::filter::DivergenceFilter;
use crate::hex::hex32;
pub use crate::record::DivergenceRecord;
use crate::view::TraceView;
use prlx_trace::{SiteMap, TraceEvent};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What [`DiffReport::build_with`] adds to or keeps of the plain report.
#[derive(Clone, Debug, Default)]
pub struct ReportOptions {
    /// Keep only the divergences it matches (counts follow the filter).
    pub filter: DivergenceFilter,
    /// Attach the last N history values recorded before each divergence.
    pub history: Option<usize>,
    /// Attach a heuristic cause to each divergence.
    pub classify: bool,
}

/// One divergent site and how often it diverged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SiteSummary {
    #[serde(serialize_with = "hex32")]
    pub site_id: u32,
    pub count: usize,
    pub warps: usize,
    pub kinds: BTreeMap<&'static str, usize>,
    pub source_location: Option<String>,
    pub function: Option<String>,
}

/// The shim setting that sizes the per-warp event buffers.
pub const EVENTS_PER_WARP_SETTING: &str = prlx_trace::limits::EVENTS_PER_WARP.name;

/// A warp that dropped events in either run: its recorded prefixes were
/// compared; `unknown_*` are the recorded events that could not be judged
/// because their counterparts lie past a cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct OverflowRecord {
    pub warp_idx: usize,
    pub block: [u32; 3],
    pub warp_in_block: u32,
    pub dropped_a: u32,
    pub dropped_b: u32,
    pub recorded_a: u32,
    pub recorded_b: u32,
    /// First unjudged event in A and in B (None: every recorded event judged).
    pub unknown_from_a: Option<u32>,
    pub unknown_from_b: Option<u32>,
    pub unknown_events_a: u32,
    pub unknown_events_b: u32,
}

/// What overflowed, in sum, and what to raise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OverflowSummary {
    pub warps: usize,
    /// Events the devices dropped in each run.
    pub dropped_a: u64,
    pub dropped_b: u64,
    /// Recorded events that could not be judged, per run.
    pub unknown_events_a: u64,
    pub unknown_events_b: u64,
    /// Buffer slots per warp each run had.
    pub events_per_warp: [u32; 2],
    /// The setting to raise: `PRLX_EVENTS_PER_WARP`.
    pub setting: &'static str,
    /// Slots per warp that would have held every event of every warp.
    pub needed_events_per_warp: u32,
}

impl OverflowSummary {
    /// One line: what overflowed and which setting to raise, to what.
    pub fn advice(&self) -> String {
        format!(
            "{} warp(s) overflowed their event buffers ({} / {} events per warp, {} / {} events dropped); \
             their recorded events were compared, {} / {} recorded events past a cut are unknown; \
             raise {} to at least {}",
            self.warps,
            self.events_per_warp[0],
            self.events_per_warp[1],
            self.dropped_a,
            self.dropped_b,
            self.unknown_events_a,
            self.unknown_events_b,
            self.setting,
            self.needed_events_per_warp
        )
    }
}

/// Everything `prlxctl diff` prints.
#[derive(Clone, Debug, Serialize)]
pub struct DiffReport {
    /// "diverged" (a divergence was found), "unknown" (none in the recorded
    /// events, but some warp overflowed, so not all was compared) or
    /// "identical".
    pub status: &'static str,
    pub trace_a: String,
    pub trace_b: String,
    pub kernel: String,
    pub total_divergences: usize,
    pub warps_compared: usize,
    pub warps_diverged: usize,
    pub warps_overflowed: usize,
    pub divergent_sites: usize,
    /// Count per kind; every kind is present.
    pub divergence_breakdown: BTreeMap<&'static str, usize>,
    /// Root-cause candidate: lowest event index, then block, then warp.
    pub first_divergence: Option<DivergenceRecord>,
    /// Divergences by warp, then event index (possibly cut by `-n`).
    pub divergences: Vec<DivergenceRecord>,
    /// True when `divergences` was cut short by a listing limit.
    pub divergences_truncated: bool,
    /// Divergent sites, most divergences first.
    pub sites: Vec<SiteSummary>,
    pub overflowed_warps: Vec<OverflowRecord>,
    /// Totals over `overflowed_warps` and the setting to raise; None when no
    /// warp overflowed.
    pub overflow: Option<OverflowSummary>,
    /// Lane operands at the first divergence, when the traces carry snapshots.
    pub snapshot: Option<SnapshotContext>,
    /// Values recorded at the first divergence's site, when traces carry history.
    pub history: Option<HistoryContext>,
    pub warnings: Vec<String>,
    /// The filter applied, described; None when every divergence is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
    /// Divergences before the filter.
    pub unfiltered_divergences: usize,
    /// Divergences per heuristic cause (`--classify`), by cause name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub causes: BTreeMap<&'static str, usize>,
    /// Recorded values that differ where control flow matched, when values
    /// were not compared as divergences (no `--values`): a race's atomics
    /// returning in another order, other data stored. None when none differ
    /// or when `--values` counted them as Value divergences.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values_differ: Option<ValuesDiffer>,
}

/// [`DiffReport::values_differ`]: how many events' values differ, in how
/// many warps, and the first of them (lowest event index, then block, warp).
#[derive(Clone, Debug, Serialize)]
pub struct ValuesDiffer {
    pub events: usize,
    pub warps: usize,
    pub first: DivergenceRecord,
}

impl DiffReport {
    /// Builds the report; `map` resolves source locations.
    pub fn build(
        a: &dyn TraceView,
        b: &dyn TraceView,
        diff: &TraceDiff,
        map: Option<&SiteMap>,
    ) -> DiffReport {
        Self::build_with(a, b, diff, map, &ReportOptions::default())
    }

    /// [`DiffReport::build`] with a filter, history values and causes.
    pub fn build_with(
        a: &dyn TraceView,
        b: &dyn TraceView,
        diff: &TraceDiff,
        map: Option<&SiteMap>,
        options: &ReportOptions,
    ) -> DiffReport {
        let annotate = |w: &WarpDiff, d: &EventDivergence| record(a, b, map, w, d);
        let all: Vec<DivergenceRecord> = diff
            .diverged
            .iter()
            .flat_map(|w| w.divergences.iter().map(move |d| (w, d)))
            .map(|(w, d)| annotate(w, d))
            .collect();
        let unfiltered_divergences = all.len();
        let mut divergences: Vec<DivergenceRecord> = if options.filter.is_empty() {
            all
        } else {
            all.into_iter()
                .filter(|d| options.filter.matches(d))
                .collect()
        };
        let mut causes = BTreeMap::new();
        for d in &mut divergences {
            if let Some(n) = options.history {
                d.history_before = Some(HistoryBefore {
                    a: context::history_before(a, d.warp_idx, d.event_idx, n),
                    b: context::history_before(b, d.warp_idx_b, d.event_idx_b, n),
                });
            }
            if options.classify {
                let cause = classify::classify(a, b, d);
                *causes.entry(cause.kind.name()).or_default() += 1;
                d.cause = Some(cause);
            }
        }
        let warps_diverged = if options.filter.is_empty() {
            diff.diverged.len()
        } else {
            divergences
                .iter()
                .map(|d| d.warp_idx)
                .collect::<BTreeSet<_>>()
                .len()
        };
        let first_divergence = divergences
            .iter()
            .min_by_key(|d| (d.event_idx, d.block_linear, d.warp_in_block, d.warp_idx))
            .cloned();
        let mut breakdown: BTreeMap<&'static str, usize> =
            DivergenceKind::ALL.iter().map(|k| (k.name(), 0)).collect();
        for d in &divergences {
            *breakdown.entry(d.kind.name()).or_default() += 1;
        }
        let sites = rank_sites(&divergences);
        let (snapshot, history) = match &first_divergence {
            Some(f) => (
                context::snapshot_context_paired(
                    a,
                    b,
                    (f.warp_idx, f.warp_idx_b),
                    f.site_id,
                    f.event_idx as usize,
                    f.event_idx_b as usize,
                ),
                context::history_context_paired(a, b, (f.warp_idx, f.warp_idx_b), f.site_id),
            ),
            None => (None, None),
        };
        let values_differ = values_differ(a, b, map, diff);
        let mut warnings = diff.warnings.clone();
        let overflowed_warps: Vec<OverflowRecord> = diff
            .overflowed
            .iter()
            .map(|o| overflow_record(a, o))
            .collect();
        let overflow = overflow_summary(a, b, &diff.overflowed);
        if let Some(o) = &overflow {
            warnings.push(o.advice());
        }
        DiffReport {
            status: if !divergences.is_empty() {
                "diverged"
            } else if overflow.is_some() {
                "unknown"
            } else {
                "identical"
            },
            trace_a: a.name().to_owned(),
            trace_b: b.name().to_owned(),
            kernel: a.kernel_name(),
            total_divergences: divergences.len(),
            warps_compared: diff.warps_compared,
            warps_diverged,
            warps_overflowed: diff.overflowed.len(),
            divergent_sites: sites.len(),
            divergence_breakdown: breakdown,
            first_divergence,
            divergences,
            divergences_truncated: false,
            sites,
            overflowed_warps,
            overflow,
            snapshot,
            history,
            warnings,
            filter: (!options.filter.is_empty()).then(|| options.filter.describe()),
            unfiltered_divergences,
            causes,
            values_differ,
        }
    }

    /// Keeps only the first `n` listed divergences; counts are unchanged.
    pub fn limit_listed(&mut self, n: usize) {
        if self.divergences.len() > n {
            self.divergences.truncate(n);
            self.divergences_truncated = true;
        }
    }

    /// Divergences that count against a CI threshold.
    pub fn gating_divergences(&self, ignore_active_mask: bool) -> usize {
        let masks = self
            .divergence_breakdown
            .get("ActiveMask")
            .copied()
            .unwrap_or(0);
        if ignore_active_mask {
            self.total_divergences - masks
        } else {
            self.total_divergences
        }
    }

    /// True when some compared warp overflowed: then "no divergence" is
    /// not "identical".
    pub fn overflowed(&self) -> bool {
        self.overflow.is_some()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the report is plain data")
    }
}

/// The Value divergences the diff set aside ([`TraceDiff::set_aside_values`]).
fn values_differ(
    a: &dyn TraceView,
    b: &dyn TraceView,
    map: Option<&SiteMap>,
    diff: &TraceDiff,
) -> Option<ValuesDiffer> {
    let first = diff
        .values_set_aside
        .iter()
        .flat_map(|w| w.divergences.iter().map(move |d| (w, d)))
        .map(|(w, d)| record(a, b, map, w, d))
        .min_by_key(|d| (d.event_idx, d.block_linear, d.warp_in_block, d.warp_idx))?;
    Some(ValuesDiffer {
        events: diff.values_differing(),
        warps: diff.values_set_aside.len(),
        first,
    })
}

fn overflow_record(a: &dyn TraceView, o: &OverflowedWarp) -> OverflowRecord {
    let loc = a.warp_location(o.warp_idx);
    OverflowRecord {
        warp_idx: o.warp_idx,
        block: loc.block,
        warp_in_block: loc.warp_in_block,
        dropped_a: o.dropped_a,
        dropped_b: o.dropped_b,
        recorded_a: o.recorded_a,
        recorded_b: o.recorded_b,
        unknown_from_a: o.unknown.map(|u| u.event_idx),
        unknown_from_b: o.unknown.map(|u| u.event_idx_b),
        unknown_events_a: o.unknown.map_or(0, |u| u.events_a),
        unknown_events_b: o.unknown.map_or(0, |u| u.events_b),
    }
}

fn overflow_summary(
    a: &dyn TraceView,
    b: &dyn TraceView,
    warps: &[OverflowedWarp],
) -> Option<OverflowSummary> {
    if warps.is_empty() {
        return None;
    }
    let sum = |f: fn(&OverflowedWarp) -> u32| warps.iter().map(|o| u64::from(f(o))).sum();
    Some(OverflowSummary {
        warps: warps.len(),
        dropped_a: sum(|o| o.dropped_a),
        dropped_b: sum(|o| o.dropped_b),
        unknown_events_a: sum(|o| o.unknown.map_or(0, |u| u.events_a)),
        unknown_events_b: sum(|o| o.unknown.map_or(0, |u| u.events_b)),
        events_per_warp: [a.header().events_per_warp, b.header().events_per_warp],
        setting: EVENTS_PER_WARP_SETTING,
        needed_events_per_warp: warps
            .iter()
            .map(|o| o.needed_a.max(o.needed_b))
            .max()
            .unwrap_or(0),
    })
}

fn record(
    a: &dyn TraceView,
    b: &dyn TraceView,
    map: Option<&SiteMap>,
    warp: &WarpDiff,
    d: &EventDivergence,
) -> DivergenceRecord {
    let (warp_idx, warp_idx_b) = (warp.warp_idx, warp.warp_idx_b);
    let loc = a.warp_location(warp_idx);
    let event = |t: &dyn TraceView, w: usize, i: u32| -> Option<TraceEvent> {
        t.warp(w).and_then(|w| w.events.get(i as usize).copied())
    };
    // Region kinds describe a span, not one event pair: no per-event fields.
    let paired = !matches!(d.kind, DivergenceKind::ExtraEvents | DivergenceKind::Path);
    let (ea, eb) = if paired {
        (
            event(a, warp_idx, d.event_idx),
            event(b, warp_idx_b, d.event_idx_b),
        )
    } else {
        (None, None)
    };
    let side = (!paired).then_some(match (d.events_a, d.events_b) {
        (_, 0) => "A",
        (0, _) => "B",
        _ => "both",
    });
    let info = map.and_then(|m| m.get(d.site_id));
    DivergenceRecord {
        warp_idx,
        warp_idx_b,
        block: loc.block,
        warp_in_block: loc.warp_in_block,
        block_linear: loc.block_linear,
        event_idx: d.event_idx,
        event_idx_b: d.event_idx_b,
        site_id: d.site_id,
        kind: d.kind,
        extra_events: if d.kind == DivergenceKind::ExtraEvents {
            d.events_a + d.events_b
        } else {
            0
        },
        side,
        events_a: d.events_a,
        events_b: d.events_b,
        branch_dir_a: ea.map(|e| e.branch_dir),
        branch_dir_b: eb.map(|e| e.branch_dir),
        taken_mask_a: ea.and_then(|e| e.taken_mask()),
        taken_mask_b: eb.and_then(|e| e.taken_mask()),
        active_mask_a: ea.map(|e| e.active_mask),
        active_mask_b: eb.map(|e| e.active_mask),
        value_a: ea.map(|e| e.value_a),
        value_b: eb.map(|e| e.value_a),
        source_location: info.map(|i| i.location()),
        function: info.map(|i| i.function.clone()).filter(|f| !f.is_empty()),
        history_before: None,
        cause: None,
    }
}

fn rank_sites(divergences: &[DivergenceRecord]) -> Vec<SiteSummary> {
    struct Acc<'a> {
        count: usize,
        warps: BTreeSet<usize>,
        kinds: BTreeMap<&'static str, usize>,
        first: &'a DivergenceRecord,
    }
    let mut by_site: BTreeMap<u32, Acc> = BTreeMap::new();
    for d in divergences {
        let acc = by_site.entry(d.site_id).or_insert_with(|| Acc {
            count: 0,
            warps: BTreeSet::new(),
            kinds: BTreeMap::new(),
            first: d,
        });
        acc.count += 1;
        acc.warps.insert(d.warp_idx);
        *acc.kinds.entry(d.kind.name()).or_default() += 1;
    }
    let mut sites: Vec<SiteSummary> = by_site
        .into_iter()
        .map(|(site_id, acc)| SiteSummary {
            site_id,
            count: acc.count,
            warps: acc.warps.len(),
            kinds: acc.kinds,
            source_location: acc.first.source_location.clone(),
            function: acc.first.function.clone(),
        })
        .collect();
    sites.sort_by(|x, y| y.count.cmp(&x.count).then(x.site_id.cmp(&y.site_id)));
    sites
}
