//! The analysis options over planted traces: filters, CSV, the values
//! recorded before a divergence, the cause classifier (one planted trace per
//! rule), warps paired by thread across launch shapes, the kernel-hash check.

use prlx_differ::{
    BlockSel, CauseKind, DiffOptions, DiffReport, DivergenceFilter, DivergenceKind, ReportOptions,
    WarpPairing, diff_traces, diff_traces_paired,
};
use prlx_trace::{
    Compression, EventType, SiteInfo, SiteMap, SnapshotEntry, TraceBuilder, TraceEvent, TraceFile,
};
use std::path::Path;

fn ev(site_id: u32, ty: EventType, dir: u8, value: u32) -> TraceEvent {
    TraceEvent {
        site_id,
        event_type: ty as u8,
        branch_dir: dir,
        _reserved: 0,
        active_mask: u32::MAX,
        value_a: value,
    }
}

fn br(site: u32, dir: u8) -> TraceEvent {
    ev(site, EventType::Branch, dir, 0)
}

/// What one warp records: its events, and per event optionally a snapshot
/// (lhs, rhs for every lane, predicate) of the compare behind it.
#[derive(Default, Clone)]
struct Warp {
    events: Vec<TraceEvent>,
    snapshots: Vec<(usize, u32, [u32; 32], [u32; 32])>,
}

impl Warp {
    fn of(events: Vec<TraceEvent>) -> Warp {
        Warp {
            events,
            snapshots: Vec::new(),
        }
    }

    fn snap(mut self, at: usize, predicate: u32, lhs: [u32; 32], rhs: [u32; 32]) -> Warp {
        self.snapshots.push((at, predicate, lhs, rhs));
        self
    }
}

/// A trace of `grid` x `block` threads; every event also goes to the
/// history ring, as the device runtime does.
fn write(dir: &Path, name: &str, grid: u32, block: u32, warp: impl Fn(usize) -> Warp) -> TraceFile {
    let mut b = TraceBuilder::new("kern", [grid, 1, 1], [block, 1, 1])
        .unwrap()
        .events_per_warp(256)
        .with_history(64)
        .with_snapshots(8);
    for w in 0..b.num_warps() {
        let spec = warp(w);
        for (i, e) in spec.events.iter().enumerate() {
            for (at, predicate, lhs, rhs) in &spec.snapshots {
                if *at == i {
                    let entry = SnapshotEntry {
                        site_id: e.site_id,
                        active_mask: u32::MAX,
                        cmp_predicate: *predicate,
                        lhs_values: *lhs,
                        rhs_values: *rhs,
                        ..SnapshotEntry::default()
                    };
                    b.push_snapshot(w, entry).unwrap();
                }
            }
            b.push_history(w, e.site_id, e.value_a).unwrap();
            b.push_event(w, *e).unwrap();
        }
    }
    let path = dir.join(name);
    b.write_file(&path, Compression::None).unwrap();
    TraceFile::open(&path).unwrap()
}

/// 40 events: a few branches and stores over distinct sites.
fn base() -> Vec<TraceEvent> {
    (0..40u32)
        .map(|i| match i % 4 {
            0 | 2 => br(0x100 + i, (i % 3 == 0) as u8),
            1 => ev(0x100 + i, EventType::SharedStore, 0, i * 10),
            _ => ev(0x100 + i, EventType::GlobalStore, 0, i * 10),
        })
        .collect()
}

fn report_with(a: &TraceFile, b: &TraceFile, options: &ReportOptions) -> DiffReport {
    let diff = diff_traces(a, b, &DiffOptions::default());
    DiffReport::build_with(a, b, &diff, None, options)
}

fn classified(a: &TraceFile, b: &TraceFile) -> DiffReport {
    let options = ReportOptions {
        classify: true,
        ..ReportOptions::default()
    };
    report_with(a, b, &options)
}

/// Divergences of 4 blocks x 2 warps: warp w gets a flip at event 4 + w.
fn eight_warps(dir: &Path) -> (TraceFile, TraceFile) {
    let a = write(dir, "a.prlx", 4, 64, |_| Warp::of(base()));
    let b = write(dir, "b.prlx", 4, 64, |w| {
        let mut e = base();
        let i = [0, 2, 4, 6, 8, 10, 12, 14][w];
        e[i].branch_dir ^= 1;
        if w == 5 {
            e[21].active_mask = 0xff; // and a mask change
        }
        Warp::of(e)
    });
    (a, b)
}

#[test]
fn filters_keep_matching_divergences_and_recount() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = eight_warps(dir.path());
    let all = report_with(&a, &b, &ReportOptions::default());
    assert_eq!((all.total_divergences, all.unfiltered_divergences), (9, 9));
    let filtered = |filter: DivergenceFilter| {
        let r = report_with(
            &a,
            &b,
            &ReportOptions {
                filter,
                ..ReportOptions::default()
            },
        );
        assert_eq!(r.unfiltered_divergences, 9);
        r
    };
    let r = filtered(DivergenceFilter {
        warps: vec![(2, 3), (7, 7)],
        ..Default::default()
    });
    let warps: Vec<usize> = r.divergences.iter().map(|d| d.warp_idx).collect();
    assert_eq!(warps, [2, 3, 7]);
    assert_eq!((r.total_divergences, r.warps_diverged), (3, 3));
    assert_eq!(r.filter.as_deref(), Some("warp 2-3,7"));
    // Block 2 is warps 4 and 5; warp 5 has two divergences.
    for block in [BlockSel::Linear(2), BlockSel::Coords([2, 0, 0])] {
        let r = filtered(DivergenceFilter {
            blocks: vec![block],
            ..Default::default()
        });
        assert_eq!((r.total_divergences, r.warps_diverged), (3, 2));
    }
    let r = filtered(DivergenceFilter {
        kinds: vec![DivergenceKind::ActiveMask],
        ..Default::default()
    });
    assert_eq!(r.total_divergences, 1);
    assert_eq!(r.first_divergence.as_ref().unwrap().warp_idx, 5);
    assert_eq!(r.divergence_breakdown["Branch"], 0);
    let r = filtered(DivergenceFilter {
        sites: vec![0x106],
        ..Default::default()
    });
    assert_eq!(r.total_divergences, 1);
    assert_eq!(r.divergences[0].warp_idx, 3);
}

#[test]
fn function_filter_uses_the_site_map() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = eight_warps(dir.path());
    let mut map = SiteMap::default();
    for i in 0..40u32 {
        let function = if i < 8 { "_Z4headv" } else { "_Z4tailv" };
        map.insert(SiteInfo {
            site_id: 0x100 + i,
            file: "k.cu".into(),
            line: 10 + i,
            column: 3,
            function: function.into(),
            kind: "branch".into(),
        });
    }
    let diff = diff_traces(&a, &b, &DiffOptions::default());
    let options = ReportOptions {
        filter: DivergenceFilter {
            functions: vec!["*head*".into()],
            ..Default::default()
        },
        ..ReportOptions::default()
    };
    let r = DiffReport::build_with(&a, &b, &diff, Some(&map), &options);
    // Flips at events 0, 2, 4, 6 sit at sites 0x100..0x107.
    assert_eq!(r.total_divergences, 4, "{:#?}", r.divergences);
    assert!(
        r.divergences
            .iter()
            .all(|d| d.function.as_deref() == Some("_Z4headv"))
    );
}

#[test]
fn csv_has_a_row_per_divergence_with_quoted_cells() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = eight_warps(dir.path());
    let mut r = classified(&a, &b);
    r.divergences[0].source_location = Some("odd, \"name\".cu:3:1".into());
    let csv = prlx_differ::csv::divergences_csv(&r);
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 1 + 9);
    assert!(
        lines[0].starts_with("warp_idx,warp_idx_b,block_x"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[0].split(',').count(), prlx_differ::csv::COLUMNS.len());
    assert!(
        lines[1].starts_with("0,0,0,0,0,0,0,0,Branch,0x00000100,"),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("\"odd, \"\"name\"\".cu:3:1\""),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].contains("data-dependent control flow"),
        "{}",
        lines[1]
    );
}

#[test]
fn history_shows_the_values_recorded_just_before() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = eight_warps(dir.path());
    let options = ReportOptions {
        history: Some(3),
        ..ReportOptions::default()
    };
    let r = report_with(&a, &b, &options);
    // Warp 3 flips at event 6: events 3, 4, 5 recorded 30 (a global store
    // at 0x103), 0 (a branch at 0x104) and 50 (a shared store at 0x105).
    let d = r.divergences.iter().find(|d| d.warp_idx == 3).unwrap();
    let h = d.history_before.as_ref().unwrap();
    let seen: Vec<(u32, u32, u32)> = h.a.iter().map(|v| (v.seq, v.site_id, v.value)).collect();
    assert_eq!(seen, [(3, 0x103, 30), (4, 0x104, 0), (5, 0x105, 50)]);
    assert_eq!(h.a, h.b);
    let text = prlx_differ::render::render_text(&r, 20);
    assert!(
        text.contains("recorded before, A: 30@0x103 0@0x104 50@0x105"),
        "{text}"
    );
}

fn cause_of(r: &DiffReport) -> (CauseKind, String) {
    let c = r.first_divergence.as_ref().unwrap().cause.clone().unwrap();
    (c.kind, c.evidence)
}

#[test]
fn classify_floating_point_ordering() {
    let dir = tempfile::tempdir().unwrap();
    let sum = 0.3f32;
    let reordered = f32::from_bits(sum.to_bits() + 2);
    let spec = |lhs: f32, dir: u8| {
        let mut e = base();
        e[8].branch_dir = dir;
        // fcmp olt (4): lane sums against a threshold of 0.3.
        Warp::of(e).snap(8, 4, [lhs.to_bits(); 32], [0.3f32.to_bits(); 32])
    };
    let a = write(dir.path(), "a.prlx", 1, 32, |_| spec(sum, 0));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| spec(reordered, 1));
    let (kind, evidence) = cause_of(&classified(&a, &b));
    assert_eq!(kind, CauseKind::FloatingPoint, "{evidence}");
    assert!(evidence.contains("2 ULP"), "{evidence}");
}

#[test]
fn classify_race_on_an_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |ticket: u32, dir: u8| {
        let mut e = base();
        e[9] = ev(0x109, EventType::Atomic, 0, ticket);
        e[12].branch_dir = dir;
        Warp::of(e)
    };
    let a = write(dir.path(), "a.prlx", 1, 32, |_| spec(3, 0));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| spec(7, 1));
    let (kind, evidence) = cause_of(&classified(&a, &b));
    assert_eq!(kind, CauseKind::ScheduleSensitive, "{evidence}");
    assert!(
        evidence.contains("returned 3 in A and 7 in B"),
        "{evidence}"
    );
}

/// A loop of `iterations` over (condition 0x10 taken, body store 0x11),
/// then the exit and a tail.
fn looping(iterations: u32) -> Vec<TraceEvent> {
    let mut e = vec![br(0x1, 0)];
    for i in 0..iterations {
        e.push(br(0x10, 1));
        e.push(ev(0x11, EventType::SharedStore, 0, i));
    }
    e.push(br(0x10, 0));
    e.extend((0..10).map(|k| br(0x200 + k, 0)));
    e
}

#[test]
fn classify_loop_bound_from_extra_iterations() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", 1, 32, |_| Warp::of(looping(5)));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| Warp::of(looping(9)));
    let r = classified(&a, &b);
    assert_eq!(r.total_divergences, 1, "{:#?}", r.divergences);
    let (kind, evidence) = cause_of(&r);
    assert_eq!(kind, CauseKind::LoopBound, "{evidence}");
    assert!(
        evidence.contains("B ran 4 more iteration(s) of a 2-event loop body"),
        "{evidence}"
    );
}

#[test]
fn classify_loop_bound_from_a_changed_bound_operand() {
    let dir = tempfile::tempdir().unwrap();
    // The condition at its 6th visit (event 11): i < n with i = 5, n = 5 in
    // A (exit) and n = 8 in B (continue); the lanes' compare snapshots
    // (icmp slt = 40) say which operand changed.
    let spec = |n: u32| {
        let mut e = looping(5);
        e[11].branch_dir = u8::from(n > 5);
        Warp::of(e).snap(11, 40, [5; 32], [n; 32])
    };
    let a = write(dir.path(), "a.prlx", 1, 32, |_| spec(5));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| spec(8));
    let (kind, evidence) = cause_of(&classified(&a, &b));
    assert_eq!(kind, CauseKind::LoopBound, "{evidence}");
    assert!(
        evidence.contains("the bound changed from 5 to 8"),
        "{evidence}"
    );
}

#[test]
fn classify_memory_ordering_from_a_different_store() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |stored: u32, dir: u8| {
        let mut e = base();
        e[13].value_a = stored; // a shared store, 3 events before the flip
        e[16].branch_dir = dir;
        Warp::of(e)
    };
    let a = write(dir.path(), "a.prlx", 1, 32, |_| spec(130, 1));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| spec(0, 0));
    let (kind, evidence) = cause_of(&classified(&a, &b));
    assert_eq!(kind, CauseKind::MemoryOrdering, "{evidence}");
    assert!(evidence.contains("wrote 130 in A and 0 in B"), "{evidence}");
}

#[test]
fn classify_data_dependent_control_flow_from_operands() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |bin: u32| {
        let mut e = base();
        e[20].branch_dir = u8::from(bin >= 10);
        let mut lhs = [3u32; 32];
        lhs[8] = bin;
        // icmp sge (39): bin >= limit 10.
        Warp::of(e).snap(20, 39, lhs, [10; 32])
    };
    let a = write(dir.path(), "a.prlx", 1, 32, |_| spec(4));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| spec(12));
    let (kind, evidence) = cause_of(&classified(&a, &b));
    assert_eq!(kind, CauseKind::DataDependent, "{evidence}");
    assert!(
        evidence.contains("lane 8: A 4 icmp sge 10, B 12 icmp sge 10"),
        "{evidence}"
    );
}

#[test]
fn classify_leaves_an_unexplained_mask_change_unclassified() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", 1, 32, |_| Warp::of(base()));
    let b = write(dir.path(), "b.prlx", 1, 32, |_| {
        let mut e = base();
        e[1].active_mask = 0xffff;
        Warp::of(e)
    });
    let r = classified(&a, &b);
    let (kind, _) = cause_of(&r);
    assert_eq!(kind, CauseKind::Unclassified);
    assert_eq!(r.causes["unclassified"], 1);
}

#[test]
fn remap_pairs_warps_of_different_launch_shapes_by_thread() {
    let dir = tempfile::tempdir().unwrap();
    // The same 192 threads as 4 blocks of 48 (8 warp slots) and as 2
    // blocks of 96 (6 slots). Each warp's stream names its first thread, so
    // warps that ran the same threads record the same events.
    let stream = |first_thread: u32, flip: bool| {
        let mut e: Vec<TraceEvent> = (0..12).map(|i| br(0x100 + i, 0)).collect();
        e[0].value_a = first_thread;
        if flip {
            e[5].branch_dir = 1;
        }
        Warp::of(e)
    };
    let first = |block: u32, slot: usize, wpb: usize| {
        block * (slot / wpb) as u32 + 32 * (slot % wpb) as u32
    };
    let a = write(dir.path(), "a.prlx", 4, 48, |w| {
        stream(first(48, w, 2), false)
    });
    // Thread 96 (A's slot 4: block 2, warp 0) is B's slot 3 (block 1, warp 0).
    let b = write(dir.path(), "b.prlx", 2, 96, |w| {
        stream(first(96, w, 3), w == 3)
    });
    let options = DiffOptions {
        align: prlx_differ::AlignOptions {
            compare_values: true,
            ..Default::default()
        },
    };
    let by_slot = diff_traces(&a, &b, &options);
    let by_slot = DiffReport::build(&a, &b, &by_slot, None);
    assert!(
        by_slot.total_divergences > 1,
        "slots of different threads differ"
    );
    assert!(by_slot.warnings.iter().any(|w| w.contains("--remap")));
    let diff = diff_traces_paired(&a, &b, &options, WarpPairing::ByThread);
    let r = DiffReport::build(&a, &b, &diff, None);
    // A's slots 2 (threads 48..80) and 3 (80..96) both start inside B's
    // slot 1 or 2, whose first threads differ from theirs: Value.
    let kinds: Vec<(usize, usize, DivergenceKind)> = r
        .divergences
        .iter()
        .map(|d| (d.warp_idx, d.warp_idx_b, d.kind))
        .collect();
    assert!(kinds.contains(&(4, 3, DivergenceKind::Branch)), "{kinds:?}");
    assert_eq!(r.warps_compared, 8);
    let branches: Vec<_> = kinds
        .iter()
        .filter(|k| k.2 == DivergenceKind::Branch)
        .collect();
    assert_eq!(branches, [&(4, 3, DivergenceKind::Branch)]);
}

#[test]
fn equal_names_with_different_hashes_warn() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", 1, 32, |_| Warp::of(base()));
    let mut builder = TraceBuilder::new("kern", [1, 1, 1], [32, 1, 1])
        .unwrap()
        .events_per_warp(256);
    builder.header_mut().kernel_name_hash ^= 1;
    for e in base() {
        builder.push_event(0, e).unwrap();
    }
    let path = dir.path().join("b.prlx");
    builder.write_file(&path, Compression::None).unwrap();
    let b = TraceFile::open(&path).unwrap();
    let r = report_with(&a, &b, &ReportOptions::default());
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("kernel name hashes differ under the same name `kern`")),
        "{:?}",
        r.warnings
    );
    let same = report_with(&a, &a, &ReportOptions::default());
    assert!(same.warnings.is_empty());
}
