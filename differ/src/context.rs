//! The evidence at a divergent site: the per-lane compare operands
//! (snapshot ring) and the recorded values (history ring) of both runs.
//!
//! Rings hold only the newest `depth` records and carry a per-ring sequence
//! number, not an event index. So the n-th time a warp reached a site in its
//! event stream is matched to the n-th snapshot of that site counted back
//! from the newest one (the ring keeps the last records); when that one was
//! overwritten, the nearest surviving entry in seq order is used.

use crate::view::TraceView;
use prlx_trace::{SnapshotEntry, TraceEvent};
use serde::Serialize;

/// Lane operands of one compare, as one run recorded them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SnapshotSide {
    pub seq: u32,
    #[serde(serialize_with = "crate::hex::hex32")]
    pub active_mask: u32,
    pub cmp_predicate: u32,
    /// LLVM's name for the predicate, e.g. "icmp slt".
    pub predicate: &'static str,
    pub lhs: Vec<u32>,
    pub rhs: Vec<u32>,
}

/// Both runs' lane operands at one divergent site of one warp.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SnapshotContext {
    pub warp_idx: usize,
    #[serde(serialize_with = "crate::hex::hex32")]
    pub site_id: u32,
    pub a: Option<SnapshotSide>,
    pub b: Option<SnapshotSide>,
}

/// One recorded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryValue {
    pub seq: u32,
    pub value: u32,
}

/// Values recorded at one site of one warp, oldest first, in both runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryContext {
    pub warp_idx: usize,
    #[serde(serialize_with = "crate::hex::hex32")]
    pub site_id: u32,
    pub a: Vec<HistoryValue>,
    pub b: Vec<HistoryValue>,
}

/// Most history values kept per side: the newest ones.
const HISTORY_VALUES_SHOWN: usize = 16;

pub fn snapshot_context(
    a: &dyn TraceView,
    b: &dyn TraceView,
    warp_idx: usize,
    site_id: u32,
    event_idx: usize,
    event_idx_b: usize,
) -> Option<SnapshotContext> {
    snapshot_context_paired(a, b, (warp_idx, warp_idx), site_id, event_idx, event_idx_b)
}

/// [`snapshot_context`] for warps paired across slots (`--remap`): A's warp
/// `warps.0` against B's warp `warps.1`.
pub fn snapshot_context_paired(
    a: &dyn TraceView,
    b: &dyn TraceView,
    (warp_idx, warp_idx_b): (usize, usize),
    site_id: u32,
    event_idx: usize,
    event_idx_b: usize,
) -> Option<SnapshotContext> {
    let side_a = snapshot_side(a, warp_idx, site_id, event_idx);
    let side_b = snapshot_side(b, warp_idx_b, site_id, event_idx_b);
    if side_a.is_none() && side_b.is_none() {
        return None;
    }
    Some(SnapshotContext {
        warp_idx,
        site_id,
        a: side_a,
        b: side_b,
    })
}

fn snapshot_side(
    trace: &dyn TraceView,
    warp_idx: usize,
    site_id: u32,
    event_idx: usize,
) -> Option<SnapshotSide> {
    let ring = trace.snapshots(warp_idx)?;
    let at_site: Vec<&SnapshotEntry> = ring
        .chronological()
        .filter(|s| s.site_id == site_id)
        .collect();
    if at_site.is_empty() {
        return None;
    }
    let events = trace.warp(warp_idx).map_or(&[][..], |w| w.events);
    let entry = at_site[nearest_record(events, site_id, event_idx, at_site.len())];
    Some(SnapshotSide {
        seq: entry.seq,
        active_mask: entry.active_mask,
        cmp_predicate: entry.cmp_predicate,
        predicate: predicate_name(entry.cmp_predicate),
        lhs: entry.lhs_values.to_vec(),
        rhs: entry.rhs_values.to_vec(),
    })
}

/// Index among `records` (the newest records of `site_id`, oldest first) that
/// belongs to the visit at `event_idx`.
fn nearest_record(events: &[TraceEvent], site_id: u32, event_idx: usize, records: usize) -> usize {
    let upto = event_idx.min(events.len());
    let visit = events[..upto]
        .iter()
        .filter(|e| e.site_id == site_id)
        .count();
    let visits = visit
        + events[upto..]
            .iter()
            .filter(|e| e.site_id == site_id)
            .count();
    // Records kept are the last `records` visits: visit v is record v - lost.
    let lost = visits.saturating_sub(records);
    visit.saturating_sub(lost).min(records - 1)
}

pub fn history_context(
    a: &dyn TraceView,
    b: &dyn TraceView,
    warp_idx: usize,
    site_id: u32,
) -> Option<HistoryContext> {
    history_context_paired(a, b, (warp_idx, warp_idx), site_id)
}

/// [`history_context`] for warps paired across slots.
pub fn history_context_paired(
    a: &dyn TraceView,
    b: &dyn TraceView,
    (warp_idx, warp_idx_b): (usize, usize),
    site_id: u32,
) -> Option<HistoryContext> {
    let values = |t: &dyn TraceView, warp_idx: usize| -> Vec<HistoryValue> {
        let Some(ring) = t.history(warp_idx) else {
            return Vec::new();
        };
        let all: Vec<HistoryValue> = ring
            .chronological()
            .filter(|h| h.site_id == site_id)
            .map(|h| HistoryValue {
                seq: h.seq,
                value: h.value,
            })
            .collect();
        all[all.len().saturating_sub(HISTORY_VALUES_SHOWN)..].to_vec()
    };
    let (va, vb) = (values(a, warp_idx), values(b, warp_idx_b));
    if va.is_empty() && vb.is_empty() {
        return None;
    }
    Some(HistoryContext {
        warp_idx,
        site_id,
        a: va,
        b: vb,
    })
}

/// One value from the history ring, with the site that recorded it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RecordedValue {
    /// The event's index in its warp's stream: the runtime writes one
    /// history entry per recorded event, numbered like the events.
    pub seq: u32,
    #[serde(serialize_with = "crate::hex::hex32")]
    pub site_id: u32,
    pub value: u32,
}

/// The values each run recorded just before a divergence, oldest first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryBefore {
    pub a: Vec<RecordedValue>,
    pub b: Vec<RecordedValue>,
}

/// The last `n` history values of warp `warp_idx` recorded before event
/// `event_idx` (those the ring still holds; it keeps the newest entries).
pub fn history_before(
    trace: &dyn TraceView,
    warp_idx: usize,
    event_idx: u32,
    n: usize,
) -> Vec<RecordedValue> {
    let Some(ring) = trace.history(warp_idx) else {
        return Vec::new();
    };
    let before: Vec<RecordedValue> = ring
        .chronological()
        .filter(|h| h.seq < event_idx)
        .map(|h| RecordedValue {
            seq: h.seq,
            site_id: h.site_id,
            value: h.value,
        })
        .collect();
    before[before.len().saturating_sub(n)..].to_vec()
}

/// Snapshot of one run at the visit of `site_id` that is event `event_idx`.
pub fn snapshot_at(
    trace: &dyn TraceView,
    warp_idx: usize,
    site_id: u32,
    event_idx: usize,
) -> Option<SnapshotSide> {
    snapshot_side(trace, warp_idx, site_id, event_idx)
}

/// LLVM `CmpInst::Predicate` names.
pub fn predicate_name(raw: u32) -> &'static str {
    const FCMP: [&str; 16] = [
        "fcmp false",
        "fcmp oeq",
        "fcmp ogt",
        "fcmp oge",
        "fcmp olt",
        "fcmp ole",
        "fcmp one",
        "fcmp ord",
        "fcmp uno",
        "fcmp ueq",
        "fcmp ugt",
        "fcmp uge",
        "fcmp ult",
        "fcmp ule",
        "fcmp une",
        "fcmp true",
    ];
    const ICMP: [&str; 10] = [
        "icmp eq", "icmp ne", "icmp ugt", "icmp uge", "icmp ult", "icmp ule", "icmp sgt",
        "icmp sge", "icmp slt", "icmp sle",
    ];
    match raw {
        0..=15 => FCMP[raw as usize],
        32..=41 => ICMP[raw as usize - 32],
        _ => "unknown predicate",
    }
}

/// How to print an operand for a predicate: floats as floats, signed
/// compares as signed, everything else unsigned.
pub fn format_operand(predicate: u32, raw: u32) -> String {
    match predicate {
        0..=15 => format!("{}", f32::from_bits(raw)),
        38..=41 => format!("{}", raw as i32),
        _ => format!("{raw}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(site_id: u32) -> TraceEvent {
        TraceEvent {
            site_id,
            ..TraceEvent::default()
        }
    }

    #[test]
    fn visits_map_to_records_counted_from_the_newest() {
        // Site 5 visited at indices 0, 2, 4, 6; the ring kept the last two.
        let events: Vec<TraceEvent> = [5, 1, 5, 1, 5, 1, 5].map(at).to_vec();
        assert_eq!(nearest_record(&events, 5, 6, 2), 1);
        assert_eq!(nearest_record(&events, 5, 4, 2), 0);
        // Overwritten visits fall back to the oldest surviving record.
        assert_eq!(nearest_record(&events, 5, 0, 2), 0);
        // An index past the stream (extra events on the other side) is clamped.
        assert_eq!(nearest_record(&events, 5, 99, 2), 1);
        // More records than visits (a site seen only in snapshots) stays in range.
        assert_eq!(nearest_record(&events, 9, 3, 3), 0);
    }

    #[test]
    fn predicates_have_llvm_names() {
        assert_eq!(predicate_name(40), "icmp slt");
        assert_eq!(predicate_name(4), "fcmp olt");
        assert_eq!(predicate_name(99), "unknown predicate");
        assert_eq!(format_operand(40, u32::MAX), "-1");
        assert_eq!(format_operand(36, u32::MAX), "4294967295");
        assert_eq!(format_operand(4, 1.5f32.to_bits()), "1.5");
    }
}
