//! The human-readable report: summary line, root-cause candidate, per-site
//! table, lane operands, and the listed divergences.

use crate::align::DivergenceKind;
use crate::context::{HistoryContext, SnapshotContext, SnapshotSide, format_operand};
use crate::report::{DiffReport, DivergenceRecord};
use std::fmt::Write;

/// The note on values that differ where control flow matched.
fn values_differ(w: &mut String, v: &crate::report::ValuesDiffer) {
    let _ = writeln!(
        w,
        "values differ: {} events in {} warps where control flow matched (diff --values lists them)",
        v.events, v.warps
    );
    let _ = writeln!(w, "  first: {}", describe(&v.first));
    let _ = writeln!(w, "  {}", detail(&v.first));
}

/// Renders `report` as text. `listed` caps the divergence listing.
pub fn render_text(report: &DiffReport, listed: usize) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "prlx diff: {} vs {} (kernel {})",
        report.trace_a, report.trace_b, report.kernel
    );
    for warning in &report.warnings {
        let _ = writeln!(w, "warning: {warning}");
    }
    if let Some(filter) = &report.filter {
        let _ = writeln!(
            w,
            "filter: {filter} ({} of {} divergences match)",
            report.total_divergences, report.unfiltered_divergences
        );
    }
    let _ = writeln!(
        w,
        "{} divergences across {} warps at {} sites ({} warps compared, {} overflowed)",
        report.total_divergences,
        report.warps_diverged,
        report.divergent_sites,
        report.warps_compared,
        report.warps_overflowed
    );
    if report.total_divergences == 0 {
        if report.overflowed() {
            let _ = writeln!(
                w,
                "status: unknown (overflowed): no divergence in the recorded events, but not everything was recorded"
            );
            overflowed_warps(w, report);
        } else if let Some(v) = &report.values_differ {
            let _ = writeln!(
                w,
                "status: identical control flow, but recorded values differ"
            );
            values_differ(w, v);
        } else {
            let _ = writeln!(w, "status: identical");
        }
        return out;
    }
    let kinds: Vec<String> = report
        .divergence_breakdown
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(w, "breakdown: {}", kinds.join(", "));
    if let Some(v) = &report.values_differ {
        values_differ(w, v);
    }
    if !report.causes.is_empty() {
        let causes: Vec<String> = report
            .causes
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let _ = writeln!(w, "causes (heuristic): {}", causes.join(", "));
    }
    if let Some(first) = &report.first_divergence {
        let _ = writeln!(w, "\nFirst divergence (root-cause candidate):");
        let _ = writeln!(w, "  {}", describe(first));
        let _ = writeln!(w, "  {}", detail(first));
        if let Some(cause) = &first.cause {
            let _ = writeln!(
                w,
                "  likely cause: {}: {}",
                cause.kind.name(),
                cause.evidence
            );
        }
    }
    sites_table(w, report);
    if let Some(snapshot) = &report.snapshot {
        snapshot_lanes(w, snapshot);
    }
    if let Some(history) = &report.history {
        history_values(w, history);
    }
    divergence_list(w, report, listed);
    overflowed_warps(w, report);
    out
}

/// Overflowed warps listed before eliding the rest.
const OVERFLOW_ROWS: usize = 8;

fn overflowed_warps(w: &mut String, report: &DiffReport) {
    let Some(summary) = &report.overflow else {
        return;
    };
    let _ = writeln!(
        w,
        "\nOverflowed warps ({}; recorded events compared, the rest unknown; raise {} to at least {}):",
        summary.warps, summary.setting, summary.needed_events_per_warp
    );
    let unknown = |from: Option<u32>, n: u32| match from {
        Some(i) if n > 0 => format!("{n} from event {i}"),
        _ => "-".into(),
    };
    let rows: Vec<Vec<String>> = report
        .overflowed_warps
        .iter()
        .take(OVERFLOW_ROWS)
        .map(|o| {
            vec![
                o.warp_idx.to_string(),
                format!("({},{},{})", o.block[0], o.block[1], o.block[2]),
                o.warp_in_block.to_string(),
                format!("{} / {}", o.recorded_a, o.recorded_b),
                format!("{} / {}", o.dropped_a, o.dropped_b),
                unknown(o.unknown_from_a, o.unknown_events_a),
                unknown(o.unknown_from_b, o.unknown_events_b),
            ]
        })
        .collect();
    table(
        w,
        &[
            "warp",
            "block",
            "w",
            "recorded A/B",
            "dropped A/B",
            "unknown in A",
            "unknown in B",
        ],
        &rows,
    );
    if report.overflowed_warps.len() > OVERFLOW_ROWS {
        let _ = writeln!(
            w,
            "  ... {} more overflowed warps",
            report.overflowed_warps.len() - OVERFLOW_ROWS
        );
    }
}

fn location(d: &DivergenceRecord) -> String {
    match (&d.source_location, &d.function) {
        (Some(loc), Some(f)) => format!("{loc} in {f}"),
        (Some(loc), None) => loc.clone(),
        _ => "(no site map entry)".to_owned(),
    }
}

fn describe(d: &DivergenceRecord) -> String {
    format!(
        "warp {} (block ({},{},{}) warp {}), event {} [B: {}]: {} at site {:#010x}  {}",
        d.warp_idx,
        d.block[0],
        d.block[1],
        d.block[2],
        d.warp_in_block,
        d.event_idx,
        d.event_idx_b,
        d.kind.name(),
        d.site_id,
        location(d)
    )
}

fn taken(dir: Option<u8>) -> &'static str {
    match dir {
        Some(0) => "not taken",
        Some(_) => "taken",
        None => "-",
    }
}

/// "3, 8, 17" for the set bits of `lanes`.
fn lane_list(lanes: u32) -> String {
    let set: Vec<String> = (0..32)
        .filter(|l| lanes >> l & 1 != 0)
        .map(|l| l.to_string())
        .collect();
    set.join(", ")
}

fn detail(d: &DivergenceRecord) -> String {
    match d.kind {
        DivergenceKind::Branch => match (d.taken_mask_a, d.taken_mask_b) {
            (Some(ta), Some(tb)) if ta != tb => format!(
                "taken by lanes A: {:#010x}, B: {:#010x}; lanes that went the other way: {} (mask {})",
                ta,
                tb,
                lane_list(ta ^ tb),
                hex(d.active_mask_a)
            ),
            _ => format!(
                "A: {}, B: {} (masks {} / {})",
                taken(d.branch_dir_a),
                taken(d.branch_dir_b),
                hex(d.active_mask_a),
                hex(d.active_mask_b)
            ),
        },
        DivergenceKind::ActiveMask => {
            format!(
                "A mask {}, B mask {}",
                hex(d.active_mask_a),
                hex(d.active_mask_b)
            )
        }
        DivergenceKind::Value => format!(
            "A value {}, B value {}",
            d.value_a.map_or("-".into(), |v| v.to_string()),
            d.value_b.map_or("-".into(), |v| v.to_string())
        ),
        DivergenceKind::ExtraEvents => format!(
            "{} extra event(s): A ran {}, B ran {} before the streams re-join",
            d.extra_events, d.events_a, d.events_b
        ),
        DivergenceKind::Path => format!(
            "paths part and never re-join: {} more event(s) in A, {} in B",
            d.events_a, d.events_b
        ),
    }
}

fn hex(v: Option<u32>) -> String {
    v.map_or("-".into(), |v| format!("{v:#010x}"))
}

/// Left-aligned columns sized to their widest cell.
fn table(w: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.len());
        }
    }
    let line = |w: &mut String, cells: &mut dyn Iterator<Item = &str>| {
        let mut s = String::from(" ");
        for (i, cell) in cells.enumerate() {
            let _ = write!(s, " {cell:<width$}", width = widths[i]);
        }
        let _ = writeln!(w, "{}", s.trim_end());
    };
    line(w, &mut header.iter().copied());
    for row in rows {
        line(w, &mut row.iter().map(String::as_str));
    }
}

fn sites_table(w: &mut String, report: &DiffReport) {
    let _ = writeln!(w, "\nDivergent sites (most divergences first):");
    let rows: Vec<Vec<String>> = report
        .sites
        .iter()
        .enumerate()
        .map(|(rank, s)| {
            let kinds: Vec<String> = s.kinds.iter().map(|(k, n)| format!("{k}:{n}")).collect();
            vec![
                (rank + 1).to_string(),
                format!("{:#010x}", s.site_id),
                s.count.to_string(),
                s.warps.to_string(),
                kinds.join(" "),
                s.source_location.clone().unwrap_or_else(|| "-".into()),
                s.function.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    table(
        w,
        &[
            "rank", "site", "count", "warps", "kinds", "location", "function",
        ],
        &rows,
    );
}

fn snapshot_lanes(w: &mut String, s: &SnapshotContext) {
    let predicate = s.a.as_ref().or(s.b.as_ref()).map_or(0, |x| x.cmp_predicate);
    let name = s.a.as_ref().or(s.b.as_ref()).map_or("", |x| x.predicate);
    let _ = writeln!(
        w,
        "\nLane operands at site {:#010x}, warp {} ({name}; * = lanes that differ):",
        s.site_id, s.warp_idx
    );
    let cell = |side: &Option<SnapshotSide>, lane: usize, lhs: bool| -> String {
        match side {
            Some(x) if x.active_mask & (1 << lane) != 0 => {
                let v = if lhs { x.lhs[lane] } else { x.rhs[lane] };
                format_operand(predicate, v)
            }
            Some(_) => "inactive".into(),
            None => "-".into(),
        }
    };
    let rows: Vec<Vec<String>> = (0..32)
        .map(|lane| {
            let cells = [
                cell(&s.a, lane, true),
                cell(&s.a, lane, false),
                cell(&s.b, lane, true),
                cell(&s.b, lane, false),
            ];
            let differs = cells[0] != cells[2] || cells[1] != cells[3];
            let mut row = vec![format!("{}{lane}", if differs { "*" } else { " " })];
            row.extend(cells);
            row
        })
        .collect();
    table(w, &["lane", "A.lhs", "A.rhs", "B.lhs", "B.rhs"], &rows);
}

fn history_values(w: &mut String, h: &HistoryContext) {
    let list = |v: &[crate::context::HistoryValue]| -> String {
        if v.is_empty() {
            return "-".into();
        }
        v.iter()
            .map(|x| x.value.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        w,
        "\nValues recorded at site {:#010x}, warp {} (oldest first):",
        h.site_id, h.warp_idx
    );
    let _ = writeln!(w, "  A: {}", list(&h.a));
    let _ = writeln!(w, "  B: {}", list(&h.b));
}

/// "T/N" for two runs' branch directions (taken / not taken), "-" where a
/// run has no single event there.
fn directions(d: &DivergenceRecord) -> String {
    let one = |dir: Option<u8>| match dir {
        Some(0) => "N",
        Some(_) => "T",
        None => "-",
    };
    if d.branch_dir_a.is_none() && d.branch_dir_b.is_none() {
        return "-".into();
    }
    format!("{}/{}", one(d.branch_dir_a), one(d.branch_dir_b))
}

/// Active masks of both runs, and the taken masks when recorded.
fn masks(d: &DivergenceRecord) -> String {
    let short = |v: Option<u32>| v.map_or("-".into(), |v| format!("{v:08x}"));
    if d.active_mask_a.is_none() && d.active_mask_b.is_none() {
        return "-".into();
    }
    let mut s = format!("{}/{}", short(d.active_mask_a), short(d.active_mask_b));
    if d.taken_mask_a.is_some() || d.taken_mask_b.is_some() {
        let _ = write!(
            s,
            " taken {}/{}",
            short(d.taken_mask_a),
            short(d.taken_mask_b)
        );
    }
    s
}

fn divergence_list(w: &mut String, report: &DiffReport, listed: usize) {
    let shown = report.divergences.len().min(listed);
    let _ = writeln!(
        w,
        "\nDivergences (showing {shown} of {}; dir T = taken, N = not taken, A/B; masks A/B):",
        report.total_divergences
    );
    let remapped = report
        .divergences
        .iter()
        .any(|d| d.warp_idx != d.warp_idx_b);
    let rows: Vec<Vec<String>> = report.divergences[..shown]
        .iter()
        .map(|d| {
            let warp = if remapped {
                format!("{}>{}", d.warp_idx, d.warp_idx_b)
            } else {
                d.warp_idx.to_string()
            };
            vec![
                warp,
                format!("({},{},{})", d.block[0], d.block[1], d.block[2]),
                d.warp_in_block.to_string(),
                d.event_idx.to_string(),
                d.event_idx_b.to_string(),
                d.kind.name().to_string(),
                format!("{:#010x}", d.site_id),
                directions(d),
                masks(d),
                if d.kind == DivergenceKind::ExtraEvents {
                    format!("{} ({})", d.extra_events, d.side.unwrap_or("-"))
                } else {
                    "-".into()
                },
                d.source_location.clone().unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    table(
        w,
        &[
            "warp", "block", "w", "event", "event_b", "kind", "site", "dir", "masks", "extra",
            "location",
        ],
        &rows,
    );
    let annotated = report.divergences[..shown]
        .iter()
        .filter(|d| d.cause.is_some() || d.history_before.is_some());
    for d in annotated {
        let _ = writeln!(
            w,
            "  warp {} event {} ({} at {:#010x}):",
            d.warp_idx,
            d.event_idx,
            d.kind.name(),
            d.site_id
        );
        if let Some(cause) = &d.cause {
            let _ = writeln!(w, "    cause: {}: {}", cause.kind.name(), cause.evidence);
        }
        if let Some(h) = &d.history_before {
            let values = |v: &[crate::context::RecordedValue]| -> String {
                if v.is_empty() {
                    return "(none kept)".into();
                }
                v.iter()
                    .map(|r| format!("{}@{:#x}", r.value, r.site_id))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            let _ = writeln!(w, "    recorded before, A: {}", values(&h.a));
            let _ = writeln!(w, "    recorded before, B: {}", values(&h.b));
        }
    }
}
