//! Chrome Trace / Perfetto export of the divergences: one process per block,
//! one thread per warp, an "X" slice per divergence on the event-index axis,
//! and a "C" counter track per divergent site (cumulative divergences).

use crate::report::DiffReport;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The `traceEvents` document for `report` (every divergence, not just listed ones:
/// build the report without a listing limit).
pub fn chrome_trace(report: &DiffReport) -> Value {
    let mut events = Vec::new();
    let mut blocks: BTreeMap<u32, [u32; 3]> = BTreeMap::new();
    let mut warps: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for d in &report.divergences {
        blocks.insert(d.block_linear, d.block);
        warps.insert((d.block_linear, d.warp_in_block), d.warp_idx);
        let name = match &d.source_location {
            Some(loc) => format!("{} @ {loc}", d.kind.name()),
            None => format!("{} @ {:#010x}", d.kind.name(), d.site_id),
        };
        events.push(json!({
            "name": name,
            "cat": d.kind.name(),
            "ph": "X",
            "pid": d.block_linear,
            "tid": d.warp_in_block,
            "ts": d.event_idx,
            "dur": d.events_a.max(d.events_b).max(1),
            "args": {
                "warp_idx": d.warp_idx,
                "event_idx": d.event_idx,
                "event_idx_b": d.event_idx_b,
                "site_id": format!("{:#010x}", d.site_id),
                "extra_events": d.extra_events,
                "source_location": d.source_location,
            },
        }));
    }
    for (linear, b) in &blocks {
        events.push(json!({
            "name": "process_name", "ph": "M", "pid": linear,
            "args": {"name": format!("block ({},{},{})", b[0], b[1], b[2])},
        }));
    }
    for ((linear, warp), idx) in &warps {
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": linear, "tid": warp,
            "args": {"name": format!("warp {warp} (slot {idx})")},
        }));
    }
    // Counters live in their own process, after the last block.
    let counter_pid = blocks.keys().next_back().map_or(0, |b| b + 1);
    events.push(json!({
        "name": "process_name", "ph": "M", "pid": counter_pid,
        "args": {"name": "divergences per site"},
    }));
    let mut by_site: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for d in &report.divergences {
        by_site.entry(d.site_id).or_default().push(d.event_idx);
    }
    for (site, mut at) in by_site {
        at.sort_unstable();
        let label = report
            .sites
            .iter()
            .find(|s| s.site_id == site)
            .and_then(|s| s.source_location.clone())
            .unwrap_or_else(|| format!("{site:#010x}"));
        for (n, ts) in at.iter().enumerate() {
            events.push(json!({
                "name": format!("site {label}"), "ph": "C", "pid": counter_pid, "ts": ts,
                "args": {"divergences": n + 1},
            }));
        }
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}
