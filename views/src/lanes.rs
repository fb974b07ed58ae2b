//! The 32 lanes at one divergence: which were active and which took the
//! branch in each run, and the compare operands each lane saw (snapshot
//! ring), with the lanes that differ picked out.

use prlx_differ::context::{SnapshotContext, format_operand, snapshot_context_paired};
use prlx_differ::report::DivergenceRecord;
use prlx_trace::TraceFile;

pub const LANES: usize = 32;

/// One row of the lane grid: a mask or an operand per lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneRow {
    pub label: String,
    pub cells: LaneCells,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LaneCells {
    /// One bit per lane.
    Mask(u32),
    /// One formatted operand per lane; `None` for lanes that were inactive.
    Values(Vec<Option<String>>),
}

/// Everything known about the lanes at one divergence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneEvidence {
    pub rows: Vec<LaneRow>,
    /// Lanes whose masks or operands differ between the runs.
    pub differing: u32,
    /// e.g. "icmp sgt", when operands were recorded.
    pub predicate: Option<&'static str>,
    /// Why operands are missing, when they are.
    pub note: Option<String>,
}

impl LaneEvidence {
    /// From the record's masks and, when both traces are at hand and carry
    /// snapshots, the operands of that very visit of the site.
    pub fn of(d: &DivergenceRecord, traces: Option<(&TraceFile, &TraceFile)>) -> LaneEvidence {
        let mut evidence = LaneEvidence::default();
        let masks = [
            ("active A", d.active_mask_a),
            ("active B", d.active_mask_b),
            ("taken A", d.taken_mask_a),
            ("taken B", d.taken_mask_b),
        ];
        for pair in masks.chunks(2) {
            if let [(la, Some(ma)), (lb, Some(mb))] = pair {
                evidence.differing |= ma ^ mb;
                evidence.rows.push(mask_row(la, *ma));
                evidence.rows.push(mask_row(lb, *mb));
            } else {
                for (label, mask) in pair {
                    if let Some(m) = mask {
                        evidence.rows.push(mask_row(label, *m));
                    }
                }
            }
        }
        let snapshot = traces.and_then(|(a, b)| {
            snapshot_context_paired(
                a,
                b,
                (d.warp_idx, d.warp_idx_b),
                d.site_id,
                d.event_idx as usize,
                d.event_idx_b as usize,
            )
        });
        match snapshot {
            Some(s) => evidence.add_operands(&s),
            None => {
                evidence.note = Some(if traces.is_none() {
                    "operands: traces not open".into()
                } else {
                    "no operands recorded here (capture with PRLX_SNAPSHOT_DEPTH and compile with --snapshots)".into()
                });
            }
        }
        evidence
    }

    fn add_operands(&mut self, s: &SnapshotContext) {
        let sides = [("A", s.a.as_ref()), ("B", s.b.as_ref())];
        let mut per_side = Vec::new();
        for (name, side) in sides {
            let Some(side) = side else { continue };
            self.predicate.get_or_insert(side.predicate);
            let fmt = |values: &[u32]| -> Vec<Option<String>> {
                (0..LANES)
                    .map(|lane| {
                        let active = side.active_mask & (1 << lane) != 0;
                        let v = values.get(lane).copied()?;
                        active.then(|| format_operand(side.cmp_predicate, v))
                    })
                    .collect()
            };
            let (lhs, rhs) = (fmt(&side.lhs), fmt(&side.rhs));
            per_side.push((lhs.clone(), rhs.clone()));
            self.rows.push(LaneRow {
                label: format!("lhs {name}"),
                cells: LaneCells::Values(lhs),
            });
            self.rows.push(LaneRow {
                label: format!("rhs {name}"),
                cells: LaneCells::Values(rhs),
            });
        }
        if let [(la, ra), (lb, rb)] = &per_side[..] {
            for lane in 0..LANES {
                if la[lane] != lb[lane] || ra[lane] != rb[lane] {
                    self.differing |= 1 << lane;
                }
            }
        } else {
            self.note = Some(format!(
                "operands recorded in run {} only",
                if s.a.is_some() { "A" } else { "B" }
            ));
        }
    }

    /// The lanes that differ, as "8, 12".
    pub fn differing_lanes(&self) -> String {
        let lanes: Vec<String> = (0..LANES)
            .filter(|l| self.differing & (1 << l) != 0)
            .map(|l| l.to_string())
            .collect();
        lanes.join(", ")
    }

    /// The operands of one lane in both runs, e.g. `A: 9 vs 20   B: 27 vs 20`.
    pub fn operands_of(&self, lane: usize) -> Option<String> {
        let value = |label: &str| -> Option<String> {
            self.rows
                .iter()
                .find(|r| r.label == label)
                .and_then(|r| match &r.cells {
                    LaneCells::Values(v) => v.get(lane).cloned().flatten(),
                    LaneCells::Mask(_) => None,
                })
        };
        let side = |s: &str| -> Option<String> {
            Some(format!(
                "{} vs {}",
                value(&format!("lhs {s}"))?,
                value(&format!("rhs {s}"))?
            ))
        };
        match (side("A"), side("B")) {
            (None, None) => None,
            (a, b) => Some(format!(
                "A: {}   B: {}",
                a.unwrap_or_else(|| "-".into()),
                b.unwrap_or_else(|| "-".into())
            )),
        }
    }
}

fn mask_row(label: &str, mask: u32) -> LaneRow {
    LaneRow {
        label: label.to_owned(),
        cells: LaneCells::Mask(mask),
    }
}
