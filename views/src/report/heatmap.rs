//! The block × warp heat map of one launch's divergences, as inline SVG:
//! one row per block (grouped when there are many), one column per warp of
//! a block, darker for more divergences, outlined where a warp overflowed.

use super::html::escape;
use crate::model::Launch;
use std::collections::HashMap;
use std::fmt::Write;

/// Rows drawn at most: larger grids put several blocks in a row.
const MAX_ROWS: u64 = 256;
const LEFT: u64 = 70;
const TOP: u64 = 34;

/// Warps per block of a launch: ceil(threads / 32).
fn warps_per_block(block: [u32; 3]) -> u64 {
    let threads: u64 = block.iter().map(|&d| u64::from(d.max(1))).product();
    threads.div_ceil(32).max(1)
}

/// The SVG, or `None` when the launch has no divergences and no overflow.
pub fn heat_map(launch: &Launch) -> Option<String> {
    let report = launch.report.as_ref()?;
    if report.divergences.is_empty() && report.overflowed_warps.is_empty() {
        return None;
    }
    let wpb = warps_per_block(launch.block);
    let blocks: u64 = launch.grid.iter().map(|&d| u64::from(d.max(1))).product();
    let per_row = blocks.div_ceil(MAX_ROWS).max(1);
    let rows = blocks.div_ceil(per_row);
    // Small grids get larger cells, up to 28 px.
    let cell = if rows > 32 {
        14
    } else {
        (448 / wpb).clamp(14, 28)
    };
    let cell_of = |warp_idx: usize| -> (u64, u64) {
        let w = warp_idx as u64;
        ((w / wpb) / per_row, w % wpb)
    };
    let mut counts: HashMap<(u64, u64), usize> = HashMap::new();
    for d in &report.divergences {
        *counts.entry(cell_of(d.warp_idx)).or_default() += 1;
    }
    let overflowed: HashMap<(u64, u64), usize> =
        report
            .overflowed_warps
            .iter()
            .fold(HashMap::new(), |mut m, o| {
                *m.entry(cell_of(o.warp_idx)).or_default() += 1;
                m
            });
    let max = counts.values().copied().max().unwrap_or(0);
    let width = (LEFT + wpb * cell + 10).max(LEFT + 170);
    let height = TOP + rows * cell + 40;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg class="heat" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="divergences per block and warp">"#
    );
    let _ = write!(
        svg,
        r##"<text x="{LEFT}" y="12" class="axis">warp in block →</text><text x="2" y="{}" class="axis">{} ↓</text>"##,
        TOP - 6,
        if per_row > 1 {
            format!("blocks ×{per_row}")
        } else {
            "block".into()
        }
    );
    let step = if wpb > 16 { 4 } else { 1 };
    for w in (0..wpb).step_by(step) {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" class="tick">{w}</text>"#,
            LEFT + w * cell + 2,
            TOP - 4
        );
    }
    let row_step = (rows / 16).max(1);
    for r in (0..rows).step_by(row_step as usize) {
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>"#,
            LEFT - 4,
            TOP + r * cell + cell - 3,
            r * per_row
        );
    }
    let _ = write!(
        svg,
        r##"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="#eef1f6"/>"##,
        wpb * cell,
        rows * cell
    );
    let mut cells: Vec<(u64, u64)> = counts.keys().chain(overflowed.keys()).copied().collect();
    cells.sort_unstable();
    cells.dedup();
    for (row, warp) in cells {
        let count = counts.get(&(row, warp)).copied().unwrap_or(0);
        let ovf = overflowed.get(&(row, warp)).copied().unwrap_or(0);
        let fill = if count == 0 {
            "#eef1f6".into()
        } else {
            shade(count, max)
        };
        let first_block = row * per_row;
        let blocks_label = if per_row > 1 {
            format!(
                "blocks {first_block}–{}",
                (first_block + per_row - 1).min(blocks - 1)
            )
        } else {
            format!("block {first_block}")
        };
        let mut title = format!("{blocks_label}, warp {warp}: {count} divergence(s)");
        if ovf > 0 {
            title.push_str(", overflowed (events past the cut unknown)");
        }
        let stroke = if ovf > 0 {
            r##" stroke="#7b2cbf" stroke-width="2""##
        } else {
            ""
        };
        let _ = write!(
            svg,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}"{stroke} data-count="{count}"><title>{}</title></rect>"#,
            LEFT + warp * cell + 1,
            TOP + row * cell + 1,
            cell - 2,
            cell - 2,
            escape(&title)
        );
    }
    let legend_y = TOP + rows * cell + 16;
    let _ = write!(
        svg,
        r##"<rect x="{LEFT}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}" class="tick">1</text><rect x="{}" y="{}" width="12" height="12" fill="{}"/><text x="{}" y="{}" class="tick">{max}</text><rect x="{}" y="{}" width="12" height="12" fill="#eef1f6" stroke="#7b2cbf" stroke-width="2"/><text x="{}" y="{}" class="tick">overflowed</text>"##,
        legend_y,
        shade(1, max.max(1)),
        LEFT + 16,
        legend_y + 10,
        LEFT + 40,
        legend_y,
        shade(max.max(1), max.max(1)),
        LEFT + 56,
        legend_y + 10,
        LEFT + 96,
        legend_y,
        LEFT + 112,
        legend_y + 10,
    );
    svg.push_str("</svg>");
    Some(svg)
}

/// Light orange for one divergence to dark red for the most, on a log scale.
fn shade(count: usize, max: usize) -> String {
    let t = if max <= 1 {
        1.0
    } else {
        (count as f64).ln() / (max as f64).ln()
    };
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(253.0, 153.0),
        lerp(187.0, 0.0),
        lerp(132.0, 13.0)
    )
}
