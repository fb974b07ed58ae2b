//! The divergences as CSV (RFC 4180): one row per divergence, for
//! spreadsheets and scripts. Empty cells mean "not applicable".

use crate::report::{DiffReport, DivergenceRecord};
/// Column names, in order.
pub const COLUMNS: [&str; 26] = [
    "warp_idx",
    "warp_idx_b",
    "block_x",
    "block_y",
    "block_z",
    "warp_in_block",
    "event_idx",
    "event_idx_b",
    "kind",
    "site_id",
    "events_a",
    "events_b",
    "side",
    "branch_dir_a",
    "branch_dir_b",
    "active_mask_a",
    "active_mask_b",
    "taken_mask_a",
    "taken_mask_b",
    "value_a",
    "value_b",
    "source_location",
    "function",
    "cause",
    "evidence",
    "history_before",
];

/// Every divergence in `report` (as listed: build without a limit for all).
pub fn divergences_csv(report: &DiffReport) -> String {
    let mut out = COLUMNS.join(",");
    out.push_str("\r\n");
    for d in &report.divergences {
        let cells = row(d);
        let quoted: Vec<String> = cells.iter().map(|c| quote(c)).collect();
        out.push_str(&quoted.join(","));
        out.push_str("\r\n");
    }
    out
}

fn row(d: &DivergenceRecord) -> Vec<String> {
    let opt = |v: Option<u32>| v.map_or(String::new(), |v| v.to_string());
    let hex = |v: Option<u32>| v.map_or(String::new(), |v| format!("{v:#010x}"));
    let history = d.history_before.as_ref().map_or(String::new(), |h| {
        let side = |v: &[crate::context::RecordedValue]| {
            v.iter()
                .map(|r| format!("{}@{:#x}", r.value, r.site_id))
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!("A: {}; B: {}", side(&h.a), side(&h.b))
    });
    vec![
        d.warp_idx.to_string(),
        d.warp_idx_b.to_string(),
        d.block[0].to_string(),
        d.block[1].to_string(),
        d.block[2].to_string(),
        d.warp_in_block.to_string(),
        d.event_idx.to_string(),
        d.event_idx_b.to_string(),
        d.kind.name().to_owned(),
        format!("{:#010x}", d.site_id),
        d.events_a.to_string(),
        d.events_b.to_string(),
        d.side.unwrap_or("").to_owned(),
        opt(d.branch_dir_a.map(u32::from)),
        opt(d.branch_dir_b.map(u32::from)),
        hex(d.active_mask_a),
        hex(d.active_mask_b),
        hex(d.taken_mask_a),
        hex(d.taken_mask_b),
        opt(d.value_a),
        opt(d.value_b),
        d.source_location.clone().unwrap_or_default(),
        d.function.clone().unwrap_or_default(),
        d.cause
            .as_ref()
            .map_or(String::new(), |c| c.kind.name().to_owned()),
        d.cause
            .as_ref()
            .map_or(String::new(), |c| c.evidence.clone()),
        history,
    ]
}

/// Quotes a cell when it holds a comma, quote or line break.
fn quote(cell: &str) -> String {
    if cell.contains([',', '"', '\n', '\r']) {
        let mut q = String::with_capacity(cell.len() + 2);
        q.push('"');
        for c in cell.chars() {
            if c == '"' {
                q.push('"');
            }
            q.push(c);
        }
        q.push('"');
        q
    } else {
        cell.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_with_separators_are_quoted() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
    }
}
