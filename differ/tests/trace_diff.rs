//! Whole-trace diffs over files written by the trace crate's builder:
//! overflow handling, first-divergence ordering, launch mismatches, JSON
//! names, values, and the snapshot/history evidence.

use prlx_differ::{AlignOptions, DiffOptions, DiffReport, DivergenceKind, diff_traces};
use prlx_trace::{Compression, EventType, SnapshotEntry, TraceBuilder, TraceEvent, TraceFile};
use std::path::Path;

fn ev(site_id: u32, dir: u8, value: u32) -> TraceEvent {
    TraceEvent {
        site_id,
        event_type: EventType::Branch as u8,
        branch_dir: dir,
        _reserved: 0,
        active_mask: u32::MAX,
        value_a: value,
    }
}

/// 4 blocks x 64 threads = 8 warps, each running the same 40 events,
/// then `edit` gets to change individual warps.
fn write_trace(dir: &Path, name: &str, edit: impl Fn(usize, &mut Vec<TraceEvent>)) -> TraceFile {
    let mut b = TraceBuilder::new("kern", [4, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(64);
    for w in 0..b.num_warps() {
        let mut events: Vec<TraceEvent> = (0..40)
            .map(|i| ev(0x100 + i % 7, (i % 2) as u8, i))
            .collect();
        edit(w, &mut events);
        for e in events {
            b.push_event(w, e).unwrap();
        }
    }
    let path = dir.join(name);
    b.write_file(&path, Compression::None).unwrap();
    TraceFile::open(&path).unwrap()
}

fn report(a: &TraceFile, b: &TraceFile, values: bool) -> DiffReport {
    let opts = DiffOptions {
        align: AlignOptions {
            compare_values: values,
            ..AlignOptions::default()
        },
    };
    DiffReport::build(a, b, &diff_traces(a, b, &opts), None)
}

#[test]
fn identical_traces_report_identical() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    let b = write_trace(dir.path(), "b.prlx", |_, _| {});
    let r = report(&a, &b, true);
    assert_eq!(r.status, "identical");
    assert_eq!(
        (r.total_divergences, r.warps_compared, r.warps_diverged),
        (0, 8, 0)
    );
    assert!(r.first_divergence.is_none() && r.warnings.is_empty());
}

#[test]
fn first_divergence_is_lowest_event_then_block_then_warp() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    // Warp slots: block = w / 2, warp_in_block = w % 2.
    let b = write_trace(dir.path(), "b.prlx", |w, events| match w {
        1 => events[20].branch_dir ^= 1, // block 0, later event
        7 => events[9].branch_dir ^= 1,  // block 3, event 9
        5 => events[9].active_mask = 1,  // block 2, event 9 <- first
        4 => events[12].branch_dir ^= 1, // block 2, later event
        _ => {}
    });
    let r = report(&a, &b, false);
    assert_eq!(
        (r.status, r.total_divergences, r.warps_diverged),
        ("diverged", 4, 4)
    );
    let first = r.first_divergence.as_ref().unwrap();
    assert_eq!(
        (first.warp_idx, first.event_idx, first.kind),
        (5, 9, DivergenceKind::ActiveMask)
    );
    assert_eq!((first.block, first.warp_in_block), ([2, 0, 0], 1));
    // The list is in warp order.
    let warps: Vec<usize> = r.divergences.iter().map(|d| d.warp_idx).collect();
    assert_eq!(warps, vec![1, 4, 5, 7]);
    assert_eq!(r.divergence_breakdown["Branch"], 3);
    assert_eq!(r.divergence_breakdown["ActiveMask"], 1);
    assert_eq!(r.divergence_breakdown["Path"], 0);
}

#[test]
fn ties_on_event_index_break_by_block_then_warp() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    let b = write_trace(dir.path(), "b.prlx", |w, events| {
        if w == 3 || w == 6 || w == 2 {
            events[15].branch_dir ^= 1;
        }
    });
    let first = report(&a, &b, false).first_divergence.unwrap();
    assert_eq!(
        (first.warp_idx, first.block, first.warp_in_block),
        (2, [1, 0, 0], 0)
    );
}

#[test]
fn overflowed_warps_are_diffed_over_what_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    let b = write_trace(dir.path(), "b.prlx", |w, events| {
        if w == 3 {
            // 30 extra events past the 64-slot buffer: the device drops 6.
            events.extend((0..30).map(|i| ev(0x900 + i, 0, 0)));
        }
    });
    let r = report(&a, &b, false);
    // A's warp 3 is complete, so the 24 events B recorded past A's end are
    // extra events for certain, even though B lost 6 more.
    assert_eq!(r.status, "diverged", "{r:#?}");
    assert_eq!(
        (r.warps_overflowed, r.warps_compared, r.total_divergences),
        (1, 8, 1)
    );
    let d = &r.divergences[0];
    assert_eq!(
        (d.kind, d.event_idx, d.events_b),
        (DivergenceKind::ExtraEvents, 40, 24)
    );
    let o = r.overflowed_warps[0];
    assert_eq!(o.warp_idx, 3);
    assert_eq!((o.dropped_a, o.dropped_b), (0, 6));
    assert_eq!((o.recorded_a, o.recorded_b), (40, 64));
    assert_eq!(o.unknown_from_a, None);
    let summary = r.overflow.as_ref().unwrap();
    assert_eq!(summary.needed_events_per_warp, 70);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("PRLX_EVENTS_PER_WARP to at least 70"))
    );
}

#[test]
fn values_only_with_the_option() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    let b = write_trace(dir.path(), "b.prlx", |w, events| {
        if w == 0 {
            events[3].value_a = 999;
        }
    });
    assert_eq!(report(&a, &b, false).status, "identical");
    let r = report(&a, &b, true);
    let first = r.first_divergence.unwrap();
    assert_eq!(
        (first.kind, first.event_idx, first.value_a, first.value_b),
        (DivergenceKind::Value, 3, Some(3), Some(999))
    );
}

#[test]
fn launch_mismatches_are_warnings_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    let mut b = TraceBuilder::new("other_kernel", [2, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(64);
    for w in 0..b.num_warps() {
        for i in 0..40 {
            b.push_event(w, ev(0x100 + i % 7, (i % 2) as u8, i))
                .unwrap();
        }
    }
    let path = dir.path().join("b.prlx");
    b.write_file(&path, Compression::None).unwrap();
    let b = TraceFile::open(&path).unwrap();
    let r = report(&a, &b, false);
    assert_eq!((r.status, r.warps_compared), ("identical", 4));
    let all = r.warnings.join("\n");
    assert!(all.contains("kernel names differ"), "{all}");
    assert!(all.contains("launch shapes differ"), "{all}");
    assert!(all.contains("warp counts differ"), "{all}");
}

#[test]
fn json_uses_prlx_field_names() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_trace(dir.path(), "a.prlx", |_, _| {});
    let b = write_trace(dir.path(), "b.prlx", |w, events| {
        if w == 2 {
            events.splice(10..10, [ev(0x999, 0, 0), ev(0x998, 0, 0), ev(0x997, 0, 0)]);
        }
    });
    let json: serde_json::Value = serde_json::from_str(&report(&a, &b, false).to_json()).unwrap();
    for key in [
        "status",
        "total_divergences",
        "warps_compared",
        "warps_diverged",
        "divergence_breakdown",
        "first_divergence",
        "divergences",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["status"], "diverged");
    let d = &json["divergences"][0];
    assert_eq!(d["warp_idx"], 2);
    assert_eq!(d["event_idx"], 10);
    assert_eq!(d["event_idx_b"], 10);
    assert_eq!(d["site_id"], "0x00000999");
    assert_eq!(d["kind"], "ExtraEvents");
    assert_eq!(d["extra_events"], 3);
    assert!(d.get("source_location").is_some());
    assert_eq!(json["divergence_breakdown"]["ExtraEvents"], 1);
    assert_eq!(json["first_divergence"]["warp_idx"], 2);
}

#[test]
fn snapshot_lanes_and_history_attach_to_the_first_divergence() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, lane7: u32, dir7: u8| {
        let mut b = TraceBuilder::new("kern", [1, 1, 1], [32, 1, 1])
            .unwrap()
            .events_per_warp(64)
            .with_snapshots(4)
            .with_history(8);
        for visit in 0..6u32 {
            let flipped = visit == 4;
            b.push_event(0, ev(0x50, if flipped { dir7 } else { 0 }, visit))
                .unwrap();
            let mut lhs = [visit; 32];
            if flipped {
                lhs[7] = lane7;
            }
            let entry = SnapshotEntry {
                site_id: 0x50,
                active_mask: u32::MAX,
                cmp_predicate: 40,
                lhs_values: lhs,
                rhs_values: [10; 32],
                ..SnapshotEntry::default()
            };
            b.push_snapshot(0, entry).unwrap();
            b.push_history(0, 0x50, visit * 100).unwrap();
            b.push_event(0, ev(0x60, 0, 0)).unwrap();
        }
        let path = dir.path().join(name);
        b.write_file(&path, Compression::None).unwrap();
        TraceFile::open(&path).unwrap()
    };
    let a = write("a.prlx", 4, 0);
    let b = write("b.prlx", 11, 1);
    let r = report(&a, &b, false);
    let first = r.first_divergence.as_ref().unwrap();
    assert_eq!((first.kind, first.event_idx), (DivergenceKind::Branch, 8));
    // Visit 4 of 6, ring of 4 keeps visits 2..6: the third record.
    let snap = r.snapshot.as_ref().unwrap();
    let (sa, sb) = (snap.a.as_ref().unwrap(), snap.b.as_ref().unwrap());
    assert_eq!((sa.seq, sb.seq), (4, 4));
    assert_eq!((sa.lhs[7], sb.lhs[7], sa.lhs[0]), (4, 11, 4));
    assert_eq!(sa.predicate, "icmp slt");
    let hist = r.history.as_ref().unwrap();
    assert_eq!(
        hist.a.iter().map(|h| h.value).collect::<Vec<_>>(),
        vec![0, 100, 200, 300, 400, 500]
    );
    let text = prlx_differ::render::render_text(&r, 10);
    assert!(text.contains("*7"), "{text}");
    assert!(
        text.contains("1 divergences across 1 warps at 1 sites"),
        "{text}"
    );
}

mod mutated_files {
    use super::*;
    use proptest::prelude::*;

    fn demo_bytes(name: &str) -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/traces")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever bytes the reader accepts, diffing and reporting them never panics.
        #[test]
        fn diffing_mutated_demo_traces_never_panics(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..40),
            values in any::<bool>(),
        ) {
            let a = TraceFile::from_bytes("a.prlx", demo_bytes("run_a.prlx")).unwrap();
            let mut bytes = demo_bytes("run_b.prlx");
            for (at, byte) in edits {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
            if let Ok(b) = TraceFile::from_bytes("b.prlx", bytes) {
                for (x, y) in [(&a, &b), (&b, &a)] {
                    let r = report(x, y, values);
                    let text = prlx_differ::render::render_text(&r, 5);
                    prop_assert!(text.contains("divergences across"));
                    let _ = prlx_differ::chrome::chrome_trace(&r);
                    prop_assert_eq!(r.total_divergences, r.divergence_breakdown.values().sum::<usize>());
                }
            }
        }
    }
}
