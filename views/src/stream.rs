//! One warp's two event streams, aligned row by row for side-by-side display.
//!
//! The differ reports every gap between re-joins as exactly one divergence
//! and matches everything else one to one, so the alignment is rebuilt from
//! the warp's divergences alone: matched pairs between them, one row per
//! pair for single-event kinds, and the two sides of a region (ExtraEvents,
//! Path) next to each other, the shorter one padded.

use prlx_differ::DivergenceKind;
use prlx_differ::report::DivergenceRecord;

/// Where one divergence lies in both streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub kind: DivergenceKind,
    pub event_idx: u32,
    pub event_idx_b: u32,
    pub events_a: u32,
    pub events_b: u32,
}

impl From<&DivergenceRecord> for Span {
    fn from(d: &DivergenceRecord) -> Span {
        Span {
            kind: d.kind,
            event_idx: d.event_idx,
            event_idx_b: d.event_idx_b,
            events_a: d.events_a,
            events_b: d.events_b,
        }
    }
}

/// One display row: an event of A, of B, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub a: Option<u32>,
    pub b: Option<u32>,
    /// Set on rows inside a divergence.
    pub kind: Option<DivergenceKind>,
    /// The row where that divergence starts.
    pub starts: bool,
}

/// Aligns streams of `len_a` and `len_b` events given the divergences of
/// this warp (any order; other warps' records are ignored by the caller).
pub fn align_rows(len_a: u32, len_b: u32, divergences: &[Span]) -> Vec<Row> {
    let mut sorted: Vec<Span> = divergences.to_vec();
    sorted.sort_by_key(|d| (d.event_idx, d.event_idx_b));
    let mut rows = Vec::with_capacity(len_a.max(len_b) as usize);
    let (mut ia, mut ib) = (0u32, 0u32);
    for d in sorted {
        if d.event_idx < ia || d.event_idx_b < ib {
            continue; // overlaps what is already laid out: not from one alignment
        }
        matched(&mut rows, &mut ia, &mut ib, d.event_idx, d.event_idx_b);
        let (na, nb) = (d.events_a.min(len_a - ia), d.events_b.min(len_b - ib));
        for k in 0..na.max(nb) {
            rows.push(Row {
                a: (k < na).then_some(ia + k),
                b: (k < nb).then_some(ib + k),
                kind: Some(d.kind),
                starts: k == 0,
            });
        }
        ia += na;
        ib += nb;
    }
    matched(&mut rows, &mut ia, &mut ib, len_a, len_b);
    rows
}

/// Pairs events up to `(to_a, to_b)`; any surplus on one side (which an
/// alignment of these divergences never leaves) is shown unpaired.
fn matched(rows: &mut Vec<Row>, ia: &mut u32, ib: &mut u32, to_a: u32, to_b: u32) {
    while *ia < to_a || *ib < to_b {
        let a = (*ia < to_a).then_some(*ia);
        let b = (*ib < to_b).then_some(*ib);
        rows.push(Row {
            a,
            b,
            kind: None,
            starts: false,
        });
        *ia += u32::from(a.is_some());
        *ib += u32::from(b.is_some());
    }
}

/// The row where the divergence at `(event_idx, event_idx_b)` starts.
pub fn row_of(rows: &[Row], event_idx: u32, event_idx_b: u32) -> Option<usize> {
    rows.iter().position(|r| {
        r.starts && (r.a == Some(event_idx) || (r.a.is_none() && r.b == Some(event_idx_b)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn div(kind: DivergenceKind, ia: u32, ib: u32, na: u32, nb: u32) -> Span {
        Span {
            kind,
            event_idx: ia,
            event_idx_b: ib,
            events_a: na,
            events_b: nb,
        }
    }

    #[test]
    fn rebuilds_the_alignment_from_divergences() {
        // A: 10 events; B ran 3 extra events after A's event 4, and event 7
        // of A (10 of B) flipped.
        let extra = div(DivergenceKind::ExtraEvents, 5, 5, 0, 3);
        let flip = div(DivergenceKind::Branch, 7, 10, 1, 1);
        let rows = align_rows(10, 13, &[flip, extra]);
        assert_eq!(rows.len(), 13);
        assert_eq!(
            rows[4],
            Row {
                a: Some(4),
                b: Some(4),
                kind: None,
                starts: false
            }
        );
        assert_eq!(rows[5].a, None);
        assert_eq!((rows[5].b, rows[5].starts), (Some(5), true));
        assert_eq!(rows[7].b, Some(7));
        assert_eq!(
            (rows[8].a, rows[8].b, rows[8].kind),
            (Some(5), Some(8), None)
        );
        assert_eq!(
            (rows[10].a, rows[10].b, rows[10].kind),
            (Some(7), Some(10), Some(DivergenceKind::Branch))
        );
        assert_eq!(
            rows[12],
            Row {
                a: Some(9),
                b: Some(12),
                kind: None,
                starts: false
            }
        );
        assert_eq!(row_of(&rows, 7, 10), Some(10));
        assert_eq!(row_of(&rows, 5, 5), Some(5));
    }

    #[test]
    fn a_path_pairs_both_sides_and_pads_the_shorter() {
        let path = div(DivergenceKind::Path, 2, 2, 3, 1);
        let rows = align_rows(5, 3, &[path]);
        let shown: Vec<(Option<u32>, Option<u32>)> = rows.iter().map(|r| (r.a, r.b)).collect();
        assert_eq!(
            shown,
            [
                (Some(0), Some(0)),
                (Some(1), Some(1)),
                (Some(2), Some(2)),
                (Some(3), None),
                (Some(4), None)
            ]
        );
        assert!(
            rows[2..]
                .iter()
                .all(|r| r.kind == Some(DivergenceKind::Path))
        );
    }
}
