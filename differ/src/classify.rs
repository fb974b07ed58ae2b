//! A heuristic cause for each divergence, with the evidence it rests on.
//!
//! The rules look at the divergence itself, the operand snapshot of the
//! compare that decided it (when the traces carry snapshots), and the
//! `WINDOW` events each run recorded just before it, paired backwards from
//! the divergence (`a[i-k]` with `b[j-k]`, both streams agree there up to
//! values, or the aligner would have parted them earlier). The first rule
//! that matches wins:
//!
//! 1. **floating-point ordering or precision**: the deciding compare is a
//!    float compare (`fcmp`) and on every lane whose operands differ, A's and
//!    B's operands are finite and within a relative `FP_TOLERANCE` of each
//!    other; or a Value divergence whose two values, read as `f32`, are
//!    normal and that close (a float reduction or atomic add summed in
//!    another order).
//! 2. **schedule-sensitive / race**: the divergence is at an atomic, or an
//!    atomic in the window (same site in both runs) returned different
//!    values: other threads' updates landed in another order.
//! 3. **loop-bound change**: extra events on one side that are whole extra
//!    iterations (the region repeats with a period whose sites are exactly
//!    the events just before it, i.e. the loop body ran more times), or a
//!    branch that flipped at a site this warp had already reached at least
//!    twice before in both runs (a loop condition); with a snapshot, which
//!    operand changed (the bound or the counter) is named.
//! 4. **memory ordering**: a store (shared or global) in the window, or at
//!    the divergence, wrote different values in the two runs, while every
//!    branch and atomic in the window agrees: memory handed the warp a
//!    different value with identical control flow before it (a read that
//!    raced a write, a missing barrier or fence; or different input data,
//!    which the launch arguments tell apart).
//! 5. **data-dependent control flow**: a branch (or a divergent region that
//!    starts at a branch) whose compare operands differ between the runs;
//!    without a snapshot, a branch that flipped with identical events before
//!    it.
//!
//! Anything else is `unclassified`, with what was looked at.

use crate::align::DivergenceKind;
pub use crate::cause::{Cause, CauseKind};
use crate::context::{SnapshotSide, format_operand, predicate_name, snapshot_at};
use crate::record::DivergenceRecord;
use crate::view::TraceView;
use prlx_trace::{EventType, TraceEvent};

/// Events before a divergence the rules look at.
pub const WINDOW: usize = 16;

/// Largest relative difference between two floats still read as the same
/// value computed in another order or precision.
pub const FP_TOLERANCE: f32 = 1e-4;

/// Longest loop body (in events) rule 3 looks for.
const MAX_PERIOD: usize = 64;

/// What the rules see of one divergence.
struct Scene<'t> {
    d: &'t DivergenceRecord,
    a: &'t [TraceEvent],
    b: &'t [TraceEvent],
    snap_a: Option<SnapshotSide>,
    snap_b: Option<SnapshotSide>,
}

impl Scene<'_> {
    fn at_a(&self) -> Option<&TraceEvent> {
        self.a.get(self.d.event_idx as usize)
    }

    fn at_b(&self) -> Option<&TraceEvent> {
        self.b.get(self.d.event_idx_b as usize)
    }

    /// The window's event pairs, nearest first: (distance, A's, B's).
    fn window(&self) -> impl Iterator<Item = (usize, &TraceEvent, &TraceEvent)> {
        let (ia, ib) = (self.d.event_idx as usize, self.d.event_idx_b as usize);
        (1..=WINDOW.min(ia).min(ib)).filter_map(move |k| {
            let (x, y) = (self.a.get(ia - k)?, self.b.get(ib - k)?);
            (x.site_id == y.site_id && x.event_type == y.event_type).then_some((k, x, y))
        })
    }

    /// Lanes active in both snapshots whose operands differ.
    fn differing_lanes(&self) -> Vec<usize> {
        match (&self.snap_a, &self.snap_b) {
            (Some(x), Some(y)) => (0..32)
                .filter(|&l| x.active_mask & y.active_mask & (1 << l) != 0)
                .filter(|&l| x.lhs[l] != y.lhs[l] || x.rhs[l] != y.rhs[l])
                .collect(),
            _ => Vec::new(),
        }
    }
}

fn events(t: &dyn TraceView, w: usize) -> &[TraceEvent] {
    t.warp(w).map_or(&[][..], |w| w.events)
}

fn is(e: &TraceEvent, ty: EventType) -> bool {
    e.event_type == ty as u8
}

fn is_store(e: &TraceEvent) -> bool {
    is(e, EventType::SharedStore) || is(e, EventType::GlobalStore)
}

fn type_name(e: &TraceEvent) -> &'static str {
    EventType::from_u8(e.event_type).map_or("event", EventType::name)
}

/// Classifies divergence `d` between warp `d.warp_idx` of A and
/// `d.warp_idx_b` of B.
pub fn classify(a: &dyn TraceView, b: &dyn TraceView, d: &DivergenceRecord) -> Cause {
    let scene = Scene {
        d,
        a: events(a, d.warp_idx),
        b: events(b, d.warp_idx_b),
        snap_a: snapshot_at(a, d.warp_idx, d.site_id, d.event_idx as usize),
        snap_b: snapshot_at(b, d.warp_idx_b, d.site_id, d.event_idx_b as usize),
    };
    let rules: [fn(&Scene) -> Option<Cause>; 5] = [
        floating_point,
        schedule_sensitive,
        loop_bound,
        memory_ordering,
        data_dependent,
    ];
    rules.iter().find_map(|rule| rule(&scene)).unwrap_or_else(|| Cause {
        kind: CauseKind::Unclassified,
        evidence: format!(
            "{} at site {:#010x}: no rule matched (no float compare, atomic, loop shape, differing store or operand{})",
            d.kind.name(),
            d.site_id,
            if scene.snap_a.is_none() { "; no operand snapshot" } else { "" }
        ),
    })
}

/// Relative closeness of two floats, and their distance in ULPs.
fn close_floats(x: f32, y: f32) -> Option<u32> {
    if !x.is_finite() || !y.is_finite() || x == y {
        return None;
    }
    let scale = x.abs().max(y.abs());
    if (x - y).abs() > FP_TOLERANCE * scale {
        return None;
    }
    // Ordered integer images of the floats: adjacent floats differ by one.
    let ordered = |v: f32| {
        let bits = v.to_bits() as i32;
        if bits < 0 { i32::MIN - bits } else { bits }
    };
    Some(ordered(x).abs_diff(ordered(y)))
}

fn floating_point(s: &Scene) -> Option<Cause> {
    let float_compare = match (&s.snap_a, &s.snap_b) {
        (Some(x), Some(y)) if x.cmp_predicate <= 15 => Some((x, y)),
        _ => None,
    };
    if let Some((x, y)) = float_compare {
        let lanes = s.differing_lanes();
        let first = *lanes.first()?;
        let mut ulps = 0;
        for &l in &lanes {
            for (p, q) in [(x.lhs[l], y.lhs[l]), (x.rhs[l], y.rhs[l])] {
                if p != q {
                    ulps = ulps.max(close_floats(f32::from_bits(p), f32::from_bits(q))?);
                }
            }
        }
        let op = |side: &SnapshotSide| {
            format!(
                "{} {}",
                format_operand(side.cmp_predicate, side.lhs[first]),
                format_operand(side.cmp_predicate, side.rhs[first])
            )
        };
        return Some(Cause {
            kind: CauseKind::FloatingPoint,
            evidence: format!(
                "{} on {} lane(s): operands within {} ULP of each other (lane {first}: A {}, B {})",
                predicate_name(x.cmp_predicate),
                lanes.len(),
                ulps,
                op(x),
                op(y)
            ),
        });
    }
    if s.d.kind == DivergenceKind::Value {
        let (x, y) = (s.d.value_a?, s.d.value_b?);
        let (fx, fy) = (f32::from_bits(x), f32::from_bits(y));
        if fx.is_normal() && fy.is_normal() {
            let ulps = close_floats(fx, fy)?;
            return Some(Cause {
                kind: CauseKind::FloatingPoint,
                evidence: format!(
                    "{} values as f32: A {fx}, B {fy}, {ulps} ULP apart",
                    s.at_a().map_or("recorded", type_name)
                ),
            });
        }
    }
    None
}

fn schedule_sensitive(s: &Scene) -> Option<Cause> {
    let here = [s.at_a(), s.at_b()];
    if here.iter().flatten().any(|e| is(e, EventType::Atomic)) {
        let values = match (s.at_a(), s.at_b()) {
            (Some(x), Some(y)) if x.site_id == y.site_id => {
                format!(" and returned {} in A, {} in B", x.value_a, y.value_a)
            }
            _ => String::new(),
        };
        return Some(Cause {
            kind: CauseKind::ScheduleSensitive,
            evidence: format!(
                "the divergence is at an atomic (site {:#010x}){values}: the order of updates from other threads differed",
                s.d.site_id
            ),
        });
    }
    let (k, x, y) = s
        .window()
        .find(|(_, x, y)| is(x, EventType::Atomic) && x.value_a != y.value_a)?;
    Some(Cause {
        kind: CauseKind::ScheduleSensitive,
        evidence: format!(
            "the atomic at site {:#010x}, {k} event(s) before, returned {} in A and {} in B: other threads' updates landed in another order",
            x.site_id, x.value_a, y.value_a
        ),
    })
}

fn loop_bound(s: &Scene) -> Option<Cause> {
    let d = s.d;
    if d.kind == DivergenceKind::ExtraEvents && (d.events_a == 0) != (d.events_b == 0) {
        let (side, stream, start, len) = if d.events_a > 0 {
            ("A", s.a, d.event_idx as usize, d.events_a as usize)
        } else {
            ("B", s.b, d.event_idx_b as usize, d.events_b as usize)
        };
        let region = stream.get(start..start + len)?;
        let period = (1..=MAX_PERIOD.min(len).min(start)).find(|&p| {
            len % p == 0
                && region
                    .iter()
                    .enumerate()
                    .all(|(k, e)| e.site_id == stream[start - p + k % p].site_id)
        })?;
        return Some(Cause {
            kind: CauseKind::LoopBound,
            evidence: format!(
                "{side} ran {} more iteration(s) of a {period}-event loop body (sites {}) before the runs re-join",
                len / period,
                sites(&region[..period])
            ),
        });
    }
    if d.kind != DivergenceKind::Branch {
        return None;
    }
    let visits = |stream: &[TraceEvent], upto: u32| {
        stream[..(upto as usize).min(stream.len())]
            .iter()
            .filter(|e| e.site_id == d.site_id)
            .count()
    };
    let (va, vb) = (visits(s.a, d.event_idx), visits(s.b, d.event_idx_b));
    if va < 2 || vb < 2 {
        return None;
    }
    let operands = match (&s.snap_a, &s.snap_b, s.differing_lanes().first()) {
        (Some(x), Some(y), Some(&l)) => {
            let fmt = |v| format_operand(x.cmp_predicate, v);
            match (x.lhs[l] == y.lhs[l], x.rhs[l] == y.rhs[l]) {
                (true, false) => format!(
                    "; lane {l}: the bound changed from {} to {} (counter {})",
                    fmt(x.rhs[l]),
                    fmt(y.rhs[l]),
                    fmt(x.lhs[l])
                ),
                (false, true) => format!(
                    "; lane {l}: the counter differs ({} vs {}) against bound {}",
                    fmt(x.lhs[l]),
                    fmt(y.lhs[l]),
                    fmt(x.rhs[l])
                ),
                _ => format!(
                    "; lane {l}: both operands differ ({} {} vs {} {})",
                    fmt(x.lhs[l]),
                    fmt(x.rhs[l]),
                    fmt(y.lhs[l]),
                    fmt(y.rhs[l])
                ),
            }
        }
        _ => String::new(),
    };
    Some(Cause {
        kind: CauseKind::LoopBound,
        evidence: format!(
            "a loop condition: site {:#010x} was reached {va} time(s) before in A and {vb} in B, then went {} in A and {} in B{operands}",
            d.site_id,
            direction(d.branch_dir_a),
            direction(d.branch_dir_b)
        ),
    })
}

fn memory_ordering(s: &Scene) -> Option<Cause> {
    let control_agrees = s.window().all(|(_, x, y)| {
        let branch_same = !is(x, EventType::Branch) || x.branch_dir == y.branch_dir;
        let atomic_same = !is(x, EventType::Atomic) || x.value_a == y.value_a;
        branch_same && atomic_same
    });
    if !control_agrees {
        return None;
    }
    let differing_store = match (s.at_a(), s.at_b()) {
        (Some(x), Some(y)) if is_store(x) && x.site_id == y.site_id && x.value_a != y.value_a => {
            Some((x, y))
        }
        _ => None,
    };
    if let Some((x, y)) = differing_store {
        return Some(Cause {
            kind: CauseKind::MemoryOrdering,
            evidence: format!(
                "the {} at site {:#010x} wrote {} in A and {} in B after identical control flow: the value came from memory that held something else (a read racing a write, a missing barrier or fence; or different input data)",
                type_name(x),
                x.site_id,
                x.value_a,
                y.value_a
            ),
        });
    }
    let (k, x, y) = s
        .window()
        .find(|(_, x, y)| is_store(x) && x.value_a != y.value_a)?;
    Some(Cause {
        kind: CauseKind::MemoryOrdering,
        evidence: format!(
            "the {} at site {:#010x}, {k} event(s) before, wrote {} in A and {} in B with identical control flow before it: memory supplied a different value (a read racing a write, a missing barrier or fence; or different input data)",
            type_name(x),
            x.site_id,
            x.value_a,
            y.value_a
        ),
    })
}

fn data_dependent(s: &Scene) -> Option<Cause> {
    let starts_at_branch = match s.d.kind {
        DivergenceKind::Branch => true,
        DivergenceKind::Path | DivergenceKind::ExtraEvents => {
            matches!((s.at_a(), s.at_b()), (Some(x), Some(y)) if x.site_id == y.site_id && is(x, EventType::Branch))
        }
        _ => false,
    };
    let lanes = s.differing_lanes();
    if let (Some(x), Some(y), Some(&l)) = (&s.snap_a, &s.snap_b, lanes.first()) {
        let fmt = |side: &SnapshotSide| {
            format!(
                "{} {} {}",
                format_operand(side.cmp_predicate, side.lhs[l]),
                predicate_name(side.cmp_predicate),
                format_operand(side.cmp_predicate, side.rhs[l])
            )
        };
        return Some(Cause {
            kind: CauseKind::DataDependent,
            evidence: format!(
                "the compare deciding the branch saw other operands on {} lane(s) (lane {l}: A {}, B {})",
                lanes.len(),
                fmt(x),
                fmt(y)
            ),
        });
    }
    if !starts_at_branch {
        return None;
    }
    Some(Cause {
        kind: CauseKind::DataDependent,
        evidence: format!(
            "the branch at site {:#010x} went {} in A and {} in B after identical events; no operand snapshot (record with PRLX_SNAPSHOT_DEPTH) to show the values",
            s.d.site_id,
            direction(s.at_a().map(|e| e.branch_dir)),
            direction(s.at_b().map(|e| e.branch_dir))
        ),
    })
}

fn direction(dir: Option<u8>) -> &'static str {
    match dir {
        Some(0) => "not taken",
        Some(_) => "taken",
        None => "elsewhere",
    }
}

fn sites(events: &[TraceEvent]) -> String {
    let shown: Vec<String> = events
        .iter()
        .take(4)
        .map(|e| format!("{:#x}", e.site_id))
        .collect();
    if events.len() > 4 {
        format!("{} …", shown.join(" "))
    } else {
        shown.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_close_within_the_tolerance_only() {
        assert_eq!(close_floats(1.0, 1.0), None);
        assert_eq!(
            close_floats(1.0, f32::from_bits(1.0f32.to_bits() + 3)),
            Some(3)
        );
        assert!(close_floats(1000.0, 1000.05).is_some());
        assert_eq!(close_floats(1000.0, 1000.2), None);
        assert_eq!(close_floats(1.0, 1.01), None);
        assert_eq!(close_floats(f32::NAN, 1.0), None);
        assert_eq!(
            close_floats(-1e-3, f32::from_bits((-1e-3f32).to_bits() + 2)),
            Some(2)
        );
    }
}
