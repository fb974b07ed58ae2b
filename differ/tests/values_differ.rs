//! Values that differ where control flow matched: reported by default (a
//! count and the first site), not as divergences unless `--values` asks.

use prlx_differ::{
    AlignOptions, DiffOptions, DiffReport, DivergenceKind, diff_files, diff_traces, render,
};
use prlx_trace::{Compression, EventType, TraceBuilder, TraceEvent, TraceFile};
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

/// Two warps: an atomic (returning `ticket + warp`) and a branch each.
fn write(dir: &Path, name: &str, ticket: u32, compress: Compression) -> TraceFile {
    let mut b = TraceBuilder::new("kern", [1, 1, 1], [64, 1, 1])
        .unwrap()
        .events_per_warp(16);
    for w in 0..b.num_warps() {
        b.push_event(w, ev(0xa70, EventType::Atomic, 0, ticket + w as u32 * 32))
            .unwrap();
        b.push_event(w, ev(0xb0, EventType::Branch, 1, 0)).unwrap();
    }
    let path = dir.join(name);
    b.write_file(&path, compress).unwrap();
    TraceFile::open(&path).unwrap()
}

fn options(values: bool) -> DiffOptions {
    DiffOptions {
        align: AlignOptions {
            compare_values: values,
            ..AlignOptions::default()
        },
    }
}

#[test]
fn control_flow_identical_but_values_differ_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", 0, Compression::None);
    let b = write(dir.path(), "b.prlx", 64, Compression::None);
    let diff = diff_traces(&a, &b, &options(false));
    let report = DiffReport::build(&a, &b, &diff, None);
    assert_eq!(report.total_divergences, 0);
    assert_eq!(report.status, "identical");
    let v = report
        .values_differ
        .as_ref()
        .expect("values differ is reported");
    assert_eq!((v.events, v.warps), (2, 2));
    assert_eq!(v.first.site_id, 0xa70);
    assert_eq!((v.first.value_a, v.first.value_b), (Some(0), Some(64)));
    let text = render::render_text(&report, 20);
    assert!(
        text.contains("status: identical control flow, but recorded values differ"),
        "{text}"
    );
    assert!(
        text.contains("values differ: 2 events in 2 warps"),
        "{text}"
    );
    assert!(text.contains("site 0x00000a70"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["values_differ"]["events"], 2);

    // With --values they are the divergences, and no separate note.
    let diff = diff_traces(&a, &b, &options(true));
    let report = DiffReport::build(&a, &b, &diff, None);
    assert_eq!(report.total_divergences, 2);
    assert_eq!(report.divergence_breakdown["Value"], 2);
    assert!(report.values_differ.is_none());
}

#[test]
fn the_streamed_diff_sets_values_aside_too() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.prlx",
        0,
        Compression::FlagCompress { level: 3 },
    );
    write(
        dir.path(),
        "b.prlx",
        64,
        Compression::FlagCompress { level: 3 },
    );
    let (pa, pb) = (dir.path().join("a.prlx"), dir.path().join("b.prlx"));
    let pair = diff_files(&pa, &pb, &options(false), Default::default()).unwrap();
    assert!(pair.diff.diverged.is_empty());
    assert_eq!(pair.diff.values_differing(), 2);
    let report = DiffReport::build(&pair.a, &pair.b, &pair.diff, None);
    assert_eq!(report.values_differ.unwrap().events, 2);
}

#[test]
fn identical_values_give_no_note_and_divergences_keep_their_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.prlx", 0, Compression::None);
    let same = write(dir.path(), "same.prlx", 0, Compression::None);
    let report = DiffReport::build(&a, &same, &diff_traces(&a, &same, &options(false)), None);
    assert!(report.values_differ.is_none());
    assert_eq!(
        render::render_text(&report, 20).lines().last(),
        Some("status: identical")
    );
    let kinds: Vec<DivergenceKind> = diff_traces(&a, &same, &options(true))
        .diverged
        .iter()
        .flat_map(|w| w.divergences.iter().map(|d| d.kind))
        .collect();
    assert!(kinds.is_empty());
}
